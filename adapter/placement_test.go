package adapter

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/delvetest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestTerminalPlacement types "break FILE:LINE" into Delve's terminal
// over the client for every line of a source file that has code in moved
// code, and checks that the breakpoint has the addresses "splitdbg
// break" gives (one placement for every door) and that the terminal's
// "Breakpoint N set at ... FILE:LINE" names the line splitdbg resolved,
// not another line whose row shares the first address.
func TestTerminalPlacement(t *testing.T) {
	setRe := regexp.MustCompile(`Breakpoint (\d+) set at 0x[0-9a-f,x]+ for \S+ \S+:(\d+)`)
	for _, tc := range []struct{ bin, src string }{
		{"gcc-inv", "inv/inv.c"},
		{"clang22-inv", "inv/inv.c"},
		{"bolt22", "bolt/bolt.c"},
		{"clang19-mfs", "clang/split.c"},
		{"gcc-pgo", "pgo/pgo.c"},
	} {
		t.Run(tc.bin, func(t *testing.T) {
			s := startDelve(t, tc.bin)
			c := s.client
			data, err := os.ReadFile(filepath.Join(testbin.Dir(), "..", "src", tc.src))
			if err != nil {
				t.Fatal(err)
			}
			base := filepath.Base(tc.src)
			checked := 0
			for l := 1; l <= strings.Count(string(data), "\n"); l++ {
				loc := base + ":" + strconv.Itoa(l)
				res, err := c.Resolver().Resolve(loc)
				if err != nil || !res.Moved() {
					continue
				}
				out := delvetest.RunTerminal(t, "", c, "break "+loc)[0]
				m := setRe.FindStringSubmatch(out)
				if m == nil {
					t.Errorf("break %s printed %q", loc, out)
					continue
				}
				if m[2] != strconv.Itoa(res.Line) {
					t.Errorf("break %s: the terminal names line %s, splitdbg resolved line %d", loc, m[2], res.Line)
				}
				id, _ := strconv.Atoi(m[1])
				bp, err := c.GetBreakpoint(id)
				if err != nil {
					t.Fatal(err)
				}
				if want := slices.Sorted(slices.Values(res.Addrs())); !slices.Equal(slices.Sorted(slices.Values(bp.Addrs)), want) {
					t.Errorf("break %s: addresses %#x, splitdbg break gives %#x", loc, bp.Addrs, want)
				}
				if _, err := c.ClearBreakpoint(id); err != nil {
					t.Fatal(err)
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("no line with code in moved code")
			}
			t.Logf("%d lines with code in moved code", checked)
		})
	}
}

// TestBreakSeveralFunctions types "break helper" into Delve's terminal
// over the client, where gcc-cold has a static helper in a.c and one in
// b.c: like gdb (0x13a0 a.c:17, 0x13d0 b.c:15 before relocation), one
// breakpoint with a location at each function's start (as plain Delve
// too: it is the placement every door shares); "break b.c:helper" picks
// one (Delve's
// terminal then complains that it cannot parse FILE:FUNC, a syntax of
// gdb's and splitdbg's it does not have, but the breakpoint is set).
func TestBreakSeveralFunctions(t *testing.T) {
	s := startDelve(t, "gcc-cold")
	c := s.client
	res, err := c.Resolver().Resolve("helper")
	if err != nil || len(res.Locs) != 2 {
		t.Fatalf("Resolve(helper) = %+v, %v; want two functions", res.Locs, err)
	}
	out := delvetest.RunTerminal(t, "", c, "break helper")
	m := regexp.MustCompile(`Breakpoint (\d+) set at (0x[0-9a-f]+),(0x[0-9a-f]+)`).FindStringSubmatch(out[0])
	if m == nil {
		t.Fatalf("break helper printed %q, want one breakpoint at two addresses", out[0])
	}
	id, _ := strconv.Atoi(m[1])
	bp, err := c.GetBreakpoint(id)
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Sorted(slices.Values(res.Addrs())); !slices.Equal(slices.Sorted(slices.Values(bp.Addrs)), want) {
		t.Errorf("break helper: %#x, want %#x", bp.Addrs, want)
	}
	out = delvetest.RunTerminal(t, "", c, "clear "+m[1], "break b.c:helper")
	delvetest.Match(t, "break b.c:helper", out[1], `Breakpoint \d+ set at `+fmt.Sprintf("%#x", res.Locs[1].PC)+` for C\.helper\(\) \S*b\.c:\d+`)
}

// TestStopLineAsSet breaks on gcc-pgo's pgo.c:22, whose addresses in the
// loop are shared with rows of line 23: the stop is reported on line 22,
// the line the breakpoint was set on, as gdb reports it ("Breakpoint 1,
// ... at pgo/pgo.c:22"), not on the line whose row shares the address.
func TestStopLineAsSet(t *testing.T) {
	s := startDelve(t, "gcc-pgo")
	out := delvetest.RunTerminal(t, "", s.client, "break pgo.c:22", "continue")
	delvetest.Match(t, "continue", out[1], `> \[Breakpoint 1\] C\.checksum\(\) pgo/pgo\.c:22 `)
}
