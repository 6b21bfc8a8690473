package adapter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/adapter/locals"
)

// x86-64 DWARF register numbers (System V psABI, figure 3.36).
const (
	regRBP = 6
	regRSP = 7
	regRIP = 16 // the return address column
	numReg = 17
)

// regSet is the x86-64 register file of one frame, as DWARF numbers it:
// 0-15 the general registers, 16 the PC.
type regSet struct {
	v     [numReg]uint64
	valid uint32
}

func (r *regSet) get(n uint64) (uint64, bool) {
	if n >= numReg || r.valid&(1<<n) == 0 {
		return 0, false
	}
	return r.v[n], true
}

func (r *regSet) set(n, v uint64) {
	if n < numReg {
		r.v[n], r.valid = v, r.valid|1<<n
	}
}

func (r *regSet) clear(n uint64) {
	if n < numReg {
		r.valid &^= 1 << n
	}
}

func (r *regSet) pc() uint64 { return r.v[regRIP] }

// parseRegisters reads the registers Delve lists (ListThreadRegisters):
// values are hexadecimal, possibly followed by a decoding ("0x246 [PF ZF]").
func parseRegisters(rs api.Registers) (regSet, error) {
	var r regSet
	for _, reg := range rs {
		if reg.DwarfNumber < 0 || reg.DwarfNumber >= numReg {
			continue
		}
		f := strings.Fields(reg.Value)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseUint(f[0], 0, 64)
		if err != nil {
			return r, fmt.Errorf("adapter: register %s: %w", reg.Name, err)
		}
		r.set(uint64(reg.DwarfNumber), v)
	}
	return r, r.complete()
}

// complete says whether r has what unwinding starts from: the PC and
// the stack pointer.
func (r *regSet) complete() error {
	if _, ok := r.get(regRIP); !ok {
		return errors.New("adapter: Delve listed no PC register")
	}
	if _, ok := r.get(regRSP); !ok {
		return errors.New("adapter: Delve listed no stack pointer")
	}
	return nil
}

