package adapter

import (
	"github.com/go-delve/delve/pkg/dwarf/frame"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/precheck"
)

// The row of the call frame information table that holds at a PC (DWARF
// 5 section 6.4.1), computed from a CIE's initial instructions and an
// FDE's instructions as Delve's pkg/dwarf/frame locates them. Delve's own
// evaluation (EstablishFrame) loses what DW_CFA_restore restores — it
// never records the CIE's initial rules, so a restored register becomes
// undefined, where it is "same value" by the x86-64 CIE (GCC and clang
// restore callee-saved registers so in their epilogues, glibc hundreds of
// times) — and does not factor DW_CFA_val_offset's offset.

// cfiRow is one row of the table: the CFA rule and the rules of the
// registers the unwinder knows (DWARF numbers below numReg).
type cfiRow struct {
	cfa frame.DWRule
	// regs are the register rules; a register whose bit in ruled is clear
	// has none (the CIE leaves it unspecified).
	regs  [numReg]frame.DWRule
	ruled uint32
	ra    uint64 // the return address column
}

func (r *cfiRow) set(reg uint64, rule frame.DWRule) {
	if reg < numReg {
		r.regs[reg], r.ruled = rule, r.ruled|1<<reg
	}
}

// rule returns the rule of register reg, false when it has none.
func (r *cfiRow) rule(reg uint64) (frame.DWRule, bool) {
	if reg >= numReg || r.ruled&(1<<reg) == 0 {
		return frame.DWRule{}, false
	}
	return r.regs[reg], true
}

// maxRemembered bounds the DW_CFA_remember_state stack.
const maxRemembered = 64

// cfiRowAt returns the row at the link-time address pc of fde.
func cfiRowAt(fde *frame.FrameDescriptionEntry, pc uint64) (cfiRow, error) {
	return cfiRowOf(fde.CIE, fde.Instructions, fde.Begin(), pc)
}

// cfiRowOf returns the row at pc of the FDE that starts at begin with
// instructions instr under cie.
func cfiRowOf(cie *frame.CommonInformationEntry, instr []byte, begin, pc uint64) (cfiRow, error) {
	init := cfiRow{ra: cie.ReturnAddressRegister}
	p := cfiProgram{cie: cie, initial: &init}
	if err := p.run(&init, cie.InitialInstructions, "CIE initial instructions", false, 0, 0); err != nil {
		return init, err
	}
	row := init
	err := p.run(&row, instr, "FDE instructions", true, begin, pc)
	return row, err
}

// cfiProgram runs call frame instructions (DWARF 5 section 6.4.2, and
// GCC's DW_CFA_GNU_args_size and DW_CFA_GNU_negative_offset_extended).
type cfiProgram struct {
	cie     *frame.CommonInformationEntry
	initial *cfiRow // the row the CIE's instructions leave
}

