package splitinfo

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"iter"
	"math/bits"
	"slices"
	"strings"

	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/elfx"
)

// A Scope is the set of DWARF compile units (DWARF 5, section 3.1.1) a
// question needs: the units whose code ranges hold its addresses, and
// every unit holding a fragment of a procedure with code there. A Table
// built over a scope (FromELFIn) holds the procedures whose code lies in
// those units' ranges, each exactly as the whole file's Table has it,
// and decodes nothing else: the symbols elsewhere, the other units'
// subprograms and the branches of their procedures are never read. The
// line table and inline index take the same scope (package linetable).
//
// A nil *Scope is the whole file.
type Scope struct {
	units  []int          // indices of the units in .debug_info order (dies.Data.Units)
	offs   []dwarf.Offset // their first entries
	ranges []Range        // the units' code ranges, sorted, disjoint
	// spans are the ranges joined across gaps under spanGap: a few
	// (a unit's hot and cold code), where ranges may be one per function.
	// An address outside them is in none of the ranges.
	spans []Range
	syms  []elfx.Symbol // the code symbols in ranges
	// next is the address of the first code symbol above an address
	// among all the file's, which bounds a zero-sized symbol (see
	// sizeUnsized); nil when no symbol in scope is zero-sized.
	next []uint64
}

// Units yields the indices, among the n units of the file's
// .debug_info (dies.Data.Units), of the scope's units in order; all n
// for the whole file.
func (s *Scope) Units(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		if s == nil {
			for i := range n {
				if !yield(i) {
					return
				}
			}
			return
		}
		for _, i := range s.units {
			if i < n && !yield(i) {
				return
			}
		}
	}
}

// Entries returns the offsets of the scope's units' first entries, in
// .debug_info order, for readers that seek to them (debug/dwarf's);
// nil for the whole file.
func (s *Scope) Entries() []dwarf.Offset {
	if s == nil {
		return nil
	}
	return s.offs
}

// Holds reports whether addr lies in the code ranges of the scope's
// units; every address does in the whole file.
func (s *Scope) Holds(addr uint64) bool {
	if s == nil {
		return true
	}
	return (s.spans == nil || inRanges(s.spans, addr)) && inRanges(s.ranges, addr)
}

// inRanges reports whether addr lies in one of rs, sorted and disjoint.
// Written out: a pass over 600,000 symbols asks it twice per symbol.
func inRanges(rs []Range, addr uint64) bool {
	lo, hi := 0, len(rs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch r := &rs[m]; {
		case r.End <= addr:
			lo = m + 1
		case r.Start > addr:
			hi = m
		default:
			return true
		}
	}
	return false
}

// spanGap is the largest gap between two ranges of a scope that one of
// its spans covers.
const spanGap = 1 << 20

// joinSpans returns rs (sorted, disjoint) joined across gaps under
// spanGap.
func joinSpans(rs []Range) []Range {
	var out []Range
	for _, r := range rs {
		if n := len(out); n > 0 && r.Start-out[n-1].End < spanGap {
			out[n-1].End = r.End
			continue
		}
		out = append(out, r)
	}
	return out
}

// Ranges returns the code ranges of the scope's units, sorted and
// disjoint; nil for the whole file.
func (s *Scope) Ranges() []Range {
	if s == nil {
		return nil
	}
	return s.ranges
}

// Unit is a compile unit as a scope's predicate sees it: what its
// first entry (DW_TAG_compile_unit or DW_TAG_partial_unit) says.
type Unit struct {
	index  int
	offset dwarf.Offset
	// Ranges are its code ranges (DW_AT_low_pc/high_pc, DW_AT_ranges),
	// decoded when the scope first needs them (see unitRanges): nil
	// when a predicate is asked.
	Ranges []Range
	// StmtList is the offset of its line program, if HasStmtList.
	StmtList    uint64
	HasStmtList bool
	CompDir     string
	AddressSize int
}

// unitAttrs are the attributes readUnits reads: the ranges' three, and
// then the line program's (uaStmtList, uaCompDir).
var unitAttrs = []dwarf.Attr{dwarf.AttrLowpc, dwarf.AttrHighpc, dwarf.AttrRanges, dwarf.AttrStmtList, dwarf.AttrCompDir}

const (
	uaStmtList = 3
	uaCompDir  = 4
)

// unitRanges are a file's compile units, whose code ranges are decoded
// as they are first asked for: a question that picks units by their
// line programs (FILE:LINE) does not decode the other units' range lists
// (at clang, one range per function: a fifth of such a question's CPU
// on 300,000 functions).
type unitRanges struct {
	units []Unit
	w     *dies.Walker
	read  []bool
	rs    [][2]uint64
}

