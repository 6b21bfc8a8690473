// Package x86scan is a fast, allocation-free linear scanner for x86 machine
// code in 64-bit and 32-bit (protected) mode. For each instruction it
// reports the length and what control flow analysis needs: direct relative
// branches with their targets (JMP, Jcc, LOOPcc, JCXZ/JECXZ/JRCXZ, XBEGIN,
// CALL), indirect jumps through a register, indirect jumps through a table
// of 8-byte addresses (JMP [disp32 + index*8], the non-PIC jump table
// dispatch) and RIP-relative LEA (the base of a PIC jump table).
//
// The instruction format is that of the Intel 64 and IA-32 Architectures
// Software Developer's Manual, Volume 2: chapter 2, "Instruction Format"
// (legacy prefixes, REX, VEX and EVEX prefixes; ModR/M and SIB addressing
// forms, tables 2-1 to 2-3; RIP-relative addressing, table 2-7), and
// appendix A, "Opcode Map" (the one-byte, two-byte 0F and three-byte
// 0F 38 and 0F 3A maps, tables; opcode extensions by ModR/M.reg,
// table A-6; x87 escape opcodes D8-DF, A.5), which the format tables below
// transcribe; and of the AMD64 Architecture Programmer's Manual, Volume 3,
// chapter 1, "Instruction Encoding", and appendix A, "Opcode and Operand
// Encodings".
//
// Which byte sequences are instructions is decided exactly as
// golang.org/x/arch/x86/x86asm decides it: tables.go is generated (gen.go)
// by asking x86asm.Decode about every opcode under every prefix state and
// ModR/M byte, so that a linear scan with this package walks the same
// instruction boundaries as a scan with x86asm and finds the same
// branches, only without decoding operands. After an update of
// golang.org/x/arch, run go generate and the tests. Matching x86asm
// includes its departures from the manuals:
//
//   - Whatever x86asm rejects is Invalid, with length 1, however the
//     hardware would decode it: 3DNow! (0F 0F), CLAC and STAC, ENDBR64
//     and ENDBR32 (F3 0F 1E FA/FB: in 64-bit mode F3, 0F and 1E are
//     skipped one by one and FA reads as CLI), and other instructions
//     x86asm's tables predate. A truncated instruction (the code ends
//     inside it) or one longer than 15 bytes is Invalid too; x86asm
//     reports those as a one-byte prefix pseudo instruction, which a
//     caller skips alike.
//   - A VEX (C4, C5) or EVEX (62) prefix is recognized only as the first
//     byte of an instruction. After a segment override or 67 prefix,
//     which the hardware allows, the byte is read as LES, LDS or BOUND.
//   - VEX and EVEX instructions always take a ModR/M byte when one more
//     byte is available, also VZEROUPPER and VZEROALL (VEX 0F 77), which
//     have none: C5 F8 77 C3 (vzeroupper; ret) is one 4-byte instruction.
//     Only when the code ends after the opcode byte is there no ModR/M
//     byte.
//   - EVEX map selection uses only the low two bits of the mm field, so
//     maps 4 to 7 (APX, AVX512-FP16) decode as maps 0 to 3, and the
//     reserved EVEX bits are not checked.
//
// Target is an address. From a displacement it is the address the CPU
// computes: a disp32 under 64-bit addressing is sign-extended. (x86asm's
// Mem.Disp holds the displacement zero-extended, so pc+Len+Disp misses a
// RIP-relative target below the instruction by 4 GiB.) For a relative
// branch it is pc + Len + rel in 64-bit arithmetic, like pc + Len + x86asm's
// Rel, without the truncation to the operand size the CPU applies.
package x86scan

//go:generate go run gen.go

import (
	"debug/elf"
	"iter"
)

// Kind classifies an instruction.
type Kind uint8

