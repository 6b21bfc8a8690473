package locals

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/op"
)

// run executes expr with pkg/dwarf/op: its result, "error" or "panic".
func run(expr []byte) (res string) {
	defer func() {
		if r := recover(); r != nil {
			res = "panic"
		}
	}()
	addr, pieces, err := op.ExecuteStackProgram(op.DwarfRegisters{}, expr, 8, nil)
	if err != nil {
		return "error"
	}
	return fmt.Sprint(addr, pieces)
}

// TestGuardExpr: what pkg/dwarf/op panics on fails instead, and every
// other program computes what it computed before, branches included, or
// fails as before (an error may name another operation).
func TestGuardExpr(t *testing.T) {
	for _, expr := range [][]byte{
		{opPlusUconst, 4},                      // an empty stack
		{0x31, 0x30, opDiv},                    // 1 / 0
		{0x31, 0x30, opMod},                    // 1 % 0
		{0x31, 0x30, 0x30, opBra, 0, 0, opMod}, // a branch, then 1 % 0
	} {
		if got := run(expr); got != "panic" {
			t.Errorf("% x: pkg/dwarf/op no longer panics (%s): GuardExpr may go", expr, got)
		}
		g, ok := GuardExpr(expr)
		if got := run(g); !ok || got == "panic" {
			t.Errorf("% x: guarded % x (%v): %s", expr, g, ok, got)
		}
	}
	for _, c := range []struct {
		expr []byte
		want int64
	}{
		{[]byte{0x37, 0x32, opDiv}, 3},                                            // 7 / 2
		{[]byte{0x37, 0x33, opMod}, 1},                                            // 7 % 3
		{[]byte{0x35, opPlusUconst, 0x80, 0x01}, 133},                             // 5 + 128
		{[]byte{0x31, opBra, 4, 0, 0x39, opSkip, 1, 0, 0x34, opPlusUconst, 3}, 7}, // 1 ? 4 : 9, + 3
		{[]byte{0x30, opBra, 4, 0, 0x39, opSkip, 1, 0, 0x34, opPlusUconst, 3}, 12},
		{[]byte{0x38, opSkip, 2, 0, opDiv, opDiv, 0x32, opDiv}, 4}, // skips both divisions
	} {
		g, ok := GuardExpr(c.expr)
		addr, _, err := op.ExecuteStackProgram(op.DwarfRegisters{}, g, 8, nil)
		if !ok || err != nil || addr != c.want {
			t.Errorf("% x: guarded % x (%v): %d, %v; want %d", c.expr, g, ok, addr, err, c.want)
		}
	}
	// Random programs of literals, arithmetic and branches.
	alphabet := [][]byte{{0x30}, {0x31}, {0x35}, {opDiv}, {opMod}, {opPlusUconst, 2}, {0x22}, {0x1c}, {opDup}, {0x13},
		{opBra, 2, 0}, {opSkip, 1, 0}, {opBra, 0xfc, 0xff}, {0x16}, {0x9f}}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var expr []byte
		for range 1 + rng.IntN(8) {
			expr = append(expr, alphabet[rng.IntN(len(alphabet))]...)
		}
		g, ok := GuardExpr(expr)
		if !ok {
			continue // a branch into an operation's operands
		}
		before, after := run(expr), run(g)
		if after == "panic" || before != "panic" && before != after && !(len(g) != len(expr) && before != after && isTickLimited(expr)) {
			t.Fatalf("% x: %s; guarded % x: %s", expr, before, g, after)
		}
	}
}

// isTickLimited reports whether expr branches backwards, so that its
// result can depend on pkg/dwarf/op's limit of 10 operations per byte,
// which a longer guarded program raises.
func isTickLimited(expr []byte) bool {
	for i := 0; i < len(expr); {
		next, _ := nextOp(expr, i)
		if (expr[i] == opBra || expr[i] == opSkip) && int16(uint16(expr[i+1])|uint16(expr[i+2])<<8) < 0 {
			return true
		}
		i = next
	}
	return false
}

