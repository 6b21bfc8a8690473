package bbaddrmap_test

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"strings"
)

// hexBytes decodes hex digits, ignoring spaces and "|" separators.
func hexBytes(s string) []byte {
	s = strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// elfSection is one section for buildELF.
type elfSection struct {
	name    string
	typ     elf.SectionType
	flags   elf.SectionFlag
	link    uint32
	info    uint32
	entsize uint64
	data    []byte
}

// buildELF returns a little-endian ELF64 x86-64 file of type typ with the
// given sections after the null section (indexes from 1), and a
// .shstrtab.
func buildELF(typ elf.Type, secs ...elfSection) []byte {
	le := binary.LittleEndian
	shstr := []byte{0}
	names := make([]uint32, len(secs)+1)
	for i, s := range secs {
		names[i] = uint32(len(shstr))
		shstr = append(append(shstr, s.name...), 0)
	}
	names[len(secs)] = uint32(len(shstr))
	shstr = append(shstr, ".shstrtab\x00"...)
	secs = append(secs, elfSection{name: ".shstrtab", typ: elf.SHT_STRTAB, data: shstr})

	out := make([]byte, 64)
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		offs[i] = uint64(len(out))
		out = append(out, s.data...)
	}
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	shoff := uint64(len(out))
	out = append(out, make([]byte, 64)...) // null section header
	for i, s := range secs {
		var h [64]byte
		le.PutUint32(h[0:], names[i])
		le.PutUint32(h[4:], uint32(s.typ))
		le.PutUint64(h[8:], uint64(s.flags))
		le.PutUint64(h[24:], offs[i])
		le.PutUint64(h[32:], uint64(len(s.data)))
		le.PutUint32(h[40:], s.link)
		le.PutUint32(h[44:], s.info)
		le.PutUint64(h[48:], 1)
		le.PutUint64(h[56:], s.entsize)
		out = append(out, h[:]...)
	}
	copy(out, "\x7fELF")
	out[4], out[5], out[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(out[16:], uint16(typ))
	le.PutUint16(out[18:], uint16(elf.EM_X86_64))
	le.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(out[40:], shoff)
	le.PutUint16(out[52:], 64)
	le.PutUint16(out[58:], 64)
	le.PutUint16(out[60:], uint16(len(secs)+1))
	le.PutUint16(out[62:], uint16(len(secs)))
	return out
}

// mapELF returns an executable with one map section of type typ holding
// data.
func mapELF(typ elf.SectionType, data []byte) []byte {
	return buildELF(elf.ET_EXEC, elfSection{name: ".llvm_bb_addr_map", typ: typ, data: data})
}
