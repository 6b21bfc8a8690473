package linetable

import (
	"fmt"

	"github.com/splitdbg/splitdbg/esl"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
	"github.com/splitdbg/splitdbg/splitinfo/native"
)

// EmitSections returns what `splitdbg emit` adds to the ELF file at path,
// by section name: the split procedure records of its split procedures
// (native.SectionName) and the ESL programs of all its procedures, in the
// pc unit of its machine (esl.SectionName).
func EmitSections(path string) (map[string][]byte, error) {
	return elfx.OpenWith(path, func(f *elfx.File) (map[string][]byte, error) {
		procs, err := splitinfo.FromELF(f)
		if err != nil {
			return nil, err
		}
		lines, err := FromELF(f, procs)
		if err != nil {
			return nil, err
		}
		recs, err := native.Append(nil, procs.SplitRecords())
		if err != nil {
			return nil, err
		}
		prog, err := lines.AppendESL(nil, esl.PCUnit(f.Machine))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return map[string][]byte{native.SectionName: recs, esl.SectionName: prog}, nil
	})
}

// AppendESL appends an Extended Source Location section holding the rows
// of every procedure (docs/FORMAT.md): one program per procedure, its
// fragments in logical order, each closed by an end_sequence row at the
// fragment's end. Rows outside every procedure are not kept. pcUnit is
// the instruction granularity (1 for x86).
func (t *Table) AppendESL(dst []byte, pcUnit int) ([]byte, error) {
	b, err := esl.NewBuilder(pcUnit)
	if err != nil {
		return nil, err
	}
	var prog []esl.Row
	for p := range t.procs.All() {
		prog = prog[:0]
		for i := range p.Fragments {
			prog = t.appendFragmentRows(prog, b, p, i)
		}
		if len(prog) == 0 {
			continue
		}
		if err := b.Add(p.Entry, prog); err != nil {
			return nil, fmt.Errorf("ESL for %s: %w", p.Name, err)
		}
	}
	return b.AppendUnit(dst), nil
}

// appendFragmentRows appends the rows of fragment i of p and the
// end_sequence row that closes it.
func (t *Table) appendFragmentRows(prog []esl.Row, b *esl.Builder, p *splitinfo.Proc, i int) []esl.Row {
	f := &p.Fragments[i]
	lo, hi := t.fragmentRows(f)
	var last esl.Row
	n := 0
	for j := lo; j < hi; j++ {
		r := &t.rows[j]
		if r.isEnd() {
			continue
		}
		last = esl.Row{Address: r.addr, File: b.File(t.files[r.file]), Line: r.line, Column: r.column,
			IsStmt: r.isStmt(), PrologueEnd: r.flags&flagPrologueEnd != 0}
		prog = append(prog, last)
		n++
	}
	if n == 0 {
		return prog
	}
	last.Address, last.EndSequence, last.PrologueEnd = f.End, true, false
	return append(prog, last)
}