// apiRegisters converts a register set to Delve's form.
func apiRegisters(r *regSet) api.Registers {
	names := [numReg]string{"Rax", "Rdx", "Rcx", "Rbx", "Rsi", "Rdi", "Rbp", "Rsp",
		"R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "Rip"}
	var out api.Registers
	for n := range uint64(numReg) {
		if v, ok := r.get(n); ok {
			out = append(out, api.Register{Name: names[n], Value: fmt.Sprintf("%#016x", v), DwarfNumber: int(n)})
		}
	}
	return out
}

// memory reads target memory over the API in aligned blocks, so the few
// words one unwind reads from a stack cost one or two calls, and the
// variables of a frame read at a stop are read once.
type memory struct {
	read func(addr uint64, n int) ([]byte, error)
	// static, if set, reads what is the same in the process as in its
	// files (read-only segments) without a call.
	static func(addr uint64, n int) ([]byte, bool)
	mu     sync.Mutex // guards blocks: a frame's memory serves concurrent calls
	blocks map[uint64][]byte
}

const memBlock = 256 // divides the page size, so a block never crosses a page

// prefetch reads the stack above sp in one call, as far as Delve reads in
// one (1000 bytes) and whole blocks go: the frames of a few C calls,
// unless the block at sp was read already. A failed read (the stack ends
// sooner) leaves the blocks to be read one by one.
func (m *memory) prefetch(sp uint64) {
	base := sp &^ (memBlock - 1)
	const n = 1000 / memBlock * memBlock
	m.mu.Lock()
	_, done := m.blocks[base]
	m.mu.Unlock()
	if done {
		return // read for a frame it called
	}
	b, err := m.read(base, n)
	if err != nil || len(b) != n {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.blocks == nil {
		m.blocks = make(map[uint64][]byte)
	}
	for off := uint64(0); off < n; off += memBlock {
		m.blocks[base+off] = b[off : off+memBlock]
	}
}

func (m *memory) uint64(addr uint64) (uint64, error) {
	b, err := m.readAt(addr, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// readAt reads n bytes at addr: from the files (static) when it can, from
// a block when they lie in one, which is read whole the first time;
// directly otherwise.
func (m *memory) readAt(addr uint64, n int) ([]byte, error) {
	if m.static != nil {
		if b, ok := m.static(addr, n); ok {
			return b, nil
		}
	}
	base := addr &^ (memBlock - 1)
	if n < 0 || addr+uint64(n) > base+memBlock || addr+uint64(n) < addr {
		b, err := m.read(addr, n)
		if err == nil && len(b) < n {
			err = fmt.Errorf("adapter: short read at %#x", addr)
		}
		return b, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	blk, ok := m.blocks[base]
	if !ok {
		var err error
		if blk, err = m.read(base, memBlock); err != nil {
			// The block may cross into unmapped memory: read just this.
			return m.read(addr, n)
		}
		if len(blk) < memBlock {
			return nil, fmt.Errorf("adapter: short read at %#x", base)
		}
		if m.blocks == nil {
			m.blocks = make(map[uint64][]byte)
		}
		m.blocks[base] = blk
	}
	return blk[addr-base : addr-base+uint64(n)], nil
}

// errNoCFI reports a PC that no .eh_frame entry of a known image covers.
var errNoCFI = errors.New("no .eh_frame entry")

// errUnknownReg reports a CFA rule on a register the unwind does not know.
var errUnknownReg = errors.New("register unknown")

// unwinder steps frames with .eh_frame CFI, registers and memory read
// over the API.
type unwinder struct {
	res *Resolver
	mem *memory
}

// fde returns the frame description entry covering the runtime address
// at, and the image's bias.
func (u *unwinder) fde(at uint64) (*frame.FrameDescriptionEntry, uint64, error) {
	im := u.res.imageOf(at)
	if im == nil {
		return nil, 0, fmt.Errorf("adapter: unwind at %#x: %w", at, errNoCFI)
	}
	t, err := im.load()
	if err != nil {
		return nil, 0, err
	}
	fdes, err := t.frames()
	if err != nil {
		return nil, 0, err
	}
	fde, err := fdes.FDEForPC(at - im.bias)
	if err != nil {
		return nil, 0, fmt.Errorf("adapter: unwind at %#x: %w", at, errNoCFI)
	}
	return fde, im.bias, nil
}

// callerSaved are the DWARF numbers of rax, rdx, rcx, rsi, rdi and
// r8-r11.
var callerSaved = [...]uint64{0, 1, 2, 4, 5, 8, 9, 10, 11}

// atEntry reports whether the runtime address at is the entry of a
// procedure.
func (u *unwinder) atEntry(at uint64) bool {
	f, ok := u.res.Frame(at, false)
	return ok && f.Entry == at
}

// step computes the caller's registers from those of a frame, and the
// frame's canonical frame address. top says the frame is the innermost,
// whose PC is the next instruction to run; in other frames the PC is a
// return address and the CFI row is that of the call before it. A known
// CFA (not 0) is used instead of the CFA rule.
func (u *unwinder) step(regs *regSet, top bool, knownCFA uint64) (caller regSet, cfa uint64, err error) {
	at := regs.pc()
	if !top {
		at--
	}
	fde, bias, err := u.fde(at)
	if err != nil {
		return caller, 0, err
	}
	row, err := cfiRowAt(fde, at-bias)
	if err != nil {
		return caller, 0, fmt.Errorf("adapter: CFI at %#x: %w", at, err)
	}
	caller, cfa, err = u.apply(&row, regs, top && u.atEntry(at), knownCFA, bias)
	if err != nil {
		return caller, 0, fmt.Errorf("adapter: CFI at %#x: %w", at, err)
	}
	return caller, cfa, nil
}

// apply applies the CFI row of a frame with registers regs (DWARF 5
// section 6.4.1): it returns the caller's registers and the frame's CFA.
// entry says the frame has run no instruction of its procedure yet; bias
// is the load bias of its image, for addresses in DWARF expressions.
func (u *unwinder) apply(row *cfiRow, regs *regSet, entry bool, knownCFA, bias uint64) (caller regSet, cfa uint64, err error) {
	cfa = knownCFA
	if cfa == 0 {
		switch row.cfa.Rule {
		case frame.RuleCFA:
			base, ok := regs.get(row.cfa.Reg)
			if !ok {
				return caller, 0, fmt.Errorf("CFA register %d: %w", row.cfa.Reg, errUnknownReg)
			}
			cfa = uint64(int64(base) + row.cfa.Offset)
		case frame.RuleExpression:
			if cfa, err = u.evalCFI(row.cfa.Expression, regs, 0, bias); err != nil {
				return caller, 0, fmt.Errorf("CFA expression: %w", err)
			}
		default:
			return caller, 0, errors.New("no CFA rule")
		}
	}
	// Registers without a rule keep their value ("same value", as gdb
	// takes them), but those a call clobbers (System V psABI section
	// 3.2.1) hold the callee's values once it has run an instruction:
	// they are unknown in the caller, unless the callee stands at its
	// entry, where they still hold what the caller left in them.
	caller = *regs
	caller.clear(regRIP)
	if !entry {
		for _, n := range callerSaved {
			caller.clear(n)
		}
	}
	for n := range uint64(numReg) {
		rule, ok := row.rule(n)
		if !ok {
			continue
		}
		switch rule.Rule {
		case frame.RuleSameVal:
			if v, ok := regs.get(n); ok {
				caller.set(n, v)
			}
		case frame.RuleOffset, frame.RuleExpression:
			addr := uint64(int64(cfa) + rule.Offset)
			if rule.Rule == frame.RuleExpression {
				if addr, err = u.evalCFI(rule.Expression, regs, cfa, bias); err != nil {
					return caller, 0, fmt.Errorf("register %d: %w", n, err)
				}
			}
			v, err := u.mem.uint64(addr)
			if err != nil {
				return caller, 0, fmt.Errorf("register %d: %w", n, err)
			}
			caller.set(n, v)
		case frame.RuleValOffset:
			caller.set(n, uint64(int64(cfa)+rule.Offset))
		case frame.RuleValExpression:
			v, err := u.evalCFI(rule.Expression, regs, cfa, bias)
			if err != nil {
				return caller, 0, fmt.Errorf("register %d: %w", n, err)
			}
			caller.set(n, v)
		case frame.RuleRegister:
			if v, ok := regs.get(rule.Reg); ok {
				caller.set(n, v)
			} else {
				caller.clear(n)
			}
		default: // undefined
			caller.clear(n)
		}
	}
	if row.ra != regRIP {
		if v, ok := caller.get(row.ra); ok {
			caller.set(regRIP, v)
		}
	}
	if _, ok := caller.get(regRIP); !ok {
		return caller, 0, errors.New("no return address")
	}
	caller.set(regRSP, cfa)
	return caller, cfa, nil
}

// opCallFrameCFA is DW_OP_call_frame_cfa.
const opCallFrameCFA = 0x9c

// evalCFI evaluates the DWARF expression of a CFI rule on the frame's
// registers: for a register's rule (cfa not 0) with the CFA pushed first,
// as DWARF 5 section 6.4.2.3 says; for the CFA's rule without.
func (u *unwinder) evalCFI(expr []byte, regs *regSet, cfa, bias uint64) (uint64, error) {
	if cfa != 0 {
		expr = append([]byte{opCallFrameCFA}, expr...)
	}
	guarded, ok := locals.GuardExpr(expr)
	if !ok {
		return 0, fmt.Errorf("malformed DWARF expression % x", expr)
	}
	expr = guarded
	read := func(b []byte, addr uint64) (int, error) {
		m, err := u.mem.readAt(addr, len(b))
		return copy(b, m), err
	}
	v, pieces, err := op.ExecuteStackProgram(*dwarfRegisters(regs, cfa, bias), expr, 8, read)
	if err != nil {
		return 0, err
	}
	if pieces != nil {
		return 0, errors.New("DWARF expression names a location, not a value")
	}
	return uint64(v), nil
}
