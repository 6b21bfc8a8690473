package symbolize

import (
	"cmp"
	"slices"

	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// Values of a symbol's moved link below 1 (see linkMoved); a link k >= 1
// names the symbol of index k - 1.
const (
	mixed    = 0  // ask the procedures per address
	notMoved = -1 // no address the symbol holds lies in a moved fragment
)

// linkMoved returns, per symbol of t, how the addresses it holds lie in
// the moved fragments (Frag > 0) of the procedures, so that naming an
// address by its logical function takes the one symbol search instead of
// a procedure search more: a symbol all of whose addresses lie in one
// moved fragment gets the symbol at its procedure's entry (itself if
// there is none there), a symbol none of whose addresses do notMoved,
// and any other symbol (across a fragment's bounds) mixed. Where any two
// fragments overlap (the procedures then keep one per address) every
// symbol is mixed.
func linkMoved(t *symtab, procs *splitinfo.Table) []int32 {
	type frag struct {
		start, end, entry uint64
		proc              *splitinfo.Proc
		k                 int
	}
	var frags []frag
	for p := range procs.All() {
		for k, f := range p.Fragments {
			frags = append(frags, frag{f.Start, f.End, p.Entry, p, k})
		}
	}
	slices.SortFunc(frags, func(a, b frag) int { return cmp.Compare(a.start, b.start) })
	links := make([]int32, len(t.syms))
	for j := 1; j < len(frags); j++ {
		if frags[j].start < frags[j-1].end {
			return links
		}
	}
	for i := range t.syms {
		s := &t.syms[i]
		lo, hi := s.addr, ^uint64(0)
		if i+1 < len(t.syms) {
			hi = t.syms[i+1].addr
		}
		if s.size != 0 && s.addr+s.size > s.addr {
			hi = min(hi, s.addr+s.size)
		}
		if lo >= hi {
			links[i] = notMoved
			continue
		}
		// The first fragment ending above lo (the ends ascend as the
		// starts do, the fragments being disjoint), and the fragments
		// after it that start below hi: those meeting [lo, hi).
		j, _ := slices.BinarySearchFunc(frags, lo, func(f frag, a uint64) int {
			if f.end <= a {
				return -1
			}
			return 1
		})
		links[i] = notMoved
		for m := j; m < len(frags) && frags[m].start < hi; m++ {
			if frags[m].k > 0 {
				links[i] = mixed
				break
			}
		}
		if links[i] == mixed && frags[j].k > 0 && frags[j].start <= lo && hi <= frags[j].end {
			f := &frags[j]
			if loc, ok := procs.Lookup(lo); ok && loc.Proc == f.proc && loc.Frag == f.k {
				links[i] = int32(i) + 1
				if e := t.holding(f.entry); e >= 0 && t.syms[e].addr == f.entry {
					links[i] = int32(e) + 1
				}
			}
		}
	}
	return links
}

// pieceNames returns, per piece of x's address partition, 1 + the symbol
// that names the outermost frame at each of its addresses with linkage
// names (one symbol holds them all, linked through moved), or 0 where
// the addresses must ask the symbol table: so that an address in DWARF
// finds its scopes and its name in the one search. The last piece, open
// above, asks.
func pieceNames(x *linetable.Inlines, t *symtab, moved []int32) []int32 {
	n := x.Pieces()
	names := make([]int32, n)
	j := -1 // the last symbol at or below the piece's start
	for i := 0; i+1 < n; i++ {
		lo, hi := x.PieceBounds(i)
		for j+1 < len(t.syms) && t.syms[j+1].addr <= lo {
			j++
		}
		if j < 0 || moved[j] == mixed {
			continue
		}
		s := &t.syms[j]
		end := ^uint64(0)
		if j+1 < len(t.syms) {
			end = t.syms[j+1].addr
		}
		if s.size != 0 {
			if s.addr+s.size < s.addr {
				continue // a size past the end: at holds nothing
			}
			end = min(end, s.addr+s.size)
		}
		if hi > end {
			continue
		}
		names[i] = int32(j) + 1
		if moved[j] > 0 {
			names[i] = moved[j]
		}
	}
	return names
}
