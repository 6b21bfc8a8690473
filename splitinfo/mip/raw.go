package mip

import (
	"encoding/binary"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// The raw profile (MIPBinaryFormat.rst, ".mipraw"; little endian) is the
// whole __llvm_mipraw section: the header (file type 1), then each
// function's raw data at the offset its map record gives. BlockCount is
// the function's NonEntryBlockCount when the profile type has block
// coverage, else 0. Without timestamps and call counts:
//
//	u8 IsCovered                  the function ran
//	u8 IsCovered[BlockCount]      non-entry block i ran
//
// with the timestamp or call count bit:
//
//	u32 CallCount
//	u32 Timestamp
//	u8  IsCovered[BlockCount]
//	pad to 32 bits
//
// A coverage byte starts as 0xff and the instrumented code stores 0 when
// the function or block runs. CallCount and Timestamp both start as
// 0xffffffff (the MIP patch's llc emits ".long 0xffffffff" twice for
// NAME$RAW): the runtime's first call sets CallCount to 1 and Timestamp to
// the global clock, later calls add 1 to CallCount and stop at 0xfffffffe
// (compiler-rt's __llvm_mip_call_counts_instrumentation_helper). A
// function never called keeps both at 0xffffffff; one of them alone at
// 0xffffffff is corrupt data (llvm-mipdata's MIPRawReader). The raw data cannot be read without the map
// (or a profile made from it): nothing in it says where a function's data
// starts or how many blocks it has.

// Raw is a raw profile: a dump of the __llvm_mipraw section.
type Raw struct {
	Header
	// Data is the whole file, header included: the map's raw offsets
	// index into it.
	Data []byte
}

// RawRecord is one function's raw data.
type RawRecord struct {
	// Covered says the function ran: its coverage byte is 0, or, for
	// profile types with counts, CallCount is neither 0 nor the
	// never-called 0xffffffff.
	Covered bool
	// CallCount and Timestamp are the function's counters (profile types
	// with counts only); both 0 when the function was never called.
	CallCount uint32
	Timestamp uint32
	// Blocks says which non-entry blocks ran; empty without block
	// coverage.
	Blocks []bool
}

// Coverage bytes, and the counters of a function never called.
const (
	covered    = 0x00
	notCovered = 0xff
	notCalled  = 0xffffffff
)

// DecodeRaw decodes the header of a raw profile; Record reads the
// functions' data.
func DecodeRaw(data []byte) (*Raw, error) {
	c := cursor.New(RawSection, 0, data)
	h := decodeHeader(c, RawFile)
	if err := c.Err(); err != nil {
		return nil, err
	}
	return &Raw{Header: h, Data: data}, nil
}

// rawBlocks is the number of coverage bytes a function with n non-entry
// blocks has in raw data of type t.
func rawBlocks(t ProfileType, n int) int {
	if t&BlockCoverage == 0 {
		return 0
	}
	return n
}

// RecordSize returns the size of the raw data of a function with blocks
// non-entry blocks in raw data of type t, padding included.
func RecordSize(t ProfileType, blocks int) int {
	n := rawBlocks(t, blocks)
	if t.Counts() {
		return (8 + n + 3) &^ 3
	}
	return 1 + n
}

// rawLen is RecordSize without the padding, which the last record of a
// raw profile need not have.
func rawLen(t ProfileType, blocks int) int {
	if t.Counts() {
		return 8 + rawBlocks(t, blocks)
	}
	return 1 + rawBlocks(t, blocks)
}

// Record reads the raw data of a function with blocks non-entry blocks at
// offset off, as a map record or profile gives them. Coverage bytes other
// than 0 and 0xff are ErrCorrupt: the data does not belong to that
// function.
func (r *Raw) Record(off int64, blocks int) (RawRecord, error) {
	var rec RawRecord
	if r.ProfileType&ReturnAddress != 0 {
		return rec, cursor.Errorf(RawSection, 8, cursor.ErrUnsupported, "return address instrumentation (profile type %#x)", uint32(r.ProfileType))
	}
	nb := rawBlocks(r.ProfileType, blocks)
	size := rawLen(r.ProfileType, blocks)
	if off < HeaderSize || off > int64(len(r.Data)) || int64(size) > int64(len(r.Data))-off || nb < 0 {
		return rec, cursor.Errorf(RawSection, off, cursor.ErrTruncated, "raw data of %d bytes at %#x runs past the %d-byte raw profile", size, off, len(r.Data))
	}
	c := cursor.New(RawSection, off, r.Data[off:off+int64(size)])
	if r.ProfileType.Counts() {
		calls, stamp := c.U32(), c.U32()
		switch {
		case c.Err() != nil:
		case calls == notCalled && stamp == notCalled:
		case calls == notCalled || stamp == notCalled:
			c.FailAt(off, cursor.ErrCorrupt, "call count %#x and timestamp %#x: only both can be 0xffffffff (never called)", calls, stamp)
		default:
			rec.CallCount, rec.Timestamp, rec.Covered = calls, stamp, calls != 0
		}
	} else {
		rec.Covered = coverageByte(c)
	}
	if nb > 0 {
		rec.Blocks = make([]bool, nb)
		for i := range rec.Blocks {
			rec.Blocks[i] = coverageByte(c)
		}
	}
	return rec, c.Err()
}

func coverageByte(c *cursor.Cursor) bool {
	off := c.Offset()
	switch b := c.U8(); b {
	case covered:
		return true
	case notCovered:
	default:
		c.FailAt(off, cursor.ErrCorrupt, "coverage byte %#02x is neither 0 (covered) nor 0xff", b)
	}
	return false
}

// AppendRawRecord appends one function's raw data of type t, padded. For
// types with counts, rec.Covered is implied by CallCount, and a record
// with CallCount 0 is written as never called (both counters
// 0xffffffff); otherwise CallCount and Timestamp are not stored. Without block coverage,
// rec.Blocks is not stored.
func AppendRawRecord(dst []byte, t ProfileType, rec RawRecord) []byte {
	cov := func(b bool) byte {
		if b {
			return covered
		}
		return notCovered
	}
	start := len(dst)
	if t.Counts() {
		calls, stamp := rec.CallCount, rec.Timestamp
		if calls == 0 {
			calls, stamp = notCalled, notCalled
		}
		dst = binary.LittleEndian.AppendUint32(dst, calls)
		dst = binary.LittleEndian.AppendUint32(dst, stamp)
	} else {
		dst = append(dst, cov(rec.Covered))
	}
	if t&BlockCoverage != 0 {
		for _, b := range rec.Blocks {
			dst = append(dst, cov(b))
		}
	}
	if t.Counts() {
		for (len(dst)-start)%4 != 0 {
			dst = append(dst, notCovered)
		}
	}
	return dst
}

// AppendRaw appends a raw profile: the header with file type 1 (h's
// FileType is ignored), then the records one after another. Record i is
// at offset HeaderSize plus the sizes of the records before it (see
// RecordSize).
func AppendRaw(dst []byte, h Header, recs []RawRecord) []byte {
	h.FileType = RawFile
	dst = appendHeader(dst, h)
	for _, rec := range recs {
		dst = AppendRawRecord(dst, h.ProfileType, rec)
	}
	return dst
}