// The kinds of instructions.
const (
	// Invalid means no instruction decodes at this address: the bytes are
	// not an instruction x86asm knows, the code ends inside one, or it
	// would be longer than 15 bytes. Len is 1.
	Invalid Kind = iota
	// Other is any instruction of no other kind.
	Other
	// Jump is an unconditional direct jump (JMP rel8/rel16/rel32) to
	// Target.
	Jump
	// CondJump is a conditional direct jump to Target: Jcc, LOOP, LOOPE,
	// LOOPNE, JCXZ, JECXZ, JRCXZ, and XBEGIN, whose target is the abort
	// handler.
	CondJump
	// Call is a direct call (CALL rel16/rel32) of Target.
	Call
	// JumpReg is an indirect jump through register Reg (JMP r/m with a
	// register operand, FF /4).
	JumpReg
	// JumpTable is an indirect jump through memory addressed by a 32-bit
	// displacement and index register Reg scaled by 8, without a base
	// register (FF /4, JMP [disp32 + Reg*8]): Target is the displacement
	// as an address (sign-extended with 64-bit addressing, zero-extended
	// with 32-bit), the start of a table of 8-byte jump targets in
	// 64-bit code.
	JumpTable
	// LEA is a load of a RIP-relative address into register Reg (LEA Reg,
	// [RIP + disp32], 64-bit mode and addressing): Target is the address.
	// With a 67 prefix (EIP-relative) the instruction is Other, as
	// splitinfo reads x86asm.
	LEA
)

var kindNames = [...]string{"Invalid", "Other", "Jump", "CondJump", "Call", "JumpReg", "JumpTable", "LEA"}

// String returns the name of k.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// Inst is one decoded instruction. Its address is the caller's (the pc
// passed to Decode): the compiler keeps a struct of at most four fields in
// registers, and the copies of a larger result cost more than decoding.
type Inst struct {
	Len    int // length in bytes: 1 to 15, 1 when Kind is Invalid
	Kind   Kind
	Reg    uint8  // register number 0-15 (RAX/EAX/AX = 0 ... R15 = 15) for JumpReg, JumpTable and LEA
	Target uint64 // branch target, jump table or LEA address for the kinds that have one
}

// maxLen is the architectural limit on the length of an instruction.
const maxLen = 15

// ModeOf returns the processor mode (64 or 32) of code for ELF machine
// m, 0 when m is not x86.
func ModeOf(m elf.Machine) int {
	switch m {
	case elf.EM_X86_64:
		return 64
	case elf.EM_386:
		return 32
	}
	return 0
}

// All decodes code, whose first byte is at address pc, linearly in the
// given mode and yields the address and decoding of each instruction:
// each starts where the previous one ends, and an Invalid one is skipped
// one byte at a time.
func All(code []byte, pc uint64, mode int) iter.Seq2[uint64, Inst] {
	return func(yield func(uint64, Inst) bool) {
		for off := 0; off < len(code); {
			inst := Decode(code[off:], pc+uint64(off), mode)
			if !yield(pc+uint64(off), inst) {
				return
			}
			off += inst.Len
		}
	}
}

// Prefix state: the legacy prefixes and REX.W that decide whether an
// opcode is valid and how long its immediate is. It indexes legacyPS.
const (
	ps66   = 1 << 0 // operand-size override (66)
	psF3   = 1 << 1 // REP/REPE (F3) is the last of F2 and F3
	psF2   = 1 << 2 // REPNE (F2) is the last of F2 and F3
	ps67   = 1 << 3 // address-size override (67)
	psW    = 1 << 4 // REX.W
	psRep  = psF3 | psF2
	psSkip = 1 << 7 // a prefix that decides nothing: LOCK, segment overrides
)

// legacyPrefix maps each legacy prefix byte (SDM vol. 2A §2.1.1) to its
// prefix state bits; other bytes map to 0.
var legacyPrefix = [256]uint8{
	0xF0: psSkip, 0xF2: psF2, 0xF3: psF3,
	0x26: psSkip, 0x2E: psSkip, 0x36: psSkip, 0x3E: psSkip, 0x64: psSkip, 0x65: psSkip,
	0x66: ps66,
	0x67: ps67,
}

// validRow says for which ModR/M bytes an opcode is valid under one
// prefix state.
type validRow struct {
	reg uint64 // bit m&63: valid with register-form ModR/M byte m (mod = 3)
	mem uint8  // bit r: valid with a memory operand and ModR/M.reg r
}

// evexTab holds the validity of an EVEX opcode.
type evexTab struct {
	zmm  uint8     // bit pp<<1|W: a 512-bit form exists (see decodeAVX)
	rows [32]uint8 // avxRows index by pp<<3 | W<<2 | L'L
}

