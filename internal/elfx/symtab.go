package elfx

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// EachSymbol calls yield with every entry of the file's own .symtab
// after the null entry, in table order, as debug/elf's Symbols reads
// them, or when it has none with every entry of .dynsym, as
// DynamicSymbols reads them (with their versions). The Symbol is reused
// between calls. A file with neither table is elf.ErrNoSymbols.
//
// .symtab is decoded in place (ELF gABI, "Symbol Table"): no copy of the
// table, and in a mapped file no copy of the names either, which point
// into the mapped .strtab. A table of 600,000 symbols is then read
// without 600,000 allocations.
func (f *File) EachSymbol(yield func(*elf.Symbol)) error {
	return f.eachSymbol(nil, yield)
}

// EachSymbolWhere is EachSymbol yielding the STT_FILE symbols and the
// others keep accepts, asked before their names are read.
func (f *File) EachSymbolWhere(keep Prefilter, yield func(*elf.Symbol)) error {
	if keep == nil {
		return f.eachSymbol(nil, yield)
	}
	return f.eachSymbol(func(s *elf.Symbol, name []byte) bool { return keep(s.Value, name) }, yield)
}

// A Prefilter is asked about each symbol that is not an STT_FILE before
// its name is read, with its value and the string table from its name
// on (the name's bytes up to a NUL, and whatever follows it; nil when
// its offset lies outside the table). A symbol it rejects is not
// yielded. It lets one pass over a table of 600,000 symbols, most of
// which a question does not want, skip reading their names.
type Prefilter func(value uint64, name []byte) bool

// entryFilter is a Prefilter that sees the whole entry but its name: a
// Symbol with every field but Name (and Version) set.
type entryFilter func(s *elf.Symbol, name []byte) bool

// eachSymbol is EachSymbol yielding the STT_FILE symbols and the others
// keep accepts (all when keep is nil).
func (f *File) eachSymbol(keep entryFilter, yield func(*elf.Symbol)) error {
	var tab *elf.Section
	for _, s := range f.File.Sections {
		if s.Type == elf.SHT_SYMTAB {
			tab = s
			break
		}
	}
	if tab == nil {
		syms, err := f.DynamicSymbols()
		if errors.Is(err, elf.ErrNoSymbols) {
			return err
		}
		if err != nil {
			return fmt.Errorf("%s: symbol table: %w", f.Name, err)
		}
		for i := range syms {
			s := &syms[i]
			if keep == nil || elf.ST_TYPE(s.Info) == elf.STT_FILE || keep(s, append([]byte(s.Name), 0)) {
				yield(s)
			}
		}
		return nil
	}
	data, err := f.Data(tab)
	if err != nil {
		return err
	}
	if int(tab.Link) >= len(f.File.Sections) || tab.Link == 0 {
		return fmt.Errorf("%s: %w", f.Name, cursor.Errorf(tab.Name, 0, cursor.ErrCorrupt, "string table index %d is no section", tab.Link))
	}
	strs, err := f.Data(f.File.Sections[tab.Link])
	if err != nil {
		return err
	}
	size := elf.Sym64Size
	if f.Class == elf.ELFCLASS32 {
		size = elf.Sym32Size
	}
	if len(data)%size != 0 {
		return fmt.Errorf("%s: %w", f.Name, cursor.Errorf(tab.Name, int64(len(data)/size*size), cursor.ErrCorrupt,
			"%d bytes is not a whole number of %d-byte symbols", len(data), size))
	}
	bo := order{big: f.ByteOrder == binary.BigEndian}
	var s elf.Symbol
	for off := size; off < len(data); off += size {
		e := data[off : off+size]
		name := bo.u32(e) // st_name leads both classes' entries
		if size == elf.Sym64Size {
			s.Info, s.Other = e[4], e[5]
			s.Section = elf.SectionIndex(bo.u16(e[6:]))
			s.Value, s.Size = bo.u64(e[8:]), bo.u64(e[16:])
		} else {
			s.Value, s.Size = uint64(bo.u32(e[4:])), uint64(bo.u32(e[8:]))
			s.Info, s.Other = e[12], e[13]
			s.Section = elf.SectionIndex(bo.u16(e[14:]))
		}
		if keep != nil && elf.ST_TYPE(s.Info) != elf.STT_FILE {
			var rest []byte
			if int64(name) < int64(len(strs)) {
				rest = strs[name:]
			}
			s.Name = ""
			if !keep(&s, rest) {
				continue
			}
		}
		s.Name = f.cstring(strs, name)
		yield(&s)
	}
	return nil
}

// order reads the fields of a table entry in the file's byte order
// without a call through binary.ByteOrder's interface for each: a pass
// reads four fields of each of 600,000 entries.
type order struct{ big bool }

func (o order) u16(b []byte) uint16 {
	if o.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (o order) u32(b []byte) uint32 {
	if o.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (o order) u64(b []byte) uint64 {
	if o.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// SymtabLen returns the number of entries, within its file, of the
// .symtab whose symbols CodeSymbols and EachCodeSymbol read (the file's
// own, or its debug file's when the file is stripped), 0 if there is
// none: room for the symbols they yield.
func (f *File) SymtabLen() int {
	f = f.symbolSource()
	t := f.File.Section(".symtab")
	if t == nil || t.Type != elf.SHT_SYMTAB || f.size < 0 || f.checkInFile(t) != nil {
		return 0
	}
	size := uint64(elf.Sym64Size)
	if f.Class == elf.ELFCLASS32 {
		size = elf.Sym32Size
	}
	// Size is what the section holds once decompressed (SHF_COMPRESSED),
	// which nothing has checked yet; FileSize is checked against the file.
	return int(min(t.Size, t.FileSize) / size)
}

// cstring returns the NUL-terminated string at off in a string table,
// "" where there is none (as debug/elf reads a bad name). In a mapped
// file it shares the mapping's bytes, which are never unmapped.
func (f *File) cstring(strs []byte, off uint32) string {
	if int64(off) >= int64(len(strs)) {
		return ""
	}
	n := bytes.IndexByte(strs[off:], 0)
	if n <= 0 {
		return ""
	}
	if f.mapped {
		return unsafe.String(&strs[off], n)
	}
	return string(strs[off : int(off)+n])
}
