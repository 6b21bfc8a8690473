package adapter

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/delvetest"
	"github.com/splitdbg/splitdbg/internal/gdbtest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestStepOutAsGDB stops in complain, called from withdraw's cold
// fragment, steps out and then next twice, through Delve's terminal over
// the client and through gdb 13's finish and next: the lines are gdb's.
// clang-22 returns to a line-0 row, where plain Delve says "no source
// for PC" and stops; Delve's "return value read error: could not get g"
// (a C program has no goroutine) is not shown.
func TestStepOutAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	gdbLine := regexp.MustCompile(`(?m)^(\d+)\s+in |\) at \S+:(\d+)$`)
	ourLine := regexp.MustCompile(`> C\.\w+\(\) \S+:(\d+) `)
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(bin, func(t *testing.T) {
			s := startDelve(t, bin, "cold")
			out := delvetest.RunTerminal(t, "", s.client, "break complain", "continue", "stepout", "next", "next")
			var ours []string
			for _, o := range out[2:] {
				if strings.Contains(o, "could not get g") || strings.Contains(o, "no source") {
					t.Errorf("the terminal printed %q", o)
				}
				if m := ourLine.FindStringSubmatch(o); m != nil {
					ours = append(ours, m[1])
				} else {
					ours = append(ours, "?")
				}
			}
			g, _ := testbin.RunCombined(t, gdb, "-batch", "-nx", "-iex", "set debuginfod enabled off",
				"-ex", "break complain", "-ex", "run cold", "-ex", "finish", "-ex", "next", "-ex", "next", s.bin)
			var theirs []string
			// After the stop in complain, which prints its complaint as
			// finish runs it to its end.
			at := strings.Index(g, "cannot withdraw")
			if at < 0 {
				t.Fatalf("gdb did not run complain:\n%s", g)
			}
			for _, m := range gdbLine.FindAllStringSubmatch(g[at:], -1) {
				theirs = append(theirs, m[1]+m[2])
			}
			// gdb prints a line twice where it enters a frame (the frame,
			// then the source line).
			theirs = slices.Compact(theirs)
			if !slices.Equal(ours, theirs) {
				t.Errorf("stepout, next, next: lines %v; gdb %v\ngdb said:\n%s", ours, theirs, g)
			}
		})
	}
}

// TestStepIntoAsGDB steps into functions, from main into withdraw and
// from withdraw's moved code into complain, through Delve's terminal over
// the client and through gdb 13 from the same addresses: the lines of
// each stop are gdb's, with two differences that are not splitdbg's.
// Where GCC puts the rows of the opening line and the first statements
// at a function's entry, gdb reports the last statement row there, and
// so does the client at the stops of its own stepping (in split
// functions); Delve reports the opening line, and its own step (from
// main, which is not split, into withdraw) stands. clang-22 marks the
// end of withdraw's prologue (prologue_end, 2 bytes in): Delve and the
// client step to it, gdb 13 stops at the entry, on the opening line,
// because its step skips prologues by reading instructions and trusts
// the line table only for a producer that starts with "clang " (Debian's:
// "Debian clang version").
func TestStepIntoAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	gdbLine := regexp.MustCompile(`(?m)^(\d+)\s+in |\) at \S+:(\d+)$`)
	ourLine := regexp.MustCompile(`> (?:\[Breakpoint \d+\] )?C\.\w+\(\) \S+:(\d+) `)
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(bin, func(t *testing.T) {
			s := startDelve(t, bin, "cold")
			bias := s.client.Resolver().ExecutableBias()
			res, err := s.client.Resolver().Resolve("inv.c:42") // withdraw's call of complain, in withdraw.cold
			if err != nil || len(res.Locs) != 1 {
				t.Fatalf("inv.c:42: %+v, %v", res, err)
			}
			sym, off := gdbtest.SymbolOf(t, s.bin, res.Locs[0].PC-bias)
			for _, run := range []struct {
				ours, theirs string // where each debugger breaks
				steps        int
				// first is the first step's line, the client's and gdb's,
				// where they differ (see above); clang: only that step is
				// compared, the others follow from it.
				first map[string][2]string
			}{
				{"inv.c:78", "inv.c:78", 3, map[string][2]string{"gcc-inv": {"38", "40"}, "clang22-inv": {"39", "38"}}},
				// One step: complain calls fprintf, which gdb steps into
				// with the C library's debug file.
				{fmt.Sprintf("*%#x", res.Locs[0].PC), fmt.Sprintf("*('%s'+%#x)", sym, off), 1, map[string][2]string{"clang22-inv": {"33", "32"}}},
			} {
				cmds := []string{"break " + run.ours, "continue"}
				gcmds := []string{"-batch", "-nx", "-iex", "set debuginfod enabled off", "-ex", "break " + run.theirs, "-ex", "run cold"}
				for range run.steps {
					cmds = append(cmds, "step")
					gcmds = append(gcmds, "-ex", "step")
				}
				out := delvetest.RunTerminal(t, "", s.client, cmds...)
				var ours []string
				for _, o := range out[1:] {
					if m := ourLine.FindStringSubmatch(o); m != nil {
						ours = append(ours, m[1])
					} else {
						ours = append(ours, "?")
					}
				}
				g, _ := testbin.RunCombined(t, gdb, append(gcmds, s.bin)...)
				var theirs []string
				at := strings.Index(g, "\nBreakpoint 1, ")
				if at < 0 {
					t.Fatalf("gdb did not stop at %s:\n%s", run.theirs, g)
				}
				for _, m := range gdbLine.FindAllStringSubmatch(g[at:], -1) {
					theirs = append(theirs, m[1]+m[2])
				}
				theirs = slices.Compact(theirs)
				if len(ours) < 2 || len(theirs) < 2 {
					t.Fatalf("break %s: lines %v; gdb %v", run.ours, ours, theirs)
				}
				if d, ok := run.first[bin]; ok {
					if ours[1] != d[0] || theirs[1] != d[1] {
						t.Errorf("break %s, continue, step: line %s, gdb %s; want %s, gdb %s (see above)", run.ours, ours[1], theirs[1], d[0], d[1])
					}
					ours[1], theirs[1] = "", ""
					if bin == "clang22-inv" {
						continue
					}
				}
				if !slices.Equal(ours, theirs) {
					t.Errorf("break %s, continue, step ×%d: lines %v; gdb %v\ngdb said:\n%s", run.ours, run.steps, ours, theirs, g)
				}
			}
		})
	}
}
