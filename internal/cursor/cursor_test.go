package cursor

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLEB128(t *testing.T) {
	tests := []struct {
		in   []byte
		u    uint64
		s    int64
		uerr error
		serr error
	}{
		{in: []byte{0x00}, u: 0, s: 0},
		{in: []byte{0x02}, u: 2, s: 2},
		{in: []byte{0x7f}, u: 127, s: -1},
		{in: []byte{0x80, 0x01}, u: 128, s: 128},
		{in: []byte{0xe5, 0x8e, 0x26}, u: 624485, s: 624485},
		{in: []byte{0xc0, 0xbb, 0x78}, u: 1973696, s: -123456},
		{in: []byte{0x80, 0x7f}, u: 16256, s: -128},
		// Padded: redundant continuation bytes are accepted, as LLVM does.
		{in: []byte{0x80, 0x80, 0x00}, u: 0, s: 0},
		{in: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, u: math.MaxUint64, serr: ErrOverflow},
		{in: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, u: math.MaxUint64 >> 1, s: math.MaxInt64},
		{in: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, uerr: ErrOverflow, s: math.MinInt64},
		{in: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, uerr: ErrOverflow, serr: ErrOverflow},
		{in: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, uerr: ErrOverflow, serr: ErrOverflow},
		{in: []byte{0x80}, uerr: ErrTruncated, serr: ErrTruncated},
		{in: nil, uerr: ErrTruncated, serr: ErrTruncated},
	}
	for _, tt := range tests {
		c := New("test", 0x10, tt.in)
		u := c.ULEB128()
		if !errors.Is(c.Err(), tt.uerr) || tt.uerr == nil && c.Err() != nil {
			t.Errorf("ULEB128(% x): err %v, want %v", tt.in, c.Err(), tt.uerr)
		} else if tt.uerr == nil && u != tt.u {
			t.Errorf("ULEB128(% x) = %d, want %d", tt.in, u, tt.u)
		}
		c = New("test", 0x10, tt.in)
		s := c.SLEB128()
		if !errors.Is(c.Err(), tt.serr) || tt.serr == nil && c.Err() != nil {
			t.Errorf("SLEB128(% x): err %v, want %v", tt.in, c.Err(), tt.serr)
		} else if tt.serr == nil && s != tt.s {
			t.Errorf("SLEB128(% x) = %d, want %d", tt.in, s, tt.s)
		}
	}
}

// TestULEB128MatchesDecode checks the cursor's ULEB128, whose one- and
// two-byte values take a path of their own when a second byte follows,
// against DecodeULEB128 on inputs followed by nothing and by one more
// byte, and on the two-byte values whose continuation bit
// is in the second byte, cut short or not.
func TestULEB128MatchesDecode(t *testing.T) {
	ins := [][]byte{
		{0x00}, {0x7f}, {0x80, 0x01}, {0xff, 0x7f}, {0x80, 0x00},
		{0x80, 0x80}, {0xff, 0xff}, {0x80, 0x80, 0x01}, {0xff, 0xff, 0x03},
		{0xe5, 0x8e, 0x26}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},
	}
	for _, in := range ins {
		for _, b := range [][]byte{in, append(in[:len(in):len(in)], 0x7f)} {
			checkULEB128(t, New("test", 0x10, b), b)
			// Not at the cursor's start.
			c := New("test", 0x10, append([]byte{0x05}, b...))
			c.U8()
			checkULEB128(t, c, b)
		}
	}
}

// checkULEB128 reads a ULEB128 at c, whose bytes from there on are b,
// and checks it against DecodeULEB128(b): the value and the bytes taken,
// ErrTruncated or ErrOverflow.
func checkULEB128(t *testing.T, c *Cursor, b []byte) {
	t.Helper()
	if c.Err() != nil {
		return
	}
	v, n := DecodeULEB128(b)
	before := c.Pos()
	got := c.ULEB128()
	switch {
	case n > 0 && (got != v || c.Err() != nil || c.Pos() != before+n):
		t.Errorf("ULEB128(% x) = %d, %v, %d bytes; DecodeULEB128: %d, %d bytes", b, got, c.Err(), c.Pos()-before, v, n)
	case n == 0 && !errors.Is(c.Err(), ErrTruncated), n < 0 && !errors.Is(c.Err(), ErrOverflow):
		t.Errorf("ULEB128(% x): err %v; DecodeULEB128 took %d bytes", b, c.Err(), n)
	}
}

