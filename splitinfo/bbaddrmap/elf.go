package bbaddrmap

import (
	"debug/elf"
	"fmt"
	"math"
	"slices"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/elfx"
)

// shtCREL is SHT_CREL, LLVM's compact relocation section type.
const shtCREL elf.SectionType = 0x40000014

// Sections returns f's map sections of either type, in section order.
func Sections(f *elf.File) []*elf.Section {
	var out []*elf.Section
	for _, s := range f.Sections {
		if s.Type == SHT_LLVM_BB_ADDR_MAP || s.Type == SHT_LLVM_BB_ADDR_MAP_V0 {
			out = append(out, s)
		}
	}
	return out
}

// ReadFile opens the ELF file at path and decodes all its map
// sections, in section order. A file without a map has no functions.
func ReadFile(path string) ([]Func, error) {
	f, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f.File)
}

// Read decodes all map sections of f, in section order, streaming each
// (see NewSectionDecoder). It stops at the first error and returns it with
// the functions decoded before it.
func Read(f *elf.File) ([]Func, error) {
	bf := NewFile(f)
	var funcs []Func
	for _, s := range bf.maps {
		d, err := bf.Decoder(s)
		if err != nil {
			return funcs, err
		}
		if funcs, err = d.ReadAll(funcs); err != nil {
			return funcs, err
		}
	}
	return funcs, nil
}

// NewSectionDecoder returns a Decoder that streams map section s of f: it
// reads the section through s.Open, which decompresses SHF_COMPRESSED
// sections (zlib and zstd) on the fly, so the whole section is never in
// memory at once. In relocatable objects the address fields are resolved
// through every SHT_RELA, SHT_REL or SHT_CREL section whose sh_info is s:
// each Range's Addr is then the relocation's symbol value plus its addend
// (for SHT_REL, plus the stored value), relative to the symbol's section,
// Range.Section. (llvm-readobj takes the addend alone, truncated to 32
// bits, and cannot read SHT_REL.)
//
// It scans f's sections and, in a relocatable object, parses the symbol
// table on every call: to decode several sections of one file, use
// NewFile(f).Decoder for each.
func NewSectionDecoder(f *elf.File, s *elf.Section) (*Decoder, error) {
	return NewFile(f).Decoder(s)
}

// SectionOf describes map section s of f for a Decoder, resolving its
// relocations when f is a relocatable object. Like NewSectionDecoder, it
// reads f's section and symbol tables afresh on every call; File.SectionOf
// shares them.
func SectionOf(f *elf.File, s *elf.Section) (Section, error) {
	return NewFile(f).SectionOf(s)
}

// File is what decoding the map sections of one ELF file shares: the list
// of map sections, their relocation sections and the symbol tables those
// relocations resolve against, each found or parsed once however many
// sections are decoded (a relocatable object built with -ffunction-sections
// has one map section per function). A File is not safe for concurrent
// use; the Decoders it returns are independent of it and of each other.
type File struct {
	f      *elf.File
	maps   []*elf.Section
	index  map[*elf.Section]int    // section index of each map section
	dup    map[string]bool         // map section names used more than once
	relocs map[int][]*elf.Section  // relocation sections by the index they apply to
	syms   map[uint32][]elf.Symbol // symbol tables by section index, parsed on first use
}

// NewFile prepares the map sections of f for decoding: it lists them and,
// when f is a relocatable object, its relocation sections. Symbol tables
// are parsed when a relocation first needs one.
func NewFile(f *elf.File) *File {
	bf := &File{f: f, index: map[*elf.Section]int{}, dup: map[string]bool{}, relocs: map[int][]*elf.Section{}, syms: map[uint32][]elf.Symbol{}}
	seen := map[string]bool{}
	for i, s := range f.Sections {
		if s.Type != SHT_LLVM_BB_ADDR_MAP && s.Type != SHT_LLVM_BB_ADDR_MAP_V0 {
			continue
		}
		bf.maps = append(bf.maps, s)
		bf.index[s] = i
		if seen[s.Name] {
			bf.dup[s.Name] = true
		}
		seen[s.Name] = true
	}
	if f.Type == elf.ET_REL {
		for _, rs := range f.Sections {
			if rs.Type == elf.SHT_RELA || rs.Type == elf.SHT_REL || rs.Type == shtCREL {
				bf.relocs[int(rs.Info)] = append(bf.relocs[int(rs.Info)], rs)
			}
		}
	}
	return bf
}

