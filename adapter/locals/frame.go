package locals

import (
	"bytes"
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/pkg/dwarf/reader"
	"github.com/go-delve/delve/pkg/dwarf/regnum"
	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// Memory reads n bytes of the debugged process at addr.
type Memory func(addr uint64, n int) ([]byte, error)

// A Frame is a stack frame to read variables in.
type Frame struct {
	// Subprogram is the offset of the DWARF subprogram executing.
	Subprogram dwarf.Offset
	// Inline, if not 0, is the inlined subroutine (one of Inlines) the
	// frame shows: its variables, not the subprogram's. The frame's
	// registers and frame base are the subprogram's.
	Inline dwarf.Offset
	// PC is the link-time address the frame executes: the next
	// instruction in the innermost frame, the call (return address - 1)
	// in the others.
	PC uint64
	// Line is the source line at PC; a local is visible after the line
	// that declares it, as in Delve.
	Line int
	// Regs are the frame's registers by DWARF number, with CFA set and
	// the image's load bias as StaticBase. Registers the frame does not
	// know are absent, not zero.
	Regs *op.DwarfRegisters
	Mem  Memory
	// Caller returns the frame that called this one, in the Reader of its
	// image, for DW_OP_entry_value; nil when unknown.
	Caller func() (*Reader, *Frame, error)
}

// Which selects the variables to read.
type Which int

const (
	Args   Which = iota // formal parameters (Delve's ListFunctionArgs)
	Locals              // the other variables (Delve's ListLocalVariables)
)

// Variables returns the arguments or the local variables of fr visible
// at its PC, loaded as cfg says, in Delve's order: by the depth of the
// lexical block that declares them, then by declaration line; a variable
// hidden by one of an inner block with the same name is flagged
// VariableShadowed.
func (r *Reader) Variables(fr *Frame, which Which, cfg api.LoadConfig) ([]api.Variable, error) {
	entries, err := r.visible(fr)
	if err != nil {
		return nil, err
	}
	regs, err := r.frameRegs(fr)
	if err != nil {
		return nil, err
	}
	type ordered struct {
		v     api.Variable
		depth int
	}
	var vars []ordered
	for _, e := range entries {
		if (e.Tag == dwarf.TagFormalParameter) != (which == Args) {
			continue
		}
		v, err := r.variable(fr, regs, e.Tree, cfg)
		if err != nil {
			continue // as Delve: skip variables it cannot parse
		}
		depth := e.Depth
		if e.Tag == dwarf.TagFormalParameter {
			v.Flags |= api.VariableArgument
			if depth <= 1 {
				depth = 0
			}
		}
		vars = append(vars, ordered{v, depth})
	}
	sort.SliceStable(vars, func(i, j int) bool {
		if vars[i].depth != vars[j].depth {
			return vars[i].depth < vars[j].depth
		}
		return vars[i].v.DeclLine < vars[j].v.DeclLine
	})
	out := make([]api.Variable, len(vars))
	last := make(map[string]int)
	for i := range vars {
		out[i] = vars[i].v
		if j, ok := last[out[i].Name]; ok {
			out[j].Flags |= api.VariableShadowed
		}
		last[out[i].Name] = i
	}
	return out, nil
}

// visible returns the variables of fr's subprogram, or inlined
// subroutine, visible at its PC.
func (r *Reader) visible(fr *Frame) ([]reader.Variable, error) {
	t, err := r.scope(fr)
	if err != nil {
		return nil, err
	}
	if !t.ContainsPC(fr.PC) {
		return nil, fmt.Errorf("locals: %#x is not in the scope at %#x", fr.PC, t.Offset)
	}
	flags := reader.VariablesOnlyVisible | reader.VariablesSkipInlinedSubroutines
	if fr.Inline != 0 || len(reader.InlineStack(t, fr.PC)) > 0 {
		// Where calls are inlined the line is a row of any of them, not
		// a line of this scope: none hides a variable, as in gdb.
		flags |= reader.VariablesNoDeclLineCheck
	}
	return reader.Variables(t, fr.PC, fr.Line, flags), nil
}

// variable reads the variable or parameter e of fr, whose registers with
// the frame base are regs; an error means the entry itself is unusable
// (no type), a value that cannot be read is reported in the variable's
// Unreadable.
func (r *Reader) variable(fr *Frame, regs *op.DwarfRegisters, e *godwarf.Tree, cfg api.LoadConfig) (api.Variable, error) {
	name, _ := e.Val(dwarf.AttrName).(string)
	typ, p, descr, err := r.typedPlace(fr, regs, e)
	if typ == nil {
		return api.Variable{}, err
	}
	l := &loader{mem: fr.Mem, cfg: cfg}
	var v api.Variable
	if err != nil {
		v = l.unreadable(name, typ, err)
	} else {
		v = l.load(name, typ, p, 0)
	}
	if p.buf != nil {
		v.Flags |= api.VariableFakeAddress
	}
	v.LocationExpr = descr
	v.DeclLine, _ = e.Val(dwarf.AttrDeclLine).(int64)
	return v, nil
}

// typedPlace returns the type of variable e and where its value is in
// fr: an address in memory, or the value's bytes gathered from registers
// and constants; and the location's description as Delve gives it. The
// type is nil when it cannot be read; with a type, err says why the value
// cannot be found.
func (r *Reader) typedPlace(fr *Frame, regs *op.DwarfRegisters, e *godwarf.Tree) (typ godwarf.Type, p place, descr string, err error) {
	toff, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return nil, p, "", fmt.Errorf("locals: variable at %#x has no type", e.Offset)
	}
	if typ, err = r.typeAt(toff); err != nil {
		return nil, p, "", fmt.Errorf("locals: type of variable at %#x: %w", e.Offset, err)
	}
	expr, descr, err := r.locationExpr(e, dwarf.AttrLocation, fr.PC)
	if err != nil {
		return typ, p, descr, err
	}
	var b bytes.Buffer
	op.PrettyPrint(&b, expr, regName)
	descr += b.String()
	if expr, err = r.resolveIndexes(e.Offset, expr); err != nil {
		return typ, p, descr, err
	}
	if expr, err = r.resolveEntryValue(fr, expr); err != nil {
		return typ, p, descr, err
	}
	p, _, err = evaluate(fr, regs, expr, valueSize(typ))
	return typ, p, descr, err
}

