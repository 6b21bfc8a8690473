package x86scan

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// reference decodes the instruction at the start of code with x86asm and
// classifies it the way splitinfo reads x86asm's result (a Rel first
// argument is a branch; LEA from [RIP+disp]; JMP to a register; JMP through
// [disp + index*8] without base), mapped to this package's Inst. An
// error, or the one-byte prefix pseudo instruction x86asm returns for a
// truncated or overlong one, is Invalid.
//
// Targets from displacements are addresses: x86asm's Mem.Disp is the
// zero-extended disp32, which 64-bit addressing sign-extends.
func reference(code []byte, pc uint64, mode int) Inst {
	x, err := x86asm.Decode(code, mode)
	if err != nil || x.Op == 0 || x.Len == 0 {
		return Inst{Len: 1, Kind: Invalid}
	}
	r := Inst{Len: x.Len, Kind: Other}
	next := pc + uint64(x.Len)
	switch a := x.Args[0].(type) {
	case x86asm.Rel:
		r.Target = next + uint64(int64(a))
		switch x.Op {
		case x86asm.CALL:
			r.Kind = Call
		case x86asm.JMP:
			r.Kind = Jump
		default:
			r.Kind = CondJump
		}
	case x86asm.Reg:
		if x.Op == x86asm.LEA {
			if m, ok := x.Args[1].(x86asm.Mem); ok && m.Base == x86asm.RIP && m.Index == 0 {
				r.Kind = LEA
				r.Reg = regNum(a)
				r.Target = next + uint64(int64(int32(m.Disp)))
			}
		} else if x.Op == x86asm.JMP {
			r.Kind = JumpReg
			r.Reg = regNum(a)
		}
	case x86asm.Mem:
		if x.Op == x86asm.JMP && a.Base == 0 && a.Index != 0 && a.Scale == 8 {
			r.Kind = JumpTable
			r.Reg = regNum(a.Index)
			if x.AddrSize == 64 {
				r.Target = uint64(int64(int32(a.Disp)))
			} else {
				r.Target = uint64(uint32(a.Disp))
			}
		}
	}
	return r
}

// regNum returns the number (0-15) of a general-purpose register.
func regNum(r x86asm.Reg) uint8 {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return uint8(r - x86asm.RAX)
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return uint8(r - x86asm.EAX)
	case r >= x86asm.AX && r <= x86asm.R15W:
		return uint8(r - x86asm.AX)
	}
	panic(fmt.Sprintf("regNum(%v)", r))
}

// describe renders x86asm's view of code for failure messages.
func describe(code []byte, mode int) string {
	if len(code) > 15 {
		code = code[:15]
	}
	x, err := x86asm.Decode(code, mode)
	if err != nil {
		return fmt.Sprintf("% x: x86asm error %v (len %d)", code, err, x.Len)
	}
	return fmt.Sprintf("% x: x86asm %v (len %d)", code, x, x.Len)
}
