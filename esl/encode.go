package esl

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// AppendProgram appends to dst the shortest ESL program, among the
// encodings this package knows, that makes a Reader started at start
// yield exactly rows: every field of every row, in order. Each row is
// written as a data mode 1 byte, a data mode 2 pair, commands and a data
// row, or commands alone, and the data mode is switched where that pays
// off over the whole program (a shortest path over the rows with the data
// and command modes as states). Every address must lie a whole number of
// pc units from the one before it (from start.Address for the first row).
func AppendProgram(dst []byte, pcUnit int, start Start, rows []Row) ([]byte, error) {
	if pcUnit < 1 || pcUnit > 255 {
		return dst, fmt.Errorf("%w: pc unit %d, want 1 to 255", ErrUnencodable, pcUnit)
	}
	if len(rows) == 0 {
		return dst, nil
	}
	diffs := make([]diff, len(rows))
	prev := Row{Address: start.Address, File: start.File, Line: start.Line, IsStmt: true}
	for i := range rows {
		if err := diffs[i].set(&prev, &rows[i], int64(pcUnit)); err != nil {
			return dst, fmt.Errorf("%w: row %d: %v", ErrUnencodable, i, err)
		}
		prev = rows[i]
	}

	// Shortest path: costs[s] is the fewest bytes that emit the rows so
	// far and leave the decoder in state s; back[i][s] is the plan that
	// reached s at row i.
	// Among the shortest encodings, prefer the one with the fewest escapes
	// and commands: data rows decode fastest.
	inf := cost{math.MaxInt, 0}
	costs := [numStates]cost{stateD1: {}, stateD2: inf, stateC1: inf, stateC2: inf}
	back := make([][numStates]choice, len(rows))
	var p plan
	for i := range diffs {
		next := [numStates]cost{inf, inf, inf, inf}
		for from := range numStates {
			if costs[from] == inf {
				continue
			}
			for k := range numPlans {
				if !p.make(from, k, &diffs[i]) {
					continue
				}
				c := cost{costs[from].bytes + p.cost, costs[from].work + p.work()}
				if c.less(next[p.to]) {
					next[p.to] = c
					back[i][p.to] = choice{from: uint8(from), kind: uint8(k)}
				}
			}
		}
		costs = next
	}
	best := 0
	for s := range numStates {
		if costs[s].less(costs[best]) {
			best = s
		}
	}
	// Walk back to find each row's plan, then write them forward.
	kinds := make([]choice, len(rows))
	for i, s := len(rows)-1, best; i >= 0; i-- {
		kinds[i] = back[i][s]
		s = int(kinds[i].from)
	}
	for i := range rows {
		p.make(int(kinds[i].from), int(kinds[i].kind), &diffs[i])
		dst = p.append(dst)
	}
	return dst, nil
}

// Decoder states between rows: a data mode, or command mode with the
// data mode a resume returns to.
const (
	stateD1 = iota
	stateD2
	stateC1
	stateC2
	numStates
)

// Plan kinds: a data row in mode 1 or 2 (with commands before it if
// needed), or a row of commands alone ending in a marked command, with or
// without resume, leaving data mode 1 or 2 as the one to resume.
const (
	planData1 = iota
	planData2
	planCmd1
	planCmd2
	planCmdResume1
	planCmdResume2
	numPlans
)

type choice struct{ from, kind uint8 }

// cost is the size of an encoding and, to break ties, the number of
// escapes and commands a decoder steps through.
type cost struct{ bytes, work int }

func (c cost) less(d cost) bool {
	return c.bytes < d.bytes || c.bytes == d.bytes && c.work < d.work
}

// diff is what changes from one row to the next.
type diff struct {
	dpc        int64 // in pc units
	dline      int64
	col        uint32
	colChanged bool
	file       uint32
	fileChange bool
	negStmt    bool
	pe, eb, es bool
	disc       uint32
	discChange bool
}

