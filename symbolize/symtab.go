package symbolize

import (
	"cmp"
	"debug/elf"
	"errors"
	"slices"
	"sort"

	"github.com/splitdbg/splitdbg/internal/addrindex"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// symbol is one entry of the symbol table as symbolizers read it.
type symbol struct {
	addr, size uint64
	name       string
	file       string // the STT_FILE before a local symbol, "" otherwise
}

// symtab is the ELF symbol table reduced as llvm-symbolizer reduces it
// (SymbolizableObjectFile): function, object, ifunc and untyped
// symbols defined in a section, one per address — the largest, and of
// equal sizes the last in table order — sorted by address. An address
// belongs to the symbol at or below it if that symbol's size reaches
// it, or if its size is 0.
type symtab struct {
	syms []symbol
	idx  addrindex.Index
}

// readSymtab reads f's symbol table; over a scope (not nil), only the
// symbols that at can return for an address in its ranges: those in the
// ranges, and below each range the symbols at the highest address under
// it (the symbol holding the range's first addresses, when none in the
// range is below them). The others' names are not read.
func readSymtab(f *elfx.File, scope *splitinfo.Scope) (symtab, error) {
	t := symtab{}
	var keep elfx.Prefilter
	ranges := scope.Ranges()
	// below[i] is the highest address of a symbol under ranges[i] and
	// outside every range so far, belowSyms[i] the symbols there in table
	// order.
	below := make([]uint64, len(ranges))
	belowSyms := make([][]symbol, len(ranges))
	// locate returns the range above addr (len(ranges) if none) and
	// whether the one before it holds addr (scope.Holds, in the one
	// search).
	locate := func(addr uint64) (int, bool) {
		i := sort.Search(len(ranges), func(i int) bool { return ranges[i].Start > addr })
		return i, i > 0 && addr < ranges[i-1].End
	}
	if scope != nil {
		keep = func(addr uint64, _ []byte) bool {
			i, held := locate(addr)
			return held || i < len(ranges) && (belowSyms[i] == nil || addr >= below[i])
		}
	} else {
		t.syms = make([]symbol, 0, f.SymtabLen())
	}
	file := ""
	// Without .symtab, the dynamic symbols (as LLVM's symbol sizes are
	// computed).
	err := f.EachSymbolWhere(keep, func(s *elf.Symbol) {
		typ, bind := elf.ST_TYPE(s.Info), elf.ST_BIND(s.Info)
		if typ == elf.STT_FILE {
			file = s.Name
			return
		}
		if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || int(s.Section) >= len(f.Sections) {
			return
		}
		if typ != elf.STT_NOTYPE && typ != elf.STT_FUNC && typ != elf.STT_OBJECT && typ != elf.STT_GNU_IFUNC {
			return
		}
		sym := symbol{addr: s.Value, size: s.Size, name: s.Name}
		if bind == elf.STB_LOCAL {
			sym.file = file
		}
		if scope == nil {
			t.syms = append(t.syms, sym)
			return
		}
		i, held := locate(s.Value)
		if held {
			t.syms = append(t.syms, sym)
			return
		}
		switch {
		case i == len(ranges), belowSyms[i] != nil && s.Value < below[i]:
		case belowSyms[i] == nil || s.Value > below[i]:
			below[i], belowSyms[i] = s.Value, append(belowSyms[i][:0], sym)
		default:
			belowSyms[i] = append(belowSyms[i], sym)
		}
	})
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return symtab{}, err
	}
	for _, b := range belowSyms {
		t.syms = append(t.syms, b...)
	}
	// By address, then size, then table order (a stable sort of the
	// symbols themselves, a merge sort in place, took half the time of
	// a one-address question on 600,000 symbols): sort small keys.
	type key struct {
		addr, size uint64
		i          int
	}
	keys := make([]key, len(t.syms))
	for i := range t.syms {
		keys[i] = key{t.syms[i].addr, t.syms[i].size, i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.addr, b.addr), cmp.Compare(a.size, b.size), cmp.Compare(a.i, b.i))
	})
	// Put the symbols in the keys' order in place, cycle by cycle of the
	// permutation (position j takes the symbol keys[j].i names).
	for k := range keys {
		if keys[k].i < 0 {
			continue
		}
		first := t.syms[k]
		for j := k; ; {
			src := keys[j].i
			keys[j].i = -1
			if src == k {
				t.syms[j] = first
				break
			}
			t.syms[j] = t.syms[src]
			j = src
		}
	}
	out := t.syms[:0]
	for i, s := range t.syms {
		if i+1 < len(t.syms) && t.syms[i+1].addr == s.addr {
			continue
		}
		out = append(out, s)
	}
	t.syms = slices.Clip(out)
	starts := make([]uint64, len(t.syms))
	for i := range t.syms {
		starts[i] = t.syms[i].addr
	}
	t.idx = addrindex.New(starts)
	return t, nil
}

// at returns the symbol holding addr, or nil.
func (t *symtab) at(addr uint64) *symbol {
	if i := t.holding(addr); i >= 0 {
		return &t.syms[i]
	}
	return nil
}

// holding returns the index of the symbol holding addr, or -1.
func (t *symtab) holding(addr uint64) int {
	i := t.idx.Find(addr)
	if i >= 0 && t.syms[i].size != 0 && t.syms[i].addr+t.syms[i].size <= addr {
		return -1
	}
	return i
}

// named yields the symbols named name, in address order.
func (t *symtab) named(name string, yield func(*symbol) bool) {
	for i := range t.syms {
		if t.syms[i].name == name && !yield(&t.syms[i]) {
			return
		}
	}
}
