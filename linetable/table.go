package linetable

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/splitdbg/splitdbg/internal/addrindex"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// Table is the line index of one ELF file joined to its procedures. It is
// immutable and safe for concurrent use.
type Table struct {
	procs  *splitinfo.Table
	files  []string // interned, path.Clean'ed file names
	rows   []row    // sequences sorted by start address, rows in program order
	index  addrindex.Index
	byLine []uint32 // indices of rows with a line, sorted by (file, line, address)
}

// row is a stored line row: 24 bytes.
type row struct {
	addr   uint64
	file   uint32
	line   uint32
	column uint32
	flags  uint8
}

const (
	flagStmt uint8 = 1 << iota
	flagPrologueEnd
	flagEnd
)

func (r *row) isStmt() bool { return r.flags&flagStmt != 0 }
func (r *row) isEnd() bool  { return r.flags&flagEnd != 0 }

// Open builds the procedures and the line table of the ELF file at path.
func Open(path string) (*Table, error) {
	f, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	procs, err := splitinfo.FromELF(f)
	if err != nil {
		return nil, err
	}
	return FromELF(f, procs)
}

// FromELF builds the line table of f from its DWARF, joined to procs (the
// Table of the same file). A file without DWARF gives an empty table.
func FromELF(f *elfx.File, procs *splitinfo.Table) (*Table, error) {
	d, err := f.DWARF()
	if err != nil {
		return nil, err
	}
	if d == nil {
		return New(procs, nil, nil)
	}
	secs, err := dwarfline.Load(f)
	if err != nil {
		return nil, err
	}
	t, err := New(procs, NewDWARFSource(d, secs), codeAddr(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return t, nil
}

// codeAddr reports whether an address is in an executable section: line
// sequences of code the linker discarded start at 0 or a tombstone.
func codeAddr(f *elfx.File) func(uint64) bool {
	var text [][2]uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 {
			text = append(text, [2]uint64{s.Addr, s.Addr + s.Size})
		}
	}
	return func(a uint64) bool {
		for _, r := range text {
			if a >= r[0] && a < r[1] {
				return true
			}
		}
		return false
	}
}

// maxRows bounds the rows a table holds: 2^32 row indices.
const maxRows = 1<<32 - 1

// New builds a Table from src, joined to procs. Sequences whose first
// address fails isCode (nil accepts all) are dropped.
func New(procs *splitinfo.Table, src Source, isCode func(uint64) bool) (*Table, error) {
	t := &Table{procs: procs}
	if src == nil {
		t.index = addrindex.New(nil)
		return t, nil
	}
	fileID := make(map[string]uint32)
	type seq struct{ start, end int }
	var seqs []seq
	var rows []row
	seqStart := 0
	var r Row
	for {
		err := src.Next(&r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rows) >= maxRows {
			return nil, errors.New("line table: too many rows")
		}
		st := row{addr: r.Addr, line: clampU32(r.Line), column: clampU32(r.Column)}
		if r.IsStmt {
			st.flags |= flagStmt
		}
		if r.PrologueEnd {
			st.flags |= flagPrologueEnd
		}
		if r.EndSequence {
			st.flags |= flagEnd
		} else {
			id, ok := fileID[r.File]
			if !ok {
				id = uint32(len(t.files))
				fileID[r.File] = id
				t.files = append(t.files, r.File)
			}
			st.file = id
		}
		rows = append(rows, st)
		if r.EndSequence {
			if s := (seq{seqStart, len(rows)}); s.end-s.start > 1 && (isCode == nil || isCode(rows[s.start].addr)) {
				seqs = append(seqs, s)
			}
			seqStart = len(rows)
		}
	}
	// Sequences in address order; rows keep their program order.
	slices.SortStableFunc(seqs, func(a, b seq) int { return cmp.Compare(rows[a.start].addr, rows[b.start].addr) })
	n := 0
	for _, s := range seqs {
		n += s.end - s.start
	}
	t.rows = make([]row, 0, n)
	for _, s := range seqs {
		t.rows = append(t.rows, rows[s.start:s.end]...)
	}
	starts := make([]uint64, len(t.rows))
	for i := range t.rows {
		starts[i] = t.rows[i].addr
	}
	// Rows within a sequence never decrease; sequences may overlap (code
	// folded by the linker), so make the starts monotone for the search.
	for i := 1; i < len(starts); i++ {
		starts[i] = max(starts[i], starts[i-1])
	}
	t.index = addrindex.New(starts)
	t.byLine = make([]uint32, 0, len(t.rows))
	for i := range t.rows {
		if !t.rows[i].isEnd() && t.rows[i].line != 0 {
			t.byLine = append(t.byLine, uint32(i))
		}
	}
	slices.SortFunc(t.byLine, func(a, b uint32) int {
		ra, rb := &t.rows[a], &t.rows[b]
		return cmp.Or(cmp.Compare(ra.file, rb.file), cmp.Compare(ra.line, rb.line), cmp.Compare(a, b))
	})
	return t, nil
}

func clampU32(v int) uint32 {
	if v < 0 {
		return 0
	}
	if v > 1<<32-1 {
		return 1<<32 - 1
	}
	return uint32(v)
}

// Procs returns the procedures the table is joined to.
func (t *Table) Procs() *splitinfo.Table { return t.procs }

// Len returns the number of rows, sequence ends included.
func (t *Table) Len() int { return len(t.rows) }

// Files returns the file names of the table.
func (t *Table) Files() []string { return t.files }

// Position is a source position of an address and where the address lies.
type Position struct {
	Addr        uint64
	File        string
	Line        int
	Column      int
	IsStmt      bool
	PrologueEnd bool
	// Proc is the procedure holding Addr, nil if none does; Frag is the
	// index of its fragment.
	Proc *splitinfo.Proc
	Frag int
}

// Fragment returns the fragment holding the position, or nil.
func (p *Position) Fragment() *splitinfo.Fragment {
	if p.Proc == nil {
		return nil
	}
	return &p.Proc.Fragments[p.Frag]
}

func (t *Table) position(i int, addr uint64) Position {
	r := &t.rows[i]
	p := Position{Addr: addr, File: t.files[r.file], Line: int(r.line), Column: int(r.column),
		IsStmt: r.isStmt(), PrologueEnd: r.flags&flagPrologueEnd != 0}
	if loc, ok := t.procs.Lookup(addr); ok {
		p.Proc, p.Frag = loc.Proc, loc.Frag
	}
	return p
}

// rowAt returns the index of the row that covers pc, or -1.
func (t *Table) rowAt(pc uint64) int {
	i := t.index.Find(pc)
	if i < 0 || t.rows[i].isEnd() {
		return -1
	}
	return i
}

// PC returns the source position of pc: the last row at or below pc in
// its sequence, in whichever fragment pc lies. It does not allocate.
func (t *Table) PC(pc uint64) (Position, bool) {
	i := t.rowAt(pc)
	if i < 0 {
		return Position{}, false
	}
	return t.position(i, pc), true
}

// Rows yields every row: sequences in order of their first address, the
// rows of each in program order, ending with its EndSequence row.
func (t *Table) Rows() iter.Seq[Row] {
	return func(yield func(Row) bool) {
		for i := range t.rows {
			r := &t.rows[i]
			out := Row{Addr: r.addr, Line: int(r.line), Column: int(r.column), IsStmt: r.isStmt(),
				PrologueEnd: r.flags&flagPrologueEnd != 0, EndSequence: r.isEnd()}
			if !r.isEnd() {
				out.File = t.files[r.file]
			}
			if !yield(out) {
				return
			}
		}
	}
}
