package linetable

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/bits"
	"path"
	"slices"
	"sync"
	"unsafe"

	"github.com/splitdbg/splitdbg/esl"
	"github.com/splitdbg/splitdbg/internal/addrindex"
	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// Table is the line index of one ELF file joined to its procedures. It is
// immutable and safe for concurrent use.
type Table struct {
	procs *splitinfo.Table
	files []string     // interned, path.Clean'ed file names
	names []*FileNames // per file, its names as the line header gives them
	rows  []row        // sequences sorted by start address, rows in program order
	// The address search: a page directory over the rows' addresses.
	// mono holds monotone starts only when sequences overlap (code
	// folded by the linker) and the rows themselves are out of order.
	dir  addrindex.Dir
	mono []uint64
	// The line index, built on the first FILE:LINE query: the rows with a
	// line sorted by (file, line, address) (byLine), their keys
	// file<<lineBits | line (searched through lineKeys), and the files by
	// base name.
	byLine     []uint32
	lineKeys   addrindex.Index
	lineBits   uint
	byBase     map[string][]uint32
	byLineOnce sync.Once
}

// row is a stored line row: 24 bytes.
type row struct {
	addr   uint64
	file   uint32
	line   uint32
	column uint32
	flags  uint8
	disc   [3]uint8 // discriminator, little-endian, clamped to 24 bits
}

const (
	flagStmt uint8 = 1 << iota
	flagPrologueEnd
	flagEnd
)

func (r *row) isStmt() bool      { return r.flags&flagStmt != 0 }
func (r *row) prologueEnd() bool { return r.flags&flagPrologueEnd != 0 }
func (r *row) isEnd() bool       { return r.flags&flagEnd != 0 }

// Open builds the procedures and the line table of the ELF file at path.
func Open(path string) (*Table, error) { return elfx.OpenWith(path, fromELF) }

// OpenBytes builds the procedures and the line table of an ELF file held
// in memory, named name in errors.
func OpenBytes(name string, data []byte) (*Table, error) {
	f, err := elfx.NewBytes(name, data)
	if err != nil {
		return nil, err
	}
	return fromELF(f)
}

func fromELF(f *elfx.File) (*Table, error) { return fromELFIn(f, nil) }

// fromELFIn builds the procedures and the line table of f within scope
// s (nil: the whole file).
func fromELFIn(f *elfx.File, s *splitinfo.Scope) (*Table, error) {
	procs, err := splitinfo.FromELFIn(f, s)
	if err != nil {
		return nil, err
	}
	return FromELFIn(f, procs, s)
}

// OpenIn builds the procedures and the line table of the ELF file at
// path within the scope that scope returns for it (nil: the whole
// file): the table answers every question about the scope's addresses
// as the whole file's does, and nothing else is decoded.
func OpenIn(path string, scope func(*elfx.File) (*splitinfo.Scope, error)) (*Table, error) {
	return elfx.OpenWith(path, func(f *elfx.File) (*Table, error) {
		s, err := scope(f)
		if err != nil {
			return nil, err
		}
		return fromELFIn(f, s)
	})
}

// FromELF builds the line table of f, joined to procs (the Table of the
// same file), from its DWARF .debug_line or, when it has none (after
// strip --strip-debug), from its Extended Source Location section. A file
// with neither gives an empty table.
func FromELF(f *elfx.File, procs *splitinfo.Table) (*Table, error) { return FromELFIn(f, procs, nil) }

