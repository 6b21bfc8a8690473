// Package elfx is splitdbg's access layer over debug/elf: it maps files
// read-only into memory and hands out section contents and code as
// slices of the mapping, not copies (debug/elf's Section.Data copies), so
// that only the pages a reader touches are ever read and each is resident
// once, as page cache; compressed sections are decompressed into the
// heap. It adds what every splitdbg source needs: function symbols with
// the STT_FILE they belong to, section data by name or type
// (decompressing SHF_COMPRESSED sections, as debug/elf does), and reads
// of code by virtual address. Files given as an io.ReaderAt are read
// with positioned reads into the heap.
//
// A file stripped of its symbols or DWARF is opened together with its
// separate debug file, found as gdb finds it ("Separate Debug Files" in
// the gdb manual): by build ID under each debug file directory
// (.build-id/NN/REST.debug), by .gnu_debuglink next to the file, in its
// .debug directory and under each debug file directory, and in the
// debuginfod client's cache, fetched from $DEBUGINFOD_URLS when set. The
// two read as one logical file: code and program headers come from the
// file, sections it lacks or has only as SHT_NOBITS from the debug file.
package elfx

import (
	"bytes"
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// File is an ELF file opened for reading, with its separate debug file
// when it has one. It is safe for concurrent use once opened, except
// Close.
type File struct {
	*elf.File
	Name string // the path it was opened from, for error messages
	// Debug is the separate debug file found for this file, or nil.
	// Section, SectionData, DWARF and CodeSymbols read from it what the
	// file itself lacks.
	Debug *File
	size  int64 // the file's size, -1 if unknown
	// mem is the whole file when it is in memory: mapped (see mapping)
	// or given to NewBytes. Section contents are slices of it.
	mem    []byte
	mapped bool // mem is a mapping, never unmapped: strings may point into it
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

// Open opens the ELF file at path and, when it lacks symbols or
// DWARF, its separate debug file (see the package comment; DebugDirs are
// the debug file directories).
func Open(path string) (*File, error) {
	f, err := openOne(path)
	if err != nil {
		return nil, err
	}
	if f.needsDebug() {
		f.Debug = findDebug(f, path, DebugDirs)
	}
	return f, nil
}

// openOne opens the ELF file at path, without its debug file.
func openOne(path string) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	} else if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not an ELF file", path)
	}
	m, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if mem := mapFile(m, st); mem != nil {
		m.Close() // the mapping outlives the descriptor
		f, err := NewBytes(path, mem)
		if err == nil {
			f.mapped = true
		}
		return f, err
	}
	f, err := NewFile(path, io.NewSectionReader(m, 0, st.Size()))
	if err != nil {
		m.Close()
		return nil, err
	}
	f.closer = m
	return f, nil
}

// ErrNotELF is returned, wrapped with the file name, for a file that does
// not start with the ELF magic number.
var ErrNotELF = errors.New("not an ELF file")

// NewFile reads an ELF file from r; name is used in error messages. A
// file that is not ELF is ErrNotELF; one too short for its headers or
// section header table is a cursor.ErrTruncated DecodeError.
func NewFile(name string, r io.ReaderAt) (*File, error) {
	size := readerSize(r)
	var magic [4]byte
	if n, _ := r.ReadAt(magic[:], 0); n < 4 || string(magic[:]) != elf.ELFMAG {
		what := "an empty file"
		if n > 0 {
			what = fmt.Sprintf("starts with %q", magic[:n])
		}
		return nil, fmt.Errorf("%s: %w (%s)", name, ErrNotELF, what)
	}
	ef, err := elf.NewFile(r)
	if err != nil {
		if terr := checkHeaders(r, size); terr != nil {
			return nil, fmt.Errorf("%s: %w", name, terr)
		}
		return nil, fmt.Errorf("%s: malformed ELF: %w", name, err)
	}
	f := &File{File: ef, Name: name, size: size}
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && s.Size > 0 && s.Addr != 0 {
			f.alloc = append(f.alloc, s)
		}
	}
	sort.SliceStable(f.alloc, func(i, j int) bool { return f.alloc[i].Addr < f.alloc[j].Addr })
	return f, nil
}

