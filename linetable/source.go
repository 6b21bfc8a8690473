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
}

// Source is a line program: its rows, sequence after sequence, each
// sequence ending with an EndSequence row. Next returns io.EOF after the
// last row. DWARF .debug_line and ESL sections are the two sources.
type Source interface {
	Next(*Row) error
}

// DWARFSource reads the .debug_line programs of every compile unit.
type DWARFSource struct {
	d      *dwarf.Data
	units  *dwarf.Reader
	lr     *dwarf.LineReader
	names  map[*dwarf.LineFile]string
	entry  dwarf.LineEntry
	inSeq  bool
	lastPC uint64
}

// NewDWARFSource returns the line rows of d.
func NewDWARFSource(d *dwarf.Data) *DWARFSource {
	return &DWARFSource{d: d, units: d.Reader(), names: make(map[*dwarf.LineFile]string)}
}

// Next implements Source.
func (s *DWARFSource) Next(r *Row) error {
	for {
		if s.lr == nil {
			cu, err := s.units.Next()
			if err != nil {
				return fmt.Errorf("DWARF: %w", err)
			}
			if cu == nil {
				return io.EOF
			}
			s.units.SkipChildren()
			if cu.Tag != dwarf.TagCompileUnit && cu.Tag != dwarf.TagPartialUnit {
				continue
			}
			lr, err := s.d.LineReader(cu)
			if err != nil {
				return fmt.Errorf("DWARF: %w", err)
			}
			if lr == nil {
				continue
			}
			s.lr = lr
			clear(s.names)
		}
		err := s.lr.Next(&s.entry)
		if err == io.EOF {
			s.lr = nil
			if s.inSeq {
				// A program that ends without end_sequence: close it.
				s.inSeq = false
				*r = Row{Addr: s.lastPC, EndSequence: true}
				return nil
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("DWARF: %w", err)
		}
		e := &s.entry
		s.inSeq, s.lastPC = !e.EndSequence, e.Address
		*r = Row{Addr: e.Address, Line: e.Line, Column: e.Column, IsStmt: e.IsStmt,
			PrologueEnd: e.PrologueEnd, EndSequence: e.EndSequence}
		if e.File != nil && !e.EndSequence {
			name, ok := s.names[e.File]
			if !ok {
				name = path.Clean(e.File.Name)
				s.names[e.File] = name
			}
			r.File = name
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
