package adapter

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestConditionInMovedCode sets conditional breakpoints on withdraw's
// cold line, which the inv program runs four times with shortfalls 3, 1,
// 4 and 6 (its stderr says so): the stops are exactly those where the
// condition holds, and the hit condition counts those stops. (Delve,
// given the condition itself, stops at every hit: it has no scope for
// shortfall in moved code.) A condition that cannot be evaluated stops
// the program, as in Delve.
func TestConditionInMovedCode(t *testing.T) {
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		for _, tc := range []struct {
			cond, hitCond string
			want          []int64
		}{
			{"shortfall > 2", "", []int64{3, 4, 6}},
			{"shortfall > 2", "== 2", []int64{4}},
			{"", ">= 3", []int64{4, 6}},
			{"no_such_variable == 1", "", nil},
		} {
			t.Run(bin+"/"+tc.cond+"/"+tc.hitCond, func(t *testing.T) {
				s := startDelve(t, bin, "cold")
				c := s.client
				file, line := coldLine(t, "inv/inv.c", "withdraw")
				bp, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line, Cond: tc.cond, HitCond: tc.hitCond})
				if err != nil {
					t.Fatal(err)
				}
				if bp.Cond != tc.cond || bp.HitCond != tc.hitCond {
					t.Errorf("breakpoint shows condition %q, hit condition %q", bp.Cond, bp.HitCond)
				}
				var got []int64
				stops := 0
				for {
					st := <-c.Continue()
					if st.Exited {
						break
					}
					stops++
					if tc.want == nil {
						// Delve's answer to a condition it cannot evaluate:
						// the stop, with the error.
						if st.Err == nil || !strings.Contains(st.Err.Error(), "could not find symbol value for no_such_variable") {
							t.Fatalf("stop %d: error %v, want the condition's", stops, st.Err)
						}
						continue
					}
					if st.Err != nil {
						t.Fatal(st.Err)
					}
					v, err := c.EvalVariable(api.EvalScope{GoroutineID: -1}, "shortfall", api.LoadConfig{})
					if err != nil {
						t.Fatalf("stop %d: shortfall: %v", stops, err)
					}
					k, err := strconv.ParseInt(v.Value, 10, 64)
					if err != nil {
						t.Fatalf("stop %d: shortfall = %q", stops, v.Value)
					}
					got = append(got, k)
				}
				if tc.want == nil {
					if stops != 4 {
						t.Errorf("%d stops, want one at each of the 4 runs of the line", stops)
					}
					return
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("stops with shortfall %v, want %v", got, tc.want)
				}
			})
		}
	}
}

// gdbHits runs bin with args under gdb 13 with a breakpoint on loc and
// returns how many times it stopped there.
func gdbHits(t *testing.T, gdb, bin, loc string, args ...string) int {
	t.Helper()
	script := filepath.Join(t.TempDir(), "hits.gdb")
	cmds := "set pagination off\nset debuginfod enabled off\nbreak " + loc + "\nrun " + strings.Join(args, " ") +
		"\nwhile $_isvoid($_exitcode)\n  continue\nend\n"
	if err := os.WriteFile(script, []byte(cmds), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := testbin.RunCombined(t, gdb, "-batch", "-nx", "-x", script, bin)
	return strings.Count(out, "\nBreakpoint 1, ")
}

// TestHitCountsAsGDB breaks on lines of inv's withdraw and value (cold
// lines, a line GCC shares between the cold path and the hot epilogue,
// a hot line) and counts the stops of a cold run: each equals the times
// the line runs (inv's stderr says which: withdraw fails 4 times of 7,
// value once), and gdb's count where gdb places the breakpoint in the
// line's own code (clang); GCC's cold lines gdb puts at the entry, so it
// stops on every call there (docs/DEBUGGERS.md).
func TestHitCountsAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	lines := map[int]int{42: 4, 44: 4, 46: 3, 56: 1} // line → times it runs
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		for line, want := range lines {
			t.Run(bin+"/"+strconv.Itoa(line), func(t *testing.T) {
				s := startDelve(t, bin, "cold")
				c := s.client
				if _, err := c.CreateBreakpoint(&api.Breakpoint{File: "inv.c", Line: line}); err != nil {
					t.Fatal(err)
				}
				hits := 0
				for {
					st := <-c.Continue()
					if st.Exited || st.Err != nil {
						break
					}
					hits++
				}
				if hits != want {
					t.Errorf("inv.c:%d: %d stops, want %d (the times the line runs)", line, hits, want)
				}
				g := gdbHits(t, gdb, s.bin, "inv.c:"+strconv.Itoa(line), "cold")
				switch {
				case bin == "gcc-inv" && (line == 42 || line == 44 || line == 56):
					t.Logf("inv.c:%d: gdb stops %d times (at the function's entry), splitdbg %d", line, g, hits)
				case g != hits:
					t.Errorf("inv.c:%d: gdb stops %d times, splitdbg %d", line, g, hits)
				}
			})
		}
	}
}
