package locals

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/op"
)

// TestEmptyPieces: a piece with nothing before it (at the start, or right
// after another piece) is undefined; one after a location or a
// DW_OP_stack_value is not. The expressions are clang-22's for prog in
// testdata/src/inl's main.
func TestEmptyPieces(t *testing.T) {
	for _, tc := range []struct {
		expr []byte
		want []bool
		ok   bool
	}{
		// DW_OP_breg7 RSP+0, DW_OP_piece 0x18, DW_OP_piece 0x4, DW_OP_breg7 RSP+28, DW_OP_piece 0x24
		{[]byte{0x77, 0, 0x93, 0x18, 0x93, 0x4, 0x77, 28, 0x93, 0x24}, []bool{false, true, false}, true},
		// DW_OP_piece 0x8, DW_OP_lit1, DW_OP_stack_value, DW_OP_piece 0x4
		{[]byte{0x93, 0x8, 0x31, 0x9f, 0x93, 0x4}, []bool{true, false}, true},
		// DW_OP_bit_piece 8 0 first, then DW_OP_reg0 DW_OP_bit_piece 8 8
		{[]byte{0x9d, 8, 0, 0x50, 0x9d, 8, 8}, []bool{true, false}, true},
		// no pieces
		{[]byte{0x77, 0}, nil, true},
		// DW_OP_skip: which pieces run is not known without running it
		{[]byte{0x2f, 0, 0, 0x93, 4}, nil, false},
		// truncated
		{[]byte{0x93}, nil, false},
	} {
		got, ok := emptyPieces(tc.expr)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("emptyPieces(% x) = %v, %v; want %v, %v", tc.expr, got, ok, tc.want, tc.ok)
		}
	}
}

// TestGaps: a gap makes exactly the parts of a value it overlaps
// unreadable, wherever the part is taken from.
func TestGaps(t *testing.T) {
	p := place{addr: FakeAddress, buf: make([]byte, 64), gaps: []gap{{24, 4}}}
	for _, tc := range []struct {
		off, n int64
		out    bool
	}{{0, 24, false}, {16, 8, false}, {20, 8, true}, {24, 4, true}, {27, 1, true}, {28, 4, false}, {0, 64, true}, {32, 32, false}} {
		_, err := p.at(tc.off).bytes(tc.n)
		if got := errors.Is(err, errOptimizedOut); got != tc.out {
			t.Errorf("%d bytes at %d: %v; want optimized out %v", tc.n, tc.off, err, tc.out)
		}
	}
	if _, err := p.at(60).bytes(8); err == nil || errors.Is(err, errOptimizedOut) {
		t.Errorf("8 bytes at 60 of 64: %v; want an error past the value", err)
	}
}

// TestConvert: DW_OP_convert to each integer base type of vars' first
// unit gives the value C's conversion gives; to the generic type, the
// value; to a float type, an error.
func TestConvert(t *testing.T) {
	r, sub, _ := inspectFrame(t)
	u := r.unitOf(sub)
	rd := r.d.Reader()
	rd.Seek(u.start)
	var v uint64 = 0xfffffffffffffe85 // -379
	seen := 0
	for {
		e, err := rd.Next()
		if err != nil || e == nil || e.Offset >= u.end {
			break
		}
		if e.Tag != dwarf.TagBaseType {
			continue
		}
		size, _ := e.Val(dwarf.AttrByteSize).(int64)
		enc, _ := e.Val(dwarf.AttrEncoding).(int64)
		name, _ := e.Val(dwarf.AttrName).(string)
		expr := binary.LittleEndian.AppendUint64([]byte{opConst8u}, v)
		rel := uint64(e.Offset - u.start) // as a two-byte ULEB128
		expr = append(expr, opConvert, byte(rel&0x7f)|0x80, byte(rel>>7))
		got, err := r.resolveIndexes(sub, expr)
		var want int64
		switch {
		case enc == dwAteFloat:
			if err == nil {
				t.Errorf("convert to %s: no error", name)
			}
			continue
		case size == 8:
			want = int64(v)
		case enc == dwAteSigned || enc == dwAteSignedChar:
			want = int64(v<<(64-8*size)) >> (64 - 8*size)
		default:
			want = int64(v & (1<<(8*size) - 1))
		}
		if err != nil {
			t.Errorf("convert to %s: %v", name, err)
			continue
		}
		g, ok := GuardExpr(got)
		if !ok {
			t.Fatalf("convert to %s: % x is not a valid expression", name, got)
		}
		n, _, err := op.ExecuteStackProgram(op.DwarfRegisters{}, g, 8, nil)
		if err != nil || n != want {
			t.Errorf("convert %#x to %s (%d bytes, encoding %#x) = %d, %v; want %d", v, name, size, enc, n, err, want)
		}
		seen++
	}
	if seen < 4 {
		t.Fatalf("%d integer base types in vars' unit; want several", seen)
	}
	expr := []byte{opConst8u, 1, 2, 3, 4, 5, 6, 7, 8, opConvert, 0}
	if got, err := r.resolveIndexes(sub, expr); err != nil || len(got) != 9 {
		t.Errorf("convert to the generic type: % x, %v; want the value alone", got, err)
	}
}
