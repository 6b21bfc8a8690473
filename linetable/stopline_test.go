package linetable_test

import (
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
)

// stopLineByPositions is StopLine spelled with PC and StopPC, as the
// adapter's Frame did: StopPC's row, or PC's where StopPC's has line 0.
func stopLineByPositions(tab *linetable.Table, pc uint64) (file string, line, column int, ok bool) {
	pos, ok := tab.PC(pc)
	if !ok {
		return "", 0, 0, false
	}
	if sp, found := tab.StopPC(pc); found && sp.Line > 0 {
		pos = sp
	}
	return pos.File, pos.Line, pos.Column, true
}

// TestLineAgreesWithPositions: at every row address of every linked test
// binary, and on either side of it, Line reports PC's file, line and
// column, and StopLine StopPC's (PC's where StopPC's row has line 0).
func TestLineAgreesWithPositions(t *testing.T) {
	for _, bin := range testbin.Linked(t) {
		tab, err := linetable.Open(testbin.Path(t, bin))
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		stops := 0
		for r := range tab.Rows() {
			for _, pc := range []uint64{r.Addr - 1, r.Addr, r.Addr + 1} {
				pos, ok := tab.PC(pc)
				f, l, c, ok2 := tab.Line(pc)
				if ok != ok2 || f != pos.File || l != pos.Line || c != pos.Column {
					t.Fatalf("%s %#x: Line %s:%d:%d %v, PC %s:%d:%d %v",
						bin, pc, f, l, c, ok2, pos.File, pos.Line, pos.Column, ok)
				}
				wf, wl, wc, wok := stopLineByPositions(tab, pc)
				f, l, c, ok = tab.StopLine(pc)
				if ok != wok || f != wf || l != wl || c != wc {
					t.Fatalf("%s %#x: StopLine %s:%d:%d %v, want %s:%d:%d %v",
						bin, pc, f, l, c, ok, wf, wl, wc, wok)
				}
				if ok && l != pos.Line {
					stops++
				}
			}
		}
		t.Logf("%s: StopLine differs from Line at %d addresses", bin, stops)
	}
}

// TestStopLine: at the start of GCC's c_classify.cold, StopLine reports the
// statement row of the cold line (split.c:25), as StopPC does, where Line
// reports the row after it.
func TestStopLine(t *testing.T) {
	tab, err := linetable.Open(testbin.Path(t, "cgo"))
	if err != nil {
		t.Fatal(err)
	}
	cold := tab.Procs().ByName("c_classify")[0].Fragments[1].Start
	_, line, _, ok1 := tab.Line(cold)
	_, stop, _, ok2 := tab.StopLine(cold)
	if !ok1 || !ok2 || stop != 25 || line == stop {
		t.Errorf("at %#x: Line %d, StopLine %d; want StopLine 25, Line another", cold, line, stop)
	}
}

// BenchmarkStopLine: the line a debugger shows for a stop, as StopLine and
// as the PC and StopPC calls it replaces.
func BenchmarkStopLine(b *testing.B) {
	lb := newLineBench(b)
	b.Run("StopLine", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, _, _, ok := lb.tab.StopLine(lb.pcs[i%len(lb.pcs)].pc); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("PC+StopPC", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, _, _, ok := stopLineByPositions(lb.tab, lb.pcs[i%len(lb.pcs)].pc); !ok {
				b.Fatal("not found")
			}
		}
	})
}
