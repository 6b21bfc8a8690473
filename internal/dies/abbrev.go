package dies

import (
	"debug/dwarf"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// abbrevTable is one abbreviation table of .debug_abbrev (DWARF 5,
// section 7.5.3), each attribute marked with the Walker's index for it.
type abbrevTable struct {
	abbrevs []abbrev
	attrs   []abbrevAttr
	dense   []int32          // by code: 1 + index in abbrevs, 0 if none; when codes are small
	sparse  map[uint64]int32 // else
}

type abbrev struct {
	tag        uint64
	children   bool
	first, end int32 // its attributes, in attrs
	code       uint64
}

type abbrevAttr struct {
	attr, form uint64
	implicit   int64 // DW_FORM_implicit_const's value
	slot       int8  // index in Walker.attrs, -1 if not asked for
}

func (t *abbrevTable) lookup(code uint64) *abbrev {
	var i int32
	if t.dense != nil {
		if code < uint64(len(t.dense)) {
			i = t.dense[code]
		}
	} else {
		i = t.sparse[code]
	}
	if i == 0 {
		return nil
	}
	return &t.abbrevs[i-1]
}

// table returns the abbreviation table at off, read once per Walker.
func (w *Walker) table(off uint64) (*abbrevTable, error) {
	if t, ok := w.tables[off]; ok {
		return t, nil
	}
	t, err := readAbbrevTable(w.d.secs.Abbrev, off, w.attrs)
	if err != nil {
		return nil, w.d.wrap(err)
	}
	w.tables[off] = t
	return t, nil
}

// readAbbrevTable reads the table at off. A later abbreviation with the
// code of an earlier one replaces it, as in debug/dwarf.
func readAbbrevTable(sec []byte, off uint64, asked []dwarf.Attr) (*abbrevTable, error) {
	if off >= uint64(len(sec)) {
		return nil, cursor.Errorf(".debug_abbrev", int64(off), cursor.ErrCorrupt, "abbreviation table beyond the section (%d bytes)", len(sec))
	}
	c := cursor.New(".debug_abbrev", int64(off), sec[off:])
	t := &abbrevTable{}
	maxCode := uint64(0)
	for {
		code := c.ULEB128()
		if c.Err() != nil {
			return nil, c.Err()
		}
		if code == 0 {
			break
		}
		a := abbrev{code: code, tag: c.ULEB128(), children: c.U8() != 0, first: int32(len(t.attrs))}
		for c.Err() == nil {
			at := abbrevAttr{attr: c.ULEB128(), form: c.ULEB128(), slot: -1}
			if at.attr == 0 && at.form == 0 {
				break
			}
			if at.form == formImplicitConst {
				at.implicit = c.SLEB128()
			}
			for i, x := range asked {
				if uint64(x) == at.attr {
					at.slot = int8(i)
					break
				}
			}
			t.attrs = append(t.attrs, at)
		}
		if c.Err() != nil {
			return nil, c.Err()
		}
		a.end = int32(len(t.attrs))
		t.abbrevs = append(t.abbrevs, a)
		maxCode = max(maxCode, code)
	}
	// A dense index is no larger than a few times the table, whose
	// size the section bounds.
	if maxCode <= 4*uint64(len(t.abbrevs))+64 {
		t.dense = make([]int32, maxCode+1)
		for i, a := range t.abbrevs {
			t.dense[a.code] = int32(i + 1)
		}
	} else {
		t.sparse = make(map[uint64]int32, len(t.abbrevs))
		for i, a := range t.abbrevs {
			t.sparse[a.code] = int32(i + 1)
		}
	}
	return t, nil
}
