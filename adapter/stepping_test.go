package adapter

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/delvetest"
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
