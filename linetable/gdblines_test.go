package linetable_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// gdbBreakRe reads gdb's answer to "break FILE:LINE": the first address
// and the line it settled on.
var gdbBreakRe = regexp.MustCompile(`^Breakpoint \d+ at 0x([0-9a-f]+): (?:file \S+, line (\d+)\.|\S+:(\d+)\. \(\d+ locations\))`)

// TestLinesAsGDB asks gdb 13 for a breakpoint on every line of each
// source file of the inv and demo programs and compares the line it
// settles on with splitdbg's: a line with code is itself (past the
// prologue at a function's entry), a line without code moves to the
// next line with code, a line whose rows GCC or clang marked as no
// statement has no address of its own. The one difference is gdb's
// known error (docs/DEBUGGERS.md): it puts a line whose code GCC moved
// to a cold fragment at the function's entry.
func TestLinesAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, tc := range []struct{ bin, src string }{
		{"gcc-inv", "inv/inv.c"},
		{"clang22-inv", "inv/inv.c"},
		{"demo", "demo/demo.c"},
		{"clang22-mfs", "clang/split.c"},
	} {
		t.Run(tc.bin, func(t *testing.T) {
			bin := testbin.Path(t, tc.bin)
			src, err := os.ReadFile(filepath.Join(testbin.Dir(), "..", "src", tc.src))
			if err != nil {
				t.Fatal(err)
			}
			n := strings.Count(string(src), "\n")
			base := filepath.Base(tc.src)
			args := []string{"-batch", "-nx", "-iex", "set debuginfod enabled off", "-iex", "set breakpoint pending off"}
			for l := 1; l <= n; l++ {
				args = append(args, "-ex", fmt.Sprintf("echo @@LINE %d\\n", l), "-ex", fmt.Sprintf("break %s:%d", base, l))
			}
			out, _ := testbin.RunCombined(t, gdb, append(args, bin)...)
			gdbLine := map[int]int{}
			gdbAddr := map[int]uint64{}
			cur := 0
			for line := range strings.Lines(out) {
				line = strings.TrimSpace(line)
				if v, ok := strings.CutPrefix(line, "@@LINE "); ok {
					cur, _ = strconv.Atoi(v)
					continue
				}
				if m := gdbBreakRe.FindStringSubmatch(line); m != nil && cur > 0 {
					a, _ := strconv.ParseUint(m[1], 16, 64)
					l, _ := strconv.Atoi(m[2] + m[3])
					gdbLine[cur], gdbAddr[cur] = l, a
				}
			}
			if len(gdbLine) == 0 {
				t.Fatalf("gdb answered no breakpoint:\n%s", out)
			}
			tab, err := linetable.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			same, gdbWrong := 0, 0
			for l := 1; l <= n; l++ {
				b, err := tab.Resolve(base + ":" + strconv.Itoa(l))
				ours := 0
				if err == nil {
					ours = b.Line
				}
				want, ok := gdbLine[l]
				if !ok {
					if err == nil {
						t.Errorf("%s:%d: gdb has no breakpoint; splitdbg has line %d", base, l, ours)
					}
					continue
				}
				if ours == want {
					same++
					continue
				}
				if err == nil && movedLine(b) && entryOf(tab.Procs(), gdbAddr[l]) {
					gdbWrong++ // gdb's cold-line error
					continue
				}
				t.Errorf("%s:%d: gdb settles on line %d at %#x, splitdbg on %d (%v)", base, l, want, gdbAddr[l], ours, err)
			}
			t.Logf("%d lines as gdb, %d where gdb puts a cold line at the entry", same, gdbWrong)
		})
	}
}

// movedLine reports a resolution with an address in moved code.
func movedLine(b linetable.Breakpoint) bool {
	for _, l := range b.Locs {
		if l.Frag > 0 {
			return true
		}
	}
	return false
}

// entryOf reports whether addr is the entry of a split procedure.
func entryOf(t *splitinfo.Table, addr uint64) bool {
	loc, ok := t.Lookup(addr)
	return ok && loc.Proc.Split() && loc.Proc.Entry == addr
}