func (d *diff) set(prev, r *Row, unit int64) error {
	units, ok := unitsOf(r.Address-prev.Address, uint64(unit))
	if !ok {
		return fmt.Errorf("address %#x is not a whole number of %d-byte pc units from %#x", r.Address, unit, prev.Address)
	}
	*d = diff{
		dpc:        units,
		dline:      int64(r.Line) - int64(prev.Line),
		col:        r.Column,
		colChanged: r.Column != prev.Column,
		file:       r.File,
		fileChange: r.File != prev.File,
		negStmt:    r.IsStmt != prev.IsStmt,
		pe:         r.PrologueEnd,
		eb:         r.EpilogueBegin,
		es:         r.EndSequence,
		disc:       r.Discriminator,
		discChange: r.Discriminator != prev.Discriminator,
	}
	return nil
}

// unitsOf returns the k of smallest magnitude with k × unit = delta
// modulo 2⁶⁴, the arithmetic of the decoder's address register, if there
// is one.
func unitsOf(delta, unit uint64) (int64, bool) {
	if d, u := int64(delta), int64(unit); d%u == 0 {
		return d / u, true
	}
	// unit = m × 2^s with m odd: delta needs s low zero bits, then
	// k = (delta >> s) × m⁻¹ modulo 2^(64-s).
	s := uint(bits.TrailingZeros64(unit))
	if delta&(1<<s-1) != 0 {
		return 0, false
	}
	m := unit >> s
	inv := m // Newton's iteration doubles the correct low bits: 3, 6, ... 96
	for range 5 {
		inv *= 2 - m*inv
	}
	k := (delta >> s) * inv
	return int64(k<<s) >> s, true
}

type pcmd struct {
	op   Command
	a, b int64  // signed operands
	u    uint64 // unsigned operand (the only one, or the third)
}

func (c *pcmd) len() int {
	switch c.op {
	case CmdAddPC, CmdAddLine:
		return 1 + cursor.SLEB128Len(c.a)
	case CmdSetCol, CmdSetFile, CmdSetDataMode, CmdSetDiscrim:
		return 1 + cursor.ULEB128Len(c.u)
	case CmdAddPCLine:
		return 1 + cursor.SLEB128Len(c.a) + cursor.SLEB128Len(c.b)
	case CmdAddPCLineCol:
		return 1 + cursor.SLEB128Len(c.a) + cursor.SLEB128Len(c.b) + cursor.ULEB128Len(c.u)
	}
	return 1
}

// plan is how one row is written.
type plan struct {
	esc   bool  // an escape byte first
	nib   uint8 // its pc delta
	cmds  [9]pcmd
	n     int
	last  byte  // Mark and Resume bits of the last command
	data  int   // 0 (commands alone), 1 or 2: the data row's mode
	dline int64 // data row line delta, -7..7
	dpc   int64 // data row pc delta, in the mode's range
	col   byte  // data mode 2 second byte
	cost  int
	to    int
}

func (p *plan) add(c pcmd) {
	p.cmds[p.n] = c
	p.n++
}

