package x86scan

import (
	"encoding/hex"
	"testing"
)

// fuzzSeeds are instructions of every kind and encoding the scanner
// distinguishes, in hex.
var fuzzSeeds = []string{
	"e800000000",                 // call rel32
	"e9fbffffff",                 // jmp rel32
	"eb fe",                      // jmp rel8
	"0f8410000000",               // je rel32
	"66e90100",                   // jmp rel16 (32-bit mode), rel32 in 64-bit mode
	"e3fe",                       // jrcxz
	"c7f810000000",               // xbegin
	"488d05f0ffffff",             // lea rax, [rip-0x10]
	"4c8d3d00100000",             // lea r15, [rip+0x1000]
	"ffe0",                       // jmp rax
	"41ffe4",                     // jmp r12
	"3effe2",                     // notrack jmp rdx
	"ff24c500104000",             // jmp [rax*8+0x401000]
	"42ff24e5f0ffffff",           // jmp [r12*8-0x10]
	"48b88877665544332211",       // mov rax, imm64
	"48a11122334455667788",       // mov rax, moffs64
	"67a111223344",               // mov eax, moffs32
	"c8100001",                   // enter
	"c21000",                     // ret imm16
	"66c7000100",                 // mov word [rax], imm16
	"f30f1efa",                   // endbr64
	"f390",                       // pause
	"0f1f440000",                 // nop dword [rax+rax]
	"c5f877c3",                   // vzeroupper; ret
	"c4e27d5805ffffff7f",         // vpbroadcastd ymm0, [rip+...]
	"c4e3fd00c11b",               // vpermq ymm0, ymm1, 0x1b
	"62f1fe486f0500000000",       // vmovdqu64 zmm0, [rip]
	"62f27d48589c2400010000",     // vpbroadcastd zmm3, [rsp+0x100]
	"62b1fd18c2c003",             // EVEX.b register form
	"d9e8",                       // fld1
	"dd1c24",                     // fstp qword [rsp]
	"0f0f0000b4",                 // 3DNow! pfadd (x86asm rejects)
	"66666666666666666666666690", // many prefixes
	"f2f3f20f10c0",               // conflicting mandatory prefixes
	"c4",                         // truncated
	"62",                         // truncated
}

// FuzzScanAgainstX86asm decodes one instruction at the start of random
// bytes with Decode and with x86asm, in 64- and 32-bit mode, and requires
// the same length, validity and classification.
func FuzzScanAgainstX86asm(f *testing.F) {
	for _, s := range fuzzSeeds {
		b, err := hex.DecodeString(stripSpaces(s))
		if err != nil {
			f.Fatalf("seed %q: %v", s, err)
		}
		f.Add(b, uint64(0x401000))
	}
	f.Fuzz(func(t *testing.T, code []byte, pc uint64) {
		for _, mode := range []int{64, 32} {
			got, want := Decode(code, pc, mode), reference(code, pc, mode)
			if got != want {
				t.Fatalf("mode %d: %s\n\tgot  %+v\n\twant %+v", mode, describe(code, mode), got, want)
			}
		}
	})
}

func stripSpaces(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			b = append(b, s[i])
		}
	}
	return string(b)
}