// evaluate runs a location expression and returns the place of a value of
// size bytes it describes, and the value of the expression.
func evaluate(fr *Frame, regs *op.DwarfRegisters, expr []byte, size int64) (p place, val int64, err error) {
	guarded, ok := GuardExpr(expr)
	if !ok {
		return place{}, 0, fmt.Errorf("malformed or unsupported location expression % x", expr)
	}
	addr, pieces, err := op.ExecuteStackProgram(*regs, guarded, 8, readFunc(fr.Mem))
	if err != nil {
		if err.Error() == trapError {
			err = fmt.Errorf("malformed location expression % x", expr)
		}
		return place{}, 0, err
	}
	if pieces == nil {
		return place{addr: uint64(addr)}, addr, nil
	}
	empty, ok := emptyPieces(expr)
	if !ok || len(empty) != len(pieces) {
		empty = nil
	}
	buf, gaps, err := compose(fr, regs, pieces, empty, size)
	if err != nil {
		return place{}, 0, err
	}
	return place{addr: FakeAddress, buf: buf, gaps: gaps}, 0, nil
}

// Operations GuardExpr rewrites (DWARF 5, section 7.7.1).
const (
	opConstu     = 0x10
	opDup        = 0x12
	opSwap       = 0x16
	opDiv        = 0x1b
	opMod        = 0x1d
	opPlus       = 0x22
	opPlusUconst = 0x23
	opBra        = 0x28
	opSkip       = 0x2f
	opAnd        = 0x1a
	opConst4u    = 0x0c
	opDerefSize  = 0x94
	// opTrap is an operation pkg/dwarf/op does not know: it stops the
	// program with trapError.
	opTrap = 0xff
)

var trapError = fmt.Sprintf("invalid instruction %#v", op.Opcode(opTrap))

// GuardExpr returns expr rewritten so that pkg/dwarf/op fails where it
// would panic: DW_OP_plus_uconst on an empty stack becomes DW_OP_constu,
// DW_OP_plus (a stack underflow), and DW_OP_div and DW_OP_mod check their
// operands first (DW_OP_swap twice, for an underflow, then DW_OP_dup,
// DW_OP_bra over a trap if the divisor is 0). DW_OP_deref_size of 1 to
// 7 bytes, which pkg/dwarf/op refuses ("pointer size 1 not supported":
// it reads 4 or 8), reads 4 or 8 bytes and masks the rest off (a read
// past the object, on the stack or in data, is harmless). Branches are
// retargeted. ok is false for an expression validExpr refuses, or one
// that branches into the middle of an operation.
func GuardExpr(expr []byte) (guarded []byte, ok bool) {
	if !validExpr(expr) {
		return nil, false
	}
	guarded, err := rewriteOps(expr, func(op []byte) ([]byte, error) {
		switch op[0] {
		case opPlusUconst:
			return append(append([]byte{opConstu}, op[1:]...), opPlus), nil
		case opDiv, opMod:
			return []byte{opSwap, opSwap, opDup, opBra, 1, 0, opTrap, op[0]}, nil
		case opDerefSize:
			return appendDerefSize(nil, op[1]), nil
		}
		return nil, nil
	})
	return guarded, err == nil
}