func TestFirstErrorWins(t *testing.T) {
	c := New(".llvm_bb_addr_map", 0x100, []byte{1, 2, 3})
	if got := c.U16(); got != 0x0201 {
		t.Fatalf("U16 = %#x", got)
	}
	c.U32() // fails: one byte left
	c.U8()  // would succeed, but the cursor has failed
	var de *DecodeError
	if !errors.As(c.Err(), &de) {
		t.Fatalf("Err = %v, want *DecodeError", c.Err())
	}
	want := DecodeError{Section: ".llvm_bb_addr_map", Offset: 0x102}
	if diff := cmp.Diff(want, *de, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if !errors.Is(c.Err(), ErrTruncated) {
		t.Errorf("Err = %v, want ErrTruncated", c.Err())
	}
	if got, want := c.Err().Error(), ".llvm_bb_addr_map+0x102: truncated: u32 needs 4 bytes, 1 left"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestCount(t *testing.T) {
	// A count of 1000 elements of 4 bytes cannot fit in 3 remaining bytes.
	c := New("s", 0, []byte{0xe8, 0x07, 1, 2, 3})
	if n := c.Count(4, "blocks"); n != 0 || !errors.Is(c.Err(), ErrCorrupt) {
		t.Errorf("Count = %d, %v; want 0, ErrCorrupt", n, c.Err())
	}
	c = New("s", 0, []byte{0x03, 1, 2, 3})
	if n := c.Count(1, "bytes"); n != 3 || c.Err() != nil {
		t.Errorf("Count = %d, %v; want 3, nil", n, c.Err())
	}
}

func TestSubAndStrings(t *testing.T) {
	c := New("s", 0x40, []byte{'a', 'b', 0, 2, 9, 9, 7})
	if got := string(c.CString()); got != "ab" {
		t.Errorf("CString = %q", got)
	}
	n := int(c.U8())
	sub := c.Sub(n)
	if sub.Offset() != 0x44 || sub.Len() != 2 {
		t.Errorf("Sub: offset %#x len %d", sub.Offset(), sub.Len())
	}
	sub.U32()
	if de := new(DecodeError); !errors.As(sub.Err(), &de) || de.Offset != 0x44 {
		t.Errorf("sub error %v, want offset 0x44", sub.Err())
	}
	if c.U8() != 7 || c.Err() != nil || !c.Done() {
		t.Errorf("parent cursor disturbed by sub-cursor error: %v", c.Err())
	}
	c = New("s", 0, []byte{'x'})
	c.CString()
	if !errors.Is(c.Err(), ErrTruncated) {
		t.Errorf("unterminated CString: %v", c.Err())
	}
}

func FuzzCursor(f *testing.F) {
	f.Add([]byte{0xe5, 0x8e, 0x26, 0x7f, 'a', 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := New("fuzz", 0, data)
		for !c.Done() {
			before := c.Pos()
			switch c.U8() % 8 {
			case 0:
				checkULEB128(t, c, data[c.Pos():])
			case 1:
				c.SLEB128()
			case 2:
				c.CString()
			case 3:
				c.U64()
			case 4:
				n := c.Count(2, "x")
				c.Skip(n)
			case 5:
				s := c.Sub(int(c.U8()))
				s.U32()
			case 6:
				c.Align(4)
			case 7:
				c.Bytes(int(c.U16()))
			}
			if c.Err() == nil && c.Pos() <= before {
				t.Fatalf("no progress at %d", before)
			}
			if c.Pos() > len(data) {
				t.Fatalf("position %d past end %d", c.Pos(), len(data))
			}
		}
	})
}

func TestAppendLEB128RoundTrips(t *testing.T) {
	for _, v := range []uint64{0, 1, 63, 64, 127, 128, 255, 8191, 8192, 16383, 16384, 624485, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		b := AppendULEB128(nil, v)
		if c := New("t", 0, b); c.ULEB128() != v || c.Err() != nil || c.Len() != 0 || ULEB128Len(v) != len(b) {
			t.Errorf("ULEB128 %d: % x, ULEB128Len %d", v, b, ULEB128Len(v))
		}
		if got, n := DecodeULEB128(append(b, 0x7f)); got != v || n != len(b) {
			t.Errorf("DecodeULEB128(% x 7f) = %d, %d", b, got, n)
		}
		s := int64(v)
		b = AppendSLEB128(nil, s)
		if c := New("t", 0, b); c.SLEB128() != s || c.Err() != nil || c.Len() != 0 || SLEB128Len(s) != len(b) {
			t.Errorf("SLEB128 %d: % x, SLEB128Len %d", s, b, SLEB128Len(s))
		}
		if got, n := DecodeSLEB128(append(b, 0x7f)); got != s || n != len(b) {
			t.Errorf("DecodeSLEB128(% x 7f) = %d, %d", b, got, n)
		}
	}
	if got := AppendSLEB128(nil, -123456); string(got) != "\xc0\xbb\x78" {
		t.Errorf("SLEB128(-123456) = % x, want c0 bb 78", got)
	}
}

func TestByteOrder(t *testing.T) {
	data := []byte{1, 2, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8}
	c := New("s", 0, data)
	c.SetByteOrder(binary.BigEndian)
	if v := c.U16(); v != 0x0102 {
		t.Errorf("U16 = %#x", v)
	}
	sub := c.Sub(4) // sub-cursors keep the order
	if v := sub.U32(); v != 0x01020304 {
		t.Errorf("sub U32 = %#x", v)
	}
	if v := c.Uint(8); v != 0x0102030405060708 {
		t.Errorf("Uint(8) = %#x", v)
	}
	c.Reset("s", 0, data) // Reset keeps it too
	if v := c.U16(); v != 0x0102 {
		t.Errorf("after Reset U16 = %#x", v)
	}
	c.SetByteOrder(binary.LittleEndian)
	if v := c.U16(); v != 0x0201 {
		t.Errorf("little-endian U16 = %#x", v)
	}
}
