package esl

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io"

	"github.com/splitdbg/splitdbg/internal/elfx"
)

// PCUnit returns the pc unit that suits machine's code: 1 byte for the
// variable-length instruction sets of x86, 4 for fixed-width ones.
func PCUnit(machine elf.Machine) int {
	switch machine {
	case elf.EM_X86_64, elf.EM_386:
		return 1
	}
	return 4
}

// Listing is the rows of procedures, what `splitdbg esl` prints. Its JSON
// is the command's: [{"entry","rows":[{"addr","file","line","column",
// "is_stmt","end_sequence"}]}], end_sequence only when true.
type Listing []ListedProc

// ListedProc is one procedure of a Listing: its entry address and rows
// as its program gives them, fragments in logical order.
type ListedProc struct {
	Entry uint64      `json:"entry"`
	Rows  []ListedRow `json:"rows"`
}

// ListedRow is a Row with its file's name. An end_sequence row has no
// file.
type ListedRow struct {
	Addr        uint64 `json:"addr"`
	File        string `json:"file"`
	Line        uint32 `json:"line"`
	Column      uint32 `json:"column"`
	IsStmt      bool   `json:"is_stmt"`
	EndSequence bool   `json:"end_sequence,omitempty"`
}

// List returns the listing of every procedure of t, unit by unit.
func (t *Table) List() (Listing, error) {
	var l Listing
	for p, err := range t.Procs() {
		if err != nil {
			return nil, err
		}
		if l, err = l.add(p); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// ListEntry returns the listing of the procedure whose entry address is
// entry, found as Find finds it; ok is false if no unit indexes it.
func (t *Table) ListEntry(entry uint64) (l Listing, ok bool, err error) {
	p, ok, err := t.Find(entry)
	if !ok || err != nil {
		return nil, ok, err
	}
	l, err = l.add(p)
	return l, err == nil, err
}

func (l Listing) add(p Proc) (Listing, error) {
	lp := ListedProc{Entry: p.Entry(), Rows: []ListedRow{}}
	for r, err := range p.Rows() {
		if err != nil {
			return l, err
		}
		lr := ListedRow{Addr: r.Address, Line: r.Line, Column: r.Column, IsStmt: r.IsStmt, EndSequence: r.EndSequence}
		if !r.EndSequence && int(r.File) < len(p.Files) {
			lr.File = p.Files[r.File]
		}
		lp.Rows = append(lp.Rows, lr)
	}
	return append(l, lp), nil
}

// WriteText writes l readably: a line per procedure and one per row.
func (l Listing) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, p := range l {
		fmt.Fprintf(bw, "procedure %#x\n", p.Entry)
		for _, r := range p.Rows {
			if r.EndSequence {
				fmt.Fprintf(bw, "  %#x  end of fragment\n", r.Addr)
				continue
			}
			stmt := ""
			if r.IsStmt {
				stmt = " stmt"
			}
			fmt.Fprintf(bw, "  %#x  %s:%d:%d%s\n", r.Addr, r.File, r.Line, r.Column, stmt)
		}
	}
	return bw.Flush()
}

// Open parses the .splitdbg.esl section of the ELF file at path, which
// `splitdbg emit` writes. Errors name path.
func Open(path string) (*Table, error) {
	return elfx.OpenWith(path, func(f *elfx.File) (*Table, error) {
		data, sec, err := f.SectionData(SectionName)
		if err != nil {
			return nil, err
		}
		if sec == nil {
			return nil, fmt.Errorf("%s: no %s section (splitdbg emit writes one)", path, SectionName)
		}
		t, err := Parse(SectionName, bytes.Clone(data)) // the file is unmapped on return
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return t, nil
	})
}
