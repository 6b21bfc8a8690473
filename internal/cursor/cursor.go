// Package cursor is the one byte cursor every splitdbg decoder reads with:
// fixed-width little- and big-endian integers, ULEB128 and SLEB128 (DWARF 5,
// section 7.6), NUL-terminated strings and sub-slices, with the
// first-error-wins rule; and the LEB128 appenders its encoders write with. Once a read fails, every later read returns zero
// and the cursor keeps the first error, a *DecodeError naming the section
// and the offset where decoding went wrong. A decoder can therefore read a
// whole record and check Err once.
package cursor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Sentinel errors wrapped by *DecodeError, for errors.Is.
var (
	// ErrTruncated means the input ended inside a value.
	ErrTruncated = errors.New("truncated")
	// ErrCorrupt means a value is out of range or inconsistent.
	ErrCorrupt = errors.New("corrupt")
	// ErrOverflow means a LEB128 value does not fit in 64 bits.
	ErrOverflow = errors.New("LEB128 value overflows 64 bits")
	// ErrUnsupportedVersion means a format version this code does not know.
	ErrUnsupportedVersion = errors.New("unsupported version")
	// ErrUnsupported means a valid input that uses something not implemented.
	ErrUnsupported = errors.New("unsupported")
)

// DecodeError reports malformed input: the section being decoded, the byte
// offset within it, and the underlying error (usually one of the sentinels).
type DecodeError struct {
	Section string
	Offset  int64
	Err     error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s+%#x: %v", e.Section, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Errorf returns a *DecodeError for section at off wrapping sentinel, with
// a formatted detail.
func Errorf(section string, off int64, sentinel error, format string, args ...any) *DecodeError {
	return &DecodeError{Section: section, Offset: off, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)}
}

// Cursor reads values from a byte slice. The zero value is an empty cursor.
type Cursor struct {
	section string
	base    int64 // offset of data[0] within the section
	data    []byte
	off     int
	err     *DecodeError
	big     bool // fixed-width integers are big-endian
}

// New returns a cursor over data, which starts at offset base of section.
func New(section string, base int64, data []byte) *Cursor {
	return &Cursor{section: section, base: base, data: data}
}

// Reset makes c read data, keeping no error but keeping its byte order;
// it lets a hot loop reuse one cursor without allocating.
func (c *Cursor) Reset(section string, base int64, data []byte) {
	*c = Cursor{section: section, base: base, data: data, big: c.big}
}

// SetByteOrder sets the byte order of fixed-width integers: little-endian
// unless bo is binary.BigEndian (or another big-endian order).
func (c *Cursor) SetByteOrder(bo binary.ByteOrder) {
	c.big = bo != nil && bo.Uint16([]byte{0, 1}) == 1
}

// Err returns the first error, or nil. Its type is *DecodeError.
func (c *Cursor) Err() error {
	if c.err == nil {
		return nil
	}
	return c.err
}

// Offset returns the section offset of the next byte to read.
func (c *Cursor) Offset() int64 { return c.base + int64(c.off) }

// Pos returns the index of the next byte within the cursor's data.
func (c *Cursor) Pos() int { return c.off }

// Len returns the number of unread bytes.
func (c *Cursor) Len() int { return len(c.data) - c.off }

// Done reports whether all bytes were read or an error occurred.
func (c *Cursor) Done() bool { return c.err != nil || c.off >= len(c.data) }

// Fail records err at the current offset unless an error is already
// recorded. It returns the recorded error.
func (c *Cursor) Fail(sentinel error, format string, args ...any) error {
	return c.FailAt(c.Offset(), sentinel, format, args...)
}

// FailAt is Fail with an explicit section offset.
func (c *Cursor) FailAt(off int64, sentinel error, format string, args ...any) error {
	if c.err == nil {
		c.err = Errorf(c.section, off, sentinel, format, args...)
		c.off = len(c.data)
	}
	return c.err
}

// Need reports whether n more bytes remain; if not, it fails with
// ErrTruncated naming what needed them, so that a decoder reading a
// group of fixed-width fields can say which one the input cut short.
func (c *Cursor) Need(n int, what string) bool { return c.need(n, what) }

func (c *Cursor) need(n int, what string) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || len(c.data)-c.off < n {
		c.Fail(ErrTruncated, "%s needs %d bytes, %d left", what, n, len(c.data)-c.off)
		return false
	}
	return true
}

