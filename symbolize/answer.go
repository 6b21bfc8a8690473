package symbolize

import (
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
	"github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

// Answer is what "splitdbg addr" reports for one address: the
// procedure and fragment holding it, its offset in the procedure's
// logical order, its source position and, in a file with an LLVM
// basic-block address map, its basic block.
type Answer struct {
	Addr uint64
	// Loc is the procedure and fragment holding Addr, if Found.
	Loc   splitinfo.Loc
	Found bool
	// File, Line and Column are from the line table (the last row at or
	// below Addr), if HasPos.
	File         string
	Line, Column int
	HasPos       bool
	// BB is the basic block holding Addr, if HasBB.
	BB    bbaddrmap.Loc
	HasBB bool
}

// Lookup fills a with the answer for addr in t. It does not allocate.
func Lookup(t *linetable.Table, addr uint64, a *Answer) {
	a.Addr = addr
	a.Loc, a.Found = t.Procs().Lookup(addr)
	a.File, a.Line, a.Column, a.HasPos = t.Line(addr)
	a.HasBB = false
	if blocks := t.Procs().BBAddrMap(); blocks != nil {
		a.BB, a.HasBB = blocks.Lookup(addr)
	}
}
