package x86scan

// format is the shape of a legacy-encoded opcode: whether a ModR/M byte
// follows it and which immediate, offset or relative displacement ends
// the instruction. The operand sizes are the SDM's: b 8 bits, w 16, z 16
// or 32 (operand size), v 16, 32 or 64 (operand size, REX.W).
type format uint8

// Formats without a ModR/M byte come first; f >= fM has one.
const (
	fNone  format = iota // no operand bytes (also: prefixes, escapes)
	fIb                  // imm8
	fIw                  // imm16
	fIz                  // imm16/32
	fIv                  // imm16/32/64 (MOV reg, imm: B8+r)
	fIwIb                // imm16, imm8 (ENTER)
	fMoffs               // address-sized offset (MOV AL/rAX <-> moffs: A0-A3)
	fPtr                 // ptr16:16 or ptr16:32 (far CALL and JMP: 9A, EA)
	fRel8                // rel8 conditional: Jcc, LOOPcc, JrCXZ
	fJmp8                // JMP rel8
	fJcc                 // Jcc rel16/32 (32 in 64-bit mode)
	fJmp                 // JMP rel16/32 (32 in 64-bit mode)
	fCall                // CALL rel16/32 (32 in 64-bit mode)

	fM      // ModR/M
	fMIb    // ModR/M, imm8
	fMIz    // ModR/M, imm16/32
	fGrp3b  // group 3 (F6): ModR/M, imm8 for /0 and /1 (TEST)
	fGrp3z  // group 3 (F7): ModR/M, imm16/32 for /0 and /1 (TEST)
	fGrp11z // group 11 (C7): ModR/M, imm16/32 (MOV; XBEGIN rel16/32 is C7 F8)
	fLEA    // LEA (8D): ModR/M
	fGrp5   // group 5 (FF): ModR/M (JMP r/m is /4)
)

// Short names for the tables.
const (
	__ = fNone
	ib = fIb
	iw = fIw
	iz = fIz
	iv = fIv
	mo = fMoffs
	pt = fPtr
	r8 = fRel8
	j8 = fJmp8
	jz = fJcc
	m_ = fM
	mb = fMIb
	mz = fMIz
)

// formats gives the format of each opcode by map<<8 | opcode, for the
// one-byte map (SDM vol. 2D tables ), the two-byte map 0F (A-4,
// A-5) and the three-byte maps 0F 38 and 0F 3A. Rows are the
// high nibble, columns the low one, as in the manual. Entries for
// prefixes and escape bytes are never looked up. What the operands are
// and which prefixes make an opcode valid does not matter here; invalid
// combinations are rejected by the validity tables.
var formats = [1024]format{
	// One-byte opcode map.
	//   0   1   2   3   4   5   6   7   8   9   A   B   C   D   E   F
	/* 0 */ m_, m_, m_, m_, ib, iz, __, __, m_, m_, m_, m_, ib, iz, __, __,
	/* 1 */ m_, m_, m_, m_, ib, iz, __, __, m_, m_, m_, m_, ib, iz, __, __,
	/* 2 */ m_, m_, m_, m_, ib, iz, __, __, m_, m_, m_, m_, ib, iz, __, __,
	/* 3 */ m_, m_, m_, m_, ib, iz, __, __, m_, m_, m_, m_, ib, iz, __, __,
	/* 4 */ __, __, __, __, __, __, __, __, __, __, __, __, __, __, __, __, // INC, DEC; REX
	/* 5 */ __, __, __, __, __, __, __, __, __, __, __, __, __, __, __, __, // PUSH, POP
	/* 6 */ __, __, m_, m_, __, __, __, __, iz, mz, ib, mb, __, __, __, __,
	/* 7 */ r8, r8, r8, r8, r8, r8, r8, r8, r8, r8, r8, r8, r8, r8, r8, r8, // Jcc rel8
	/* 8 */ mb, mz, mb, mb, m_, m_, m_, m_, m_, m_, m_, m_, m_, fLEA, m_, m_,
	/* 9 */ __, __, __, __, __, __, __, __, __, __, pt, __, __, __, __, __,
	/* A */ mo, mo, mo, mo, __, __, __, __, ib, iz, __, __, __, __, __, __,
	/* B */ ib, ib, ib, ib, ib, ib, ib, ib, iv, iv, iv, iv, iv, iv, iv, iv,
	/* C */ mb, mb, iw, __, m_, m_, mb, fGrp11z, fIwIb, __, iw, __, __, ib, __, __,
	/* D */ m_, m_, m_, m_, ib, ib, __, __, m_, m_, m_, m_, m_, m_, m_, m_, // D8-DF: x87
	/* E */ r8, r8, r8, r8, ib, ib, ib, ib, fCall, fJmp, pt, j8, __, __, __, __,
	/* F */ __, __, __, __, __, __, fGrp3b, fGrp3z, __, __, __, __, __, __, m_, fGrp5,

	// Two-byte opcode map: 0F xx. 0F 0F is 3DNow!, whose opcode is the
	// imm8 after the operand; x86asm knows none.
	//   0   1   2   3   4   5   6   7   8   9   A   B   C   D   E   F
	/* 0 */ m_, m_, m_, m_, __, __, __, __, __, __, __, __, __, m_, __, mb,
	/* 1 */ m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	/* 2 */ m_, m_, m_, m_, m_, __, m_, __, m_, m_, m_, m_, m_, m_, m_, m_,
	/* 3 */ __, __, __, __, __, __, __, __, __, __, __, __, __, __, __, __, // 38, 3A: escapes
	/* 4 */ m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, // CMOVcc
	/* 5 */ m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	/* 6 */ m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	/* 7 */ mb, mb, mb, mb, m_, m_, m_, __, m_, m_, m_, m_, m_, m_, m_, m_,
	/* 8 */ jz, jz, jz, jz, jz, jz, jz, jz, jz, jz, jz, jz, jz, jz, jz, jz, // Jcc rel16/32
	/* 9 */ m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, // SETcc
	/* A */ __, __, __, m_, mb, m_, __, __, __, __, __, m_, mb, m_, m_, m_,
	/* B */ m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, mb, m_, m_, m_, m_, m_,
	/* C */ m_, m_, mb, m_, mb, mb, mb, m_, __, __, __, __, __, __, __, __, // C8-CF: BSWAP
	/* D */ m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	/* E */ m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	/* F */ m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,

	// Three-byte opcode map 0F 38 xx: every opcode has a ModR/M byte and
	// no immediate.
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,
	m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_, m_,

	// Three-byte opcode map 0F 3A xx: every opcode has a ModR/M byte and
	// an imm8.
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
	mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb, mb,
}

