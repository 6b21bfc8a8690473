package x86scan

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecode checks hand-assembled instructions of every kind against
// values worked out from the manuals, independently of x86asm.
func TestDecode(t *testing.T) {
	const pc = 0x1000
	tests := []struct {
		name string
		mode int
		code string
		want Inst
	}{
		{"call rel32", 64, "e8 00000000", Inst{Len: 5, Kind: Call, Target: 0x1005}},
		{"jmp rel32 back", 64, "e9 fbffffff", Inst{Len: 5, Kind: Jump, Target: 0x1000}},
		{"jmp rel8 self", 64, "eb fe", Inst{Len: 2, Kind: Jump, Target: 0x1000}},
		{"je rel32", 64, "0f84 10000000", Inst{Len: 6, Kind: CondJump, Target: 0x1016}},
		{"jne rel8", 32, "75 10", Inst{Len: 2, Kind: CondJump, Target: 0x1012}},
		{"jmp rel16", 32, "66 e9 0100", Inst{Len: 4, Kind: Jump, Target: 0x1005}},
		{"jmp rel32 ignores 66", 64, "66 e9 01000000", Inst{Len: 6, Kind: Jump, Target: 0x1007}},
		{"call rel16", 32, "66 e8 fcff", Inst{Len: 4, Kind: Call, Target: 0x1000}},
		{"bnd jmp", 64, "f2 e9 00000000", Inst{Len: 6, Kind: Jump, Target: 0x1006}},
		{"jrcxz", 64, "e3 fe", Inst{Len: 2, Kind: CondJump, Target: 0x1000}},
		{"loop", 32, "e2 00", Inst{Len: 2, Kind: CondJump, Target: 0x1002}},
		{"xbegin rel32", 64, "c7f8 10000000", Inst{Len: 6, Kind: CondJump, Target: 0x1016}},
		{"xbegin rel16", 64, "66 c7f8 1000", Inst{Len: 5, Kind: CondJump, Target: 0x1015}},
		{"mov r/m32 imm32", 64, "c700 01000000", Inst{Len: 6, Kind: Other}},
		{"lea rip-", 64, "48 8d05 f0ffffff", Inst{Len: 7, Kind: LEA, Reg: 0, Target: 0xff7}},
		{"lea rip+ r15", 64, "4c 8d3d 00100000", Inst{Len: 7, Kind: LEA, Reg: 15, Target: 0x2007}},
		{"lea eip", 64, "67 48 8d05 00100000", Inst{Len: 8, Kind: Other}},
		{"lea abs32", 32, "8d05 00100000", Inst{Len: 6, Kind: Other}},
		{"lea reg", 64, "48 8d0400", Inst{Len: 4, Kind: Other}},
		{"jmp rax", 64, "ffe0", Inst{Len: 2, Kind: JumpReg, Reg: 0}},
		{"jmp r12", 64, "41 ffe4", Inst{Len: 3, Kind: JumpReg, Reg: 12}},
		{"notrack jmp rdx", 64, "3e ffe2", Inst{Len: 3, Kind: JumpReg, Reg: 2}},
		{"jmp edi", 32, "ffe7", Inst{Len: 2, Kind: JumpReg, Reg: 7}},
		{"call rax", 64, "ffd0", Inst{Len: 2, Kind: Other}},
		{"jmp table", 64, "ff24c5 00104000", Inst{Len: 7, Kind: JumpTable, Reg: 0, Target: 0x401000}},
		{"jmp table r12 negative", 64, "42 ff24e5 f0ffffff", Inst{Len: 8, Kind: JumpTable, Reg: 12, Target: 0xfffffffffffffff0}},
		{"jmp table addr32", 64, "67 ff24c5 f0ffffff", Inst{Len: 8, Kind: JumpTable, Reg: 0, Target: 0xfffffff0}},
		{"jmp table 32-bit", 32, "ff248d 00104000", Inst{Len: 7, Kind: Other}}, // scale 4
		{"jmp table 32-bit scale 8", 32, "ff24fd f0ffffff", Inst{Len: 7, Kind: JumpTable, Reg: 7, Target: 0xfffffff0}},
		{"jmp no index", 64, "ff24e5 00104000", Inst{Len: 7, Kind: Other}},
		{"jmp with base", 64, "ff24c4", Inst{Len: 3, Kind: Other}},
		{"jmp mem rip", 64, "ff25 00000000", Inst{Len: 6, Kind: Other}},
		{"mov rax imm64", 64, "48 b8 8877665544332211", Inst{Len: 10, Kind: Other}},
		{"mov ax imm16", 64, "66 b8 2211", Inst{Len: 4, Kind: Other}},
		{"rex.w beats 66", 64, "66 48 b8 8877665544332211", Inst{Len: 11, Kind: Other}},
		{"mov rax moffs64", 64, "48 a1 1122334455667788", Inst{Len: 10, Kind: Other}},
		{"mov eax moffs32", 64, "67 a1 11223344", Inst{Len: 6, Kind: Other}},
		{"mov eax moffs32 (32)", 32, "a1 11223344", Inst{Len: 5, Kind: Other}},
		{"mov eax moffs16", 32, "67 a1 1122", Inst{Len: 4, Kind: Other}},
		{"enter", 64, "c8 1000 01", Inst{Len: 4, Kind: Other}},
		{"ret imm16", 64, "c2 1000", Inst{Len: 3, Kind: Other}},
		{"mov m16 imm16", 64, "66 c700 0100", Inst{Len: 5, Kind: Other}},
		{"test imm8", 64, "f6c1 01", Inst{Len: 3, Kind: Other}},
		{"neg r/m8", 64, "f6d9", Inst{Len: 2, Kind: Other}},
		{"test imm32", 64, "f7c1 01000000", Inst{Len: 6, Kind: Other}},
		{"16-bit addressing disp16", 32, "67 8b06 3412", Inst{Len: 5, Kind: Other}},
		{"sib disp32 no base", 64, "8b04 25 00100000", Inst{Len: 7, Kind: Other}},
		{"far jmp ptr16:32", 32, "ea 00100000 0800", Inst{Len: 7, Kind: Other}},
		{"far jmp ptr16:16", 32, "66 ea 0010 0800", Inst{Len: 6, Kind: Other}},
		{"far jmp in 64-bit", 64, "ea 00100000 0800", Inst{Len: 1, Kind: Invalid}},
		{"pshufd imm8", 64, "66 0f70 c0 1b", Inst{Len: 5, Kind: Other}},
		{"pblendw 0f3a", 64, "66 0f3a0e c1 0f", Inst{Len: 6, Kind: Other}},
		{"crc32 0f38", 64, "f2 48 0f38f1 c1", Inst{Len: 6, Kind: Other}},
		{"fld1", 32, "d9e8", Inst{Len: 2, Kind: Other}},
		{"fstp m64", 64, "dd1c24", Inst{Len: 3, Kind: Other}},
		{"pause", 64, "f390", Inst{Len: 2, Kind: Other}},
		{"14 prefixes", 64, strings.Repeat("66", 14) + "90", Inst{Len: 15, Kind: Other}},
		{"15 prefixes", 64, strings.Repeat("66", 15) + "90", Inst{Len: 1, Kind: Invalid}},
		{"vpermq imm8", 64, "c4e3fd00 c1 1b", Inst{Len: 6, Kind: Other}},
		{"vmovdqu64 zmm rip", 64, "62f1fe48 6f05 00000000", Inst{Len: 10, Kind: Other}},
		{"vex in 32-bit mode", 32, "c5f9 6fc1", Inst{Len: 4, Kind: Other}},
		{"lds in 32-bit mode", 32, "c5 00", Inst{Len: 2, Kind: Other}},
		{"vzeroupper at end", 64, "c5f877", Inst{Len: 3, Kind: Other}},
		// x86asm's readings, matched on purpose (see the package doc).
		{"endbr64", 64, "f30f1efa", Inst{Len: 1, Kind: Invalid}},
		{"vzeroupper eats ret", 64, "c5f877 c3", Inst{Len: 4, Kind: Other}},
		{"3DNow!", 64, "0f0f c1 b4", Inst{Len: 1, Kind: Invalid}},
		{"vex after segment", 64, "2e c5f877", Inst{Len: 1, Kind: Invalid}},
		// Truncated and undecodable.
		{"empty", 64, "", Inst{Len: 1, Kind: Invalid}},
		{"truncated call", 64, "e8 0000", Inst{Len: 1, Kind: Invalid}},
		{"truncated vex", 64, "c4e3", Inst{Len: 1, Kind: Invalid}},
		{"prefixes only", 64, "66f2", Inst{Len: 1, Kind: Invalid}},
		{"pop cs", 32, "0f", Inst{Len: 1, Kind: Invalid}},
		{"16-bit mode", 16, "90", Inst{Len: 1, Kind: Invalid}},
	}
	for _, tt := range tests {
		code, err := hex.DecodeString(strings.ReplaceAll(tt.code, " ", ""))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, Decode(code, pc, tt.mode)); diff != "" {
			t.Errorf("%s: Decode(%s, %d) mismatch (-want +got):\n%s", tt.name, tt.code, tt.mode, diff)
		}
	}
}

