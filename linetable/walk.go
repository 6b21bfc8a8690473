package linetable

import (
	"iter"
	"slices"

	"github.com/splitdbg/splitdbg/splitinfo"
)

// fragmentRows returns the range [lo, hi) of rows whose addresses lie in
// f, sequence ends excluded at the edges.
func (t *Table) fragmentRows(f *splitinfo.Fragment) (lo, hi int) {
	lo, _ = slices.BinarySearchFunc(t.rows, f.Start, func(r row, a uint64) int {
		if r.addr < a {
			return -1
		}
		if r.addr > a {
			return 1
		}
		return 0
	})
	// BinarySearchFunc needs sorted rows; the sequences are sorted by
	// start and rows within them ascend, so rows are sorted unless
	// sequences overlap, when the search still lands on a row ≥ Start.
	for lo > 0 && t.rows[lo-1].addr >= f.Start {
		lo--
	}
	hi = lo
	for hi < len(t.rows) && t.rows[hi].addr < f.End {
		hi++
	}
	return lo, hi
}

// Walk yields the rows of a procedure in logical order: the order its code
// would have if it were not split (seed 003, "Line Numbers"). It walks
// the entry fragment and, at the row that holds the branch to a moved
// fragment (the fragment's BranchAddr), switches to the moved fragment's
// rows — recursively, for code moved out of moved code — and returns to
// the row after the branch when they end. Fragments that no known branch
// reaches follow, in the procedure's fragment order. Sequence ends are
// skipped; each position carries its fragment.
func (t *Table) Walk(p *splitinfo.Proc) iter.Seq[Position] {
	return func(yield func(Position) bool) {
		// children[i]: fragments entered from fragment i, by branch address.
		children := make([][]int, len(p.Fragments))
		var orphans []int
		for k := 1; k < len(p.Fragments); k++ {
			f := &p.Fragments[k]
			parent := -1
			if f.BranchAddr != 0 {
				parent = p.Fragment(f.BranchAddr)
			}
			if parent < 0 || parent == k {
				orphans = append(orphans, k)
				continue
			}
			children[parent] = append(children[parent], k)
		}
		for i := range children {
			slices.SortStableFunc(children[i], func(a, b int) int {
				x, y := p.Fragments[a].BranchAddr, p.Fragments[b].BranchAddr
				switch {
				case x < y:
					return -1
				case x > y:
					return 1
				}
				return 0
			})
		}
		visited := make([]bool, len(p.Fragments))
		var walk func(k int) bool
		walk = func(k int) bool {
			visited[k] = true
			f := &p.Fragments[k]
			lo, hi := t.fragmentRows(f)
			next := children[k]
			for i := lo; i < hi; i++ {
				r := &t.rows[i]
				if !r.isEnd() {
					pos := t.position(i, r.addr)
					if !yield(pos) {
						return false
					}
				}
				// The row covering a branch site is the last row at or
				// below it: switch after it.
				for len(next) > 0 {
					b := p.Fragments[next[0]].BranchAddr
					if i+1 < hi && t.rows[i+1].addr <= b {
						break
					}
					c := next[0]
					next = next[1:]
					if !visited[c] && !walk(c) {
						return false
					}
				}
			}
			for _, c := range next {
				if !visited[c] && !walk(c) {
					return false
				}
			}
			return true
		}
		if !walk(0) {
			return
		}
		for _, k := range orphans {
			if !visited[k] && !walk(k) {
				return
			}
		}
		for k := range p.Fragments {
			if !visited[k] && !walk(k) {
				return
			}
		}
	}
}
