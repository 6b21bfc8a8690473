package linetable

import (
	"fmt"
	"io"
	"path"

	"github.com/splitdbg/splitdbg/esl"
)

// ESLSource reads the rows of an Extended Source Location section (seed
// 003; docs/FORMAT.md): every procedure's program in turn, each of its
// fragments closed by an end_sequence row.
type ESLSource struct {
	procs []esl.Proc
	next  int
	r     *esl.Reader
	files []string // cleaned names of the current unit's files
	unit  []string // the current unit's table, to notice a change
	row   esl.Row
	open  bool // a fragment has rows not yet closed
	last  uint64
}

// NewESLSource returns the rows of an ESL table.
func NewESLSource(t *esl.Table) (*ESLSource, error) {
	s := &ESLSource{}
	for p, err := range t.Procs() {
		if err != nil {
			return nil, err
		}
		s.procs = append(s.procs, p)
	}
	return s, nil
}

// Next implements Source.
func (s *ESLSource) Next(r *Row) error {
	for {
		if s.r == nil {
			if s.next == len(s.procs) {
				return io.EOF
			}
			p := s.procs[s.next]
			s.next++
			s.r = esl.NewReader(p.Program)
			if len(p.Files) != len(s.unit) || len(p.Files) > 0 && &p.Files[0] != &s.unit[0] {
				s.unit = p.Files
				s.files = s.files[:0]
				for _, f := range p.Files {
					s.files = append(s.files, path.Clean(f))
				}
			}
		}
		err := s.r.Next(&s.row)
		if err == io.EOF {
			s.r = nil
			if s.open {
				// A program that ends inside a fragment: close it.
				s.open = false
				*r = Row{Addr: s.last, EndSequence: true}
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
		e := &s.row
		s.open, s.last = !e.EndSequence, e.Address
		*r = Row{Addr: e.Address, Line: int(e.Line), Column: int(e.Column), IsStmt: e.IsStmt,
			PrologueEnd: e.PrologueEnd, EndSequence: e.EndSequence}
		if !e.EndSequence {
			if int(e.File) >= len(s.files) {
				return fmt.Errorf("%s: procedure at %#x: file %d of %d", esl.SectionName, s.procs[s.next-1].Entry(), e.File, len(s.files))
			}
			r.File = s.files[e.File]
		}
		return nil
	}
}
