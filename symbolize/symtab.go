package symbolize

import (
	"cmp"
	"debug/elf"
	"errors"
	"slices"

	"github.com/splitdbg/splitdbg/internal/addrindex"
	"github.com/splitdbg/splitdbg/internal/elfx"
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

func readSymtab(f *elfx.File) (symtab, error) {
	t := symtab{syms: make([]symbol, 0, f.SymtabLen())}
	file := ""
	// Without .symtab, the dynamic symbols (as LLVM's symbol sizes are
	// computed).
	err := f.EachSymbol(func(s *elf.Symbol) {
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
		t.syms = append(t.syms, sym)
	})
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return symtab{}, err
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
	i := t.idx.Find(addr)
	if i < 0 {
		return nil
	}
	s := &t.syms[i]
	if s.size != 0 && s.addr+s.size <= addr {
		return nil
	}
	return s
}

// named yields the symbols named name, in address order.
func (t *symtab) named(name string, yield func(*symbol) bool) {
	for i := range t.syms {
		if t.syms[i].name == name && !yield(&t.syms[i]) {
			return
		}
	}
}
