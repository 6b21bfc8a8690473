package adapter

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/gdbtest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// inlineStops are the lines of inl.c the inline tests stop on: in
// kind_name, inlined into syntax_error, inlined into step's moved code
// (three frames at one PC); on syntax_error's call of report (two); and,
// in step's entry fragment, where GCC describes isView as a byte of the
// frame (DW_OP_fbreg N, DW_OP_deref_size 1), which Delve does not read.
var inlineStops = []string{"COLD-LINE: kind_name", "COLD-LINE: syntax_error", "HOT-LINE: isView"}

// inlineExprs are printed in every frame at every stop, by gdb and the
// Client: a table indexed by a field, and C's ->.
var inlineExprs = []string{"kinds[op->p5 - 1]", "op->name", "*op"}

// TestInlinedFramesAsGDB stops in the inlined helpers of inl's moved code
// (gcc: step.cold; clang-22 machine function splitting: step.cold) and
// compares the stack, frame by frame, with gdb 13's at the same
// addresses — inlined frames named by the inlined function at the line
// gdb shows — and the arguments and locals of each frame, and what print
// shows there, value by value. Plain Delve shows one nameless frame
// there and no inlined frames.
func TestInlinedFramesAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, bin := range []string{"gcc-inl", "clang22-inl"} {
		t.Run(bin, func(t *testing.T) {
			s := startDelve(t, bin, "cold")
			c := s.client
			bias := c.Resolver().ExecutableBias()
			var breaks []string
			for _, m := range inlineStops {
				line := markerLine(t, "inl/inl.c", m)
				bp, err := c.CreateBreakpoint(&api.Breakpoint{File: "inl.c", Line: line})
				if err != nil && strings.Contains(err.Error(), "Breakpoint exists") {
					continue // GCC: the same address as the line before
				}
				if err != nil {
					t.Fatalf("break inl.c:%d (%s): %v", line, m, err)
				}
				for _, a := range bp.Addrs {
					sym, off := gdbtest.SymbolOf(t, s.bin, a-bias)
					breaks = append(breaks, fmt.Sprintf("*('%s'+%#x)", sym, off))
				}
			}
			want := gdbtest.Frames(t, gdb, s.bin, breaks, 0, inlineExprs, []string{"cold"})
			img := executableRange(t, s.bin)
			compared, inlined := 0, 0
			seen := gdbtest.Seen{}
			stops := eachStop(t, c, want, func(stop int, g gdbtest.Stop) {
				frames, err := c.Stacktrace(-1, 10, 0, 0, &loadCfg)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, f := range frames {
					names = append(names, fmt.Sprintf("%s:%d", strings.TrimPrefix(f.Function.Name(), "C."), f.Line))
				}
				var gnames []string
				for _, gf := range g.Frames {
					gnames = append(gnames, fmt.Sprintf("%s:%d", gf.Name, gf.Line))
				}
				if len(names) < len(gnames) || !slices.Equal(names[:len(gnames)], gnames) {
					t.Errorf("stop %d: stack %v; gdb %v", stop+1, names, gnames)
					return
				}
				if len(frames) > 1 && frames[1].PC == frames[0].PC {
					// Plain Delve, at the same stop: no function, no inlined frames.
					plain, err := s.plain.Stacktrace(-1, 10, 0, 0, nil)
					if err != nil || len(plain) == 0 || plain[0].Function != nil || len(plain) > 1 && plain[1].PC == plain[0].PC {
						t.Errorf("stop %d: plain Delve's stack %+v, %v; want a nameless frame 0 and no inlined frames", stop+1, plain, err)
					}
				}
				for _, gf := range g.Frames {
					where := fmt.Sprintf("stop %d (%s), frame %d %s", stop+1, gnames[0], gf.N, gf.Name)
					if gf.N > 0 && frames[gf.N].PC == frames[gf.N-1].PC {
						inlined++
					}
					scope := api.EvalScope{GoroutineID: -1, Frame: gf.N}
					args, err := c.ListFunctionArgs(scope, loadCfg)
					if err != nil {
						t.Fatalf("%s: args: %v", where, err)
					}
					locs, err := c.ListLocalVariables(scope, loadCfg)
					if err != nil {
						t.Fatalf("%s: locals: %v", where, err)
					}
					// bt -full shows the same variables.
					if !slices.EqualFunc(append(slices.Clone(args), locs...), append(slices.Clone(frames[gf.N].Arguments), frames[gf.N].Locals...), func(a, b api.Variable) bool {
						return a.Name == b.Name && gdbText(a) == gdbText(b)
					}) && (len(frames[gf.N].Arguments)+len(frames[gf.N].Locals) > 0) {
						t.Errorf("%s: the stack's variables %v %v differ from args %v and locals %v", where, frames[gf.N].Arguments, frames[gf.N].Locals, args, locs)
					}
					compared += compareVariables(t, where, gf.Vars, append(args, locs...), g.Bias, bias, img,
						knownTo(bin, gf.Name, seen))
					for _, e := range inlineExprs {
						gv, ok := gf.Prints[e]
						v, err := c.EvalVariable(scope, e, loadCfg)
						switch {
						case !ok && err == nil && v.Unreadable == "":
							t.Errorf("%s: print %s = %s; gdb cannot print it", where, e, gdbText(*v))
						case !ok:
						case err != nil:
							t.Errorf("%s: print %s: %v; gdb %s", where, e, err, gv)
						case gdbText(*v) != gdbPointers.ReplaceAllString(gv, "0x…"):
							t.Errorf("%s: print %s = %s; gdb %s", where, e, gdbText(*v), gv)
						default:
							compared++
						}
					}
				}
			})
			gdbtest.CheckSeen(t, bin, seen)
			if inlined == 0 || compared == 0 {
				t.Fatalf("%d inlined frames, %d values compared", inlined, compared)
			}
			t.Logf("%d stops, %d inlined frames, %d values equal to gdb's", stops, inlined, compared)
		})
	}
}

