package splitinfo

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo/bat"
	"github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
	"github.com/splitdbg/splitdbg/splitinfo/native"
)

// A splitSource is one producer's evidence of splitting beyond the symbol
// table and DWARF: read + merge + order (DESIGN.md). Its leaf package
// decodes it; read finds and decodes it in a file; the decoded value
// merges its ranges into the procedures and gives the moved fragments it
// knows their order before splitting.
type splitSource struct {
	bit  Source
	name string // in Source.Names, the "sources" of the command's output
	// read returns f's evidence from this source, nil when f has none.
	read func(f *elfx.File) (evidence sourceData, err error)
	// rank orders the order keys of the sources: a procedure's moved
	// fragments take the order of the lowest rank whose keys cover all of
	// them. Sources of one rank share their keys.
	rank int
}

// sourceData is a source's evidence decoded from one file.
type sourceData interface {
	// merge adds the evidence to the procedures of b; keys maps the start
	// of each moved fragment the source places to its rank in the
	// procedure's order before splitting.
	merge(b *builder, keys map[uint64]uint32)
}

// A logicalKeyer is evidence that places an address in its function's
// layout before splitting (see Table.LogicalKey): the Table keeps the
// sources that are, asked in the order they merge.
type logicalKeyer interface {
	logicalKey(addr uint64) (origin, key uint64, ok bool)
}

// splitSources are the split sources, in the order they merge. A new
// source is its leaf package, its read and merge, and one line here.
var splitSources = []splitSource{
	{FromNative, "native", readNative, 2},
	{FromBBAddrMap, "bbaddrmap", readBBAddrMap, 0},
	{FromBAT, "bat", readBAT, 1},
	{FromMIP, "mip", readMIP, 0},
}

// readSources reads and merges the split sources of b's file.
func (b *builder) readSources() error {
	for _, src := range splitSources {
		ev, err := src.read(b.f)
		if err != nil {
			return err
		}
		if ev != nil {
			ev.merge(b, b.orderKeys(src.rank))
		}
		if k, ok := ev.(logicalKeyer); ok {
			b.keyers = append(b.keyers, k)
		}
	}
	return nil
}

// orderKeys returns the order keys of rank r.
func (b *builder) orderKeys(r int) map[uint64]uint32 {
	for len(b.order) <= r {
		b.order = append(b.order, make(map[uint64]uint32))
	}
	return b.order[r]
}

// bbAddrMap is LLVM's basic-block address map (SHT_LLVM_BB_ADDR_MAP),
// with its address index.
type bbAddrMap struct {
	fns []bbaddrmap.Func
	idx *bbaddrmap.Index
}

func readBBAddrMap(f *elfx.File) (sourceData, error) {
	if len(bbaddrmap.Sections(f.File)) == 0 {
		return nil, nil
	}
	fns, err := bbaddrmap.Read(f.File)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return &bbAddrMap{fns, bbaddrmap.NewIndex(fns)}, nil
}

// merge merges LLVM's basic-block address map: each range of a function
// is a fragment of the procedure whose entry is the function's address,
// and the smallest block ID of a fragment gives its place in the
// function's pre-split block order.
func (m *bbAddrMap) merge(b *builder, keys map[uint64]uint32) {
	b.blocks = m.idx
	fns := m.fns
	for i := range fns {
		fn := &fns[i]
		if len(fn.Ranges) == 0 {
			continue
		}
		owner := b.entryProc(fn.Addr())
		if owner == nil {
			continue // no procedure starts here: nothing to attach to
		}
		owner.Sources |= FromBBAddrMap
		for _, r := range fn.Ranges {
			if len(r.Blocks) == 0 {
				continue // OmitBBEntries: no extent
			}
			end, minID := r.Addr, uint32(1<<32-1)
			for _, blk := range r.Blocks {
				end = max(end, r.Addr+uint64(blk.Offset)+uint64(blk.Size))
				minID = min(minID, blk.ID)
			}
			if end > r.Addr {
				b.claim(owner, evidence{src: FromBBAddrMap, name: owner.Name}, Range{r.Addr, end})
				keys[r.Addr] = minID
			}
		}
	}
}

