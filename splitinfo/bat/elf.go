package bat

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/splitdbg/splitdbg/internal/elfx"
)

// Open decodes the BAT note of the ELF file at path and names its
// fragments from the symbol table. A file without the note gives
// ErrNoBAT.
func Open(path string) (*Table, error) { return elfx.OpenWith(path, FromELF) }

// Read is Open for an ELF file read from r; name is used in error
// messages.
func Read(name string, r io.ReaderAt) (*Table, error) { return elfx.ReadWith(name, r, FromELF) }

// FromELF decodes the BAT note of an opened ELF file and gives each
// fragment the name and size of the function symbol at its address (a
// symbol without a size extends to the next code symbol). Entries of a
// hot fragment at or past its end are marked Deleted.
func FromELF(f *elfx.File) (*Table, error) {
	data, s, err := f.SectionData(SectionName)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("%s: %w", f.Name, ErrNoBAT)
	}
	if s.Type != elf.SHT_NOTE {
		return nil, fmt.Errorf("%s: section %s has type %v, want SHT_NOTE", f.Name, SectionName, s.Type)
	}
	t, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	syms, err := f.CodeSymbols() // parsed once per file; ours to sort
	if err != nil && !errors.Is(err, elfx.ErrNoSymbols) {
		return nil, err
	}
	t.attachSymbols(syms)
	return t, nil
}

// attachSymbols names and sizes the fragments from syms and marks the
// deleted-block entries.
func (t *Table) attachSymbols(syms []elfx.Symbol) {
	// Best symbol first at each address: functions, then sized, then
	// global, then table order.
	slices.SortStableFunc(syms, func(a, b elfx.Symbol) int {
		return cmp.Or(cmp.Compare(a.Value, b.Value), rank(&a)-rank(&b))
	})
	for i := range t.index.spans {
		sp := &t.index.spans[i]
		fn := &t.funcs[sp.fn]
		j, ok := slices.BinarySearchFunc(syms, fn.Addr, func(s elfx.Symbol, a uint64) int { return cmp.Compare(s.Value, a) })
		if !ok {
			continue
		}
		s := &syms[j]
		fn.Name, fn.Size = s.Name, s.Size
		if fn.Size == 0 {
			for k := j + 1; k < len(syms); k++ {
				if syms[k].Value > s.Value {
					fn.Size = syms[k].Value - s.Value
					break
				}
			}
		}
		sp.size = uint32(min(fn.Size, math.MaxUint32))
		if fn.Cold || fn.Size == 0 {
			continue
		}
		for k := range fn.Entries {
			e := &fn.Entries[k]
			e.Deleted = uint64(e.OutputOffset) >= fn.Size
		}
	}
}

func rank(s *elfx.Symbol) int {
	r := 0
	if !s.IsFunc() {
		r += 4
	}
	if s.Size == 0 {
		r += 2
	}
	if s.Bind != elf.STB_GLOBAL {
		r++
	}
	return r
}
