package adapter

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/delvetest"
)

// coldCase is a cold line of a test binary and what a debugger should
// show when it stops there.
type coldCase struct {
	bin    string
	src    string // under testdata/src
	marker string // the COLD-LINE marker
	fn     string // the logical function, as Delve names functions
	file   string // suffix of the file Delve reports
	// stack lists functions the backtrace must show below frame 0, in
	// order, ending with the program's main.
	stack []string
	// ordinary is an unsplit function the cold run calls.
	ordinary string
	// mixed is a line with code in the entry fragment and in moved code.
	// GCC's lines of that kind have no statement row in moved code (an
	// inlined call's rows, a shared epilogue): no breakpoint goes there,
	// so only BOLT's and PGO builds have one.
	mixed string
	// delveFirst says Delve takes the moved fragment for the function:
	// clang 19 lists the cold range first in DW_AT_ranges, and Delve keeps
	// only the first range.
	delveFirst bool
}

var coldCases = []coldCase{
	{"gcc-cold", "gcccold/main.c", "process", "C.process", "gcccold/main.c", []string{"C.main"}, "C.note_cold", "", false},
	{"gcc-cold-nopie", "gcccold/main.c", "validate-y", "C.validate", "gcccold/main.c", []string{"C.main"}, "C.note_cold", "", false},
	{"bolt22", "bolt/bolt.c", "tally-plain", "C.tally", "bolt/bolt.c", []string{"C.main"}, "C.alarm_", "bolt.c:31", false},
	{"cgo", "cgo/split.c", "c_classify", "C.c_classify", "cgoprog/split.c",
		[]string{"_Cfunc_c_classify", "runtime.asmcgocall", "runtime.cgocall", "main._Cfunc_c_classify", "main.main"}, "C.c_report", "", false},
	{"gcc-pgo", "pgo/pgo.c", "checksum", "C.checksum", "pgo/pgo.c", []string{"C.main"}, "", "pgo.c:22", false},
	{"clang22-bbsections", "clang/split.c", "scan", "C.scan", "clang/split.c", []string{"C.main"}, "C.report", "", false},
	{"bolt22-over-gcc", "bolt/bolt.c", "tally-attr", "C.tally", "bolt/bolt.c", []string{"C.main"}, "C.alarm_", "bolt.c:44", false},
	{"demo", "demo/demo.c", "scale", "C.scale", "demo/demo.c", []string{"C.main"}, "C.warn", "", false},
	{"vars", "vars/vars.c", "inspect", "C.inspect", "vars/vars.c", []string{"C.main"}, "C.sink", "", false},
	{"clang19-mfs", "clang/split.c", "report", "C.report", "clang/split.c", []string{"C.main"}, "C.scan", "", true},
}

var curScope = api.EvalScope{GoroutineID: -1}