// U8 reads one byte.
func (c *Cursor) U8() uint8 {
	if !c.need(1, "u8") {
		return 0
	}
	v := c.data[c.off]
	c.off++
	return v
}

// U16 reads a uint16 in the cursor's byte order (little-endian by default).
func (c *Cursor) U16() uint16 {
	if !c.need(2, "u16") {
		return 0
	}
	var v uint16
	if c.big {
		v = binary.BigEndian.Uint16(c.data[c.off:])
	} else {
		v = binary.LittleEndian.Uint16(c.data[c.off:])
	}
	c.off += 2
	return v
}

// U32 reads a uint32 in the cursor's byte order.
func (c *Cursor) U32() uint32 {
	if !c.need(4, "u32") {
		return 0
	}
	var v uint32
	if c.big {
		v = binary.BigEndian.Uint32(c.data[c.off:])
	} else {
		v = binary.LittleEndian.Uint32(c.data[c.off:])
	}
	c.off += 4
	return v
}

// U64 reads a uint64 in the cursor's byte order.
func (c *Cursor) U64() uint64 {
	if !c.need(8, "u64") {
		return 0
	}
	var v uint64
	if c.big {
		v = binary.BigEndian.Uint64(c.data[c.off:])
	} else {
		v = binary.LittleEndian.Uint64(c.data[c.off:])
	}
	c.off += 8
	return v
}

// I32 reads an int32 in the cursor's byte order.
func (c *Cursor) I32() int32 { return int32(c.U32()) }

// Uint reads an unsigned integer of size 1, 2, 4 or 8 bytes in the
// cursor's byte order.
func (c *Cursor) Uint(size int) uint64 {
	switch size {
	case 1:
		return uint64(c.U8())
	case 2:
		return uint64(c.U16())
	case 4:
		return uint64(c.U32())
	case 8:
		return c.U64()
	}
	c.Fail(ErrCorrupt, "integer size %d", size)
	return 0
}

// ULEB128 reads an unsigned LEB128 value. Values over 64 bits are ErrOverflow.
func (c *Cursor) ULEB128() uint64 {
	// Most values fit in one byte, and most others in two (a function's
	// length in a range list, an index into .debug_addr).
	if c.off+1 < len(c.data) && c.err == nil {
		b0, b1 := c.data[c.off], c.data[c.off+1]
		if b0 < 0x80 {
			c.off++
			return uint64(b0)
		}
		if b1 < 0x80 {
			c.off += 2
			return uint64(b0&0x7f) | uint64(b1)<<7
		}
	}
	return c.uleb128()
}

func (c *Cursor) uleb128() uint64 { return c.ULEB128Of("ULEB128") }

// ULEB128Of is ULEB128 for a value that errors call what: "unterminated
// what" (ErrTruncated), or what (ErrOverflow).
func (c *Cursor) ULEB128Of(what string) uint64 {
	if c.err != nil {
		return 0
	}
	v, n := DecodeULEB128(c.data[c.off:])
	return c.leb(v, n, what)
}

// leb advances past a LEB128 value of n bytes as DecodeULEB128 and
// DecodeSLEB128 report it, or records why it could not be read.
func (c *Cursor) leb(v uint64, n int, what string) uint64 {
	switch {
	case n == 0:
		c.Fail(ErrTruncated, "unterminated %s", what)
		return 0
	case n < 0:
		c.Fail(ErrOverflow, "%s", what)
		return 0
	}
	c.off += n
	return v
}