// run executes instr, which start at address begin, on row; with stop
// (an FDE's instructions; the CIE's run whole) it stops at the first
// advance past pc.
func (p *cfiProgram) run(row *cfiRow, instr []byte, what string, stop bool, begin, pc uint64) error {
	section := ".eh_frame " + what
	c := cursor.New(section, 0, instr)
	loc := begin
	caf, daf := p.cie.CodeAlignmentFactor, p.cie.DataAlignmentFactor
	var stack []cfiRow
	advance := func(delta uint64) bool {
		loc += delta * caf
		return stop && loc > pc
	}
	for !c.Done() {
		at := c.Offset()
		op := c.U8()
		switch op & 0xc0 {
		case precheck.CFAAdvanceLoc:
			if advance(uint64(op & 0x3f)) {
				return nil
			}
			continue
		case precheck.CFAOffset:
			row.set(uint64(op&0x3f), frame.DWRule{Rule: frame.RuleOffset, Offset: int64(c.ULEB128()) * daf})
			continue
		case precheck.CFARestore:
			p.restore(row, uint64(op&0x3f))
			continue
		}
		switch op {
		case precheck.CFANop, precheck.CFAArgsSize:
			if op == precheck.CFAArgsSize {
				c.ULEB128()
			}
		case precheck.CFAAdvanceLoc1, precheck.CFAAdvanceLoc2, precheck.CFAAdvanceLoc4:
			if advance(c.Uint(1 << (op - precheck.CFAAdvanceLoc1))) {
				return c.Err()
			}
		case precheck.CFAOffsetExt, precheck.CFAOffsetExtSF, precheck.CFANegOffExt, precheck.CFAValOffset, precheck.CFAValOffsetSF:
			reg := c.ULEB128()
			var off int64
			if op == precheck.CFAOffsetExtSF || op == precheck.CFAValOffsetSF {
				off = c.SLEB128() * daf
			} else {
				off = int64(c.ULEB128()) * daf
			}
			rule := frame.RuleOffset
			switch op {
			case precheck.CFANegOffExt:
				off = -off
			case precheck.CFAValOffset, precheck.CFAValOffsetSF:
				rule = frame.RuleValOffset
			}
			row.set(reg, frame.DWRule{Rule: rule, Offset: off})
		case precheck.CFARestoreExt:
			p.restore(row, c.ULEB128())
		case precheck.CFAUndefined:
			row.set(c.ULEB128(), frame.DWRule{Rule: frame.RuleUndefined})
		case precheck.CFASameValue:
			row.set(c.ULEB128(), frame.DWRule{Rule: frame.RuleSameVal})
		case precheck.CFARegister:
			reg := c.ULEB128()
			row.set(reg, frame.DWRule{Rule: frame.RuleRegister, Reg: c.ULEB128()})
		case precheck.CFARemember:
			if len(stack) == maxRemembered {
				return cursor.Errorf(section, at, cursor.ErrUnsupported, "more than %d remembered states", maxRemembered)
			}
			stack = append(stack, *row)
		case precheck.CFARestoreSt:
			if len(stack) == 0 {
				return cursor.Errorf(section, at, cursor.ErrCorrupt, "DW_CFA_restore_state without a remembered state")
			}
			ra := row.ra
			*row, stack = stack[len(stack)-1], stack[:len(stack)-1]
			row.ra = ra
		case precheck.CFADefCFA:
			reg := c.ULEB128()
			row.cfa = frame.DWRule{Rule: frame.RuleCFA, Reg: reg, Offset: int64(c.ULEB128())}
		case precheck.CFADefCFASF:
			reg := c.ULEB128()
			row.cfa = frame.DWRule{Rule: frame.RuleCFA, Reg: reg, Offset: c.SLEB128() * daf}
		case precheck.CFADefCFAReg:
			row.cfa.Rule, row.cfa.Reg = frame.RuleCFA, c.ULEB128()
		case precheck.CFADefCFAOff:
			row.cfa.Offset = int64(c.ULEB128())
		case precheck.CFADefCFAOffSF:
			row.cfa.Offset = c.SLEB128() * daf
		case precheck.CFADefCFAExpr:
			row.cfa = frame.DWRule{Rule: frame.RuleExpression, Expression: block(c)}
		case precheck.CFAExpression, precheck.CFAValExpr:
			reg := c.ULEB128()
			rule := frame.RuleExpression
			if op == precheck.CFAValExpr {
				rule = frame.RuleValExpression
			}
			row.set(reg, frame.DWRule{Rule: rule, Expression: block(c)})
		default: // DW_CFA_set_loc among them: its address encoding is the CIE's, which Delve keeps to itself
			return cursor.Errorf(section, at, cursor.ErrUnsupported, "DW_CFA opcode %#x", op)
		}
	}
	return c.Err()
}

// restore gives register reg the rule the CIE's initial instructions
// gave it, none if they gave it none.
func (p *cfiProgram) restore(row *cfiRow, reg uint64) {
	if reg >= numReg {
		return
	}
	row.regs[reg] = p.initial.regs[reg]
	row.ruled = row.ruled&^(1<<reg) | p.initial.ruled&(1<<reg)
}

// block reads a ULEB128-sized DWARF expression.
func block(c *cursor.Cursor) []byte {
	n := c.ULEB128()
	if n > uint64(c.Len()) {
		c.Fail(cursor.ErrTruncated, "expression of %d bytes, %d left", n, c.Len())
		return nil
	}
	return c.Bytes(int(n))
}
