// Package bat decodes BOLT Address Translation (BAT), the .note.bolt_bat
// section that llvm-bolt -enable-bat writes into an optimized binary, and
// translates addresses of the optimized binary back to the input binary
// the way BOLT's own profile aggregator (perf2bolt) does.
//
// The format is specified by seed 004 ("BOLT Address Translation", the
// BAT.md of BOLT's documentation) and, for the parts the seed predates, by
// BOLT's reader and writer in bolt/lib/Profile/BoltAddressTranslation.cpp
// (BoltAddressTranslation::parse, parseMaps, writeMaps, translate,
// fetchParentAddress, getFallthroughsInTrace). The layout decoded here was
// verified byte by byte against the notes that BOLT 19.1 and BOLT 22.1
// write, which are identical for the same input; see the layout comment in
// decode.go.
//
// A translation table maps output offsets of one fragment to input offsets
// of its input function: each entry is either a block start or a
// control-flow source (a branch or call, the BRANCHENTRY bit). A cold
// fragment (foo.cold.0) has its own table, whose input offsets are offsets
// in the input function of its hot parent (foo).
package bat

import (
	"errors"
	"iter"
)

// Note identification, as BOLT writes it.
const (
	// SectionName is the name of the section holding the note.
	SectionName = ".note.bolt_bat"
	// NoteOwner is the note's owner name.
	NoteOwner = "BOLT"
	// NoteType is the note type NT_BOLT_BAT.
	NoteType = 1
)

// ErrNoBAT is returned by Open, Read and FromELF for a file that has no
// .note.bolt_bat section (it was not written by llvm-bolt -enable-bat).
var ErrNoBAT = errors.New("bat: no " + SectionName + " section")

// Entry is one row of a fragment's address translation table.
type Entry struct {
	// OutputOffset is the offset in the output fragment.
	OutputOffset uint32
	// InputOffset is the offset in the input function (of the hot
	// parent, for a cold fragment), without the BRANCHENTRY bit.
	InputOffset uint32
	// Branch is the BRANCHENTRY bit: the entry is a control-flow source
	// (a branch or call instruction); otherwise it is a block start.
	Branch bool
	// Deleted marks a block that BOLT deleted from the output: by BOLT's
	// convention its entry sits at the end of the fragment. It is known
	// only when the fragment's size is (tables built from an ELF file).
	Deleted bool
	// BlockIndex is, for block entries, the block's index in the input
	// function's layout.
	BlockIndex uint32
	// BlockHash is, for block entries, BOLT's hash of the input block
	// (yaml::bolt::BlendedBlockHash: its low 16 bits are the block's
	// input offset).
	BlockHash uint64
}

// Func is one output fragment with a translation table: a hot fragment,
// which stands for its whole input function, or a cold fragment. The
// fields are read-only.
type Func struct {
	// Addr is the fragment's address in the output binary.
	Addr uint64
	// Size is the fragment's size, from the symbol table; 0 if unknown.
	Size uint64
	// Name is the name of the symbol at Addr, "" if unknown. BOLT keeps
	// the input names for hot fragments and names cold ones foo.cold.N.
	Name string
	// Cold reports whether this is a cold fragment (the cold table).
	Cold bool
	// Index is the fragment's position in its table (hot or cold).
	Index int
	// Hash is the input function's hash (hot fragments).
	Hash uint64
	// NumBlocks is the number of basic blocks of the input function
	// (hot fragments).
	NumBlocks uint32
	// InputSkew is added to the output offset of the first EqualElems
	// entries to get their input offset (cold fragments; 0 for hot).
	InputSkew uint32
	// EqualElems is the number of leading entries whose input offset is
	// OutputOffset+InputSkew, stored without an input offset.
	EqualElems uint32
	// Entries is the translation table, sorted by OutputOffset.
	Entries []Entry
	// SecondaryEntries are the offsets of the input function's secondary
	// entry points (hot fragments).
	SecondaryEntries []uint32

	parent *Func
	frags  []*Func  // hot fragments: the fragment itself, then its cold ones
	keys   []uint64 // the entries packed for lookups (see packKey)
}