// DecodeULEB128 decodes the unsigned LEB128 value at the start of b. n is
// the number of bytes it takes; n == 0 means b ends inside the value,
// n < 0 that the value overflows 64 bits. It is the cursor's ULEB128 for
// decoders that keep their own position in a hot loop.
func DecodeULEB128(b []byte) (v uint64, n int) {
	var shift uint
	for i, c := range b {
		if shift == 63 && c&0x7f > 1 || shift > 63 && c&0x7f != 0 {
			return 0, -1
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// DecodeSLEB128 decodes the signed LEB128 value at the start of b, with n
// as for DecodeULEB128.
func DecodeSLEB128(b []byte) (v int64, n int) {
	var shift uint
	for i, c := range b {
		slice := int64(c & 0x7f)
		var ext int64
		if v < 0 {
			ext = 0x7f
		}
		if shift >= 64 && slice != ext || shift == 63 && slice != 0 && slice != 0x7f {
			return 0, -1
		}
		if shift < 64 {
			v |= slice << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1
		}
	}
	return 0, 0
}

// ULEB128Max reads a ULEB128 value and fails with ErrCorrupt if it exceeds max.
func (c *Cursor) ULEB128Max(max uint64, what string) uint64 {
	off := c.Offset()
	v := c.ULEB128()
	if v > max {
		c.FailAt(off, ErrCorrupt, "%s %d exceeds %d", what, v, max)
		return 0
	}
	return v
}

// SLEB128 reads a signed LEB128 value. Values over 64 bits are ErrOverflow.
func (c *Cursor) SLEB128() int64 {
	if c.err != nil {
		return 0
	}
	v, n := DecodeSLEB128(c.data[c.off:])
	return int64(c.leb(uint64(v), n, "SLEB128"))
}

// Bytes returns the next n bytes without copying. The result aliases the
// cursor's data.
func (c *Cursor) Bytes(n int) []byte {
	if !c.need(n, "byte string") {
		return nil
	}
	b := c.data[c.off : c.off+n : c.off+n]
	c.off += n
	return b
}

// Skip advances n bytes.
func (c *Cursor) Skip(n int) {
	if c.need(n, "skip") {
		c.off += n
	}
}

// CString reads a NUL-terminated string and returns it without the NUL.
// The result aliases the cursor's data.
func (c *Cursor) CString() []byte {
	if c.err != nil {
		return nil
	}
	for i := c.off; i < len(c.data); i++ {
		if c.data[i] == 0 {
			s := c.data[c.off:i:i]
			c.off = i + 1
			return s
		}
	}
	c.Fail(ErrTruncated, "unterminated string")
	return nil
}

// Align advances to the next multiple of a (a power of two) relative to
// the start of the cursor's data.
func (c *Cursor) Align(a int) {
	if a <= 1 || c.err != nil {
		return
	}
	pad := (a - c.off%a) % a
	if pad > c.Len() {
		pad = c.Len()
	}
	c.off += pad
}

// Sub returns a cursor over the next n bytes and advances past them. The
// sub-cursor reports offsets in the same section.
func (c *Cursor) Sub(n int) Cursor {
	off := c.Offset()
	b := c.Bytes(n)
	if c.err != nil {
		return Cursor{section: c.section, base: off, err: c.err, big: c.big}
	}
	return Cursor{section: c.section, base: off, data: b, big: c.big}
}

// Count reads a ULEB128 element count and checks that count elements of at
// least minSize bytes each can still fit in the unread input, so that a
// decoder may allocate count elements safely.
func (c *Cursor) Count(minSize int, what string) int {
	off := c.Offset()
	n := c.ULEB128()
	return c.checkCount(off, n, minSize, what)
}

// CountU32 is Count for a count stored as a fixed-width u32.
func (c *Cursor) CountU32(minSize int, what string) int {
	off := c.Offset()
	n := c.U32()
	return c.checkCount(off, uint64(n), minSize, what)
}

// CheckCount validates a count read by other means (see Count).
func (c *Cursor) CheckCount(n uint64, minSize int, what string) int {
	return c.checkCount(c.Offset(), n, minSize, what)
}

func (c *Cursor) checkCount(off int64, n uint64, minSize int, what string) int {
	if c.err != nil {
		return 0
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > math.MaxInt32 || n*uint64(minSize) > uint64(c.Len()) {
		c.FailAt(off, ErrCorrupt, "%s count %d exceeds the %d bytes left", what, n, c.Len())
		return 0
	}
	return int(n)
}

// AppendULEB128 appends v as an unsigned LEB128 value, minimally encoded.
func AppendULEB128(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// AppendSLEB128 appends v as a signed LEB128 value, minimally encoded.
func AppendSLEB128(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// ULEB128Len returns how many bytes AppendULEB128 writes for v.
func ULEB128Len(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// SLEB128Len returns how many bytes AppendSLEB128 writes for v.
func SLEB128Len(v int64) int {
	n := 1
	for {
		c := v & 0x7f
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return n
		}
		n++
	}
}
