// Package dies walks DWARF debugging information entries (DWARF 5,
// section 2.1) two ways.
//
// Walker (walk.go) is splitdbg's own decoder of .debug_info and
// .debug_abbrev (DWARF 2 to 5, section 7.5): it allocates nothing per
// entry, decodes only the attributes its caller asks for and skips the
// rest by their forms, and reports malformed input as a
// *cursor.DecodeError naming the file, section and offset. The tables
// built from every entry of a file (procedures, inline scopes) use it.
//
// Reader wraps debug/dwarf's Reader, for callers that want debug/dwarf's
// entries and types, guarded against the one input on which that Reader
// never ends: debug/dwarf (Go 1.26) reads an abbreviation code that runs
// to the end of its unit's data (every byte left has its high bit set,
// buf.varint) as 0 without moving on: Next then returns null entries
// forever, and every walk of a unit's entries hangs. A Reader stops such
// a walk with an error.
package dies

import (
	"debug/dwarf"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// maxNulls is how many null entries in a row a Reader returns before
// it reports the stream as stuck. A null entry ends a list of children
// (DWARF 5, section 2.3), so a run of them is as long as the nesting is
// deep, plus any padding: far fewer on every producer's output.
const maxNulls = 1 << 16

// A Reader is a dwarf.Reader whose Next reports an error where
// debug/dwarf's would return null entries without end.
type Reader struct {
	*dwarf.Reader
	nulls int
	last  dwarf.Offset // the last entry that was not null
	err   error
}

// NewReader returns a Reader at the start of d's .debug_info.
func NewReader(d *dwarf.Data) *Reader {
	return &Reader{Reader: d.Reader()}
}

// Next returns the next entry, as dwarf.Reader.Next does.
func (r *Reader) Next() (*dwarf.Entry, error) {
	if r.err != nil {
		return nil, r.err
	}
	e, err := r.Reader.Next()
	if err != nil || e == nil {
		return e, err
	}
	if e.Tag != 0 {
		r.nulls, r.last = 0, e.Offset
		return e, nil
	}
	if r.nulls++; r.nulls > maxNulls {
		r.err = cursor.Errorf(".debug_info", int64(r.last), cursor.ErrCorrupt,
			"more than %d null entries in a row after this entry: an abbreviation code runs to the end of its unit", maxNulls)
		return nil, r.err
	}
	return e, nil
}

// Seek moves to the entry at off, as dwarf.Reader.Seek does.
func (r *Reader) Seek(off dwarf.Offset) {
	r.Reader.Seek(off)
	r.nulls, r.err = 0, nil
}