// TestColdLine runs each test binary on its cold path under a real Delve,
// breaks on a cold line, and checks the stop, the backtrace, the
// disassembly and the function list through the Client, beside what plain
// Delve answers on the same session (the facts docs/DEBUGGERS.md cites).
func TestColdLine(t *testing.T) {
	for _, tc := range coldCases {
		t.Run(tc.bin, func(t *testing.T) {
			s := startDelve(t, tc.bin, "cold")
			c, plain := s.client, s.plain
			file, line := coldLine(t, tc.src, tc.marker)
			loc := spec(file, line)

			want, err := c.Resolver().Resolve(loc)
			if err != nil {
				t.Fatalf("Resolve(%s): %v", loc, err)
			}
			if !want.Moved() {
				t.Fatalf("Resolve(%s) = %+v: no address in moved code", loc, want.Locs)
			}

			// Plain Delve: the location has no address, without an error
			// (unless it takes the moved fragment for the function).
			pl, _, err := plain.FindLocation(curScope, loc, true, nil)
			if tc.delveFirst {
				if err != nil || len(pl) != 1 || !slices.Equal(pl[0].PCs, want.Addrs()) {
					t.Errorf("plain FindLocation(%s) = %+v, %v; want %#x", loc, pl, err, want.Addrs())
				}
			} else if err != nil || len(pl) != 1 || len(pl[0].PCs) != 0 {
				t.Errorf("plain FindLocation(%s) = %+v, %v; want one location with no PCs (Delve 1.27)", loc, pl, err)
			}

			locs, _, err := c.FindLocation(curScope, loc, true, nil)
			if err != nil || len(locs) != 1 {
				t.Fatalf("FindLocation(%s) = %+v, %v", loc, locs, err)
			}
			if diff := cmp.Diff(want.Addrs(), locs[0].PCs); diff != "" {
				t.Errorf("FindLocation(%s) PCs (-resolver +client):\n%s", loc, diff)
			}

			if tc.mixed != "" {
				checkMixedLine(t, s, tc.mixed)
			}

			bp, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line})
			if err != nil {
				t.Fatalf("CreateBreakpoint(%s): %v", loc, err)
			}
			if !slices.Equal(bp.Addrs, want.Addrs()) || bp.FunctionName != tc.fn ||
				!strings.HasSuffix(bp.File, tc.file) || bp.Line != line {
				t.Errorf("CreateBreakpoint(%s) = %s %s:%d %#x; want %s %s:%d %#x",
					loc, bp.FunctionName, bp.File, bp.Line, bp.Addrs, tc.fn, tc.file, line, want.Addrs())
			}
			// Plain Delve lists the same breakpoint with no function, file
			// or line: it knows no function at a moved address.
			if pb, err := plain.GetBreakpoint(bp.ID); tc.delveFirst {
				if err != nil || pb.FunctionName != tc.fn || pb.Line != line {
					t.Errorf("plain GetBreakpoint = %q %s:%d, %v; want %s:%d", pb.FunctionName, pb.File, pb.Line, err, tc.fn, line)
				}
			} else if err != nil || pb.FunctionName != "" || pb.Line != 0 {
				t.Errorf("plain GetBreakpoint = %q %s:%d, %v; want no function and line 0", pb.FunctionName, pb.File, pb.Line, err)
			}

			st := <-c.Continue()
			if st.Err != nil || st.Exited || st.CurrentThread == nil {
				t.Fatalf("Continue: %+v", st)
			}
			th := st.CurrentThread
			if !slices.Contains(want.Addrs(), th.PC) {
				t.Fatalf("stopped at %#x, not at the breakpoint %#x", th.PC, want.Addrs())
			}
			if th.Function.Name() != tc.fn || !strings.HasSuffix(th.File, tc.file) || th.Line != line {
				t.Errorf("stop at %s %s:%d; want %s %s:%d", th.Function.Name(), th.File, th.Line, tc.fn, tc.file, line)
			}
			if th.Breakpoint == nil || th.Breakpoint.FunctionName != tc.fn {
				t.Errorf("stop breakpoint %+v; want function %s", th.Breakpoint, tc.fn)
			}
			ps, err := plain.GetState()
			if tc.delveFirst {
				if err != nil || ps.CurrentThread.Function.Name() != tc.fn || ps.CurrentThread.Line != line {
					t.Errorf("plain state at the stop: %s %s:%d, %v", ps.CurrentThread.Function.Name(), ps.CurrentThread.File, ps.CurrentThread.Line, err)
				}
			} else if err != nil || ps.CurrentThread.Function != nil || ps.CurrentThread.Line != 0 {
				t.Errorf("plain state at the stop: %s %s:%d, %v; want ??? with line 0", ps.CurrentThread.Function.Name(), ps.CurrentThread.File, ps.CurrentThread.Line, err)
			}

			checkStack(t, s, tc, line)
			checkDisassembly(t, s, tc, th.PC)

			fns, err := c.ListFunctions("^"+strings.ReplaceAll(tc.fn, ".", `\.`)+"$", 0)
			if err != nil || !slices.Equal(fns, []string{tc.fn}) {
				t.Errorf("ListFunctions(%s) = %v, %v", tc.fn, fns, err)
			}
		})
	}
}

// checkStack checks the backtrace at a stop on a cold line.
func checkStack(t *testing.T, s *session, tc coldCase, line int) {
	t.Helper()
	// Delve's unwinder reads a shared library's CFI only once its image
	// list is loaded, which the Client's first lookup in a library does:
	// load it first so both stacks see the same Delve.
	s.plain.ListDynamicLibraries()
	frames, err := s.client.Stacktrace(-1, 50, 0, 0, nil)
	if err != nil || len(frames) == 0 {
		t.Fatalf("Stacktrace: %v, %v", frames, err)
	}
	if f := frames[0]; f.Function.Name() != tc.fn || !strings.HasSuffix(f.File, tc.file) || f.Line != line {
		t.Errorf("frame 0 = %s %s:%d; want %s %s:%d", f.Function.Name(), f.File, f.Line, tc.fn, tc.file, line)
	}
	delvetest.CheckCallers(t, frames, tc.stack)

	plain, err := s.plain.Stacktrace(-1, 50, 0, 0, nil)
	if err != nil || len(plain) == 0 {
		t.Fatalf("plain Stacktrace: %v", err)
	}
	if tc.delveFirst {
		if plain[0].Function.Name() != tc.fn {
			t.Errorf("plain frame 0 = %s; want %s", plain[0].Function.Name(), tc.fn)
		}
	} else if plain[0].Function != nil || plain[0].File != "?" || plain[0].Line != -1 {
		t.Errorf("plain frame 0 = %s %s:%d; want ??? ?:-1", plain[0].Function.Name(), plain[0].File, plain[0].Line)
	}
	if tc.bin == "cgo" {
		// Plain Delve jumps from the cold frame to the goroutine stack and
		// loses the C frames between it and runtime.asmcgocall.
		if plain[1].Function.Name() != "runtime.systemstack_switch" {
			t.Errorf("plain frame 1 = %s; want runtime.systemstack_switch", plain[1].Function.Name())
		}
		for _, f := range plain {
			if n := f.Function.Name(); strings.HasSuffix(n, "_Cfunc_c_classify") && strings.HasPrefix(n, "C.") || n == "runtime.asmcgocall" {
				t.Errorf("plain backtrace has %s, which Delve 1.27 loses", n)
			}
		}
		if len(frames) != len(plain)+2 {
			t.Errorf("backtrace has %d frames, plain %d; want 2 more:\n%s", len(frames), len(plain), formatFrames(frames))
		}
	} else if len(realFrames(frames)) != len(realFrames(plain)) {
		t.Errorf("backtrace has %d frames, plain %d; want the same (Delve unwinds through .cold with its FDE)", len(frames), len(plain))
	}
}

