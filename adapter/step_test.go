package adapter

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"
)

// TestNextInMovedCode steps with next from a cold line through the rest
// of the logical function; plain Delve refuses ("no source for PC").
func TestNextInMovedCode(t *testing.T) {
	for _, tc := range []struct {
		bin, src, marker, fn, file string
		lines                      []int // where each next stops
		end                        string
	}{
		// scale.cold: line 26, then back through the entry fragment's
		// return (line 29 has no statement row) to main, as Delve's next
		// does from hot code.
		{"demo", "demo/demo.c", "scale", "C.scale", "demo/demo.c", []int{26}, "C.main"},
		// c_classify.cold returns itself, to the cgo wrapper.
		{"cgo", "cgo/split.c", "c_classify", "C.c_classify", "cgoprog/split.c", []int{26}, "_Cfunc_c_classify"},
	} {
		t.Run(tc.bin, func(t *testing.T) {
			file, line := coldLine(t, tc.src, tc.marker)
			s := startDelve(t, tc.bin, "cold")
			if _, err := s.client.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
				t.Fatal(err)
			}
			if st := <-s.client.Continue(); st.Err != nil {
				t.Fatal(st.Err)
			}
			if _, err := s.plain.Next(); err == nil || !strings.Contains(err.Error(), "no source for PC") {
				t.Errorf("plain Next from moved code: %v; want \"no source for PC\"", err)
			}
			for _, want := range tc.lines {
				st, err := s.client.Next()
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				th := st.CurrentThread
				if th.Function.Name() != tc.fn || !strings.HasSuffix(th.File, tc.file) || th.Line != want {
					t.Errorf("Next stopped at %s %s:%d; want %s %s:%d", th.Function.Name(), th.File, th.Line, tc.fn, tc.file, want)
				}
				if th.Breakpoint != nil {
					t.Errorf("Next shows breakpoint %d", th.Breakpoint.ID)
				}
			}
			st, err := s.client.Next()
			if err != nil {
				t.Fatalf("last Next: %v", err)
			}
			if n := st.CurrentThread.Function.Name(); !strings.HasSuffix(n, tc.end) {
				t.Errorf("last Next stopped in %s; want %s", n, tc.end)
			}
			bps, _ := s.client.ListBreakpoints(false)
			for _, bp := range bps {
				if bp.Name == nextName {
					t.Errorf("temporary breakpoint %d left behind", bp.ID)
				}
			}
		})
	}
}

// TestNextIntoMovedCode steps with next from the entry fragment of a split
// function into its moved code; plain Delve's next runs through the moved
// code without stopping.
func TestNextIntoMovedCode(t *testing.T) {
	file, line := coldLine(t, "demo/demo.c", "scale")
	run := func(next func() (*api.DebuggerState, error), s *session) *api.Thread {
		t.Helper()
		if _, err := s.client.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.scale"}); err != nil {
			t.Fatal(err)
		}
		if st := <-s.client.Continue(); st.Err != nil || st.CurrentThread.Line != line-2 {
			t.Fatalf("Continue: %+v", st)
		}
		// Line 24's statement row shares scale's entry address with line
		// 23's, so the next statement is the cold line.
		st, err := next()
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		return st.CurrentThread
	}
	s := startDelve(t, "demo", "cold")
	if th := run(s.client.Next, s); th.Function.Name() != "C.scale" || th.Line != line {
		t.Errorf("Next from scale stopped at %s %s:%d; want C.scale %s:%d", th.Function.Name(), th.File, th.Line, file, line)
	}
	p := startDelve(t, "demo", "cold")
	if th := run(p.plain.Next, p); th.Line == line || th.Function.Name() != "C.main" {
		t.Errorf("plain Delve's Next from scale stopped at %s:%d", th.Function.Name(), th.Line)
	}
}

// TestStepOutOfMovedCode steps out of a cold fragment of a cgo C
// function; plain Delve's step out runs the program to its end.
func TestStepOutOfMovedCode(t *testing.T) {
	file, line := coldLine(t, "cgo/split.c", "c_classify")
	for _, who := range []string{"client", "plain"} {
		s := startDelve(t, "cgo", "cold")
		if _, err := s.client.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
			t.Fatal(err)
		}
		if st := <-s.client.Continue(); st.Err != nil {
			t.Fatal(st.Err)
		}
		stepOut := s.client.StepOut
		if who == "plain" {
			stepOut = s.plain.StepOut
		}
		st, err := stepOut()
		if err != nil {
			t.Fatalf("%s StepOut: %v", who, err)
		}
		switch {
		case who == "plain" && !st.Exited:
			t.Errorf("plain StepOut stopped at %s; want the program to run to its end (Delve 1.27)", st.CurrentThread.Function.Name())
		case who == "client" && (st.Exited || !strings.HasSuffix(st.CurrentThread.Function.Name(), "_Cfunc_c_classify")):
			t.Errorf("StepOut: %+v; want a stop in the cgo wrapper C._cgo_…_Cfunc_c_classify", st)
		}
	}
}

// TestStepInMovedCode steps into a function called from a cold line, out
// again, and on through the moved fragment; plain Delve refuses to step
// in moved code.
func TestStepInMovedCode(t *testing.T) {
	file, line := coldLine(t, "demo/demo.c", "scale")
	s := startDelve(t, "demo", "cold")
	c := s.client
	if _, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
		t.Fatal(err)
	}
	if st := <-c.Continue(); st.Err != nil {
		t.Fatal(st.Err)
	}
	if _, err := s.plain.Step(); err == nil || !strings.Contains(err.Error(), "no source for PC") {
		t.Errorf("plain Step from moved code: %v; want \"no source for PC\"", err)
	}
	// warn's start, where Delve's own "break C.warn" stops (GCC marks no
	// prologue end in it), reported as gdb reports it: the row of its
	// first statement, which shares the address with the opening brace's.
	warn := lineOf(t, "demo/demo.c", "static void warn(") + 2
	for i, want := range []struct {
		do   func() (*api.DebuggerState, error)
		fn   string
		line int
	}{
		{c.Step, "C.warn", warn},         // into warn, called from the cold line
		{c.StepOut, "C.scale", line + 1}, // back in scale.cold: the call ends line 25
		{c.Step, "C.main", 0},            // return x: no call to step into; back in main
	} {
		st, err := want.do()
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		th := st.CurrentThread
		if th == nil || th.Function.Name() != want.fn || want.line > 0 && th.Line != want.line {
			t.Fatalf("step %d stopped at %s:%d; want %s:%d", i, th.Function.Name(), th.Line, want.fn, want.line)
		}
		if th.Breakpoint != nil {
			t.Errorf("step %d reports breakpoint %+v", i, th.Breakpoint)
		}
	}
	if bps, _ := c.ListBreakpoints(true); slices.ContainsFunc(bps, func(bp *api.Breakpoint) bool { return bp.Name == nextName }) {
		t.Errorf("a temporary breakpoint is left: %+v", bps)
	}
}
