// Package mip reads and writes the three file types of the Machine IR
// Profile (MIP), the machine-level instrumentation profile of seed 002
// (LLVM review D104060, "Machine IR Profile") as its binary format is
// specified by llvm/docs/MIPBinaryFormat.rst of the MIP patch series:
//
//   - the map (file type 2), the section __llvm_mipmap of an instrumented
//     binary: per function, PC-relative offsets of the raw section, of the
//     function's raw data and of the function, its size, its control flow
//     graph signature, the offsets of its non-entry basic blocks and its
//     name. It is extracted from the binary before the binary ships.
//   - the raw profile (file type 1), the section __llvm_mipraw, which the
//     instrumented code writes as it runs and a runtime dumps to a file:
//     per function a coverage byte (or a call count and a timestamp) and
//     one coverage byte per non-entry block; "covered" is 0.
//   - the profile (file type 3, .mip): the map's functions with the raw
//     data of any number of runs merged in, as llvm-mipdata create and
//     merge write it.
//
// Every file starts with the common 24-byte header (magic FB 4D 49 50,
// version 8, file type, profile type, module hash, reserved, offset to
// data = 0x18); data is little endian. FromELF reads the map and raw
// sections straight from a linked ELF file and resolves the map's
// PC-relative fields as the seed explains: a function's raw data is at
// RawProfilePCOffset - RawSectionStartPCOffset in the raw section, and the
// function at the raw section's address + FunctionPCOffset -
// RawSectionStartPCOffset.
//
// Decoders check every count against the bytes that remain before
// allocating and report malformed input as a *cursor.DecodeError naming
// the section (MapSection, RawSection or ProfileSection) and the offset.
// A map, raw profile or profile that belongs to another build (module
// hash, profile type, CFG signature, block layout) is an ErrMismatch,
// never merged.
package mip

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// Section names: the ELF sections of an instrumented binary, and the name
// that errors in a .mip profile carry.
const (
	MapSection     = "__llvm_mipmap"
	RawSection     = "__llvm_mipraw"
	ProfileSection = ".mip"
)

// Version is the format version this package reads and writes.
const Version = 8

// HeaderSize is the size of the common header, and the offset to data
// that the encoders write.
const HeaderSize = 0x18

// Magic is the first four bytes of every MIP file: 0xFB 'M' 'I' 'P'.
var Magic = [4]byte{0xfb, 'M', 'I', 'P'}

// FileType is the header's file type.
type FileType uint16

// File types.
const (
	RawFile     FileType = 1 // .mipraw, the __llvm_mipraw section
	MapFile     FileType = 2 // .mipmap, the __llvm_mipmap section
	ProfileFile FileType = 3 // .mip
)

func (t FileType) String() string {
	switch t {
	case RawFile:
		return "raw"
	case MapFile:
		return "map"
	case ProfileFile:
		return "profile"
	}
	return fmt.Sprintf("FileType(%d)", uint16(t))
}

// ProfileType is the header's set of instrumentation kinds.
type ProfileType uint32

// Profile type bits.
const (
	FunctionCoverage  ProfileType = 0x01
	BlockCoverage     ProfileType = 0x02
	FunctionTimestamp ProfileType = 0x04
	FunctionCallCount ProfileType = 0x08
	// ReturnAddress is return-address (call edge) instrumentation, whose
	// raw layout the format leaves unspecified: raw data of this type is
	// ErrUnsupported.
	ReturnAddress ProfileType = 0x10

	knownProfileTypes = FunctionCoverage | BlockCoverage | FunctionTimestamp | FunctionCallCount | ReturnAddress
)

var profileTypeNames = []string{"function-coverage", "block-coverage", "function-timestamp", "function-call-count", "return-address"}