// Sections returns the file's map sections of either type, in section
// order, as the package function Sections does. The slice is shared:
// callers must not modify it.
func (bf *File) Sections() []*elf.Section { return bf.maps }

// Decoder returns a Decoder that streams map section s of the file, as
// NewSectionDecoder does.
func (bf *File) Decoder(s *elf.Section) (*Decoder, error) {
	sec, err := bf.SectionOf(s)
	if err != nil {
		return nil, err
	}
	if s.Type == elf.SHT_NOBITS {
		return NewDecoder(sec, nil), nil
	}
	return NewStreamDecoder(sec, s.Open(), int64(min(s.Size, math.MaxInt64))), nil
}

// SectionOf describes map section s of the file for a Decoder, as the
// package function SectionOf does.
func (bf *File) SectionOf(s *elf.Section) (Section, error) {
	f := bf.f
	idx, ok := bf.index[s]
	if !ok {
		idx = slices.Index(f.Sections, s) // not a map section
	}
	sec := Section{Name: s.Name, Type: s.Type, Class: f.Class, ByteOrder: f.ByteOrder}
	if bf.dup[s.Name] {
		// Several sections of one name (one per function section in an
		// object): say which.
		sec.Name = fmt.Sprintf("%s[%d]", s.Name, idx)
	}
	if f.Type != elf.ET_REL {
		return sec, nil
	}
	sec.Relocatable = true
	rss := bf.relocs[idx]
	if idx < 0 || len(rss) == 0 {
		return sec, cursor.Errorf(sec.Name, 0, cursor.ErrCorrupt, "relocatable object without a relocation section for its addresses")
	}
	for _, rs := range rss {
		relocs, err := bf.readRelocs(rs, sec.Relocs)
		if err != nil {
			return sec, err
		}
		sec.Relocs = relocs
	}
	return sec, nil
}

