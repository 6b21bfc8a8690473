package dies

import (
	"debug/dwarf"
	"errors"
	"slices"
	"testing"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// stuckUnit is a DWARF 4 unit of a childless compile unit entry followed
// by the byte 0x80: an abbreviation code that runs to the end of the
// unit.
func stuckUnit(t *testing.T) *dwarf.Data {
	abbrev := []byte{1, 0x11, 0, 0, 0, 0} // 1: DW_TAG_compile_unit, no children, no attributes
	info := []byte{
		9, 0, 0, 0, // unit_length
		4, 0, // version
		0, 0, 0, 0, // debug_abbrev_offset
		8,    // address_size
		1,    // the compile unit
		0x80, // an unterminated ULEB128
	}
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStuckUnit(t *testing.T) {
	r := NewReader(stuckUnit(t))
	e, err := r.Next()
	if err != nil || e == nil || e.Tag != dwarf.TagCompileUnit {
		t.Fatalf("first entry = %v, %v; want the compile unit", e, err)
	}
	var n int
	for n = 0; n <= 2*maxNulls; n++ {
		if e, err = r.Next(); err != nil || e == nil {
			break
		}
	}
	var de *cursor.DecodeError
	if !errors.As(err, &de) || de.Section != ".debug_info" || de.Offset != 0xb || !errors.Is(err, cursor.ErrCorrupt) {
		t.Fatalf("after %d entries: %v, %v; want a corrupt .debug_info+0xb", n, e, err)
	}
	if _, err2 := r.Next(); err2 != err {
		t.Errorf("Next after the error = %v, want it again", err2)
	}
}

// TestWellFormed walks a unit with children to its end: null entries
// that end lists are returned as debug/dwarf returns them.
func TestWellFormed(t *testing.T) {
	abbrev := []byte{
		1, 0x11, 1, 0, 0, // 1: DW_TAG_compile_unit, children
		2, 0x24, 0, 0, 0, // 2: DW_TAG_base_type
		0,
	}
	info := []byte{11, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1, 2, 2, 0}
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(d)
	var tags []dwarf.Tag
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		tags = append(tags, e.Tag)
	}
	if want := []dwarf.Tag{dwarf.TagCompileUnit, dwarf.TagBaseType, dwarf.TagBaseType, 0}; !slices.Equal(tags, want) {
		t.Errorf("tags = %v, want %v", tags, want)
	}
}
