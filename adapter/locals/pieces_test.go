package locals

import (
	"errors"
	"slices"
	"testing"
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
