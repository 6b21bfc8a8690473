// Package linetable is a split-aware line table: source positions for
// every fragment of a split procedure, breakpoint addresses for a source
// line in every fragment that holds it, and a procedure's rows in logical
// order, following the moved code at its branch as the split-procedure
// proposal's "Line Numbers" section describes (seed 003).
//
// A Table is built once from a Source — DWARF .debug_line (DWARF 2 to 5,
// every compile unit) or an Extended Source Location program — and joined
// to the splitinfo.Table of the same file. Queries use the index and never
// rerun the line program.
package linetable

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"

	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// Row is one row of a line program.
type Row struct {
	Addr        uint64
	File        string
	Line        int
	Column      int
	IsStmt      bool
	PrologueEnd bool
	// EndSequence marks the first address after a sequence; the row
	// carries no source position.
	EndSequence bool
	// Discriminator is the row's DWARF discriminator (0 if none).
	Discriminator int
	// Names are File's names as the line header states them, nil if the
	// source has none.
	Names *FileNames
}

// Source is a line program: its rows, sequence after sequence, each
// sequence ending with an EndSequence row. Next returns io.EOF after the
// last row. DWARF .debug_line and ESL sections are the two sources.
type Source interface {
	Next(*Row) error
}

// DWARFSource reads the .debug_line program of every compile unit, with
// splitdbg's own decoder (internal/dwarfline).
type DWARFSource struct {
	secs   *dwarfline.Sections
	walker *dies.Walker // reads each unit's first entry alone
	units  []int        // the units still to read
	prog   *dwarfline.Program
	names  []string // cleaned names of prog's files
	raw    []*FileNames
	seen   map[uint64]bool
	row    dwarfline.Row
	inSeq  bool
	lastPC uint64
	hint   int
}

// lineUnit is what a compile unit's first entry says of its line
// program.
type lineUnit struct {
	stmtList uint64
	compDir  string
	addrSize int
}

// newUnitsSource returns the line rows of the units of d (those of
// scope s; nil: every unit), whose line programs are in secs: it reads
// each unit's first entry alone (a dies.Walker), as NewInlines reads
// the same units.
func newUnitsSource(d *dies.Data, secs *dwarfline.Sections, s *splitinfo.Scope) *DWARFSource {
	src := &DWARFSource{secs: secs, seen: make(map[uint64]bool),
		walker: d.NewWalker(dwarf.AttrStmtList, dwarf.AttrCompDir), units: slices.Collect(s.Units(len(d.Units())))}
	if s == nil {
		// A row takes at least one byte of line program and usually
		// about three; a few units' share of the section is not known.
		src.hint = len(secs.Line) / 3
	}
	return src
}

// nextUnit returns the next unit's line program offset (ok false if it
// has none), compilation directory and address size; done after the
// last unit.
func (s *DWARFSource) nextUnit() (u lineUnit, ok, done bool, err error) {
	if len(s.units) == 0 {
		return lineUnit{}, false, true, nil
	}
	s.walker.Reset(s.units[0])
	s.units = s.units[1:]
	cu, err := s.walker.Next()
	if err != nil {
		return lineUnit{}, false, false, err
	}
	if cu == nil || cu.Tag != dwarf.TagCompileUnit && cu.Tag != dwarf.TagPartialUnit {
		return lineUnit{}, false, false, nil
	}
	off, ok := cu.SecOffset(0)
	compDir, _ := cu.String(1)
	return lineUnit{off, compDir, int(s.walker.Unit().AddrSize)}, ok, false, nil
}

// SizeHint estimates the number of rows.
func (s *DWARFSource) SizeHint() int { return s.hint }

// Next implements Source.
func (s *DWARFSource) Next(r *Row) error {
	for {
		if s.prog == nil {
			u, ok, done, err := s.nextUnit()
			if err != nil {
				return err
			}
			if done {
				return io.EOF
			}
			if !ok || s.seen[u.stmtList] {
				continue
			}
			s.seen[u.stmtList] = true
			prog, err := dwarfline.New(s.secs, u.stmtList, u.compDir, u.addrSize)
			if err != nil {
				return err
			}
			s.prog = prog
			s.names, s.raw = s.names[:0], s.raw[:0]
			for _, f := range prog.Files {
				s.names = append(s.names, path.Clean(f))
			}
			s.raw = appendFileNames(s.raw, prog)
		}
		if err := s.prog.Next(&s.row); err != nil {
			if err != io.EOF {
				return err
			}
			s.prog = nil
			if s.inSeq {
				// A program that ends without end_sequence: close it.
				s.inSeq = false
				*r = Row{Addr: s.lastPC, EndSequence: true}
				return nil
			}
			continue
		}
		e := &s.row
		s.inSeq, s.lastPC = !e.EndSequence, e.Addr
		*r = Row{Addr: e.Addr, Line: e.Line, Column: e.Column, IsStmt: e.IsStmt,
			PrologueEnd: e.PrologueEnd, EndSequence: e.EndSequence, Discriminator: e.Discriminator}
		if !e.EndSequence && e.File >= 0 {
			// DW_LNE_define_file may have added files since.
			for _, f := range s.prog.Files[len(s.names):] {
				s.names = append(s.names, path.Clean(f))
			}
			s.raw = appendFileNames(s.raw, s.prog)
			r.File, r.Names = s.names[e.File], s.raw[e.File]
		}
		return nil
	}
}

// AmbiguousError reports a location that names more than one thing.
type AmbiguousError struct {
	Spec       string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s is ambiguous: %d candidates: %v", e.Spec, len(e.Candidates), e.Candidates)
}

// ErrNotFound is wrapped by errors for locations that match nothing.
var ErrNotFound = errors.New("not found")