// immediate returns the size of the immediate, offset or relative
// displacement after the ModR/M operand of format f, in mode index mi
// (0: 32-bit, 1: 64-bit) under prefix state ps. For the groups whose
// immediate depends on ModR/M.reg it returns the size without one.
func immediate(mi, ps int, f format) int {
	z := 4 // operand size 16 or 32 for a z-sized immediate; REX.W beats 66
	if ps&(ps66|psW) == ps66 {
		z = 2
	}
	switch f {
	case fIb, fMIb, fRel8, fJmp8:
		return 1
	case fIw:
		return 2
	case fIz, fMIz, fGrp11z:
		return z
	case fIv:
		if ps&psW != 0 {
			return 8
		}
		return z
	case fIwIb:
		return 3
	case fMoffs:
		switch {
		case mi == 1 && ps&ps67 == 0:
			return 8
		case mi == 0 && ps&ps67 != 0:
			return 2
		}
		return 4
	case fPtr:
		return 2 + z
	case fJcc, fJmp, fCall:
		if mi == 1 {
			return 4 // the operand size of near branches is 64 bits
		}
		return z
	}
	return 0
}

// formatKind is the kind of the relative branch formats.
var formatKind = [...]Kind{
	fNone: Other, fIb: Other, fIw: Other, fIz: Other, fIv: Other, fIwIb: Other, fMoffs: Other, fPtr: Other,
	fRel8: CondJump, fJmp8: Jump, fJcc: CondJump, fJmp: Jump, fCall: Call,
	fM: Other, fMIb: Other, fMIz: Other, fGrp3b: Other, fGrp3z: Other, fGrp11z: Other, fLEA: Other, fGrp5: Other,
}

// Tables derived from the format and validity tables for Decode.
var (
	// opInfo describes each opcode by mode index and map<<8|opcode:
	// bits 0-7 are the format; bit 8 (alwaysValid) is set when the opcode
	// is valid under every prefix state with every ModR/M byte; bit 9
	// when it has a ModR/M byte; bits 12-15 are the immediate's size
	// without prefixes; bits 16-18 the kind of the format.
	opInfo [2][1024]uint32
	// immSize is immediate by mode index, prefix state and format.
	immSize [2][32][fGrp5 + 1]uint8
	// modrmTail and modrmTail16 are the number of SIB and displacement
	// bytes after a memory-form ModR/M byte with 32- or 64-bit (SDM
	// tables 2-2, 2-3; a SIB with base 5 and mod 0 adds a disp32) and
	// with 16-bit addressing (table 2-1).
	modrmTail, modrmTail16 [256]uint8
)

// alwaysValid marks an opInfo entry that needs no validity lookup.
const alwaysValid = 1 << 8

func init() {
	for mi := range opInfo {
		for idx := range opInfo[mi] {
			f := formats[idx]
			info := uint32(f) | alwaysValid | uint32(immediate(mi, 0, f))<<12 | uint32(formatKind[f])<<16
			if f >= fM {
				info |= 1 << 9
			}
			for _, r := range legacyPS[legacyOps[mi][idx]] {
				if legacyRows[r] != (validRow{reg: ^uint64(0), mem: 0xFF}) {
					info &^= alwaysValid
				}
			}
			opInfo[mi][idx] = info
		}
		for ps := range immSize[mi] {
			for f := range immSize[mi][ps] {
				immSize[mi][ps][f] = uint8(immediate(mi, ps, format(f)))
			}
		}
	}
	for m := 0; m < 0xC0; m++ {
		mod, rm := m>>6, m&7
		var t, t16 uint8
		if rm == 4 {
			t = 1 // SIB
		}
		switch {
		case mod == 0 && rm == 5, mod == 2:
			t += 4
		case mod == 1:
			t++
		}
		switch {
		case mod == 0 && rm == 6, mod == 2:
			t16 = 2
		case mod == 1:
			t16 = 1
		}
		modrmTail[m], modrmTail16[m] = t, t16
	}
}