// readerSize returns the size of what r reads, -1 if it cannot tell.
func readerSize(r io.ReaderAt) int64 {
	switch r := r.(type) {
	case interface{ Size() int64 }:
		return r.Size()
	case interface{ Len() int }:
		return int64(r.Len())
	}
	return -1
}

// checkHeaders explains why debug/elf could not read a file's headers
// when the file is too short for them: the ELF header, or the section
// header table its header places.
func checkHeaders(r io.ReaderAt, size int64) error {
	if size < 0 {
		return nil
	}
	var ident [elf.EI_NIDENT]byte
	if _, err := r.ReadAt(ident[:], 0); err != nil {
		return cursor.Errorf("ELF header", 0, cursor.ErrTruncated, "the ELF identification needs %d bytes, the file has %d", len(ident), size)
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(ident[elf.EI_DATA]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	hdrSize, shoffAt, shentAt := int64(64), int64(0x28), int64(0x3a)
	if elf.Class(ident[elf.EI_CLASS]) == elf.ELFCLASS32 {
		hdrSize, shoffAt, shentAt = 52, 0x20, 0x2e
	}
	if size < hdrSize {
		return cursor.Errorf("ELF header", 0, cursor.ErrTruncated, "the header needs %d bytes, the file has %d", hdrSize, size)
	}
	hdr := make([]byte, hdrSize)
	if _, err := r.ReadAt(hdr, 0); err != nil {
		return nil
	}
	var shoff uint64
	if hdrSize == 64 {
		shoff = bo.Uint64(hdr[shoffAt:])
	} else {
		shoff = uint64(bo.Uint32(hdr[shoffAt:]))
	}
	shent, shnum := uint64(bo.Uint16(hdr[shentAt:])), uint64(bo.Uint16(hdr[shentAt+2:]))
	if need := shent * shnum; shoff != 0 && (shoff > uint64(size) || need > uint64(size)-shoff) {
		return cursor.Errorf("section headers", 0, cursor.ErrTruncated, "the section header table needs %d bytes at offset %#x, the file has %d", need, shoff, size)
	}
	return nil
}

// NewBytes reads an ELF file held in memory. Section contents are
// slices of data, which must not change while the File or anything built
// from it is in use.
func NewBytes(name string, data []byte) (*File, error) {
	f, err := NewFile(name, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	f.mem = data
	return f, nil
}

// Close closes the file and its debug file.
func (f *File) Close() error {
	var err error
	if f.Debug != nil {
		err = f.Debug.Close()
	}
	if f.closer != nil {
		err = cmp.Or(f.closer.Close(), err)
	}
	return err
}

// Section returns the section named name: the file's own, unless it has
// none or only an SHT_NOBITS placeholder and its debug file has the
// section with contents. Nil if neither has it.
func (f *File) Section(name string) *elf.Section {
	s := f.File.Section(name)
	if f.Debug != nil && (s == nil || s.Type == elf.SHT_NOBITS) {
		if d := f.Debug.File.Section(name); d != nil && d.Type != elf.SHT_NOBITS {
			return d
		}
	}
	return s
}

// owner returns the file that section s belongs to: f or its debug file.
func (f *File) owner(s *elf.Section) *File {
	if f.Debug != nil && slices.Contains(f.Debug.Sections, s) {
		return f.Debug
	}
	return f
}

// Data returns the contents of section s (of f or of its debug file),
// decompressed. Callers must not modify them: they may be the file's
// mapping. The error names the file and section; a section that
// runs past the end of the file is a cursor.ErrTruncated DecodeError.
func (f *File) Data(s *elf.Section) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	o := f.owner(s)
	if err := o.checkInFile(s); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	if o.mem != nil && s.Flags&elf.SHF_COMPRESSED == 0 && !strings.HasPrefix(s.Name, ".zdebug") {
		return o.mem[s.Offset : s.Offset+s.FileSize : s.Offset+s.FileSize], nil
	}
	d, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: section %s: %w", o.Name, s.Name, err)
	}
	return d, nil
}

// InFile reports whether the contents of section s (of f or of its debug
// file) lie inside its file: what Data checks before reading them. A
// section header's sizes are the file's claims until then.
func (f *File) InFile(s *elf.Section) bool { return f.owner(s).checkInFile(s) == nil }

// checkInFile reports a section whose contents run past the end of the
// file.
func (f *File) checkInFile(s *elf.Section) error {
	if f.size < 0 || s.Type == elf.SHT_NOBITS {
		return nil
	}
	if s.Offset > uint64(f.size) || s.FileSize > uint64(f.size)-s.Offset {
		have := uint64(0)
		if s.Offset < uint64(f.size) {
			have = uint64(f.size) - s.Offset
		}
		return cursor.Errorf(s.Name, int64(have), cursor.ErrTruncated, "section %s needs %d bytes at offset %#x, the file has %d",
			s.Name, s.FileSize, s.Offset, f.size)
	}
	return nil
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
// range must lie within one allocated section. Callers must not modify
// the bytes: they may be the file's mapping.
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
	// The section header may claim more bytes than the file holds: check
	// (or where the file's size is unknown, probe the last byte) before
	// allocating.
	off := s.Offset + (addr - s.Addr)
	beyond := f.size >= 0 && (off > uint64(f.size) || n > uint64(f.size)-off)
	if f.size < 0 && n > 0 {
		var last [1]byte
		_, err := s.ReadAt(last[:], int64(addr-s.Addr+n-1))
		beyond = err != nil
	}
	if beyond {
		return nil, fmt.Errorf("%s: section %s: [%#x,%#x) is beyond the end of the file", f.Name, s.Name, addr, addr+n)
	}
	if f.mem != nil {
		return f.mem[off : off+n : off+n], nil
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
	Name string // without the version
	// Version is the symbol version (GLIBC_2.2.5 of fclose@@GLIBC_2.2.5
	// in .symtab, or from .dynsym's version tables); "" if none.
	Version string
	Value   uint64
	Size    uint64
	Type    elf.SymType
	Bind    elf.SymBind
	Section elf.SectionIndex
	File    string // for STB_LOCAL symbols: the STT_FILE in force; "" otherwise
}

// SplitVersion splits a .symtab symbol name into the name and the
// symbol version the linker appended to it (GNU ld, "VERSION command":
// NAME@VERSION, or NAME@@VERSION for the default version). A name
// without '@' has no version.
func SplitVersion(s string) (name, version string) {
	i := strings.IndexByte(s, '@')
	if i <= 0 {
		return s, ""
	}
	return s[:i], strings.TrimPrefix(s[i+1:], "@")
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

// CodeSymbols returns the symbols of .symtab (the debug file's when the
// file has none), or of .dynsym when neither has a .symtab, in table order, that are defined in this file and are either
// functions or STT_NOTYPE symbols with a size in an executable section
// (clang gives foo.cold and foo.__part.N that type). The table is parsed
// once per file; every call returns a new copy of the symbols, which the
// caller may modify.
func (f *File) CodeSymbols() ([]Symbol, error) {
	f.symbols.once.Do(func() { f.symbols.syms, f.symbols.err = f.symbolSource().readSymbols() })
	if f.symbols.err != nil {
		return nil, f.symbols.err
	}
	return slices.Clone(f.symbols.syms), nil
}

// EachCodeSymbol calls yield with each symbol CodeSymbols returns, in
// table order, decoding the table again rather than keeping the symbols:
// for one pass that keeps few of them. The Symbol is reused between
// calls.
func (f *File) EachCodeSymbol(yield func(*Symbol)) error {
	return f.symbolSource().eachCodeSymbol(nil, yield)
}

// EachCodeSymbolWhere is EachCodeSymbol for the symbols keep accepts,
// asked before their names are read (see Prefilter): what it rejects
// costs a pass no more than reading its value.
func (f *File) EachCodeSymbolWhere(keep Prefilter, yield func(*Symbol)) error {
	return f.symbolSource().eachCodeSymbol(keep, yield)
}

// symbolSource is the file whose symbols CodeSymbols reads: f, or its
// debug file when only that has a .symtab.
func (f *File) symbolSource() *File {
	if f.File.Section(".symtab") == nil && f.Debug != nil && f.Debug.File.Section(".symtab") != nil {
		return f.Debug // its section headers match the file's
	}
	return f
}

func (f *File) readSymbols() ([]Symbol, error) {
	// Most entries of a linked file's .symtab are code: room for all at
	// once, rather than growing by doubling through a large table.
	out := make([]Symbol, 0, f.SymtabLen())
	if err := f.eachCodeSymbol(nil, func(s *Symbol) { out = append(out, *s) }); err != nil {
		return nil, err
	}
	return out, nil
}

// eachCodeSymbol is EachCodeSymbol on f's own tables.
func (f *File) eachCodeSymbol(keep Prefilter, yield func(*Symbol)) error {
	// debug/elf reports a table or string table past the end of the file
	// as "unexpected EOF": say which section.
	if err := f.checkTable(elf.SHT_SYMTAB); err != nil {
		return err
	}
	if f.File.Section(".symtab") == nil {
		if err := f.checkTable(elf.SHT_DYNSYM); err != nil {
			return err
		}
	}
	// Whether a symbol is code does not depend on its name: keep is asked
	// about code symbols only.
	var filter entryFilter
	if keep != nil {
		filter = func(s *elf.Symbol, name []byte) bool { return f.isCode(s) && keep(s.Value, name) }
	}
	file := ""
	var sym Symbol
	err := f.eachSymbol(filter, func(s *elf.Symbol) {
		typ, bind := elf.ST_TYPE(s.Info), elf.ST_BIND(s.Info)
		if typ == elf.STT_FILE {
			file = s.Name
			return
		}
		if !f.isCode(s) {
			return
		}
		name, version := SplitVersion(s.Name)
		if version == "" {
			version = s.Version // .dynsym: from the version tables
		}
		sym = Symbol{Name: name, Version: version, Value: s.Value, Size: s.Size, Type: typ, Bind: bind, Section: s.Section}
		if bind == elf.STB_LOCAL {
			sym.File = file
		}
		yield(&sym)
	})
	if errors.Is(err, elf.ErrNoSymbols) {
		return ErrNoSymbols
	}
	return err // it names the file
}

// isCode reports whether the table entry s is a code symbol as
// CodeSymbols keeps them: defined here, and a function or an untyped
// symbol with a size in an executable section.
func (f *File) isCode(s *elf.Symbol) bool {
	c := Symbol{Type: elf.ST_TYPE(s.Info), Section: s.Section}
	return c.defined() && (c.IsFunc() || c.Type == elf.STT_NOTYPE && s.Size > 0 && f.executable(s.Section))
}

// checkTable checks that the first symbol table of type typ and its
// string table lie within the file.
func (f *File) checkTable(typ elf.SectionType) error {
	for _, s := range f.File.Sections {
		if s.Type != typ {
			continue
		}
		if err := f.checkInFile(s); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		if int(s.Link) < len(f.File.Sections) {
			if err := f.checkInFile(f.File.Sections[s.Link]); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
		}
		return nil
	}
	return nil
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
	info := f.Section(".debug_info")
	if info == nil {
		if z := f.Section(".zdebug_info"); z != nil {
			o := f.owner(z)
			d, err := o.File.DWARF() // old GNU compression: let debug/elf do it
			if err != nil {
				return nil, fmt.Errorf("%s: %w", o.Name, err)
			}
			return d, nil
		}
		return nil, nil
	}
	name := f.owner(info).Name
	var data [4][]byte
	for i, sec := range []string{".debug_abbrev", ".debug_info", ".debug_ranges", ".debug_str"} {
		d, err := f.sectionBytes(sec)
		if err != nil {
			return nil, err
		}
		data[i] = d
	}
	d, err := dwarf.New(data[0], nil, nil, data[1], nil, nil, data[2], data[3])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, sec := range []string{".debug_addr", ".debug_line_str", ".debug_rnglists", ".debug_str_offsets"} {
		b, err := f.sectionBytes(sec)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		if err := d.AddSection(sec, b); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return d, nil
}

// sectionBytes is SectionData without the section.
func (f *File) sectionBytes(name string) ([]byte, error) {
	d, _, err := f.SectionData(name)
	return d, err
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
