// Package elfx is splitdbg's access layer over debug/elf: it opens files
// memory-mapped (golang.org/x/exp/mmap), so that only the sections a
// caller asks for are ever copied into the heap, and it adds what every
// splitdbg source needs: function symbols with the STT_FILE they belong
// to, section data by name or type (decompressing SHF_COMPRESSED
// sections, as debug/elf does), and reads of code by virtual address.
package elfx

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"golang.org/x/exp/mmap"
)

// File is an ELF file opened for reading. It is safe for concurrent use
// once opened, except Close.
type File struct {
	*elf.File
	Name   string // the path it was opened from, for error messages
	closer io.Closer
	alloc  []*elf.Section // SHF_ALLOC sections with file contents, by address

	// Section contents, DWARF and code symbols are read once per file:
	// the procedure table, the BOLT address translation table and the
	// line table of one file read the same sections and symbols.
	mu       sync.Mutex
	sections map[string][]byte
	dwarf    struct {
		once sync.Once
		d    *dwarf.Data
		err  error
	}
	symbols struct {
		once sync.Once
		syms []Symbol
		err  error
	}
}

// Open memory-maps the ELF file at path.
func Open(path string) (*File, error) {
	m, err := mmap.Open(path)
	if err != nil {
		return nil, err
	}
	f, err := NewFile(path, m)
	if err != nil {
		m.Close()
		return nil, err
	}
	f.closer = m
	return f, nil
}

// NewFile reads an ELF file from r; name is used in error messages.
func NewFile(name string, r io.ReaderAt) (*File, error) {
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &File{File: ef, Name: name}
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && s.Size > 0 && s.Addr != 0 {
			f.alloc = append(f.alloc, s)
		}
	}
	sort.SliceStable(f.alloc, func(i, j int) bool { return f.alloc[i].Addr < f.alloc[j].Addr })
	return f, nil
}

// NewBytes reads an ELF file held in memory.
func NewBytes(name string, data []byte) (*File, error) {
	return NewFile(name, bytes.NewReader(data))
}

// Close releases the mapping.
func (f *File) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// Data returns the contents of section s, decompressed. The error names
// the file and section.
func (f *File) Data(s *elf.Section) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	d, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: section %s: %w", f.Name, s.Name, err)
	}
	return d, nil
}

// SectionData returns the decompressed contents of the first section
// named name, or nil and no error if there is none. The contents are read
// once and shared: callers must not modify them.
func (f *File) SectionData(name string) ([]byte, *elf.Section, error) {
	s := f.Section(name)
	if s == nil {
		return nil, nil, nil
	}
	f.mu.Lock()
	d, ok := f.sections[name]
	f.mu.Unlock()
	if ok {
		return d, s, nil
	}
	d, err := f.Data(s)
	if err != nil {
		return nil, s, err
	}
	f.mu.Lock()
	if f.sections == nil {
		f.sections = make(map[string][]byte)
	}
	f.sections[name] = d
	f.mu.Unlock()
	return d, s, nil
}

// ReadVA reads n bytes of file contents at virtual address addr. The
// range must lie within one allocated section.
func (f *File) ReadVA(addr uint64, n uint64) ([]byte, error) {
	i := sort.Search(len(f.alloc), func(i int) bool { return f.alloc[i].Addr+f.alloc[i].Size > addr })
	if i == len(f.alloc) || f.alloc[i].Addr > addr {
		return nil, fmt.Errorf("%s: address %#x is in no section with contents", f.Name, addr)
	}
	s := f.alloc[i]
	if addr+n > s.Addr+s.Size || addr+n < addr {
		return nil, fmt.Errorf("%s: range [%#x,%#x) runs past section %s", f.Name, addr, addr+n, s.Name)
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		return nil, fmt.Errorf("%s: section %s is compressed", f.Name, s.Name)
	}
	// The section header may claim more bytes than the file holds: probe
	// the last byte before allocating.
	var last [1]byte
	if _, err := s.ReadAt(last[:], int64(addr-s.Addr+n-1)); n > 0 && err != nil {
		return nil, fmt.Errorf("%s: section %s: [%#x,%#x) is beyond the end of the file", f.Name, s.Name, addr, addr+n)
	}
	buf := make([]byte, n)
	if _, err := s.ReadAt(buf, int64(addr-s.Addr)); err != nil {
		return nil, fmt.Errorf("%s: reading section %s at %#x: %w", f.Name, s.Name, addr-s.Addr, err)
	}
	return buf, nil
}

// Symbol is an ELF symbol with the source file (the preceding STT_FILE
// symbol) that a local symbol belongs to.
type Symbol struct {
	Name    string
	Value   uint64
	Size    uint64
	Type    elf.SymType
	Bind    elf.SymBind
	Section elf.SectionIndex
	File    string // for STB_LOCAL symbols: the STT_FILE in force; "" otherwise
}