// appendDerefSize appends DW_OP_deref_size n in the sizes pkg/dwarf/op
// reads: n itself if 4 or 8 (or invalid: op reports it), else 4 or 8
// bytes and DW_OP_and with a mask of n bytes.
func appendDerefSize(out []byte, n byte) []byte {
	switch {
	case n == 0 || n == 4 || n >= 8:
		return append(out, opDerefSize, n)
	case n < 4:
		out = append(out, opDerefSize, 4, opConst4u)
		return append(binary.LittleEndian.AppendUint32(out, 1<<(8*n)-1), opAnd)
	default:
		out = append(out, opDerefSize, 8, opConst8u)
		return append(binary.LittleEndian.AppendUint64(out, 1<<(8*uint64(n))-1), opAnd)
	}
}

// FakeAddress is the address of values that live in registers or are
// computed, as Delve gives it (pkg/proc fakeAddressUnresolv) when it has
// no target to place them in.
const FakeAddress = 0xbeed000000000000

// frameRegs returns fr's registers with the frame base of its
// subprogram (DW_AT_frame_base) set.
func (r *Reader) frameRegs(fr *Frame) (*op.DwarfRegisters, error) {
	regs := *fr.Regs
	t, err := r.tree(fr.Subprogram)
	if err != nil {
		return nil, err
	}
	if fb, _, err := r.locationExpr(t, dwarf.AttrFrameBase, fr.PC); err == nil {
		switch p, _, err := evaluate(fr, &regs, fb, 8); {
		case err != nil:
		case p.buf == nil:
			regs.FrameBase = int64(p.addr)
		default:
			// DW_OP_regN (clang's DW_OP_reg7 RSP): the frame base is the
			// register's value (DWARF 5 section 3.3.5).
			if b, err := p.bytes(8); err == nil {
				regs.FrameBase = int64(binary.LittleEndian.Uint64(b))
			}
		}
	}
	return &regs, nil
}

func readFunc(m Memory) op.ReadMemoryFunc {
	return func(buf []byte, addr uint64) (int, error) {
		b, err := m(addr, len(buf))
		return copy(buf, b), err
	}
}

// compose gathers a value held in pieces (DWARF 5 section 2.6.1.2) into
// size bytes. The pieces empty marks (nil: none) are undefined: their
// bytes are the gaps.
func compose(fr *Frame, regs *op.DwarfRegisters, pieces []op.Piece, empty []bool, size int64) (buf []byte, gaps []gap, err error) {
	if size < 0 || size > maxValueSize {
		return nil, nil, fmt.Errorf("value of %d bytes", size)
	}
	buf = make([]byte, 0, size)
	for i, p := range pieces {
		n := int64(p.Size)
		if n == 0 {
			n = size - int64(len(buf))
		}
		if n < 0 || int64(len(buf))+n > size {
			return nil, nil, fmt.Errorf("pieces larger than the value (%d bytes)", size)
		}
		var b []byte
		switch p.Kind {
		case op.RegPiece:
			reg := regs.Reg(p.Val)
			if reg == nil {
				return nil, nil, fmt.Errorf("register %s not available", regName(p.Val))
			}
			b = reg.Bytes
			if b == nil {
				b = binary.LittleEndian.AppendUint64(nil, reg.Uint64Val)
			}
		case op.ImmPiece:
			b = p.Bytes
			if b == nil {
				b = binary.LittleEndian.AppendUint64(nil, p.Val)
			}
		case op.AddrPiece:
			if b, err = fr.Mem(p.Val, int(n)); err != nil {
				return nil, nil, err
			}
		}
		if empty != nil && empty[i] {
			gaps = append(gaps, gap{int64(len(buf)), n})
		}
		if int64(len(b)) < n {
			b = append(b, make([]byte, n-int64(len(b)))...)
		}
		buf = append(buf, b[:n]...)
	}
	if int64(len(buf)) < size {
		return nil, nil, errors.New("value only partly described by its pieces")
	}
	return buf, gaps, nil
}

// maxValueSize bounds the values gathered from pieces: registers and
// constants, never large.
const maxValueSize = 1 << 16

// regName names a DWARF register number as Delve prints it.
func regName(n uint64) string { return regnum.AMD64ToName(n) }