// of returns the code ranges of units[i], decoding them the first time.
func (r *unitRanges) of(i int) []Range {
	u := &r.units[i]
	if !r.read[i] {
		r.read[i] = true
		for _, x := range r.decode(i) {
			if rg := (Range{x[0], x[1]}); isUnitRange(rg) {
				u.Ranges = append(u.Ranges, rg)
			}
		}
	}
	return u.Ranges
}

// hold reports in held which of addrs the code ranges of units[i] hold,
// and whether any does. A unit not yet read is decoded into a buffer
// and not kept: a question about an address decodes every unit's list
// (clang: one range per function, and no .debug_aranges), and keeps
// those of its units only.
func (r *unitRanges) hold(i int, addrs []uint64, held []bool) bool {
	any := false
	check := func(rg Range) {
		if !isUnitRange(rg) {
			return
		}
		for k, a := range addrs {
			if rg.Contains(a) {
				held[k], any = true, true
			}
		}
	}
	if r.read[i] {
		for _, rg := range r.units[i].Ranges {
			check(rg)
		}
		return any
	}
	for _, x := range r.decode(i) {
		check(Range{x[0], x[1]})
	}
	return any
}

// decode returns the range list of units[i] in r's buffer, nil if it
// cannot be read.
func (r *unitRanges) decode(i int) [][2]uint64 {
	r.w.Reset(r.units[i].index)
	e, err := r.w.Next()
	if err != nil || e == nil {
		return nil
	}
	if r.rs, err = e.Ranges(r.rs[:0]); err != nil {
		return nil
	}
	return r.rs
}

// isUnitRange reports whether a unit's range rg is kept: not empty, and
// of code.
func isUnitRange(rg Range) bool { return rg.Start < rg.End && isCodeRange(rg) }

// readUnits returns every compile unit of d, decoding only its first
// entry, and not yet its ranges.
func readUnits(d *dies.Data) (*unitRanges, error) {
	var out []Unit
	w := d.NewWalker(unitAttrs...)
	for i := range d.Units() {
		w.Reset(i)
		e, err := w.Next()
		if err != nil {
			return nil, err
		}
		if e == nil || e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagPartialUnit {
			continue
		}
		u := Unit{index: i, offset: e.Offset, AddressSize: int(w.Unit().AddrSize)}
		u.StmtList, u.HasStmtList = e.SecOffset(uaStmtList)
		u.CompDir, _ = e.String(uaCompDir)
		out = append(out, u)
	}
	return &unitRanges{units: out, w: w, read: make([]bool, len(out))}, nil
}

// NewScope returns the scope of the units whose code ranges hold one of
// addrs or that pick (if not nil) accepts, together with every unit that
// holds a fragment of a procedure in them (see closeOver). It returns
// nil, the whole file, when the file has no DWARF or no symbols, one of
// addrs is in no unit, no unit is chosen, or a fragment of such a
// procedure lies in no unit: nothing smaller is known to give the whole
// file's answers.
func NewScope(f *elfx.File, addrs []uint64, pick func(*Unit) bool) (*Scope, error) {
	d, err := dies.Load(f)
	if err != nil || d == nil {
		return nil, err
	}
	ur, err := readUnits(d)
	if err != nil {
		return nil, err // it names the file
	}
	units := ur.units
	in := make([]bool, len(units))
	held := make([]bool, len(addrs))
	chosen := false
	for i := range units {
		u := &units[i]
		if len(addrs) > 0 && ur.hold(i, addrs, held) {
			in[i] = true
		}
		if !in[i] && pick != nil && pick(u) {
			in[i] = true
		}
		chosen = chosen || in[i]
	}
	if !chosen || slices.Contains(held, false) {
		return nil, nil
	}
	return closeOver(ur, in, f.EachCodeSymbolWhere, f.SymtabLen()), nil
}

// ScopeOfAddrs returns the scope of the units whose code ranges hold
// addrs; nil (the whole file) when one of them is in no unit.
func ScopeOfAddrs(f *elfx.File, addrs []uint64) (*Scope, error) {
	if len(addrs) == 0 {
		return nil, nil
	}
	return NewScope(f, addrs, nil)
}

