package symbolize

import (
	"errors"
	"testing"
)

// TestGoCarry: goCarry's goroutine's panic is raised again, with its
// value, by wait on the caller's goroutine, where recover (and the
// fuzzer) can see it; without a panic wait returns once fn has.
func TestGoCarry(t *testing.T) {
	ran := false
	goCarry(func() { ran = true })()
	if !ran {
		t.Fatal("wait returned before fn ran")
	}
	boom := errors.New("boom")
	for _, v := range []any{boom, "text"} {
		got := func() (p any) {
			defer func() { p = recover() }()
			goCarry(func() { panic(v) })()
			return nil
		}()
		if got != v {
			t.Errorf("wait panicked with %v, want %v", got, v)
		}
	}
}
