package mip

import (
	"encoding/binary"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// The map (MIPBinaryFormat.rst, ".mipmap"; little endian):
//
//	Header (file type 2)
//	FunctionProfile[] {              until the end of the data
//	  i32 RawSectionStartPCOffset    __start___llvm_mipraw - .Lref
//	  i32 RawProfilePCOffset         FUNC$RAW - .Lref
//	  i32 FunctionPCOffset           FUNC - .Lref
//	  i32 FunctionSize
//	  i32 ControlFlowGraphSignature
//	  i32 NonEntryBlockCount
//	  i32 BlockOffset[NonEntryBlockCount]   from the function's start
//	  i32 FunctionNameLength
//	  char FunctionName[FunctionNameLength]
//	  pad to 64 bits (from the start of the section)
//	}
//
// .Lref is the address of the record's first byte, so each PC-relative
// field is its target's address minus that one; the differences of two of
// them do not depend on where the section was placed (it is not even
// loaded: llc gives it no SHF_ALLOC).

// minMapRecord is the smallest map record: seven fields and an empty name.
const minMapRecord = 7 * 4

// Map is a decoded __llvm_mipmap section or .mipmap file.
type Map struct {
	Header
	Funcs []MapFunc
}

// MapFunc is one function's map record.
type MapFunc struct {
	Name string
	// The PC-relative fields as stored: each is the address of its target
	// (the raw section, the function's raw data, the function) minus the
	// address of the record.
	RawSectionPC int32
	RawDataPC    int32
	FuncPC       int32
	// Size is the function's size in bytes, from its entry: with a
	// function split by the compiler, the size of the entry fragment.
	Size         uint32
	CFGSignature uint32
	// BlockOffsets are the offsets of the non-entry basic blocks from the
	// function's entry, in block order. A block moved out of the function
	// lies at or beyond Size, or before the entry (a negative offset,
	// stored as its 32-bit two's complement).
	BlockOffsets []uint32
}

// RawOffset returns the offset of the function's raw data from the start
// of the raw section (and of a raw profile file).
func (f *MapFunc) RawOffset() int64 { return int64(f.RawDataPC) - int64(f.RawSectionPC) }

// FuncOffset returns the function's address minus the raw section's
// address.
func (f *MapFunc) FuncOffset() int64 { return int64(f.FuncPC) - int64(f.RawSectionPC) }

// BlockAddr returns the address of a block at offset off (one of
// BlockOffsets, or a profile Block's Offset) of a function at entry.
func BlockAddr(entry uint64, off uint32) uint64 { return entry + uint64(int64(int32(off))) }

// DecodeMap decodes a map: an __llvm_mipmap section or a .mipmap file.
// Every function's raw data must lie past the raw section's header.
func DecodeMap(data []byte) (*Map, error) {
	c := cursor.New(MapSection, 0, data)
	m := &Map{Header: decodeHeader(c, MapFile)}
	for c.Err() == nil && c.Len() > 0 {
		start := c.Offset()
		if c.Len() < minMapRecord {
			c.Fail(cursor.ErrTruncated, "map record needs at least %d bytes, %d left", minMapRecord, c.Len())
			break
		}
		var f MapFunc
		f.RawSectionPC = c.I32()
		f.RawDataPC = c.I32()
		f.FuncPC = c.I32()
		f.Size = c.U32()
		f.CFGSignature = c.U32()
		if n := c.CountU32(4, "non-entry block"); n > 0 {
			f.BlockOffsets = make([]uint32, n)
			for i := range f.BlockOffsets {
				f.BlockOffsets[i] = c.U32()
			}
		}
		name := c.Bytes(c.CountU32(1, "function name byte"))
		c.Align(8)
		if c.Err() != nil {
			break
		}
		f.Name = string(name)
		if off := f.RawOffset(); off < HeaderSize || off > 1<<31-1 {
			c.FailAt(start+4, cursor.ErrCorrupt, "%s: raw data at offset %d of the raw section, inside its header or beyond 2 GiB", f.Name, off)
			break
		}
		m.Funcs = append(m.Funcs, f)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// AppendMap appends m as a map section: the header with file type 2 (the
// Header's FileType is ignored), then each function's record, padded to 8
// bytes.
func AppendMap(dst []byte, m *Map) []byte {
	h := m.Header
	h.FileType = MapFile
	start := len(dst)
	dst = appendHeader(dst, h)
	le := binary.LittleEndian
	for i := range m.Funcs {
		f := &m.Funcs[i]
		dst = le.AppendUint32(dst, uint32(f.RawSectionPC))
		dst = le.AppendUint32(dst, uint32(f.RawDataPC))
		dst = le.AppendUint32(dst, uint32(f.FuncPC))
		dst = le.AppendUint32(dst, f.Size)
		dst = le.AppendUint32(dst, f.CFGSignature)
		dst = le.AppendUint32(dst, uint32(len(f.BlockOffsets)))
		for _, o := range f.BlockOffsets {
			dst = le.AppendUint32(dst, o)
		}
		dst = le.AppendUint32(dst, uint32(len(f.Name)))
		dst = append(dst, f.Name...)
		for (len(dst)-start)%8 != 0 {
			dst = append(dst, 0)
		}
	}
	return dst
}
