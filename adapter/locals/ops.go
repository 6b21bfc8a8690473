package locals

import (
	"github.com/splitdbg/splitdbg/internal/cursor"
)

// nextOp returns the offset of the operation after the one at expr[i]
// (DWARF 5 section 7.7.1, figure 7.9, and the GNU operations GCC emits),
// false for an unknown or truncated operation. Delve's op package keeps
// its operand table to itself.
//
// validExpr reports whether expr is a sequence of known, whole operations;
// only such expressions reach Delve's op package, which trusts the sizes
// it reads (DW_OP_implicit_value allocates whatever its length says).
func validExpr(expr []byte) bool {
	for i := 0; i < len(expr); {
		next, ok := nextOp(expr, i)
		if !ok {
			return false
		}
		i = next
	}
	return true
}

func nextOp(expr []byte, i int) (int, bool) {
	c := cursor.New("location expression", int64(i), expr[i:])
	code := c.U8()
	switch {
	case code >= 0x70 && code <= 0x8f, // DW_OP_breg0..31
		code == 0x11, code == 0x91: // consts, fbreg
		c.SLEB128()
	case code == 0x10, code == 0x23, code == 0x90, code == 0x93, // constu, plus_uconst, regx, piece
		code == 0xa1, code == 0xa2, code == 0xa8, code == 0xa9, // addrx, constx, convert, reinterpret
		code == 0xfb, code == 0xfc: // GNU_addr_index, GNU_const_index
		c.ULEB128()
	case code == 0x92: // bregx
		c.ULEB128()
		c.SLEB128()
	case code == 0x9d, code == 0xa5: // bit_piece, regval_type
		c.ULEB128()
		c.ULEB128()
	case code == 0x08, code == 0x09, code == 0x15, code == 0x94, code == 0x95: // const1u/s, pick, deref_size, xderef_size
		c.Skip(1)
	case code == 0x0a, code == 0x0b, code == 0x28, code == 0x2f, code == 0x98: // const2u/s, bra, skip, call2
		c.Skip(2)
	case code == 0x0c, code == 0x0d, code == 0x99, code == 0x9a, code == 0xfa: // const4u/s, call4, call_ref, GNU_parameter_ref
		c.Skip(4)
	case code == 0x03, code == 0x0e, code == 0x0f: // addr (8-byte), const8u/s
		c.Skip(8)
	case code == 0x9e, code == opEntryValue, code == opGNUEntryValue: // implicit_value, entry_value
		c.Skip(c.CheckCount(c.ULEB128(), 1, "block bytes"))
	case code == 0xa4: // const_type
		c.ULEB128()
		c.Skip(int(c.U8()))
	case code == 0xa6, code == 0xa7: // deref_type, xderef_type
		c.Skip(1)
		c.ULEB128()
	case code == 0xa0, code == 0xf2: // implicit_pointer, GNU_implicit_pointer
		c.Skip(4)
		c.SLEB128()
	case code == 0x06, code >= 0x12 && code <= 0x14, code >= 0x16 && code <= 0x27,
		code >= 0x29 && code <= 0x2e, code >= 0x30 && code <= 0x6f,
		code == 0x96, code == 0x97, code == 0x9b, code == 0x9c, code == 0x9f:
		// no operands
	default:
		return 0, false // reserved, or a vendor operation of unknown size
	}
	if c.Err() != nil {
		return 0, false
	}
	return i + c.Pos(), true
}

// The operations that end a piece (DWARF 5, section 7.7.1).
const (
	opPiece    = 0x93
	opBitPiece = 0x9d
)

// emptyPieces reports, for each DW_OP_piece and DW_OP_bit_piece of expr
// in order, whether its location description is empty: nothing since the
// start or the previous piece (DWARF 5 section 2.6.1.2: "the piece is
// undefined", as for a part the compiler optimized out). Delve's op
// package gives such a piece the value 0, as if it were a constant. ok
// is false when expr branches (DW_OP_bra, DW_OP_skip): which pieces run
// is then known only by running it.
func emptyPieces(expr []byte) (empty []bool, ok bool) {
	described := false
	for i := 0; i < len(expr); {
		next, valid := nextOp(expr, i)
		if !valid {
			return nil, false
		}
		switch expr[i] {
		case opPiece, opBitPiece:
			empty = append(empty, !described)
			described = false
		case opBra, opSkip:
			return nil, false
		default:
			described = true
		}
		i = next
	}
	return empty, true
}
