package splitinfo

import (
	"cmp"
	"debug/elf"
	"slices"
	"strings"

	"github.com/splitdbg/splitdbg/internal/elfx"
)

// fragmentName recognizes the symbol naming conventions of moved code and
// returns the name of the symbol the fragment belongs to:
//
//	foo.cold, foo.cold.N       GCC hot/cold partitioning, clang machine
//	                           function splitting, BOLT (Cold)
//	foo.warm, foo.warm.N       (Warm)
//	foo.part.N                 GCC partial inlining (Part)
//	foo.__part.N               clang basic-block sections (Part)
//
// Only the outermost suffix is removed: foo.cold.cold.0 belongs to
// foo.cold, which in turn belongs to foo.
func fragmentName(name string) (parent string, kind Kind, ok bool) {
	base, last, found := cutLast(name)
	if !found || base == "" {
		return "", 0, false
	}
	switch last {
	case "cold":
		return base, Cold, true
	case "warm":
		return base, Warm, true
	}
	if !isDigits(last) {
		return "", 0, false
	}
	// foo.cold.N, foo.warm.N, foo.part.N, foo.__part.N
	b, mid, found := cutLast(base)
	if !found || b == "" {
		return "", 0, false
	}
	switch mid {
	case "cold":
		return b, Cold, true
	case "warm":
		return b, Warm, true
	case "part", "__part":
		return b, Part, true
	}
	return "", 0, false
}

func cutLast(s string) (before, after string, found bool) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// preferred returns the index in syms, the function symbols at one
// address with their versions removed, of the one that names the
// address, as gdb's "info symbol" and llvm-symbolizer do on a distribution's
// stripped library with its separate debug file: a name the library
// exports (global or weak) over a local one (both read the exported names
// of .dynsym there), among those the last by name (gdb sorts the minimal
// symbols at an address by name and takes the last, minsyms.c), a sized
// symbol over a zero-sized one. Fragment names (foo.cold) name the
// address only when all do.
func preferred(syms []elfx.Symbol) int {
	best := -1
	rank := func(s *elfx.Symbol) int {
		r := 0
		if _, _, frag := fragmentName(s.Name); !frag {
			r += 4
		}
		if s.Size != 0 {
			r += 2
		}
		if s.Bind != elf.STB_LOCAL {
			r++
		}
		return r
	}
	for i := range syms {
		if best < 0 {
			best = i
			continue
		}
		s, b := &syms[i], &syms[best]
		if c := cmp.Compare(rank(s), rank(b)); c > 0 || c == 0 && s.Name > b.Name {
			best = i
		}
	}
	return best
}

// sizeUnsized gives each group of zero-sized symbols (_init,
// deregister_tm_clones, hand-written assembly) the extent llvm-symbolizer
// names by it: up to the next symbol's address, within its section
// (SymbolizableObjectFile::getNameFromSymbolTable takes a symbol of size
// 0 to cover every address up to the next symbol). groups are in address
// order; syms are the symbols they were made from. Groups left without an
// extent are dropped.
func (b *builder) sizeUnsized(groups []symGroup, syms []elfx.Symbol) []symGroup {
	end := make(map[uint64]uint64) // unsized symbol's address → its section's end
	for i := range syms {
		s := &syms[i]
		if s.Size == 0 && int(s.Section) < len(b.f.Sections) {
			sec := b.f.Sections[s.Section]
			end[s.Value] = sec.Addr + sec.Size
		}
	}
	for i := range groups {
		g := &groups[i]
		if g.size != 0 {
			continue
		}
		limit := end[g.addr]
		next := uint64(0)
		switch {
		case b.scope != nil:
			// The next symbol may be outside the scope.
			next = b.scope.nextSymbol(g.addr)
		case i+1 < len(groups):
			next = groups[i+1].addr
		}
		if next != 0 && (limit == 0 || next < limit) {
			limit = next
		}
		if limit > g.addr {
			g.size = limit - g.addr
		}
	}
	return slices.DeleteFunc(groups, func(g symGroup) bool { return g.size == 0 })
}