// Decode decodes the instruction at the start of code, whose first byte is
// at address pc, in the given processor mode: 64 or 32 (x86asm's mode
// numbers). In any other mode, and for empty code, it returns an Invalid
// instruction of length 1.
func Decode(code []byte, pc uint64, mode int) Inst {
	var mi int // index of mode in the tables
	switch mode {
	case 64:
		mi = 1
	case 32:
	default:
		return Inst{Len: 1}
	}
	// b holds the bytes an instruction may span, padded so that reads
	// need no bounds checks (pos&15); n of them are real. Reads past n
	// only happen for instructions that then turn out to be too long.
	var buf [16]byte
	var b *[16]byte
	n := len(code)
	if n >= 16 {
		b = (*[16]byte)(code)
		n = maxLen
	} else {
		if n == 0 {
			return Inst{Len: 1}
		}
		copy(buf[:], code)
		b = &buf
	}

	// Legacy prefixes, any number in any order (the limit is the length
	// of the instruction). The last of F2 and F3 counts.
	ps := 0
	pos := 0
	op := b[0]
	if legacyPrefix[op] != 0 {
		for {
			p := legacyPrefix[op]
			if p == 0 {
				break
			}
			if p&psRep != 0 {
				ps &^= psRep
			}
			ps |= int(p &^ psSkip)
			pos++
			if pos >= n {
				return Inst{Len: 1}
			}
			op = b[pos&15]
		}
	} else if op == 0xC4 || op == 0xC5 || op == 0x62 {
		if l, ok := decodeAVX(b, n, mi == 1); ok {
			if l == 0 {
				return Inst{Len: 1}
			}
			return Inst{Len: l, Kind: Other}
		}
	}
	// REX (SDM vol. 2A §2.2.1), 64-bit mode only, right before the opcode.
	var rex byte
	if mi == 1 && op&0xF0 == 0x40 {
		rex = op
		ps |= int(rex&8) << 1 // psW
		pos++
		op = b[pos&15]
	}
	pos++

	// Opcode: one byte, or an escape to the 0F, 0F 38 or 0F 3A map.
	idx := int(op)
	if op == 0x0F {
		op = b[pos&15]
		pos++
		idx = 0x100 | int(op)
		if op == 0x38 || op == 0x3A {
			idx = 0x200 | int(op&2)<<7 | int(b[pos&15])
			pos++
		}
	}
	info := opInfo[mi][idx]
	f := format(info)
	modrm := b[pos&15] // or whatever follows an opcode without one
	sib := b[(pos+1)&15]
	if info&alwaysValid == 0 {
		row := &legacyRows[legacyPS[legacyOps[mi][idx]][ps]]
		var bit uint64
		if modrm >= 0xC0 {
			bit = row.reg >> (modrm & 63)
		} else {
			bit = uint64(row.mem >> (modrm >> 3 & 7))
		}
		if bit&1 == 0 {
			return Inst{Len: 1}
		}
	}
	at := pos // of ModR/M
	hasModRM := int(info>>9) & 1
	if mi == 0 && ps&ps67 != 0 {
		if hasModRM != 0 {
			pos += 1 + int(modrmTail16[modrm])
		}
	} else {
		// ModR/M, SIB and displacement, without branches; a SIB with
		// base 5 and mod 0 means disp32 and no base.
		t := uint32(modrm&0xC7^0x04) | uint32(sib&7^5)
		pos += (1 + int(modrmTail[modrm]) + int((t-1)>>29&4)) & -hasModRM
	}
	imm := int(info >> 12 & 15) // the immediate without prefixes
	if ps != 0 {
		imm = int(immSize[mi][ps][f])
	}
	kind := Kind(info >> 16 & 7)
	var reg uint8
	if f >= fGrp3b {
		switch f {
		case fGrp3b:
			if modrm&0x30 == 0 { // TEST r/m8, imm8 (/0, /1)
				imm = 1
			}
		case fGrp3z:
			if modrm&0x30 == 0 { // TEST r/m, imm16/32 (/0, /1)
				imm = int(immSize[mi][ps][fIz])
			}
		case fGrp11z:
			if modrm == 0xF8 { // XBEGIN rel16/32, rel16 with 66 also in 64-bit mode
				kind = CondJump
			}
		case fLEA:
			if mi == 1 && ps&ps67 == 0 && modrm&0xC7 == 0x05 {
				kind = LEA
				reg = modrm>>3&7 | rex&4<<1
			}
		case fGrp5:
			if modrm&0x38 == 0x20 { // JMP r/m (/4)
				switch {
				case modrm >= 0xC0:
					kind = JumpReg
					reg = modrm&7 | rex&1<<3
				case modrm&0xC7 == 0x04 && sib&0xC7 == 0xC5 && (mi == 1 || ps&ps67 == 0):
					// [disp32 + index*8]: scale 8, no base, an index
					// (index 4 without REX.X means none).
					if index := sib>>3&7 | rex&2<<2; index != 4 {
						kind = JumpTable
						reg = index
					}
				}
			}
		}
	}
	pos += imm
	if pos > n {
		return Inst{Len: 1}
	}
	next := pc + uint64(pos)
	var target uint64
	if rel := next + uint64(le(b, pos-imm, imm)); kind-Jump <= Call-Jump {
		target = rel
	}
	switch kind {
	case LEA:
		target = next + uint64(le(b, at+1, 4))
	case JumpTable:
		target = uint64(le(b, at+2, 4))
		if mi == 0 || ps&ps67 != 0 {
			target = uint64(uint32(target)) // 32-bit addressing
		}
	}
	return Inst{Len: pos, Kind: kind, Reg: reg, Target: target}
}

