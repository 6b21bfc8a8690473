package locals

import (
	"go/constant"
	"go/token"
	"testing"
)

// TestOperandsFit: for every operator and pair of kinds, binaryOp
// refuses what Go does not define and go/constant does not panic on what
// it accepts; on operands of one kind, or numbers, it refuses exactly
// what go/constant panics on.
func TestOperandsFit(t *testing.T) {
	vals := []constant.Value{constant.MakeInt64(3), constant.MakeFloat64(2.5), constant.MakeBool(true),
		constant.MakeString("s"), constant.MakeImag(constant.MakeInt64(1))}
	ops := []token.Token{token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.AND, token.OR, token.XOR, token.SHL, token.SHR,
		token.AND_NOT, token.LAND, token.LOR, token.EQL, token.LSS, token.GTR, token.NEQ, token.LEQ, token.GEQ}
	// apply is what binaryOp asks of go/constant.
	apply := func(op token.Token, a, b constant.Value) (panicked bool) {
		defer func() { panicked = recover() != nil }()
		switch op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			constant.Compare(a, op, b)
		case token.SHL, token.SHR:
			s, _ := constant.Uint64Val(b)
			constant.Shift(a, op, uint(s))
		case token.QUO, token.REM:
			constant.Sign(b)
			constant.BinaryOp(a, op, b)
		default:
			constant.BinaryOp(a, op, b)
		}
		return false
	}
	for _, op := range ops {
		for _, a := range vals {
			for _, b := range vals {
				fits := operandsFit(op, a.Kind(), b.Kind())
				related := a.Kind() == b.Kind() || a.Kind() != constant.Bool && a.Kind() != constant.String &&
					b.Kind() != constant.Bool && b.Kind() != constant.String
				if panics := apply(op, a, b); fits && panics || related && fits == panics {
					t.Errorf("%s %s %s: operandsFit %v, go/constant panics %v", a, op, b, fits, panics)
				}
				if _, err := binaryOp(op, a, b); (err == nil) != fits {
					t.Errorf("%s %s %s: error %v", a, op, b, err)
				}
			}
		}
	}
}