// readRelocs appends the relocations of section rs to dst, resolved
// against its symbol table.
func (bf *File) readRelocs(rs *elf.Section, dst []Reloc) ([]Reloc, error) {
	f := bf.f
	data, err := rs.Data()
	if err != nil {
		return dst, &cursor.DecodeError{Section: rs.Name, Err: fmt.Errorf("%w: %w", cursor.ErrCorrupt, err)}
	}
	var syms []elf.Symbol // loaded on first use
	symsLoaded := false
	c := cursor.New(rs.Name, 0, data)
	c.SetByteOrder(f.ByteOrder)
	addrSize := 8
	if f.Class == elf.ELFCLASS32 {
		addrSize = 4
	}
	word := func() uint64 { return c.Uint(addrSize) }
	add := func(entOff int64, off uint64, sym uint64, typ uint32, addend uint64, rel bool) error {
		if typ == 0 { // R_*_NONE on every machine
			return nil
		}
		r := Reloc{Offset: off, Value: addend, REL: rel}
		if sym != 0 {
			if !symsLoaded {
				syms, err = bf.symbolsOf(rs)
				if err != nil {
					return err
				}
				symsLoaded = true
			}
			if sym > uint64(len(syms)) {
				return c.FailAt(entOff, cursor.ErrCorrupt, "symbol index %d out of range (%d symbols)", sym, len(syms)+1)
			}
			s := &syms[sym-1]
			switch {
			case s.Section == elf.SHN_UNDEF:
				return c.FailAt(entOff, cursor.ErrCorrupt, "relocation against undefined symbol %q", s.Name)
			case s.Section == elf.SHN_ABS:
			case s.Section >= elf.SHN_LORESERVE:
				return c.FailAt(entOff, cursor.ErrUnsupported, "relocation against symbol %q in special section %#x", s.Name, uint16(s.Section))
			default:
				r.Section = s.Section
			}
			r.Value += s.Value
		}
		if addrSize == 4 {
			r.Value = uint64(uint32(r.Value))
		}
		dst = append(dst, r)
		return nil
	}
	info := func(i uint64) (sym uint64, typ uint32) {
		if addrSize == 4 {
			return i >> 8, uint32(i & 0xff)
		}
		return i >> 32, uint32(i)
	}

	if rs.Type == shtCREL {
		err := readCREL(c, add)
		return dst, err
	}
	entSize := 2 * addrSize
	if rs.Type == elf.SHT_RELA {
		entSize = 3 * addrSize
	}
	if len(data)%entSize != 0 {
		return dst, c.FailAt(int64(len(data)-len(data)%entSize), cursor.ErrTruncated, "%d bytes are not a whole number of %d-byte relocations", len(data), entSize)
	}
	for !c.Done() {
		entOff := c.Offset()
		off := word()
		sym, typ := info(word())
		var addend uint64
		if rs.Type == elf.SHT_RELA {
			addend = word()
			if addrSize == 4 {
				addend = uint64(int64(int32(addend))) // sign-extend
			}
		}
		if err := c.Err(); err != nil {
			return dst, err
		}
		if err := add(entOff, off, sym, typ, addend, rs.Type == elf.SHT_REL); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// readCREL decodes an SHT_CREL section: a ULEB128 header (count<<3 |
// has-addends<<2 | offset shift), then per relocation a flags-and-offset
// delta byte (continued as ULEB128 when its top bit is set) and SLEB128
// deltas of the symbol index, type and addend that the flags select.
func readCREL(c *cursor.Cursor, add func(int64, uint64, uint64, uint32, uint64, bool) error) error {
	hdr := c.ULEB128()
	n := c.CheckCount(hdr>>3, 1, "CREL relocation")
	if err := c.Err(); err != nil {
		return err
	}
	hasAddend := hdr&4 != 0
	flagBits := uint(2)
	if hasAddend {
		flagBits = 3
	}
	shift := hdr & 3
	var offset, addend uint64
	var sym, typ int64
	for range n {
		entOff := c.Offset()
		b := c.U8()
		offset += uint64(b >> flagBits)
		if b >= 0x80 {
			offset += c.ULEB128()<<(7-flagBits) - 0x80>>flagBits
		}
		if b&1 != 0 {
			sym += c.SLEB128()
		}
		if b&2 != 0 {
			typ += c.SLEB128()
		}
		if b&4 != 0 && hasAddend {
			addend += uint64(c.SLEB128())
		}
		if err := c.Err(); err != nil {
			return err
		}
		if sym < 0 || typ < 0 || typ > math.MaxUint32 {
			return c.FailAt(entOff, cursor.ErrCorrupt, "CREL symbol index %d or type %d out of range", sym, typ)
		}
		if err := add(entOff, offset<<shift, uint64(sym), uint32(typ), addend, !hasAddend); err != nil {
			return err
		}
	}
	return nil
}

// symbolsOf returns the symbol table that relocation section rs links to,
// without the null symbol (index i is at i-1), as debug/elf does. Each
// table is parsed once per File.
func (bf *File) symbolsOf(rs *elf.Section) ([]elf.Symbol, error) {
	f := bf.f
	if syms, ok := bf.syms[rs.Link]; ok {
		return syms, nil
	}
	if int(rs.Link) >= len(f.Sections) {
		return nil, cursor.Errorf(rs.Name, 0, cursor.ErrCorrupt, "sh_link %d is not a section", rs.Link)
	}
	var syms []elf.Symbol
	var err error
	switch f.Sections[rs.Link].Type {
	case elf.SHT_SYMTAB:
		syms, err = f.Symbols()
	case elf.SHT_DYNSYM:
		syms, err = f.DynamicSymbols()
	default:
		return nil, cursor.Errorf(rs.Name, 0, cursor.ErrCorrupt, "sh_link %d is not a symbol table", rs.Link)
	}
	if err != nil {
		return nil, &cursor.DecodeError{Section: rs.Name, Err: fmt.Errorf("%w: symbol table: %w", cursor.ErrCorrupt, err)}
	}
	bf.syms[rs.Link] = syms
	return syms, nil
}
