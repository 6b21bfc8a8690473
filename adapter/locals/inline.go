package locals

import (
	"debug/dwarf"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/dwarf/reader"
)

// An Inlined is one inlined call (DW_TAG_inlined_subroutine, DWARF 5
// section 3.3.8) executing at a PC: a frame gdb and Delve show above the
// function it is inlined into.
type Inlined struct {
	// Offset is the entry of the inlined subroutine: a Frame's Inline.
	Offset dwarf.Offset
	// Name is the inlined function's name (through DW_AT_abstract_origin).
	Name string
	// CallFile and CallLine are where it is called, in the scope around
	// it: the position of the frame below it (DW_AT_call_file, _line).
	CallFile string
	CallLine int
}

// Inlines returns the inlined calls of subprogram sub executing at the
// link-time address pc, innermost first (Delve's reader.InlineStack);
// none where pc runs the subprogram's own code.
func (r *Reader) Inlines(sub dwarf.Offset, pc uint64) ([]Inlined, error) {
	t, err := r.tree(sub)
	if err != nil {
		return nil, err
	}
	stack := reader.InlineStack(t, pc)
	if len(stack) == 0 {
		return nil, nil
	}
	files, err := r.fileNames(sub)
	if err != nil {
		return nil, err
	}
	out := make([]Inlined, len(stack))
	for i, e := range stack {
		in := Inlined{Offset: e.Offset}
		in.Name, _ = e.Val(dwarf.AttrName).(string)
		line, _ := e.Val(dwarf.AttrCallLine).(int64)
		in.CallLine = int(line)
		if f, ok := e.Val(dwarf.AttrCallFile).(int64); ok && f >= 0 && f < int64(len(files)) && files[f] != nil {
			in.CallFile = files[f].Name
		}
		out[i] = in
	}
	return out, nil
}

// fileNames returns the file table of the line program of the unit
// holding the entry at off, indexed as DW_AT_call_file and
// DW_AT_decl_file index it.
func (r *Reader) fileNames(off dwarf.Offset) ([]*dwarf.LineFile, error) {
	u := r.unitOf(off)
	if u == nil {
		return nil, fmt.Errorf("locals: entry at %#x is in no unit", off)
	}
	r.mu.Lock()
	files, ok := r.files[u.start]
	r.mu.Unlock()
	if ok {
		return files, nil
	}
	rd := r.d.Reader()
	rd.Seek(u.start)
	cu, err := rd.Next()
	if err != nil || cu == nil {
		return nil, fmt.Errorf("locals: unit at %#x: %v", u.start, err)
	}
	lr, err := r.d.LineReader(cu)
	if err != nil {
		return nil, fmt.Errorf("locals: line program of the unit at %#x: %w", u.start, err)
	}
	if lr != nil {
		files = lr.Files()
	}
	r.mu.Lock()
	r.files[u.start] = files
	r.mu.Unlock()
	return files, nil
}

// scope returns the entry of fr whose variables it shows: its
// subprogram, or the inlined subroutine fr.Inline within it.
func (r *Reader) scope(fr *Frame) (*godwarf.Tree, error) {
	t, err := r.tree(fr.Subprogram)
	if err != nil {
		return nil, err
	}
	if fr.Inline == 0 {
		return t, nil
	}
	if n := findEntry(t, fr.Inline); n != nil && n.Tag == dwarf.TagInlinedSubroutine {
		return n, nil
	}
	return nil, fmt.Errorf("locals: no inlined subroutine at %#x in subprogram %#x", fr.Inline, fr.Subprogram)
}

// findEntry returns the entry at off in the tree t, nil if none.
func findEntry(t *godwarf.Tree, off dwarf.Offset) *godwarf.Tree {
	if t.Offset == off {
		return t
	}
	for _, c := range t.Children {
		if c.Offset <= off {
			if n := findEntry(c, off); n != nil {
				return n
			}
		}
	}
	return nil
}