// TestAll checks that All walks instruction boundaries, skips one byte
// of undecodable code and stops when asked.
func TestAll(t *testing.T) {
	code, _ := hex.DecodeString("90" + "e800000000" + "0f0b" + "ff" + "c3")
	type at struct {
		PC   uint64
		Inst Inst
	}
	var got []at
	for pc, inst := range All(code, 0x10, 64) {
		got = append(got, at{pc, inst})
	}
	want := []at{
		{0x10, Inst{Len: 1, Kind: Other}},
		{0x11, Inst{Len: 5, Kind: Call, Target: 0x16}},
		{0x16, Inst{Len: 2, Kind: Other}},
		{0x18, Inst{Len: 2, Kind: Other}}, // ff c3: inc ebx
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("All mismatch (-want +got):\n%s", diff)
	}
	n := 0
	for range All(code, 0, 64) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("All yielded %d after break", n)
	}
	for pc, inst := range All([]byte{0x0f, 0x0f}, 0, 64) {
		if inst.Kind != Invalid || inst.Len != 1 {
			t.Errorf("All(0f 0f) at %d = %+v, want Invalid of length 1", pc, inst)
		}
	}
}

// TestAllocs checks that decoding allocates nothing.
func TestAllocs(t *testing.T) {
	code, _ := hex.DecodeString("62f1fe486f0500000000" + "ff24c500104000" + "488d05f0ffffff" + "e800000000")
	n := testing.AllocsPerRun(100, func() {
		for _, inst := range All(code, 0x1000, 64) {
			_ = inst
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per scan, want 0", n)
	}
}