// logicalKey is the block ID and the offset in the block; origin is the
// function's address in the map.
func (m *bbAddrMap) logicalKey(addr uint64) (origin, key uint64, ok bool) {
	bl, ok := m.idx.Lookup(addr)
	if !ok {
		return 0, 0, false
	}
	fn := &m.idx.Funcs()[bl.Func]
	return fn.Addr(), uint64(bl.ID)<<32 | (addr - bl.Start), true
}

// batTable is BOLT address translation (.note.bolt_bat).
type batTable struct{ *bat.Table }

func readBAT(f *elfx.File) (sourceData, error) {
	t, err := bat.FromELF(f)
	if errors.Is(err, bat.ErrNoBAT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return batTable{t}, nil
}

// logicalKey is the input offset; origin is the BOLT hot fragment.
func (t batTable) logicalKey(addr uint64) (origin, key uint64, ok bool) {
	l, ok := t.Translate(addr, false)
	return l.Function.Addr, l.InputOffset, ok
}

// merge merges BOLT address translation: each cold fragment belongs to
// the procedure of its hot parent, and the smallest input offset of a
// fragment gives its place in the input function's layout.
func (t batTable) merge(b *builder, keys map[uint64]uint32) {
	b.bat = t.Table
	for f := range t.All() {
		parent := f.Parent()
		owner := b.entryProc(parent.Addr)
		if owner == nil || f.Size == 0 {
			continue
		}
		owner.Sources |= FromBAT
		b.claim(owner, evidence{src: FromBAT, name: parent.Name}, Range{f.Addr, f.Addr + f.Size})
		first := uint32(1<<32 - 1)
		for _, e := range f.Entries {
			if !e.Deleted {
				first = min(first, e.InputOffset)
			}
		}
		keys[f.Addr] = first
	}
}

// nativeRecords are splitdbg's own split procedure records.
type nativeRecords []native.Record

func readNative(f *elfx.File) (sourceData, error) {
	data, sec, err := f.SectionData(native.SectionName)
	if err != nil || sec == nil {
		return nil, err
	}
	recs, err := native.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return nativeRecords(recs), nil
}

// merge merges splitdbg's own split procedure records. A record whose
// entry is a known procedure claims its fragments and supplies what DWARF
// would have (source name, compile unit, declaration) when DWARF is gone;
// without symbols the record makes the procedure.
func (recs nativeRecords) merge(b *builder, keys map[uint64]uint32) {
	for i := range recs {
		r := &recs[i]
		if r.EntrySize == 0 {
			continue
		}
		owner := b.entryOrNewProc(Range{r.Entry, r.Entry + r.EntrySize}, r.Name, FromNative)
		if owner == nil {
			continue
		}
		owner.Sources |= FromNative
		if owner.SourceName == "" && owner.File == "" {
			owner.SourceName, owner.CompUnit, owner.File, owner.Line = r.SourceName, r.CompUnit, r.File, r.Line
		}
		b.claim(owner, evidence{src: FromNative, name: r.Name}, Range{r.Entry, r.Entry + r.EntrySize})
		for k, m := range r.Moved {
			if m.Size == 0 {
				continue
			}
			b.claim(owner, evidence{src: FromNative, name: r.Name}, Range{m.VAddr, m.VAddr + m.Size})
			if j := owner.Fragment(m.VAddr); j > 0 {
				f := &owner.Fragments[j]
				if f.Symbol == "" {
					f.Symbol = m.Symbol
					if m.Kind >= native.Cold && m.Kind <= native.Part {
						f.Kind = Kind(m.Kind)
					}
				}
			}
			keys[m.VAddr] = uint32(k)
		}
	}
}

// entryProc returns the live procedure whose entry fragment starts at
// addr, nil if there is none.
func (b *builder) entryProc(addr uint64) *bproc {
	if ref, ok := b.fragAt[addr]; ok && ref.i == 0 && !ref.p.dead && !ref.p.orphan {
		return ref.p
	}
	return nil
}

// entryOrNewProc returns the procedure that source src names name and
// gives entry fragment r: the live procedure whose entry is r.Start, or,
// when no fragment starts there, a new procedure with entry fragment r.
// It returns nil when r.Start starts some other fragment: a moved one, or
// the entry of a dead or orphan procedure.
func (b *builder) entryOrNewProc(r Range, name string, src Source) *bproc {
	if p := b.entryProc(r.Start); p != nil {
		return p
	}
	if _, taken := b.fragAt[r.Start]; taken {
		return nil
	}
	p := &bproc{Proc: Proc{Name: name, Entry: r.Start}}
	b.addFragment(p, Fragment{Range: r, Symbol: name, Kind: Hot, Sources: src}, 0)
	b.procs = append(b.procs, p)
	return p
}

// SplitRecords returns the split procedure records of the table's split
// procedures (splitinfo/native), for writing them into a file.
func (t *Table) SplitRecords() []native.Record {
	var out []native.Record
	for p := range t.Split() {
		r := native.Record{Entry: p.Entry, EntrySize: p.Fragments[0].Len(), Name: p.Name,
			SourceName: p.SourceName, CompUnit: p.CompUnit, File: p.File, Line: p.Line}
		for _, f := range p.Fragments[1:] {
			r.Moved = append(r.Moved, native.Split{BranchAddr: f.BranchAddr, VAddr: f.Start, Size: f.Len(),
				Kind: native.Kind(f.Kind), Symbol: f.Symbol, Sites: f.BranchSites})
		}
		out = append(out, r)
	}
	return out
}

// orderBySource puts the moved fragments of p in the order the sources'
// keys give, the lowest rank that covers every moved fragment first: that
// is the order before splitting.
func (b *builder) orderBySource(p *Proc) {
	rest := p.Fragments[1:]
	if len(rest) == 0 {
		return
	}
	for _, keys := range b.order {
		if slices.ContainsFunc(rest, func(f Fragment) bool { _, ok := keys[f.Start]; return !ok }) {
			continue // a moved fragment the source does not cover
		}
		slices.SortStableFunc(rest, func(x, y Fragment) int { return cmp.Compare(keys[x.Start], keys[y.Start]) })
		return
	}
}

// BlockLoc is the basic block an address is in, from the BB address map.
type BlockLoc struct {
	Loc
	// ID is the block's ID within its function, the machine basic block
	// number: IDs follow the function's layout before splitting.
	ID       uint32
	Metadata bbaddrmap.Metadata
	// Start and Size are the block's address range.
	Start uint64
	Size  uint32
}

// Block returns the basic block holding pc and its procedure, when the
// file has a BB address map. It does not allocate.
func (t *Table) Block(pc uint64) (BlockLoc, bool) {
	if t.blocks == nil {
		return BlockLoc{}, false
	}
	bl, ok := t.blocks.Lookup(pc)
	if !ok {
		return BlockLoc{}, false
	}
	loc, ok := t.Lookup(pc)
	if !ok {
		return BlockLoc{}, false
	}
	return BlockLoc{Loc: loc, ID: bl.ID, Metadata: bl.Metadata, Start: bl.Start, Size: bl.Size}, true
}

// LogicalKey places addr in its function's layout before splitting: with a
// BB address map, the block ID and the offset in the block; with BOLT
// address translation, the input offset. origin identifies the function
// the key is relative to (its address in the map, or the BOLT hot
// fragment); keys of one origin order addresses as the unsplit code
// would. ok is false without either source. Each source that knows such
// keys answers in turn, in the order the sources merge.
func (t *Table) LogicalKey(addr uint64) (origin, key uint64, ok bool) {
	for _, k := range t.keyers {
		if origin, key, ok = k.logicalKey(addr); ok {
			return origin, key, true
		}
	}
	return 0, 0, false
}

// BAT returns the file's BOLT address translation, nil if it has none.
func (t *Table) BAT() *bat.Table { return t.bat }

// BBAddrMap returns the file's BB address map index, nil if it has none.
func (t *Table) BBAddrMap() *bbaddrmap.Index { return t.blocks }