// make fills p with plan kind k from state from; it reports false if the
// plan cannot write the row.
func (p *plan) make(from, k int, d *diff) bool {
	inCmd := from >= stateC1
	mode := from%2 + 1
	// Reset all but cmds, which add overwrites (zeroing them dominated
	// the encoder's time).
	p.esc, p.nib, p.n, p.last, p.data = false, 0, 0, 0, 0
	p.dline, p.dpc, p.col, p.cost, p.to = 0, 0, 0, 0, 0
	if d.fileChange {
		p.add(pcmd{op: CmdSetFile, u: uint64(d.file)})
	}
	var want int // the data mode to be in after the row
	switch k {
	case planData1, planCmd1, planCmdResume1:
		want = 1
	default:
		want = 2
	}
	if want != mode {
		p.add(pcmd{op: CmdSetDataMode, u: uint64(want)})
	}
	if d.pe {
		p.add(pcmd{op: CmdPrologueEnd})
	}
	if d.eb {
		p.add(pcmd{op: CmdEpilogueBegin})
	}
	if d.es {
		p.add(pcmd{op: CmdEndSequence})
	}
	if d.discChange && d.disc > 31 {
		p.add(pcmd{op: CmdSetDiscrim, u: uint64(d.disc)})
	} else if d.discChange {
		p.add(pcmd{op: CmdSetDiscrimShort + Command(d.disc)})
	}
	pcRest, lineRest := d.dpc, d.dline
	setCol := d.colChanged
	switch k {
	case planData1, planData2:
		p.data = want
		lo, hi := int64(1), int64(16)
		if want == 2 {
			if d.col > 0x7f {
				return false
			}
			lo, hi = 0, 15
			setCol = false
			p.col = byte(d.col)
			if d.negStmt {
				p.col |= 0x80
			}
		} else if d.negStmt {
			p.add(pcmd{op: CmdNegateStmt})
		}
		p.dpc = min(max(pcRest, lo), hi)
		pcRest -= p.dpc
		p.dline = min(max(lineRest, -7), 7)
		lineRest -= p.dline
		p.last = Resume
		p.to = want - 1
	default:
		if d.negStmt {
			p.add(pcmd{op: CmdNegateStmt})
		}
		p.last = Mark
		p.to = want - 1 + stateC1
		if k == planCmdResume1 || k == planCmdResume2 {
			p.last |= Resume
			p.to = want - 1
		}
	}
	// The escape byte's nibble takes a forward pc delta when there are
	// commands to carry the row anyway.
	if !inCmd && pcRest > 0 && (p.n > 0 || setCol || lineRest != 0 || p.data == 0) {
		p.nib = uint8(min(pcRest, 15))
		pcRest -= int64(p.nib)
	}
	switch {
	case setCol && (pcRest != 0 || lineRest != 0):
		p.add(pcmd{op: CmdAddPCLineCol, a: pcRest, b: lineRest, u: uint64(d.col)})
	case setCol:
		p.add(pcmd{op: CmdSetCol, u: uint64(d.col)})
	case pcRest != 0 && lineRest != 0:
		p.add(pcmd{op: CmdAddPCLine, a: pcRest, b: lineRest})
	case pcRest != 0:
		p.add(pcmd{op: CmdAddPC, a: pcRest})
	case lineRest != 0:
		p.add(pcmd{op: CmdAddLine, a: lineRest})
	}
	if p.n == 0 {
		if p.data == 0 {
			// Nothing changes but the row must be emitted: a marked
			// add_pc 0 carries it.
			p.add(pcmd{op: CmdAddPC})
		} else if inCmd {
			// Resuming needs a command; the row before should have
			// resumed instead.
			return false
		}
	}
	if p.n > 0 && !inCmd {
		p.esc = true
		p.cost = 1
	}
	for i := 0; i < p.n; i++ {
		p.cost += p.cmds[i].len()
	}
	p.cost += p.data
	return true
}

func (p *plan) work() int {
	if p.esc {
		return p.n + 1
	}
	return p.n
}

func (p *plan) append(dst []byte) []byte {
	if p.esc {
		dst = append(dst, Escape|p.nib)
	}
	for i := 0; i < p.n; i++ {
		c := &p.cmds[i]
		b := byte(c.op)
		if i == p.n-1 {
			b |= p.last
		}
		dst = append(dst, b)
		switch c.op {
		case CmdAddPC, CmdAddLine:
			dst = cursor.AppendSLEB128(dst, c.a)
		case CmdSetCol, CmdSetFile, CmdSetDataMode, CmdSetDiscrim:
			dst = cursor.AppendULEB128(dst, c.u)
		case CmdAddPCLine:
			dst = cursor.AppendSLEB128(cursor.AppendSLEB128(dst, c.a), c.b)
		case CmdAddPCLineCol:
			dst = cursor.AppendULEB128(cursor.AppendSLEB128(cursor.AppendSLEB128(dst, c.a), c.b), c.u)
		}
	}
	switch p.data {
	case 1:
		dst = append(dst, byte(p.dline)<<4|byte(p.dpc-1))
	case 2:
		dst = append(dst, byte(p.dline)<<4|byte(p.dpc), p.col)
	}
	return dst
}