// le returns the sign-extended little-endian integer of size 1, 2 or 4
// bytes at b[at:].
func le(b *[16]byte, at, size int) int64 {
	v := uint32(b[at&15]) | uint32(b[(at+1)&15])<<8 | uint32(b[(at+2)&15])<<16 | uint32(b[(at+3)&15])<<24
	sh := uint(32-8*size) & 31
	return int64(int32(v<<sh) >> sh)
}

// decodeAVX decodes the VEX (C4, C5) or EVEX (62) encoded instruction at
// the start of b, n bytes long (SDM vol. 2A §2.3, §2.7). ok is false when
// the first byte does not start one (too few bytes, or in 32-bit mode
// ModR/M.mod of LES, LDS or BOUND is not 3) and must be decoded as a
// legacy opcode; a zero length means invalid.
func decodeAVX(b *[16]byte, n int, mode64 bool) (length int, ok bool) {
	var hdr int
	switch b[0] {
	case 0xC5:
		hdr = 2
	case 0xC4:
		hdr = 3
	default:
		hdr = 4
	}
	if n < hdr || !mode64 && b[1]&0xC0 != 0xC0 {
		return 0, false
	}
	var mp, pp, w, l int
	var bcast bool
	aaa := byte(0)
	switch hdr {
	case 2: // C5 [R vvvv L pp]
		mp, l, pp = 1, int(b[1]>>2&1), int(b[1]&3)
	case 3: // C4 [R X B mmmmm] [W vvvv L pp]
		mp, w, l, pp = int(b[1]&0x1F), int(b[2]>>7), int(b[2]>>2&1), int(b[2]&3)
	default: // 62 [R X B R' 0 0 m m] [W vvvv 1 pp] [z L'L b V' aaa]
		mp, w, pp = int(b[1]&3), int(b[2]>>7), int(b[2]&3)
		l, bcast, aaa = int(b[3]>>5&3), b[3]&0x10 != 0, b[3]&7
	}
	if mp == 0 || mp > 3 || n == hdr {
		return 0, true
	}
	op := b[hdr&15]
	pos := hdr + 1
	class := 16 // no ModR/M byte: the code ends after the opcode
	modrm := b[pos&15]
	if pos < n {
		class = int(modrm >> 3 & 7)
		if modrm >= 0xC0 {
			class |= 8
		}
	}
	var row uint64
	if hdr < 4 {
		row = avxRows[vexTabs[vexOps[mp-1][op]][pp<<2|w<<1|l]]
	} else {
		t := &evexTabs[evexOps[mp-1][op]]
		if bcast && class&8 != 0 && class != 16 {
			// EVEX.b with a register operand selects rounding or SAE,
			// which x86asm matches against the 512-bit form if the
			// opcode has one, and the 128-bit form otherwise.
			l = 0
			if t.zmm>>(pp<<1|w)&1 != 0 {
				l = 2
			}
		}
		row = avxRows[t.rows[pp<<3|w<<2|l]]
	}
	v := row >> (3 * class) & 7
	if v&3 == 0 || v&4 != 0 && aaa == 0 {
		return 0, true
	}
	if class == 16 {
		return pos, true
	}
	pos++
	if modrm < 0xC0 {
		sib := b[pos&15]
		t := uint32(modrm&0xC7^0x04) | uint32(sib&7^5)
		pos += int(modrmTail[modrm]) + int((t-1)>>29&4)
	}
	pos += int(v&3) - 1 // the immediate
	if pos > n {
		return 0, true
	}
	return pos, true
}
