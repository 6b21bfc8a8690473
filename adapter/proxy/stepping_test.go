package proxy

import (
	"regexp"
	"slices"
	"testing"

	"github.com/splitdbg/splitdbg/adapter"
	"github.com/splitdbg/splitdbg/internal/delvetest"
)

// TestStepOutThenNext runs stepout and next in Delve's terminal ("dlv
// connect") through the proxy, from complain back into withdraw's and
// value's moved code and on, and checks that every command moves and
// stops on the lines the adapter's terminal stops on in the same program
// (adapter's TestStepOutAsGDB compares those with gdb's finish and next):
// the first next after stepout once stayed where it was.
func TestStepOutThenNext(t *testing.T) {
	line := regexp.MustCompile(`> (?:\[Breakpoint \d+\] )?(C\.\w+\(\) \S+:\d+) (?:\(hits[^)]*\) )?\(PC: (0x[0-9a-f]+)\)`)
	stops := func(out []string) (where, pcs []string) {
		for _, o := range out {
			if m := line.FindStringSubmatch(o); m != nil {
				where, pcs = append(where, m[1]), append(pcs, m[2])
			} else {
				where, pcs = append(where, "?"), append(pcs, "?")
			}
		}
		return where, pcs
	}
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		for _, cmds := range [][]string{
			{"break complain", "continue", "stepout", "next", "next"},
			{"break complain", "continue", "continue", "continue", "continue", "continue", "stepout", "next", "next"},
		} {
			t.Run(bin, func(t *testing.T) {
				up := startDelve(t, bin, "cold")
				_, addr := startProxy(t, up)
				c := dialRPC(t, addr)
				defer c.Disconnect(false)
				got, pcs := stops(delvetest.RunTerminal(t, "proxy", c, cmds...)[1:])

				ref := startDelve(t, bin, "cold")
				core, err := adapter.New(ref.direct, ref.bin)
				if err != nil {
					t.Fatal(err)
				}
				defer core.Close()
				want, _ := stops(delvetest.RunTerminal(t, "adapter", core, cmds...)[1:])
				if !slices.Equal(got, want) {
					t.Errorf("%v: proxy stops at %v; the adapter at %v", cmds, got, want)
				}
				for i := 1; i < len(pcs); i++ {
					if cmds[i+1] != "continue" && pcs[i] == pcs[i-1] {
						t.Errorf("%v: %s did not move from %s (%s)", cmds, cmds[i+1], pcs[i], got[i])
					}
				}
			})
		}
	}
}
