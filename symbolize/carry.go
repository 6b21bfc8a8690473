package symbolize

// goCarry runs fn on a new goroutine and returns a function that waits
// for it. A panic in fn is carried to the goroutine that waits and
// raised there again: a library goroutine that panics would otherwise end
// the process at once, past any recover of its caller — and a fuzzing
// worker with it, without naming the input (go test reports "fuzzing
// process hung or terminated unexpectedly").
func goCarry(fn func()) (wait func()) {
	done := make(chan any, 1)
	go func() {
		ok := false
		defer func() {
			if ok {
				done <- nil
				return
			}
			done <- carried{recover()}
		}()
		fn()
		ok = true
	}()
	return func() {
		if p := <-done; p != nil {
			panic(p.(carried).v)
		}
	}
}

// carried is a panic's value on its way to the waiting goroutine (nil
// too: panic(nil) arrives as a *runtime.PanicNilError).
type carried struct{ v any }