// TestGuardDerefSize: DW_OP_deref_size of fewer than 8 bytes reads that
// many bytes (pkg/dwarf/op alone reads only 4 or 8: "pointer size 1 not
// supported"), as GCC's DW_OP_fbreg N, DW_OP_deref_size 1 for a byte of
// the frame needs.
func TestGuardDerefSize(t *testing.T) {
	mem := []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99}
	read := func(buf []byte, addr uint64) (int, error) {
		if addr >= uint64(len(mem)) {
			return 0, fmt.Errorf("no memory at %#x", addr)
		}
		return copy(buf, mem[addr:]), nil
	}
	for n := 1; n <= 8; n++ {
		expr := []byte{0x30, opDerefSize, byte(n), 0x9f} // lit0, deref_size n, stack_value
		g, ok := GuardExpr(expr)
		if !ok {
			t.Fatalf("% x refused", expr)
		}
		_, pieces, err := op.ExecuteStackProgram(op.DwarfRegisters{}, g, 8, read)
		if err != nil || len(pieces) != 1 {
			t.Errorf("deref_size %d (% x): %v, %v", n, g, pieces, err)
			continue
		}
		var want uint64
		for i := n - 1; i >= 0; i-- {
			want = want<<8 | uint64(mem[i])
		}
		if got := pieces[0].Val; got != want {
			t.Errorf("deref_size %d: %#x, want %#x", n, got, want)
		}
	}
	if _, _, err := op.ExecuteStackProgram(op.DwarfRegisters{}, []byte{0x30, opDerefSize, 1}, 8, read); err == nil {
		t.Error("pkg/dwarf/op reads DW_OP_deref_size 1 now: appendDerefSize may go")
	}
}

// TestRewriteOpsRetargets: a replacement of another length before or
// inside a branch's span (DW_OP_convert, DW_OP_entry_value and
// DW_OP_addrx become longer operations) leaves each branch landing on
// the operation it named: the program computes what it did.
func TestRewriteOpsRetargets(t *testing.T) {
	lit := func(op []byte) ([]byte, error) { // DW_OP_lit5 → DW_OP_const8u 5
		if op[0] != 0x35 {
			return nil, nil
		}
		return []byte{opConst8u, 5, 0, 0, 0, 0, 0, 0, 0}, nil
	}
	for _, c := range []struct {
		expr []byte
		want int64
	}{
		{[]byte{0x31, opBra, 2, 0, 0x35, 0x35, 0x33}, 3},  // 1 ? 3 : 5 5 3
		{[]byte{0x30, opBra, 2, 0, 0x35, 0x35, 0x22}, 10}, // 0 ? … : 5 + 5
		{[]byte{0x35, opSkip, 1, 0, 0x39, 0x31, 0x22}, 6}, // 5, skip 9, + 1
	} {
		if got, _, err := op.ExecuteStackProgram(op.DwarfRegisters{}, c.expr, 8, nil); err != nil || got != c.want {
			t.Fatalf("% x: %d, %v before the rewrite; want %d", c.expr, got, err, c.want)
		}
		out, err := rewriteOps(c.expr, lit)
		if err != nil {
			t.Errorf("% x: %v", c.expr, err)
			continue
		}
		if len(out) == len(c.expr) {
			t.Errorf("% x: nothing rewritten", c.expr)
		}
		if got, _, err := op.ExecuteStackProgram(op.DwarfRegisters{}, out, 8, nil); err != nil || got != c.want {
			t.Errorf("% x: rewritten % x computes %d, %v; want %d", c.expr, out, got, err, c.want)
		}
	}
	if _, err := rewriteOps([]byte{0x35, opSkip, 0xfe, 0xff}, lit); err == nil {
		t.Error("a skip into the middle of DW_OP_skip's operand: no error")
	}
}