// ScopeOfName returns the scope of the procedures a function name can
// name (Table.ByName): the units holding NameAddrs. Nil (the whole
// file) when there are none: a procedure known by its DWARF name only
// is found by reading every unit.
func ScopeOfName(f *elfx.File, name string) (*Scope, error) {
	return ScopeOfAddrs(f, NameAddrs(f, name))
}

// NameAddrs returns the addresses of the code symbols that a procedure
// a function name names can have: the name itself, the name with cgo's
// "C." removed, and their clones and fragments (name.cold, name.part.N,
// name.constprop.N, name.isra.N...), whose DWARF subprograms carry the
// name.
func NameAddrs(f *elfx.File, name string) []uint64 {
	if name == "" {
		return nil
	}
	names := []string{name}
	if c, ok := strings.CutPrefix(name, "C."); ok && c != "" {
		names = append(names, c)
	}
	var addrs []uint64
	// Only names that start with one of names and end there, at a '.'
	// or at a version's '@' are read.
	prefixed := func(_ uint64, b []byte) bool {
		for _, n := range names {
			if len(b) > len(n) && string(b[:len(n)]) == n && (b[len(n)] == 0 || b[len(n)] == '.' || b[len(n)] == '@') {
				return true
			}
		}
		return false
	}
	if err := f.EachCodeSymbolWhere(prefixed, func(s *elfx.Symbol) {
		for _, n := range names {
			if s.Name == n || len(s.Name) > len(n) && s.Name[len(n)] == '.' && strings.HasPrefix(s.Name, n) {
				addrs = append(addrs, s.Value)
				break
			}
		}
	}); err != nil {
		return nil
	}
	return addrs
}

// maxClosure bounds the rounds of closeOver.
const maxClosure = 16

// closeOver makes the scope of the units marked in: their code symbols,
// and then, until nothing changes, every unit holding a symbol of the
// same family (rootName) as a symbol in scope. Procedures are built
// from symbols grouped by name (a fragment foo.cold joins the symbol
// foo that pickParent chooses among all of that name), so a scope that
// has one member of a family has all of them. It returns nil when a
// family member lies in no unit, or the rounds do not settle.
//
// symbols makes one pass over the code symbols (elfx.File's
// EachCodeSymbolWhere). A round makes one: it reads the names of the
// symbols in scope, and of each symbol outside keeps the nameKey, which
// is all the families' check needs when no family reaches outside (the
// usual case); only when a key outside is one of the roots' does a
// second pass read those symbols' names.
func closeOver(ur *unitRanges, in []bool, symbols func(elfx.Prefilter, func(*elfx.Symbol)) error, n int) *Scope {
	units := ur.units
	for round := 0; round < maxClosure; round++ {
		s := &Scope{}
		for i := range units {
			if in[i] {
				s.units = append(s.units, units[i].index)
				s.offs = append(s.offs, units[i].offset)
				s.ranges = append(s.ranges, ur.of(i)...)
			}
		}
		s.ranges = mergeRanges(s.ranges)
		s.spans = joinSpans(s.ranges)
		outside := make([]uint64, 0, n)
		keep := func(v uint64, b []byte) bool {
			if s.Holds(v) {
				return true
			}
			outside = append(outside, nameKey(b))
			return false
		}
		err := symbols(keep, func(sym *elfx.Symbol) { s.syms = append(s.syms, *sym) })
		if err != nil || len(s.syms) == 0 {
			return nil // without symbols, procedures come from every unit's DWARF
		}
		roots := make(map[string]bool)
		for i := range s.syms {
			roots[rootName(s.syms[i].Name)] = true
		}
		if !anyKeyOf(outside, roots) {
			s.setNext(symbols)
			return s
		}
		var members []uint64
		symbols(rootsFilter(s, roots), func(sym *elfx.Symbol) {
			if !s.Holds(sym.Value) && roots[rootName(sym.Name)] && isCodeRange(Range{sym.Value, sym.Value + 1}) {
				members = append(members, sym.Value)
			}
		})
		// Each member brings in the first unit that holds it. A unit's
		// list is decoded once, into a buffer (hold): those that join
		// keep theirs in the next round (of).
		found, held := make([]bool, len(members)), make([]bool, len(members))
		grew := false
		for k := range units {
			clear(held)
			if !ur.hold(k, members, held) {
				continue
			}
			for m := range held {
				if held[m] && !found[m] {
					found[m] = true
					grew = grew || !in[k]
					in[k] = true
				}
			}
		}
		if slices.Contains(found, false) {
			return nil
		}
		if !grew {
			s.setNext(symbols)
			return s
		}
	}
	return nil
}