// DW_OP_entry_value, and its GNU form before DWARF 5.
const (
	opEntryValue    = 0xa3
	opGNUEntryValue = 0xf3
	opConst8u       = 0x0e
	opReg0          = 0x50
	opRegx          = 0x90
)

// resolveEntryValue replaces each DW_OP_entry_value(DW_OP_regN) in expr
// — GCC's way to say "the value register N had on entry" — by the value
// the caller passed: the DW_AT_call_value of the caller's call-site
// parameter for register N at the call that made fr (DWARF 5 sections
// 2.5.1.7 and 3.4.2), as a DW_OP_const8u. Delve's op package fails on
// entry values.
func (r *Reader) resolveEntryValue(fr *Frame, expr []byte) ([]byte, error) {
	return rewriteOps(expr, func(op []byte) ([]byte, error) {
		var v uint64
		var err error
		switch op[0] {
		case opEntryValue, opGNUEntryValue:
			c := cursor.New("DW_OP_entry_value", 0, op[1:])
			n := c.ULEB128()
			v, err = r.entryValue(fr, op[len(op)-int(n):])
		case opGNUParameterRef:
			v, err = r.parameterRef(fr, uint64(binary.LittleEndian.Uint32(op[1:])))
		default:
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return binary.LittleEndian.AppendUint64([]byte{opConst8u}, v), nil
	})
}

// opGNUParameterRef is DW_OP_GNU_parameter_ref: the value the caller
// passed for a parameter the callee no longer receives. GCC describes
// the parameters an IPA-SRA clone (complain.isra.0) dropped with it; its
// operand is the unit offset of the parameter's DIE in the abstract
// function, which the caller's DW_TAG_call_site_parameter names by
// DW_AT_call_parameter (DW_AT_abstract_origin in the GNU form).
const opGNUParameterRef = 0xfa

// parameterRef returns the value fr's caller passed for the parameter at
// unit offset rel of fr's unit.
func (r *Reader) parameterRef(fr *Frame, rel uint64) (uint64, error) {
	u := r.unitOf(fr.Subprogram)
	if u == nil {
		return 0, fmt.Errorf("entry at %#x is in no unit", fr.Subprogram)
	}
	param := dwarf.Offset(uint64(u.start) + rel)
	if fr.Caller == nil {
		return 0, errors.New("parameter value: the caller is unknown")
	}
	cr, caller, err := fr.Caller()
	if err != nil {
		return 0, fmt.Errorf("parameter value: %w", err)
	}
	if cr != r {
		return 0, errors.New("parameter value: the caller is in another file")
	}
	v, err := cr.callValue(caller, func(p *godwarf.Tree) bool {
		ref, ok := p.Val(dwarf.AttrCallParameter).(dwarf.Offset)
		if !ok {
			ref, ok = p.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		}
		return ok && ref == param
	})
	if err != nil {
		return 0, fmt.Errorf("value of the parameter at %#x: %w", param, err)
	}
	return v, nil
}

// rewriteOps returns expr with each operation op replaced by what f
// returns for it, unless that is nil, and each DW_OP_bra and DW_OP_skip
// retargeted to where its target now starts (one before the program
// stays before it, one past the end goes to the end); expr itself when
// it has neither replacements nor branches. It stops at an operation
// nextOp does not know: evaluate reports it. A branch into the middle of
// an operation, or one the rewrite puts out of reach, is an error.
func rewriteOps(expr []byte, f func(op []byte) ([]byte, error)) ([]byte, error) {
	type branch struct{ at, target int } // operand position in out; target in expr
	var branches []branch
	newStart := make(map[int]int) // operation start in expr → in out
	out := make([]byte, 0, len(expr)+8)
	replaced := false
	i := 0
	for i < len(expr) {
		next, ok := nextOp(expr, i)
		if !ok {
			break
		}
		newStart[i] = len(out)
		repl, err := f(expr[i:next])
		switch {
		case err != nil:
			return nil, err
		case repl != nil:
			out, replaced = append(out, repl...), true
		case expr[i] == opBra || expr[i] == opSkip:
			out = append(out, expr[i], 0, 0)
			branches = append(branches, branch{len(out) - 2, next + int(int16(binary.LittleEndian.Uint16(expr[i+1:])))})
		default:
			out = append(out, expr[i:next]...)
		}
		i = next
	}
	if !replaced && len(branches) == 0 {
		return expr, nil
	}
	newStart[i] = len(out)
	out = append(out, expr[i:]...)
	for _, b := range branches {
		target, known := newStart[b.target]
		switch {
		case b.target < 0:
			target = -1 // before the program: pkg/dwarf/op fails
		case b.target >= len(expr):
			target = len(out) // past the end: the program ends
		case !known:
			return nil, fmt.Errorf("location expression % x branches into an operation", expr)
		}
		d := target - (b.at + 2)
		if d < math.MinInt16 || d > math.MaxInt16 {
			return nil, fmt.Errorf("location expression % x: a branch out of reach", expr)
		}
		binary.LittleEndian.PutUint16(out[b.at:], uint16(int16(d)))
	}
	return out, nil
}

// entryValue returns the value on entry to fr of the location block, a
// register.
func (r *Reader) entryValue(fr *Frame, block []byte) (uint64, error) {
	reg, ok := singleRegister(block)
	if !ok {
		return 0, fmt.Errorf("entry value of % x: only a register's is known", block)
	}
	if fr.Caller == nil {
		return 0, errors.New("entry value: the caller is unknown")
	}
	cr, caller, err := fr.Caller()
	if err != nil {
		return 0, fmt.Errorf("entry value: %w", err)
	}
	v, err := cr.callValue(caller, func(p *godwarf.Tree) bool {
		loc, _ := p.Val(dwarf.AttrLocation).([]byte)
		n, ok := singleRegister(loc)
		return ok && n == reg
	})
	if err != nil {
		return 0, fmt.Errorf("entry value of %s: %w", regName(reg), err)
	}
	return v, nil
}

// singleRegister reports the register of a one-operation DW_OP_regN or
// DW_OP_regx block.
func singleRegister(block []byte) (uint64, bool) {
	switch {
	case len(block) == 1 && block[0] >= opReg0 && block[0] < opReg0+32:
		return uint64(block[0] - opReg0), true
	case len(block) > 1 && block[0] == opRegx:
		c := cursor.New("DW_OP_regx", 0, block[1:])
		n := c.ULEB128()
		return n, c.Err() == nil && c.Len() == 0
	}
	return 0, false
}

// callValue evaluates, in the caller frame fr (stopped at the call: its
// PC is the return address - 1), the value the call passed for a
// parameter: the DW_AT_call_value of the DW_TAG_call_site_parameter that
// is accepts, under the DW_TAG_call_site returning to fr.PC+1.
func (r *Reader) callValue(fr *Frame, is func(*godwarf.Tree) bool) (uint64, error) {
	t, err := r.tree(fr.Subprogram)
	if err != nil {
		return 0, err
	}
	site := findCallSite(t, fr.PC+1)
	if site == nil {
		return 0, fmt.Errorf("no call site returning to %#x in the caller", fr.PC+1)
	}
	for _, p := range site.Children {
		if p.Tag != dwarf.TagCallSiteParameter && p.Tag != tagGNUCallSiteParameter {
			continue
		}
		if !is(p) {
			continue
		}
		val, ok := p.Val(dwarf.AttrCallValue).([]byte)
		if !ok {
			val, ok = p.Val(attrGNUCallSiteValue).([]byte)
		}
		if !ok {
			return 0, errors.New("the call site gives no value")
		}
		regs, err := r.frameRegs(fr)
		if err != nil {
			return 0, err
		}
		if val, err = r.resolveEntryValue(fr, val); err != nil {
			return 0, err
		}
		p, v, err := evaluate(fr, regs, val, 8)
		switch {
		case err != nil:
			return 0, err
		case p.buf != nil: // a register or DW_OP_stack_value
			b, err := p.bytes(8)
			if err != nil {
				return 0, err
			}
			return binary.LittleEndian.Uint64(b), nil
		}
		return uint64(v), nil
	}
	return 0, errors.New("the call site does not say")
}

// GNU extensions for call sites before DWARF 5.
const (
	tagGNUCallSite          dwarf.Tag  = 0x4109
	tagGNUCallSiteParameter dwarf.Tag  = 0x410a
	attrGNUCallSiteValue    dwarf.Attr = 0x2111
)

// findCallSite returns the call site in t whose return address is ret:
// DW_AT_call_return_pc in DWARF 5, DW_AT_low_pc in the GNU form.
func findCallSite(t *godwarf.Tree, ret uint64) *godwarf.Tree {
	for _, c := range t.Children {
		switch c.Tag {
		case dwarf.TagCallSite, tagGNUCallSite:
			pc, ok := c.Val(dwarf.AttrCallReturnPC).(uint64)
			if !ok {
				pc, ok = c.Val(dwarf.AttrLowpc).(uint64)
			}
			if ok && pc == ret {
				return c
			}
		case dwarf.TagLexDwarfBlock, dwarf.TagInlinedSubroutine:
			if s := findCallSite(c, ret); s != nil {
				return s
			}
		}
	}
	return nil
}
