//go:build !linux

package elfx

// dropPages keeps the pages resident where syscall has no madvise.
func dropPages([]byte) {}