// checkDisassembly checks that disassembling at a cold PC covers every
// fragment of the logical function, in logical order.
func checkDisassembly(t *testing.T, s *session, tc coldCase, pc uint64) {
	t.Helper()
	pins, err := s.plain.DisassemblePC(curScope, pc, api.IntelFlavour)
	if tc.delveFirst {
		// Delve disassembles the moved fragment it takes for the function.
		frag := s.client.Resolver().Ranges(pc)
		f, _ := s.client.Resolver().Frame(pc, false)
		r := frag[f.Frag]
		if err != nil || len(pins) == 0 || pins[0].Loc.PC != r.Start || pins[len(pins)-1].Loc.PC >= r.End {
			t.Errorf("plain DisassemblePC(%#x): %d instructions, %v; want fragment [%#x,%#x) alone", pc, len(pins), err, r.Start, r.End)
		}
	} else if err == nil || !strings.Contains(err.Error(), "does not belong to any function") {
		t.Errorf("plain DisassemblePC(%#x) error = %v; want \"does not belong to any function\"", pc, err)
	}
	ins, err := s.client.DisassemblePC(curScope, pc, api.IntelFlavour)
	if err != nil || len(ins) == 0 {
		t.Fatalf("DisassemblePC(%#x): %v", pc, err)
	}
	ranges := s.client.Resolver().Ranges(pc)
	if len(ranges) < 2 {
		t.Fatalf("Ranges(%#x) = %v: not split", pc, ranges)
	}
	k := 0
	for _, r := range ranges {
		n := 0
		for k < len(ins) && r.Contains(ins[k].Loc.PC) {
			if ins[k].Loc.Function.Name() != tc.fn {
				t.Errorf("instruction %#x in %s; want %s", ins[k].Loc.PC, ins[k].Loc.Function.Name(), tc.fn)
			}
			k, n = k+1, n+1
		}
		if n == 0 || ins[k-1].Loc.PC >= r.End || ins[k-n].Loc.PC != r.Start {
			t.Errorf("fragment [%#x,%#x): %d instructions, not covering it in order", r.Start, r.End, n)
		}
	}
	if k != len(ins) {
		t.Errorf("%d instructions outside the fragments", len(ins)-k)
	}
}

// formatFrames prints frames one a line, for failure messages.
var formatFrames = delvetest.FormatFrames

// realFrames returns the frames before the first one Delve could not read
// (past the C start-up code it lists frames at PC 0 with an error).
var realFrames = delvetest.RealFrames

// checkMixedLine checks a line with code in the entry fragment and in
// moved code: Delve's addresses, which it finds only outside moved code,
// plus splitdbg's in moved code.
func checkMixedLine(t *testing.T, s *session, loc string) {
	t.Helper()
	res, err := s.client.Resolver().Resolve(loc)
	if err != nil || !res.Moved() || allMoved(&res) {
		t.Fatalf("Resolve(%s) = %+v, %v: not a line in both", loc, res.Locs, err)
	}
	pl, _, err := s.plain.FindLocation(curScope, loc, true, nil)
	if err != nil || len(pl) != 1 || len(pl[0].PCs) == 0 {
		t.Fatalf("plain FindLocation(%s) = %+v, %v", loc, pl, err)
	}
	// One placement: the client's addresses are splitdbg's (those of
	// "splitdbg break"), which hold Delve's, and none of Delve's is in
	// moved code.
	want := slices.Sorted(slices.Values(res.Addrs()))
	for _, pc := range pl[0].PCs {
		if !slices.Contains(want, pc) {
			t.Errorf("plain Delve's %#x is not among splitdbg's %#x", pc, want)
		}
		if f, ok := s.client.Resolver().Frame(pc, false); ok && f.Moved() {
			t.Errorf("plain Delve found %#x in moved code", pc)
		}
	}
	cl, _, err := s.client.FindLocation(curScope, loc, true, nil)
	if err != nil || len(cl) != 1 {
		t.Fatalf("FindLocation(%s) = %+v, %v", loc, cl, err)
	}
	if diff := cmp.Diff(want, cl[0].PCs); diff != "" {
		t.Errorf("FindLocation(%s) PCs (-splitdbg break +client):\n%s", loc, diff)
	}
}
