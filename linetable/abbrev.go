package linetable

import (
	"debug/dwarf"
	"sort"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/elfx"
)

// implicitDeclFiles finds the DIEs whose DW_AT_decl_file has the form
// DW_FORM_implicit_const (DWARF 5, section 7.5.3: the value lives in the
// abbreviation): LLVM 22's symbolizer reads no file name from such an
// attribute (GCC 12 writes most decl_file attributes this way), and
// Scope.DeclFile reproduces that.
type implicitDeclFiles struct {
	info, abbrev []byte
	units        []unitHeader // by offset
	tables       map[uint64]map[uint64]bool
}

type unitHeader struct {
	off, end  uint64 // the unit's extent in .debug_info
	abbrevOff uint64
}

const (
	attrDeclFile      = 0x3a
	formImplicitConst = 0x21
)

func newImplicitDeclFiles(f *elfx.File) (*implicitDeclFiles, error) {
	x := &implicitDeclFiles{tables: make(map[uint64]map[uint64]bool)}
	var err error
	if x.info, _, err = f.SectionData(".debug_info"); err != nil {
		return nil, err
	}
	if x.abbrev, _, err = f.SectionData(".debug_abbrev"); err != nil {
		return nil, err
	}
	c := cursor.New(".debug_info", 0, x.info)
	for !c.Done() {
		off := uint64(c.Offset())
		n := uint64(c.U32())
		dwarf64 := n == 0xffffffff
		if dwarf64 {
			n = c.U64()
		}
		if c.Err() != nil || n > uint64(c.Len()) {
			break
		}
		end := uint64(c.Offset()) + n
		u := c.Sub(int(n))
		h := unitHeader{off: off, end: end}
		v := u.U16()
		if v >= 5 {
			u.U8() // unit_type
			u.U8() // address_size
		}
		if dwarf64 {
			h.abbrevOff = u.U64()
		} else {
			h.abbrevOff = uint64(u.U32())
		}
		if u.Err() == nil {
			x.units = append(x.units, h)
		}
	}
	return x, nil
}

// implicit reports whether the DIE at off has a DW_AT_decl_file of form
// DW_FORM_implicit_const.
func (x *implicitDeclFiles) implicit(off dwarf.Offset) bool {
	if x == nil {
		return false
	}
	o := uint64(off)
	i := sort.Search(len(x.units), func(i int) bool { return x.units[i].end > o })
	if i == len(x.units) || o < x.units[i].off || o >= uint64(len(x.info)) {
		return false
	}
	code, n := cursor.DecodeULEB128(x.info[o:])
	if n <= 0 {
		return false
	}
	return x.table(x.units[i].abbrevOff)[code]
}

// table reads the abbreviation table at off: per code, whether
// DW_AT_decl_file is DW_FORM_implicit_const.
func (x *implicitDeclFiles) table(off uint64) map[uint64]bool {
	if t, ok := x.tables[off]; ok {
		return t
	}
	t := make(map[uint64]bool)
	x.tables[off] = t
	if off >= uint64(len(x.abbrev)) {
		return t
	}
	c := cursor.New(".debug_abbrev", int64(off), x.abbrev[off:])
	for c.Err() == nil {
		code := c.ULEB128()
		if code == 0 {
			break
		}
		c.ULEB128() // tag
		c.U8()      // children
		for c.Err() == nil {
			attr, form := c.ULEB128(), c.ULEB128()
			if attr == 0 && form == 0 {
				break
			}
			if form == formImplicitConst {
				c.SLEB128()
				if attr == attrDeclFile {
					t[code] = true
				}
			}
		}
	}
	return t
}
