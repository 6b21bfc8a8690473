package bbaddrmap

import (
	"cmp"
	"debug/elf"
	"slices"

	"github.com/splitdbg/splitdbg/internal/addrindex"
)

// Index maps addresses to the basic blocks of a set of functions. It is
// immutable and safe for concurrent use; lookups take O(log n) time and
// do not allocate.
type Index struct {
	funcs []Func
	secs  []secIndex // by section; one, section 0, for linked files
	spans []span     // by section, then start
}

// secIndex is the part of the index for one section's addresses.
type secIndex struct {
	sec    elf.SectionIndex
	lo, hi int // spans[lo:hi]
	starts addrindex.Index
}

// span is one non-empty block.
type span struct {
	size     uint32
	fn       uint32
	rng      uint32
	blk      uint32
	id       uint32
	metadata Metadata
}

// Loc is where an address is: a block of a range of a function.
type Loc struct {
	// Func, Range and Block are the indexes of the function, of its range
	// and of the block within the range.
	Func, Range, Block int
	// ID and Metadata are the block's.
	ID       uint32
	Metadata Metadata
	// Start is the block's start address (section offset in relocatable
	// objects) and Size its length.
	Start uint64
	Size  uint32
}

// NewIndex indexes the non-empty blocks of funcs, which it keeps: the
// caller must not modify them afterwards. Blocks of a well-formed map do
// not overlap; where they do, an address maps to the block that starts
// last at or below it, if that block contains it. A block whose end would
// overflow 64 bits is left out.
func NewIndex(funcs []Func) *Index {
	type entry struct {
		sec   elf.SectionIndex
		start uint64
		span
	}
	var ents []entry
	for fi := range funcs {
		for ri := range funcs[fi].Ranges {
			r := &funcs[fi].Ranges[ri]
			for bi := range r.Blocks {
				b := &r.Blocks[bi]
				start := r.Addr + uint64(b.Offset)
				if b.Size == 0 || start < r.Addr || start+uint64(b.Size) < start {
					continue
				}
				ents = append(ents, entry{r.Section, start, span{b.Size, uint32(fi), uint32(ri), uint32(bi), b.ID, b.Metadata}})
			}
		}
	}
	slices.SortStableFunc(ents, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.sec, b.sec), cmp.Compare(a.start, b.start))
	})
	x := &Index{funcs: funcs, spans: make([]span, len(ents))}
	starts := make([]uint64, len(ents))
	for i := range ents {
		x.spans[i], starts[i] = ents[i].span, ents[i].start
	}
	for lo := 0; lo < len(ents); {
		hi := lo + 1
		for hi < len(ents) && ents[hi].sec == ents[lo].sec {
			hi++
		}
		x.secs = append(x.secs, secIndex{sec: ents[lo].sec, lo: lo, hi: hi, starts: addrindex.New(starts[lo:hi:hi])})
		lo = hi
	}
	return x
}

// Funcs returns the indexed functions.
func (x *Index) Funcs() []Func { return x.funcs }

// Len returns the number of indexed (non-empty) blocks.
func (x *Index) Len() int { return len(x.spans) }

// Lookup returns the block that contains address pc, in an executable or
// shared object.
func (x *Index) Lookup(pc uint64) (Loc, bool) { return x.LookupSection(0, pc) }

// LookupSection returns the block that contains offset off of section
// sec, in a relocatable object (sec 0 is Lookup).
func (x *Index) LookupSection(sec elf.SectionIndex, off uint64) (Loc, bool) {
	k, ok := slices.BinarySearchFunc(x.secs, sec, func(s secIndex, t elf.SectionIndex) int { return cmp.Compare(s.sec, t) })
	if !ok {
		return Loc{}, false
	}
	s := &x.secs[k]
	i := s.starts.Find(off)
	if i < 0 {
		return Loc{}, false
	}
	start := s.starts.Start(i)
	sp := &x.spans[s.lo+i]
	if off-start >= uint64(sp.size) {
		return Loc{}, false
	}
	return Loc{Func: int(sp.fn), Range: int(sp.rng), Block: int(sp.blk), ID: sp.id, Metadata: sp.metadata, Start: start, Size: sp.size}, true
}
