package linetable

import (
	"cmp"
	"fmt"
	"iter"
	"slices"

	"github.com/splitdbg/splitdbg/splitinfo"
)

// fragmentRows returns the range [lo, hi) of rows whose addresses lie in
// f.
func (t *Table) fragmentRows(f *splitinfo.Fragment) (lo, hi int) {
	// The first row at or after Start follows the last row before it.
	lo = 0
	if f.Start > 0 {
		lo = t.dir.Find(f.Start-1, t.start) + 1
	}
	hi = lo
	for hi < len(t.rows) && t.start(hi) < f.End {
		hi++
	}
	return lo, hi
}

// Walk yields the rows of a procedure in logical order: the order its code
// would have if it were not split (seed 003, "Line Numbers"). When the
// file records that order — the block IDs of an LLVM basic-block address
// map, the input offsets of BOLT address translation — and it covers every
// row of the procedure, the rows follow it. Otherwise Walk walks the entry
// fragment and, at the row that holds the branch to a moved fragment (the
// fragment's BranchAddr), switches to the moved fragment's rows —
// recursively, for code moved out of moved code — and returns to the row
// after the branch when they end; fragments that no known branch reaches
// follow, in the procedure's fragment order. Sequence ends are skipped;
// each position carries its fragment.
func (t *Table) Walk(p *splitinfo.Proc) iter.Seq[Position] {
	if keyed, ok := t.keyedRows(p); ok {
		return func(yield func(Position) bool) {
			for _, k := range keyed {
				if !yield(t.position(k.row, t.rows[k.row].addr)) {
					return
				}
			}
		}
	}
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
				return cmp.Compare(p.Fragments[a].BranchAddr, p.Fragments[b].BranchAddr)
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

type keyedRow struct {
	key uint64
	row int
}

// keyedRows returns p's rows sorted by their logical key, when every row
// has one and all keys are relative to one function. A row in padding
// between basic blocks takes the key of the row before it.
func (t *Table) keyedRows(p *splitinfo.Proc) ([]keyedRow, bool) {
	if !p.Split() || t.procs.BAT() == nil && t.procs.BBAddrMap() == nil {
		return nil, false
	}
	var out []keyedRow
	var origin uint64
	for k := range p.Fragments {
		lo, hi := t.fragmentRows(&p.Fragments[k])
		first := true
		for i := lo; i < hi; i++ {
			if t.rows[i].isEnd() {
				continue
			}
			o, key, ok := t.procs.LogicalKey(t.rows[i].addr)
			switch {
			case ok && (len(out) == 0 || o == origin):
				origin = o
			case !ok && !first:
				key = out[len(out)-1].key
			default:
				return nil, false
			}
			first = false
			out = append(out, keyedRow{key, i})
		}
	}
	slices.SortStableFunc(out, func(a, b keyedRow) int {
		if a.key != b.key {
			return cmp.Compare(a.key, b.key)
		}
		return cmp.Compare(t.rows[a.row].addr, t.rows[b.row].addr)
	})
	return out, true
}

// WalkRow is a row of a logical walk as `splitdbg lines` prints it; its
// JSON is the command's: {"addr","file","line","column","is_stmt",
// "fragment"}, fragment the index in logical order (0 is the entry).
type WalkRow struct {
	Addr     uint64 `json:"addr"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	IsStmt   bool   `json:"is_stmt"`
	Fragment int    `json:"fragment"`
}

// WalkRows returns the rows of Walk(p), never nil.
func (t *Table) WalkRows(p *splitinfo.Proc) []WalkRow {
	rows := []WalkRow{}
	for pos := range t.Walk(p) {
		rows = append(rows, WalkRow{pos.Addr, pos.File, pos.Line, pos.Column, pos.IsStmt, pos.Frag})
	}
	return rows
}

// AppendText appends r as `splitdbg lines` lists it, one line.
func (r WalkRow) AppendText(b []byte) []byte {
	b = fmt.Appendf(b, "%#x  %s:%d:%d  fragment %d", r.Addr, r.File, r.Line, r.Column, r.Fragment)
	if r.IsStmt {
		b = append(b, " stmt"...)
	}
	return append(b, '\n')
}
