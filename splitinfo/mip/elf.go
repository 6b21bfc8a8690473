package mip

import (
	"debug/elf"
	"encoding/binary"
	"fmt"

	"github.com/splitdbg/splitdbg/internal/elfx"
)

// Binary is what an instrumented ELF file holds of MIP: the map, and
// where the raw section is.
type Binary struct {
	// Map is the decoded __llvm_mipmap section; nil when the map was
	// extracted from the file.
	Map *Map
	// HasRaw says the file has an __llvm_mipraw section, at RawAddr, of
	// RawSize bytes.
	HasRaw  bool
	RawAddr uint64
	RawSize uint64
	// Raw is the raw section's initial contents (nothing covered); nil
	// without the section or when it has no file contents.
	Raw *Raw
}

// Addr returns the address of a map function.
func (b *Binary) Addr(f *MapFunc) uint64 { return b.RawAddr + uint64(f.FuncOffset()) }

// Open reads the MIP sections of the ELF file at path (see FromELF).
func Open(path string) (*Binary, error) { return elfx.OpenWith(path, FromELF) }

// FromELF reads the map and raw sections of a linked ELF file. A file
// with neither is ErrNoMIP. When the file has both, they must agree: the
// raw section's header has the map's module hash and profile type, every
// function's raw data lies inside the raw section, and every function in
// an executable section. Errors name the file.
func FromELF(f *elfx.File) (*Binary, error) {
	mapSec, rawSec := f.Section(MapSection), f.Section(RawSection)
	if mapSec == nil && rawSec == nil {
		return nil, fmt.Errorf("%s: %w", f.Name, ErrNoMIP)
	}
	if f.Type == elf.ET_REL {
		return nil, fmt.Errorf("%s: relocatable object: the map's PC-relative fields are resolved only by linking", f.Name)
	}
	if f.ByteOrder != binary.LittleEndian {
		return nil, fmt.Errorf("%s: big-endian file: MIP data is little endian", f.Name)
	}
	b := &Binary{}
	if rawSec != nil {
		b.HasRaw, b.RawAddr, b.RawSize = true, rawSec.Addr, rawSec.Size
		if rawSec.Type != elf.SHT_NOBITS {
			data, _, err := f.SectionData(RawSection)
			if err != nil {
				return nil, err
			}
			if b.Raw, err = DecodeRaw(data); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
		}
	}
	if mapSec != nil {
		data, _, err := f.SectionData(MapSection)
		if err != nil {
			return nil, err
		}
		if b.Map, err = DecodeMap(data); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	if b.Map != nil && b.HasRaw {
		if err := b.check(f); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return b, nil
}

// check checks that the map describes the raw section and code of f.
func (b *Binary) check(f *elfx.File) error {
	if r := b.Raw; r != nil {
		if r.ModuleHash != b.Map.ModuleHash || r.ProfileType != b.Map.ProfileType {
			return mismatch("%s has module hash %#08x and profile type %#x, %s %#08x and %#x", RawSection,
				r.ModuleHash, uint32(r.ProfileType), MapSection, b.Map.ModuleHash, uint32(b.Map.ProfileType))
		}
	}
	for i := range b.Map.Funcs {
		fn := &b.Map.Funcs[i]
		end := fn.RawOffset() + int64(rawLen(b.Map.ProfileType, len(fn.BlockOffsets)))
		if uint64(end) > b.RawSize {
			return mismatch("%s: raw data [%#x, %#x) runs past the %d-byte %s", fn.Name, fn.RawOffset(), end, b.RawSize, RawSection)
		}
		addr := b.Addr(fn)
		if !inCode(f, addr, fn.Size) {
			return mismatch("%s: [%#x, %#x) is not in an executable section", fn.Name, addr, addr+uint64(fn.Size))
		}
	}
	return nil
}

// inCode reports whether [addr, addr+size) lies in one executable section.
func inCode(f *elfx.File, addr uint64, size uint32) bool {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 &&
			addr >= s.Addr && addr-s.Addr <= s.Size && uint64(size) <= s.Size-(addr-s.Addr) {
			return true
		}
	}
	return false
}