// IsFunc reports whether s is a function symbol (STT_FUNC or
// STT_GNU_IFUNC).
func (s *Symbol) IsFunc() bool { return s.Type == elf.STT_FUNC || s.Type == elf.STT_GNU_IFUNC }

func (s *Symbol) defined() bool {
	return s.Section != elf.SHN_UNDEF && s.Section != elf.SHN_ABS && s.Section < elf.SHN_LORESERVE
}

func (f *File) executable(i elf.SectionIndex) bool {
	return int(i) < len(f.Sections) && f.Sections[i].Flags&elf.SHF_EXECINSTR != 0
}

// ErrNoSymbols is returned by CodeSymbols when the file has neither
// .symtab nor .dynsym.
var ErrNoSymbols = errors.New("no symbol table")

// CodeSymbols returns the symbols of .symtab, or of .dynsym when there is
// no .symtab, in table order, that are defined in this file and are either
// functions or STT_NOTYPE symbols with a size in an executable section
// (clang gives foo.cold and foo.__part.N that type). The table is parsed
// once per file; every call returns a new copy of the symbols, which the
// caller may modify.
func (f *File) CodeSymbols() ([]Symbol, error) {
	f.symbols.once.Do(func() { f.symbols.syms, f.symbols.err = f.readCodeSymbols() })
	if f.symbols.err != nil {
		return nil, f.symbols.err
	}
	return slices.Clone(f.symbols.syms), nil
}

// readCodeSymbols parses the symbols CodeSymbols returns.
func (f *File) readCodeSymbols() ([]Symbol, error) {
	syms, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		syms, err = f.DynamicSymbols()
	}
	if errors.Is(err, elf.ErrNoSymbols) {
		return nil, ErrNoSymbols
	}
	if err != nil {
		return nil, fmt.Errorf("%s: symbol table: %w", f.Name, err)
	}
	var out []Symbol
	file := ""
	for i := range syms {
		s := &syms[i]
		typ, bind := elf.ST_TYPE(s.Info), elf.ST_BIND(s.Info)
		if typ == elf.STT_FILE {
			file = s.Name
			continue
		}
		sym := Symbol{Name: s.Name, Value: s.Value, Size: s.Size, Type: typ, Bind: bind, Section: s.Section}
		if !sym.defined() || !sym.IsFunc() && !(typ == elf.STT_NOTYPE && s.Size > 0 && f.executable(s.Section)) {
			continue
		}
		if bind == elf.STB_LOCAL {
			sym.File = file
		}
		out = append(out, sym)
	}
	return out, nil
}

// DWARF returns the file's DWARF debugging entries, or nil and no error
// when the file has no .debug_info, parsed once per file. Only the
// sections that entries and their ranges refer to are read: location
// lists, frames and the line programs (internal/dwarfline reads those)
// stay on disk.
func (f *File) DWARF() (*dwarf.Data, error) {
	f.dwarf.once.Do(func() { f.dwarf.d, f.dwarf.err = f.readDWARF() })
	return f.dwarf.d, f.dwarf.err
}

func (f *File) readDWARF() (*dwarf.Data, error) {
	if f.Section(".debug_info") == nil {
		if f.Section(".zdebug_info") != nil {
			d, err := f.File.DWARF() // old GNU compression: let debug/elf do it
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			return d, nil
		}
		return nil, nil
	}
	sec := func(name string) ([]byte, error) {
		d, _, err := f.SectionData(name)
		return d, err
	}
	var data [4][]byte
	for i, name := range []string{".debug_abbrev", ".debug_info", ".debug_ranges", ".debug_str"} {
		d, err := sec(name)
		if err != nil {
			return nil, err
		}
		data[i] = d
	}
	d, err := dwarf.New(data[0], nil, nil, data[1], nil, nil, data[2], data[3])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	for _, name := range []string{".debug_addr", ".debug_line_str", ".debug_rnglists", ".debug_str_offsets"} {
		b, err := sec(name)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		if err := d.AddSection(name, b); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return d, nil
}

// OpenWith opens the ELF file at path, gives it to build and closes it:
// how every package offers an Open next to its FromELF.
func OpenWith[T any](path string, build func(*File) (T, error)) (T, error) {
	f, err := Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return build(f)
}

// ReadWith is OpenWith for an ELF file read from r; name is used in
// error messages.
func ReadWith[T any](name string, r io.ReaderAt, build func(*File) (T, error)) (T, error) {
	f, err := NewFile(name, r)
	if err != nil {
		var zero T
		return zero, err
	}
	return build(f)
}