// packKey packs an entry for lookups: the output offset in the high 32
// bits, then BOLT's InputOffset<<1 | BRANCHENTRY, so that a binary search
// over output offsets ends on the cache line holding the answer.
func packKey(e *Entry) uint64 {
	k := uint64(e.OutputOffset)<<32 | uint64(e.InputOffset)<<1
	if e.Branch {
		k |= branchEntry
	}
	return k
}

// searchKeys returns the index of the last key whose output offset is at
// most off, or -1. The search is branch-free: on random addresses a
// mispredicted branch per step costs more than the search itself.
func searchKeys(keys []uint64, off uint64) int {
	n := len(keys)
	if n == 0 {
		return -1
	}
	o := int64(min(off, 1<<32)) // output offsets are below 1<<32
	base := 0
	for n > 1 {
		half := n >> 1
		// ge is all ones if keys[base+half] <= off, else 0.
		ge := ^((o - int64(keys[base+half]>>32)) >> 63)
		base += half & int(ge)
		n -= half
	}
	if int64(keys[base]>>32) > o {
		return base - 1 // only when base is 0
	}
	return base
}

// Parent returns the hot fragment that f belongs to: f itself for a hot
// fragment (BOLT's fetchParentAddress).
func (f *Func) Parent() *Func { return f.parent }

// Fragments returns the fragments of f's input function in table order:
// the hot fragment first, then its cold fragments. The result is shared
// and read-only.
func (f *Func) Fragments() []*Func { return f.parent.frags }

// Contains reports whether addr lies in the fragment. For a fragment of
// unknown size it reports whether addr is at or after Addr.
func (f *Func) Contains(addr uint64) bool {
	return addr >= f.Addr && (f.Size == 0 || addr-f.Addr < f.Size)
}

// Lookup returns the index of the entry that covers output offset off:
// the last entry at or before it, or -1 if off is before the first entry.
// It does not allocate.
func (f *Func) Lookup(off uint64) int { return searchKeys(f.keys, off) }

// Translate maps output offset off of the fragment to an input offset in
// the input function, as BoltAddressTranslation::translate does: it takes
// the last entry at or before off; a branch source (branchSrc) maps to
// that entry's input offset, any other address keeps its distance from
// the entry. If no entry covers off, off is returned unchanged and entry
// is -1. It does not allocate.
func (f *Func) Translate(off uint64, branchSrc bool) (inputOff uint64, entry int) {
	i := searchKeys(f.keys, off)
	if i < 0 {
		return off, -1
	}
	return translateKey(f.keys[i], off, branchSrc), i
}

func translateKey(k, off uint64, branchSrc bool) uint64 {
	in := uint64(uint32(k) >> 1)
	if branchSrc {
		return in
	}
	return off - k>>32 + in
}

// Table is a decoded BAT note. It is immutable and safe for concurrent
// use.
type Table struct {
	funcs   []Func // hot table, then cold table, in note order
	numHot  int
	index   spanIndex // the fragments by address
	entries []Entry   // every fragment's entries, in note order
	keys    []uint64  // packKey of every entry
}

// NumHot returns the number of hot fragments (input functions).
func (t *Table) NumHot() int { return t.numHot }

// NumCold returns the number of cold fragments.
func (t *Table) NumCold() int { return len(t.funcs) - t.numHot }

// Hot yields the hot fragments in table order (by output address).
func (t *Table) Hot() iter.Seq[*Func] { return t.seq(0, t.numHot) }

// Cold yields the cold fragments in table order (by output address).
func (t *Table) Cold() iter.Seq[*Func] { return t.seq(t.numHot, len(t.funcs)) }

// All yields every fragment, hot table first.
func (t *Table) All() iter.Seq[*Func] { return t.seq(0, len(t.funcs)) }

func (t *Table) seq(lo, hi int) iter.Seq[*Func] {
	return func(yield func(*Func) bool) {
		for i := lo; i < hi; i++ {
			if !yield(&t.funcs[i]) {
				return
			}
		}
	}
}