// nameKey is a hash of the part of a symbol's name (the string table
// from it on, as a Prefilter sees it) up to its first '.', '@' or NUL:
// every name whose rootName is r, and every name rootsFilter accepts
// for the root r, has the key of r (a prefix of the name that ends at
// one of those bytes). It reads the name eight bytes at a time; a pass
// asks it about each of 600,000 names.
func nameKey(b []byte) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// zeros has the high bit of the first zero byte of x set (and maybe
	// of bytes after it; never before).
	zeros := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	h, n := uint64(0), 0
	for {
		var w uint64
		if len(b) >= 8 {
			w = binary.LittleEndian.Uint64(b)
		} else {
			for i, c := range b {
				w |= uint64(c) << (8 * i)
			}
		}
		// The bytes past the end of a short b are 0: the end is a stop.
		if m := zeros(w) | zeros(w^('.'*ones)) | zeros(w^('@'*ones)); m != 0 {
			k := bits.TrailingZeros64(m) / 8
			h = (h ^ w&(1<<(8*k)-1)) * 0x9e3779b97f4a7c15
			h ^= uint64(n + k)
			// The low bits pick anyKeyOf's bit: mix the high ones in.
			h ^= h >> 29
			h *= 0xbf58476d1ce4e5b9
			return h ^ h>>32
		}
		h = bits.RotateLeft64((h^w)*0x9e3779b97f4a7c15, 27)
		n += 8
		b = b[8:]
	}
}

// anyKeyOf reports whether one of keys is the nameKey of one of roots.
// It tests most keys with one bit of a small set before a map.
func anyKeyOf(keys []uint64, roots map[string]bool) bool {
	want := make(map[uint64]bool, len(roots))
	// 16 bits or more per root, a power of two: a key not wanted finds
	// its bit set 1 time in 16 or less.
	mask := uint64(1)<<max(10, bits.Len(uint(len(roots)*16))) - 1
	set := make([]uint64, (mask+1)/64)
	for r := range roots {
		k := nameKey([]byte(r))
		want[k] = true
		set[k&mask/64] |= 1 << (k & 63)
	}
	for _, k := range keys {
		if set[k&mask/64]&(1<<(k&63)) != 0 && want[k] {
			return true
		}
	}
	return false
}

// rootsFilter accepts the symbols outside s whose names may have one of
// roots as their rootName: a root is a prefix of the name (fragmentName
// cuts at a '.'), followed by the end of the name, a '.' or the '@' of
// a version (elfx.SplitVersion). It reads no more of a name than the
// roots' lengths.
func rootsFilter(s *Scope, roots map[string]bool) elfx.Prefilter {
	var lens []int
	for r := range roots {
		if !slices.Contains(lens, len(r)) {
			lens = append(lens, len(r))
		}
	}
	return func(v uint64, b []byte) bool {
		if s.Holds(v) {
			return false
		}
		for _, n := range lens {
			if len(b) > n && (b[n] == 0 || b[n] == '.' || b[n] == '@') && roots[string(b[:n])] {
				return true
			}
		}
		return false
	}
}

// setNext records the addresses that bound zero-sized symbols in scope,
// when there are any.
func (s *Scope) setNext(symbols func(elfx.Prefilter, func(*elfx.Symbol)) error) {
	if !slices.ContainsFunc(s.syms, func(x elfx.Symbol) bool { return x.Size == 0 }) {
		return
	}
	symbols(nil, func(sym *elfx.Symbol) {
		if keepSymbol(sym) {
			s.next = append(s.next, sym.Value)
		}
	})
	slices.Sort(s.next)
	s.next = slices.Compact(s.next)
}

// nextSymbol returns the address of the first kept code symbol of the
// whole file above addr, 0 if none.
func (s *Scope) nextSymbol(addr uint64) uint64 {
	i, found := slices.BinarySearch(s.next, addr)
	if found {
		i++
	}
	if i < len(s.next) {
		return s.next[i]
	}
	return 0
}

// rootName is the name of the symbol a fragment symbol belongs to in
// the end, following fragmentName: foo for foo.cold, foo.cold.0 and
// foo.part.1, foo.constprop.0 for foo.constprop.0.cold; a name without a
// fragment suffix is its own root.
func rootName(name string) string {
	for range 8 {
		p, _, ok := fragmentName(name)
		if !ok {
			break
		}
		name = p
	}
	return name
}

// mergeRanges sorts rs and joins the ranges that overlap or touch.
func mergeRanges(rs []Range) []Range {
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.Start, b.Start) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}