// FromELFIn is FromELF over the line programs of the compile units of
// scope s (nil: every unit); procs is the Table of the same scope. An
// ESL section has no units: it is read whole.
func FromELFIn(f *elfx.File, procs *splitinfo.Table, s *splitinfo.Scope) (*Table, error) {
	src, err := lineSource(f, s)
	if err != nil {
		return nil, err
	}
	t, err := New(procs, src, codeAddr(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return t, nil
}

func lineSource(f *elfx.File, scope *splitinfo.Scope) (Source, error) {
	if f.Section(".debug_line") != nil {
		d, err := dies.Load(f)
		if err != nil {
			return nil, err
		}
		if d != nil {
			secs, err := dwarfline.Load(f)
			if err != nil {
				return nil, err
			}
			return newUnitsSource(d, secs, scope), nil
		}
	}
	data, s, err := f.SectionData(esl.SectionName)
	if err != nil || s == nil {
		return nil, err
	}
	et, err := esl.Parse(esl.SectionName, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return NewESLSource(et)
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
		return t, nil
	}
	fileID := make(map[string]uint32)
	type seq struct{ start, end int }
	var seqs []seq
	var rows []row
	if h, ok := src.(interface{ SizeHint() int }); ok {
		rows = make([]row, 0, min(h.SizeHint(), maxRows))
	}
	seqStart := 0
	var (
		r        Row
		lastFile string
		lastID   uint32
		haveLast bool
	)
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
		st := row{addr: r.Addr, line: clampU32(r.Line), column: clampU32(r.Column), disc: packDisc(r.Discriminator)}
		if r.IsStmt {
			st.flags |= flagStmt
		}
		if r.PrologueEnd {
			st.flags |= flagPrologueEnd
		}
		if r.EndSequence {
			st.flags |= flagEnd
		} else {
			// Rows mostly repeat the file of the row before.
			if !haveLast || r.File != lastFile {
				id, ok := fileID[r.File]
				if !ok {
					id = uint32(len(t.files))
					fileID[r.File] = id
					t.files = append(t.files, r.File)
					t.names = append(t.names, r.Names)
				}
				lastFile, lastID, haveLast = r.File, id, true
			}
			st.file = lastID
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
	n := 0
	for _, s := range seqs {
		n += s.end - s.start
	}
	inOrder := slices.IsSortedFunc(seqs, func(a, b seq) int { return cmp.Compare(rows[a.start].addr, rows[b.start].addr) })
	if inOrder && n == len(rows) {
		t.rows = slices.Clip(rows)
	} else {
		slices.SortStableFunc(seqs, func(a, b seq) int { return cmp.Compare(rows[a.start].addr, rows[b.start].addr) })
		t.rows = make([]row, 0, n)
		for _, s := range seqs {
			t.rows = append(t.rows, rows[s.start:s.end]...)
		}
	}
	if !slices.IsSortedFunc(t.rows, func(a, b row) int { return cmp.Compare(a.addr, b.addr) }) {
		t.mono = make([]uint64, len(t.rows))
		for i := range t.rows {
			t.mono[i] = t.rows[i].addr
			if i > 0 {
				t.mono[i] = max(t.mono[i], t.mono[i-1])
			}
		}
	}
	t.dir = addrindex.NewDir(len(t.rows), t.start)
	return t, nil
}

// lineIndex returns the rows with a line, sorted by (file, line,
// address), building it on first use.
func (t *Table) lineIndex() []uint32 {
	t.byLineOnce.Do(func() {
		var maxFile, maxLine uint32
		n := 0
		for i := range t.rows {
			if r := &t.rows[i]; !r.isEnd() && r.line != 0 {
				maxFile, maxLine = max(maxFile, r.file), max(maxLine, r.line)
				n++
			}
		}
		// Keys file<<lineBits | line, in row (address) order; a stable
		// radix sort keeps that order among equal keys.
		lineBits := uint(bits.Len32(maxLine))
		keys := make([]uint64, 0, n)
		idx := make([]uint32, 0, n)
		for i := range t.rows {
			if r := &t.rows[i]; !r.isEnd() && r.line != 0 {
				keys = append(keys, uint64(r.file)<<lineBits|uint64(r.line))
				idx = append(idx, uint32(i))
			}
		}
		radixSort(keys, idx, lineBits+uint(bits.Len32(maxFile)))
		t.byLine, t.lineKeys, t.lineBits = idx, addrindex.New(keys), lineBits
		t.byBase = make(map[string][]uint32)
		for i, f := range t.files {
			b := path.Base(f)
			t.byBase[b] = append(t.byBase[b], uint32(i))
		}
	})
	return t.byLine
}

// lineRows returns the rows of (file, line) in address order.
func (t *Table) lineRows(file uint32, line int) []uint32 {
	byLine := t.lineIndex()
	if line <= 0 || uint64(line) >= 1<<t.lineBits {
		return nil
	}
	key := uint64(file)<<t.lineBits | uint64(line)
	lo, hi := t.lineKeys.Find(key-1)+1, t.lineKeys.Find(key)+1
	return byLine[lo:hi]
}

// radixSort sorts keys (of at most keyBits bits) and idx with them, stably,
// by least-significant-digit radix sort in 11-bit digits.
func radixSort(keys []uint64, idx []uint32, keyBits uint) {
	const digit = 11
	tmpK := make([]uint64, len(keys))
	tmpI := make([]uint32, len(idx))
	var count [1 << digit]int
	for shift := uint(0); shift < keyBits; shift += digit {
		clear(count[:])
		for _, k := range keys {
			count[(k>>shift)&(1<<digit-1)]++
		}
		sum := 0
		for d := range count {
			count[d], sum = sum, sum+count[d]
		}
		for i, k := range keys {
			d := (k >> shift) & (1<<digit - 1)
			tmpK[count[d]], tmpI[count[d]] = k, idx[i]
			count[d]++
		}
		keys, tmpK = tmpK, keys
		idx, tmpI = tmpI, idx
	}
	// An odd number of passes left the result in the scratch slices.
	if passes := (keyBits + digit - 1) / digit; passes%2 == 1 {
		copy(tmpK, keys)
		copy(tmpI, idx)
	}
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

// rowPosition returns the source position of row i at addr, without its
// procedure.
func (t *Table) rowPosition(i int, addr uint64) Position {
	r := &t.rows[i]
	return Position{Addr: addr, File: t.files[r.file], Line: int(r.line), Column: int(r.column),
		IsStmt: r.isStmt(), PrologueEnd: r.prologueEnd()}
}

// position returns the source position of row i at addr and the
// procedure holding addr.
func (t *Table) position(i int, addr uint64) (p Position) {
	p = t.rowPosition(i, addr)
	if loc, ok := t.procs.Lookup(addr); ok {
		p.Proc, p.Frag = loc.Proc, loc.Frag
	}
	return p
}

// start returns the address the search sees for row i.
func (t *Table) start(i int) uint64 {
	if t.mono != nil {
		return t.mono[i]
	}
	return t.rows[i].addr
}

// rowAt returns the index of the row that covers pc, or -1.
func (t *Table) rowAt(pc uint64) int {
	i := t.dir.Find(pc, t.start)
	if i < 0 || t.rows[i].isEnd() {
		return -1
	}
	return i
}

// StopPC returns the source position a debugger reports for a stop at
// pc: where several rows share the address pc, the last is_stmt one (GCC
// starts a cold fragment with the statement's row, then a non-statement
// row of the function's opening line); otherwise PC's.
func (t *Table) StopPC(pc uint64) (Position, bool) {
	i := t.rowAt(pc)
	if i < 0 {
		return Position{}, false
	}
	return t.position(t.stmtRow(pc, i), pc), true
}

// Line returns the file, line and column of pc, as PC does, without
// looking up its procedure.
func (t *Table) Line(pc uint64) (file string, line, column int, ok bool) {
	i := t.rowAt(pc)
	if i < 0 {
		return "", 0, 0, false
	}
	r := &t.rows[i]
	return t.files[r.file], int(r.line), int(r.column), true
}

// StopLine returns the file, line and column a debugger shows for a stop
// at pc, with one row search and without looking up its procedure:
// StopPC's, or PC's (Line's) where StopPC's row has line 0.
func (t *Table) StopLine(pc uint64) (file string, line, column int, ok bool) {
	i := t.rowAt(pc)
	if i < 0 {
		return "", 0, 0, false
	}
	r := &t.rows[t.stmtRow(pc, i)]
	if r.line == 0 {
		r = &t.rows[i]
	}
	return t.files[r.file], int(r.line), int(r.column), true
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
				PrologueEnd: r.prologueEnd(), EndSequence: r.isEnd()}
			if !r.isEnd() {
				out.File = t.files[r.file]
			}
			if !yield(out) {
				return
			}
		}
	}
}

// IndexBytes returns the memory the index holds: rows, address index,
// line index (row numbers and their keys, built on first use) and file
// names.
func (t *Table) IndexBytes() int {
	n := len(t.rows)*int(unsafe.Sizeof(row{})) + t.dir.Bytes() + len(t.mono)*8 +
		len(t.lineIndex())*4 + t.lineKeys.Bytes()
	for _, f := range t.files {
		n += len(f) + int(unsafe.Sizeof(f))
	}
	return n
}