// Func returns the fragment that starts at addr, or nil (BOLT's lookup of
// a function's map by its output address).
func (t *Table) Func(addr uint64) *Func {
	i := t.index.find(addr)
	if i < 0 || t.index.spans[i].start != addr {
		return nil
	}
	return &t.funcs[t.index.spans[i].fn]
}

// Containing returns the fragment whose range contains addr, or nil. A
// fragment of unknown size extends up to the next fragment. It does not
// allocate.
func (t *Table) Containing(addr uint64) *Func {
	i := t.index.find(addr)
	if i < 0 {
		return nil
	}
	f := &t.funcs[t.index.spans[i].fn]
	if f.Size != 0 && addr-f.Addr >= f.Size {
		return nil
	}
	return f
}

// Location is an output address translated to the input binary.
type Location struct {
	// Fragment is the output fragment containing the address.
	Fragment *Func
	// Function is the hot fragment of the input function (Fragment's
	// parent); its Name is the input function's name.
	Function *Func
	// InputOffset is the offset in the input function.
	InputOffset uint64
	// Entry is the index in Fragment.Entries of the entry used, or -1 if
	// the address precedes every entry (InputOffset is then the offset
	// in the fragment, as BOLT returns it).
	Entry int
	// Branch reports whether that entry is a control-flow source
	// (BRANCHENTRY).
	Branch bool
}

// Translate maps an address of the output binary to its input function
// and input offset, as perf2bolt does for a branch's source (branchSrc)
// or target: it finds the fragment containing addr, translates the offset
// (Func.Translate) and attributes a cold fragment to its hot parent. It
// reports false for an address in no fragment of the table. It does not
// allocate. (perf2bolt also drops every branch whose source decodes as a
// return instruction; that filter is the caller's.)
func (t *Table) Translate(addr uint64, branchSrc bool) (Location, bool) {
	// Only a page of the index, one span and the fragment's keys are
	// read: the Func structs stay out of the cache.
	i := t.index.find(addr)
	if i < 0 {
		return Location{}, false
	}
	s := &t.index.spans[i]
	off := addr - s.start
	if s.size != 0 && off >= uint64(s.size) {
		return Location{}, false
	}
	loc := Location{Fragment: &t.funcs[s.fn], Function: &t.funcs[s.parent], InputOffset: off, Entry: -1}
	keys := t.keys[s.lo : s.lo+s.n]
	if j := searchKeys(keys, off); j >= 0 {
		loc.Entry = j
		loc.InputOffset = translateKey(keys[j], off, branchSrc)
		loc.Branch = keys[j]&branchEntry != 0
	}
	return loc, true
}

// Fallthroughs yields the fall-throughs that an execution trace from
// output address from to output address to, inside the fragment, passes
// through, as BoltAddressTranslation::getFallthroughsInTrace finds them: a
// pair of indexes into Entries, the block entry where a fall-through
// starts and the block entry it falls into. A trace that runs backwards or
// starts before the fragment yields nothing.
//
// perf2bolt 22 records each pair as a branch from the first entry's
// InputOffset to the second's; perf2bolt 19 translated the two entries'
// output offsets again (Translate, the source as a branch source), which
// differs where entries share an output offset.
func (f *Func) Fallthroughs(from, to uint64) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		if from >= to || from < f.Addr {
			return
		}
		fi := f.Lookup(from - f.Addr)
		// Skip instruction entries: only block boundaries matter.
		for fi >= 0 && f.Entries[fi].Branch {
			fi--
		}
		ti := f.Lookup(to - f.Addr)
		if fi < 0 || ti < 0 || f.Entries[fi].OutputOffset >= f.Entries[ti].OutputOffset {
			return
		}
		for i := fi; i != ti; {
			src := i
			if f.Entries[i].Branch {
				i++
				continue
			}
			i++
			for f.Entries[i].Branch && i != ti {
				i++
			}
			if f.Entries[i].Branch {
				return
			}
			if !yield(src, i) {
				return
			}
		}
	}
}