// markerLine returns the line of the /* MARKER */ comment in the test
// source file (testdata/src/FILE).
func markerLine(t *testing.T, file, marker string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testbin.Dir(), "..", "src", file))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "/* "+marker+" */") {
			return i + 1
		}
	}
	t.Fatalf("no /* %s */ in %s", marker, file)
	return 0
}

// TestTerminalInlinedFrames runs bt, "frame N args", "frame N locals" and
// print in Delve's terminal over the Client (splitdbg debug) at the first
// stop on syntax_error's call of report, in step's moved code, and
// compares the frames bt lists and the scalar values printed with gdb's
// at the same address.
func TestTerminalInlinedFrames(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, bin := range []string{"gcc-inl", "clang22-inl"} {
		t.Run(bin, func(t *testing.T) {
			s := startDelve(t, bin, "cold")
			line := markerLine(t, "inl/inl.c", "COLD-LINE: syntax_error")
			res, err := s.client.Resolver().Resolve(spec("inl.c", line))
			if err != nil || len(res.Locs) != 1 {
				t.Fatalf("resolve inl.c:%d: %+v, %v", line, res, err)
			}
			pc := res.Locs[0].PC
			sym, off := gdbtest.SymbolOf(t, s.bin, pc-s.client.Resolver().ExecutableBias())
			want := gdbtest.Frames(t, gdb, s.bin, []string{fmt.Sprintf("*('%s'+%#x)", sym, off)}, 0, inlineExprs, []string{"cold"})
			g := want[0]
			cmds := []string{fmt.Sprintf("break *%#x", pc), "continue", "bt"}
			for _, gf := range g.Frames {
				cmds = append(cmds, fmt.Sprintf("frame %d args", gf.N), fmt.Sprintf("frame %d locals", gf.N))
			}
			cmds = append(cmds, "print kinds[op->p5 - 1]")
			out := runTerminal(t, s.client, cmds...)
			var names []string
			for _, m := range regexp.MustCompile(`(?m)^(?:\(dlv\) )?\d+  0x[0-9a-f]+ in (?:\x1b\[1m)?C\.(\w+)`).FindAllStringSubmatch(out[2], -1) {
				names = append(names, m[1])
			}
			var gnames []string
			for _, gf := range g.Frames {
				gnames = append(gnames, gf.Name)
			}
			if len(names) < len(gnames) || !slices.Equal(names[:len(gnames)], gnames) {
				t.Fatalf("bt lists %v; gdb %v:\n%s", names, gnames, out[2])
			}
			n := 0
			for i, gf := range g.Frames {
				printed := map[string]string{}
				for line := range strings.Lines(out[3+2*i] + out[4+2*i]) {
					if name, val, ok := strings.Cut(strings.TrimSpace(line), " = "); ok {
						printed[name] = val
					}
				}
				for _, v := range gf.Vars {
					if gdbtest.Known(bin, gf.Name, v[0], gdbtest.Seen{}) != "" || v[1] == "<optimized out>" || strings.ContainsAny(v[1], "{\"'") || strings.HasPrefix(v[1], "0x") {
						continue // Delve's terminal prints aggregates, strings, chars and pointers its own way
					}
					n++
					if printed[v[0]] != v[1] {
						t.Errorf("frame %d %s: %s = %q; gdb %s", gf.N, gf.Name, v[0], printed[v[0]], v[1])
					}
				}
			}
			if n < 3 {
				t.Errorf("only %d values compared", n)
			}
			if w := g.Frames[0].Prints["kinds[op->p5 - 1]"]; !strings.Contains(out[len(out)-1], strings.SplitN(w, " ", 2)[1]) {
				t.Errorf("print kinds[op->p5 - 1]: %q; gdb %s", out[len(out)-1], w)
			}
		})
	}
}