func (t ProfileType) String() string {
	var parts []string
	for i, n := range profileTypeNames {
		if t&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if rest := t &^ knownProfileTypes; rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint32(rest)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// Counts reports whether raw data of this type holds a call count and a
// timestamp per function (the timestamp or call count bit is set) rather
// than a function coverage byte.
func (t ProfileType) Counts() bool { return t&(FunctionTimestamp|FunctionCallCount) != 0 }

// Header is the common header, less the fields the encoders fix (magic,
// version, reserved, offset to data).
type Header struct {
	FileType    FileType
	ProfileType ProfileType
	// ModuleHash identifies the link unit: the low 32 bits of the MD5 of
	// its name (see ModuleHash).
	ModuleHash uint32
}

// ErrMismatch is wrapped by the errors that refuse to combine a map, raw
// profile or profile with one of another build.
var ErrMismatch = errors.New("mip: data of another build")

// ErrNoMIP is wrapped by FromELF's error for a file that has neither a
// map nor a raw section.
var ErrNoMIP = errors.New("mip: no " + MapSection + " or " + RawSection + " section")

// ModuleHash returns the module hash of a link unit named name, as the
// MIP compiler computes it: MD5Hash(name) truncated to 32 bits, that is
// the first four bytes of the MD5 digest read little endian.
func ModuleHash(name string) uint32 { return uint32(FunctionSignature(name)) }

// FunctionSignature returns a profile's FunctionSignature for a function
// name: LLVM's MD5Hash, the first eight bytes of the MD5 digest read
// little endian.
func FunctionSignature(name string) uint64 { return signature([]byte(name)) }

func signature(name []byte) uint64 {
	sum := md5.Sum(name)
	return binary.LittleEndian.Uint64(sum[:8])
}

// appendHeader appends the common header.
func appendHeader(dst []byte, h Header) []byte {
	dst = append(dst, Magic[:]...)
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(h.FileType))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.ProfileType))
	dst = binary.LittleEndian.AppendUint32(dst, h.ModuleHash)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // reserved
	return binary.LittleEndian.AppendUint32(dst, HeaderSize)
}

// DecodeHeader decodes the common header at the start of data, which
// holds a file of any type; section names the data in errors. It checks
// the magic, the version, the profile type's bits and the offset to data.
func DecodeHeader(section string, data []byte) (Header, error) {
	c := cursor.New(section, 0, data)
	h := decodeHeader(c, 0)
	return h, c.Err()
}

// decodeHeader reads the header and advances c to the data; want, when
// not 0, is the file type required.
func decodeHeader(c *cursor.Cursor, want FileType) Header {
	var h Header
	m := c.Bytes(4)
	if c.Err() == nil && [4]byte(m) != Magic {
		c.FailAt(0, cursor.ErrCorrupt, "magic % x, want fb 4d 49 50 (0xFB 'M' 'I' 'P')", m)
	}
	if v := c.U16(); c.Err() == nil && v != Version {
		c.FailAt(4, cursor.ErrUnsupportedVersion, "version %d, want %d", v, Version)
	}
	h.FileType = FileType(c.U16())
	if c.Err() == nil && want != 0 && h.FileType != want {
		c.FailAt(6, cursor.ErrCorrupt, "file type %d (%v), want %d (%v)", h.FileType, h.FileType, want, want)
	}
	h.ProfileType = ProfileType(c.U32())
	if c.Err() == nil && h.ProfileType&^knownProfileTypes != 0 {
		c.FailAt(8, cursor.ErrUnsupported, "profile type %#x has unknown bits %#x", uint32(h.ProfileType), uint32(h.ProfileType&^knownProfileTypes))
	}
	h.ModuleHash = c.U32()
	c.U32() // reserved
	off := c.U32()
	if c.Err() == nil && (off < HeaderSize || int64(off) > c.Offset()+int64(c.Len())) {
		c.FailAt(0x14, cursor.ErrCorrupt, "offset to data %#x is not within [%#x, %#x]", off, HeaderSize, c.Offset()+int64(c.Len()))
	}
	if c.Err() == nil {
		c.Skip(int(off) - HeaderSize)
	}
	return h
}
