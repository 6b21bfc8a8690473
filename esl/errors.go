package esl

import (
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
	// ErrUnsupportedVersion means a unit version this package does not know.
	ErrUnsupportedVersion = errors.New("unsupported version")
	// ErrUnsupported means a unit uses a feature (a header flag) this
	// package does not implement.
	ErrUnsupported = errors.New("unsupported")
	// ErrUnknownCommand means a command byte whose low 6 bits name no
	// command of this version.
	ErrUnknownCommand = errors.New("unknown command")
)

// ErrUnencodable is wrapped by the errors of the encoders (AppendProgram,
// Builder.Add): the rows cannot be expressed, e.g. an address that is not
// a whole number of pc units from the previous one.
var ErrUnencodable = errors.New("esl: cannot encode")

// DefaultSection is the section name errors carry when the caller gives
// none.
const DefaultSection = "ESL"

// DecodeError reports malformed ESL input: the section being decoded, the
// byte offset within it, and the underlying error, which wraps one of the
// sentinels above.
type DecodeError struct {
	Section string
	Offset  int64
	Err     error
}

// Error formats the error as SECTION+0xOFFSET: cause.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s+%#x: %v", e.Section, e.Offset, e.Err)
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *DecodeError) Unwrap() error { return e.Err }

func errorf(section string, off int64, sentinel error, format string, args ...any) *DecodeError {
	if section == "" {
		section = DefaultSection
	}
	return &DecodeError{Section: section, Offset: off, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)}
}

// uleb decodes an unsigned LEB128 value from b. n is the number of bytes
// read; n == 0 means b ended inside the value, n < 0 that it overflows 64
// bits.
func uleb(b []byte) (v uint64, n int) {
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

// sleb decodes a signed LEB128 value from b, with n as for uleb.
func sleb(b []byte) (v int64, n int) {
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

func appendULEB(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

func appendSLEB(dst []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(dst, c)
		}
		dst = append(dst, c|0x80)
	}
}

func ulebLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func slebLen(v int64) int {
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

// reader reads the container's header fields with the first-error-wins
// rule of the project's byte cursor: after a failure every read returns
// zero and err keeps the first error.
type reader struct {
	section string
	base    int64 // section offset of data[0]
	data    []byte
	off     int
	err     *DecodeError
}

func (r *reader) offset() int64 { return r.base + int64(r.off) }

func (r *reader) left() int { return len(r.data) - r.off }

func (r *reader) failAt(off int64, sentinel error, format string, args ...any) {
	if r.err == nil {
		r.err = errorf(r.section, off, sentinel, format, args...)
		r.off = len(r.data)
	}
}

func (r *reader) fail(sentinel error, format string, args ...any) {
	r.failAt(r.offset(), sentinel, format, args...)
}

func (r *reader) bytes(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.left() < n {
		r.fail(ErrTruncated, "%s needs %d bytes, %d left", what, n, r.left())
		return nil
	}
	b := r.data[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8(what string) uint8 {
	b := r.bytes(1, what)
	if b == nil {
		return 0
	}
	return b[0]
}

// uint reads a little-endian unsigned integer of n bytes (1..8).
func (r *reader) uint(n int, what string) uint64 {
	return leUint(r.bytes(n, what))
}

func leUint(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func (r *reader) uleb(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := uleb(r.data[r.off:])
	switch {
	case n == 0:
		r.fail(ErrTruncated, "unterminated ULEB128 %s", what)
		return 0
	case n < 0:
		r.fail(ErrOverflow, "%s", what)
		return 0
	}
	r.off += n
	return v
}

// count reads a ULEB128 element count and checks that count elements of
// at least minSize bytes each still fit in the unread input.
func (r *reader) count(minSize int, what string) int {
	off := r.offset()
	n := r.uleb(what)
	if r.err != nil {
		return 0
	}
	if n > math.MaxInt32 || n*uint64(minSize) > uint64(r.left()) {
		r.failAt(off, ErrCorrupt, "%s count %d exceeds the %d bytes left", what, n, r.left())
		return 0
	}
	return int(n)
}
