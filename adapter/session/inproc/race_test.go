//go:build race

package inproc

// raceDetector reports a build with the race detector.
const raceDetector = true
