package symbolize

import (
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestLinkMovedAgrees checks the symbol each outermost frame is named
// by, through linkMoved's per-symbol links and pieceNames's per-piece
// ones, against the per-address answer (the procedure whose moved
// fragment holds the address, then the symbol at its entry) at every
// address of every symbol and fragment of every linked test binary, one
// past each, and the bounds of every piece of the inline partition.
func TestLinkMovedAgrees(t *testing.T) {
	linked, unmoved, named := 0, 0, 0
	for _, name := range testbin.Linked(t) {
		m, err := Open(testbin.Path(t, name))
		if err != nil {
			continue // not every test binary has procedures (relocatable, stripped)
		}
		if len(m.moved) != len(m.syms.syms) || len(m.names) != m.inlines.Pieces() {
			t.Fatalf("%s: %d links for %d symbols, %d for %d pieces", name, len(m.moved), len(m.syms.syms), len(m.names), m.inlines.Pieces())
		}
		o := &Options{Functions: LinkageNames}
		check := func(a uint64) {
			var got, bySymbol Frame
			m.nameOutermost(&got, m.inlines.Piece(a), a, o, false)
			m.nameOutermost(&bySymbol, -1, a, o, false)
			if got != bySymbol {
				t.Fatalf("%s %#x: by piece %q at %#x, by symbol %q at %#x", name, a, got.Function, got.StartAddr, bySymbol.Function, bySymbol.StartAddr)
			}
			want := Frame{}
			if s := m.syms.at(a); s != nil {
				if proc := m.movedProc(a); proc != nil {
					if e := m.syms.at(proc.Entry); e != nil && e.addr == proc.Entry {
						s = e
					}
				}
				want.Function, want.StartAddr, want.HasStartAddr = s.name, s.addr, true
			}
			if got != want {
				t.Fatalf("%s %#x: %q at %#x, per address %q at %#x", name, a, got.Function, got.StartAddr, want.Function, want.StartAddr)
			}
		}
		every := func(lo, hi uint64) {
			for a := lo; a < hi && a-lo < 1<<16; a++ {
				check(a)
			}
			check(hi)
		}
		for i, s := range m.syms.syms {
			hi := s.addr + max(s.size, 1)
			if i+1 < len(m.syms.syms) {
				hi = min(hi, m.syms.syms[i+1].addr)
			}
			every(s.addr, hi)
			switch {
			case m.moved[i] > 0:
				linked++
			case m.moved[i] == notMoved:
				unmoved++
			}
		}
		for p := range m.Procs().All() {
			for _, f := range p.Fragments {
				every(f.Start, f.End)
			}
		}
		for i := range m.inlines.Pieces() {
			lo, hi := m.inlines.PieceBounds(i)
			check(lo)
			check(hi - 1)
			if m.names[i] > 0 {
				named++
			}
		}
	}
	t.Logf("%d symbols linked to their procedure's entry, %d not moved, %d pieces named", linked, unmoved, named)
	if linked == 0 || unmoved == 0 || named == 0 {
		t.Errorf("%d symbols linked to their procedure's entry, %d not moved, %d pieces named: the per-address search answers all", linked, unmoved, named)
	}
}
