package bat

import (
	"bytes"
	"cmp"
	"math"
	"slices"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// The note, as BOLT 19.1 and 22.1 write it (little-endian; ULEB/SLEB are
// LEB128; "delta" values add to the previous value of the same kind, and
// the unsigned ones wrap modulo 2^64):
//
//	u32 namesz = 5, u32 descsz, u32 type = 1 (NT_BOLT_BAT)
//	"BOLT\0", padded to 4 bytes
//	desc:
//	  ULEB NumHot,  NumHot  × hot function
//	  ULEB NumCold, NumCold × cold function
//
//	function:
//	  ULEB  Address delta      from PrevAddress, which starts at 0 and
//	                           then is the last output address decoded:
//	                           a function's address or an entry's,
//	                           across functions and from the hot table
//	                           into the cold one (so it can be "negative")
//	  hot:  u64  FuncHash      input function hash
//	        ULEB NumBlocks     basic blocks of the input function
//	        ULEB NumSecEntries secondary entry points
//	  cold: ULEB HotIndex delta   index into the hot table, from 0
//	        ULEB InputSkew     input offset of the fragment's first entry
//	  ULEB NumEntries
//	  ULEB EqualElems          leading entries with input = output + skew
//	  EqualElems > 0: ceil(EqualElems/8) bytes BranchEntries bitmask,
//	                  bit j (byte j/8, bit j%8) = BRANCHENTRY of entry j
//	  NumEntries × entry:
//	    ULEB OutputAddress delta   from PrevAddress (offset = address -
//	                               function Address)
//	    j >= EqualElems: SLEB InputOffset delta, from the previous entry's
//	                     InputOffset<<1 | BRANCHENTRY (a uint32 in BOLT),
//	                     from 0 (not from InputSkew)
//	    BRANCHENTRY clear (block start):
//	      u64  BBHash          yaml::bolt::BlendedBlockHash of the block
//	      ULEB BBIndex delta   from the previous block entry's, from 0
//	  hot: NumSecEntries × ULEB entry point offset delta, from 0
//
// Entries are in output offset order (BOLT's std::multimap, in insertion
// order among equal offsets): an emptied block shares its output offset
// with its successor, and BOLT writes every block it deleted as an entry
// at the end of the hot fragment (its output size). A lookup takes the
// last of equal offsets. Block entries mark the starts of input blocks;
// BRANCHENTRY entries mark instructions where control leaves an input
// block (calls, branches, returns, the last instruction before a
// fall-through), unless that is also the block's first instruction.

const branchEntry = 1 // BRANCHENTRY, the low bit of a stored input offset

// Minimum encoded sizes, for checking counts before allocating.
const (
	minHotFunc  = 1 + 8 + 1 + 1 + 1 + 1
	minColdFunc = 1 + 1 + 1 + 1 + 1
)

// Decode decodes a BAT note: the contents of the .note.bolt_bat section,
// starting with the ELF note header. Errors are *cursor.DecodeError.
func Decode(note []byte) (*Table, error) {
	c := cursor.New(SectionName, 0, note)
	namesz := c.U32()
	descsz := c.U32()
	typ := c.U32()
	if c.Err() != nil {
		return nil, c.Err()
	}
	if typ != NoteType {
		return nil, cursor.Errorf(SectionName, 8, cursor.ErrCorrupt, "note type %d, want %d (NT_BOLT_BAT)", typ, NoteType)
	}
	name := c.Bytes(int(min(namesz, math.MaxInt32)))
	if c.Err() != nil {
		return nil, c.Err()
	}
	if !bytes.Equal(bytes.TrimRight(name, "\x00"), []byte(NoteOwner)) {
		return nil, cursor.Errorf(SectionName, 12, cursor.ErrCorrupt, "note owner %q, want %q", name, NoteOwner)
	}
	c.Align(4)
	desc := c.Sub(int(min(descsz, math.MaxInt32)))
	if c.Err() != nil {
		return nil, c.Err()
	}
	return decodeDesc(&desc)
}

// decodeDesc decodes the note's descriptor.
func decodeDesc(c *cursor.Cursor) (*Table, error) {
	d := decoder{c: c, t: &Table{}}
	d.table(false)
	d.table(true)
	if c.Err() != nil {
		return nil, c.Err()
	}
	if c.Len() != 0 {
		return nil, c.Fail(cursor.ErrCorrupt, "%d bytes after the cold table", c.Len())
	}
	d.finish()
	if err := d.t.sortByAddr(d.offsets); err != nil {
		return nil, err
	}
	return d.t, nil
}

type decoder struct {
	c        *cursor.Cursor
	t        *Table
	prevAddr uint64
	parents  []int32 // parent index of each function
	offsets  []int64 // note offset of each function, for errors
}

func (d *decoder) table(cold bool) {
	c := d.c
	minSize, what := minHotFunc, "hot function"
	if cold {
		minSize, what = minColdFunc, "cold function"
	}
	n := c.Count(minSize, what)
	if c.Err() != nil {
		return
	}
	base := len(d.t.funcs)
	if !cold {
		d.t.numHot = n
	}
	d.t.funcs = slices.Grow(d.t.funcs, n)[:base+n]
	hotIndex := uint64(0)
	for i := range n {
		f := &d.t.funcs[base+i]
		f.Cold, f.Index = cold, i
		off := c.Offset()
		d.offsets = append(d.offsets, off)
		d.prevAddr += c.ULEB128()
		f.Addr = d.prevAddr
		if i > 0 && c.Err() == nil && f.Addr <= d.t.funcs[base+i-1].Addr {
			c.FailAt(off, cursor.ErrCorrupt, "%s %d at %#x: addresses do not increase", what, i, f.Addr)
		}
		var numSec int
		if cold {
			off := c.Offset()
			hotIndex += c.ULEB128()
			if c.Err() == nil && hotIndex >= uint64(d.t.numHot) {
				c.FailAt(off, cursor.ErrCorrupt, "cold function %d: hot index %d, but %d hot functions", i, hotIndex, d.t.numHot)
			}
			d.parents = append(d.parents, int32(hotIndex))
			f.InputSkew = uint32(c.ULEB128Max(math.MaxUint32, "input skew"))
		} else {
			d.parents = append(d.parents, int32(i))
			f.Hash = c.U64()
			f.NumBlocks = uint32(c.ULEB128Max(math.MaxUint32, "block count"))
			numSec = c.Count(1, "secondary entry point")
		}
		d.entries(f)
		if numSec > 0 && c.Err() == nil {
			f.SecondaryEntries = make([]uint32, numSec)
			var off uint64
			for j := range numSec {
				off += c.ULEB128()
				if off > math.MaxUint32 {
					c.Fail(cursor.ErrCorrupt, "secondary entry point offset %#x", off)
				}
				f.SecondaryEntries[j] = uint32(off)
			}
		}
		if c.Err() != nil {
			return
		}
	}
}

// entries decodes a function's entry count, equal-offsets header and
// translation table.
func (d *decoder) entries(f *Func) {
	c := d.c
	n := c.Count(1, "entry")
	equalOff := c.Offset()
	equal := c.ULEB128()
	if c.Err() != nil {
		return
	}
	if equal > uint64(n) {
		c.FailAt(equalOff, cursor.ErrCorrupt, "%d equal offsets, but %d entries", equal, n)
		return
	}
	f.EqualElems = uint32(equal)
	var mask []byte
	if equal > 0 {
		mask = c.Bytes(int(equal+7) / 8)
	}
	lo := len(d.t.entries)
	var in uint64    // InputOffset<<1 | BRANCHENTRY, as BOLT keeps it
	var index uint64 // block index
	for j := range n {
		entryOff := c.Offset()
		d.prevAddr += c.ULEB128()
		out := d.prevAddr - f.Addr
		if uint64(j) < equal {
			in = (out+uint64(f.InputSkew))<<1 | uint64(mask[j/8]>>(j%8)&1)
		} else {
			in += uint64(c.SLEB128())
		}
		if c.Err() != nil {
			return
		}
		if out > math.MaxUint32 || in > math.MaxUint32 {
			c.FailAt(entryOff, cursor.ErrCorrupt, "entry %d of function at %#x: output offset %#x, input offset %#x out of range", j, f.Addr, out, in>>1)
			return
		}
		e := Entry{OutputOffset: uint32(out), InputOffset: uint32(in >> 1), Branch: in&branchEntry != 0}
		if !e.Branch {
			e.BlockHash = c.U64()
			index += c.ULEB128()
			e.BlockIndex = uint32(index)
		}
		d.t.entries = append(d.t.entries, e)
	}
	f.Entries = d.t.entries[lo:len(d.t.entries):len(d.t.entries)]
}

// finish links the entries, orders the fragments by address and links
// cold fragments to their parents.
func (d *decoder) finish() {
	t := d.t
	// The entries slice may have moved while growing: re-slice.
	lo := 0
	for i := range t.funcs {
		f := &t.funcs[i]
		n := len(f.Entries)
		f.Entries = t.entries[lo : lo+n : lo+n]
		lo += n
	}
	t.keys = make([]uint64, len(t.entries))
	for i := range t.entries {
		t.keys[i] = packKey(&t.entries[i])
	}
	lo = 0
	nCold := make([]int, t.numHot)
	for i := range t.funcs {
		f := &t.funcs[i]
		n := len(f.Entries)
		f.keys = t.keys[lo : lo+n : lo+n]
		lo += n
		f.parent = &t.funcs[d.parents[i]]
		if f.Cold {
			nCold[d.parents[i]]++
		}
	}
	frags := make([]*Func, len(t.funcs))
	next := 0
	for i := range t.numHot {
		f := &t.funcs[i]
		f.frags = frags[next : next+1 : next+1+nCold[i]]
		f.frags[0] = f
		next += 1 + nCold[i]
	}
	for i := t.numHot; i < len(t.funcs); i++ {
		p := t.funcs[i].parent
		p.frags = append(p.frags, &t.funcs[i])
	}
}

// sortByAddr indexes the fragments by address; two fragments at one
// address are an error (offsets are the functions' note offsets).
func (t *Table) sortByAddr(offsets []int64) error {
	spans := make([]span, len(t.funcs))
	lo := 0
	for i := range t.funcs {
		f := &t.funcs[i]
		spans[i] = span{start: f.Addr, fn: int32(i), parent: int32(f.parent.Index), lo: uint32(lo), n: uint32(len(f.Entries))}
		lo += len(f.Entries)
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start == spans[i-1].start {
			return cursor.Errorf(SectionName, offsets[spans[i].fn], cursor.ErrCorrupt, "two functions at %#x", spans[i].start)
		}
	}
	t.index = newSpanIndex(spans)
	return nil
}
