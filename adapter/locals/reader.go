// Package locals reads the arguments and local variables of a C frame
// from DWARF, with registers and memory the caller supplies: what Delve's
// pkg/proc does for a frame it knows the function of, for frames in moved
// code, which Delve 1.27 knows no function for (its function table keeps
// only each subprogram's first DW_AT_ranges entry, so "args" says "unable
// to find function context").
//
// It uses Delve's own DWARF packages — godwarf for the subprogram tree and
// types, reader for the variables visible at a PC, op for location
// expressions, loclist for location lists (DWARF 2-4 .debug_loc, DWARF 5
// .debug_loclists) — and builds the api.Variable values Delve would send
// for the same C types, so a frame in moved code reads as one in the entry
// fragment does. Beyond Delve it evaluates DW_OP_entry_value (DWARF 5
// section 2.5.1.7, and its GNU form) from the caller's call-site
// parameters, as gdb does, and shows enumerations by name.
package locals

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"

	"github.com/splitdbg/splitdbg/internal/addrindex"
	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/elfx"
)

// A Reader reads the variables of frames of one ELF file.
type Reader struct {
	d     *dwarf.Data
	units []unit        // by offset
	dir   addrindex.Dir // over the units' starts
	// The location list sections and .debug_addr, nil when absent.
	loc, loclists, addr []byte
	bo                  binary.ByteOrder

	mu    sync.Mutex // guards the caches
	types map[dwarf.Offset]godwarf.Type
	trees map[dwarf.Offset]*godwarf.Tree
	files map[dwarf.Offset][]*dwarf.LineFile // by unit

	symOnce sync.Once // builds syms
	syms    *symbols
	symErr  error
}

// unit is one compilation unit of .debug_info.
type unit struct {
	start, end dwarf.Offset // the unit, header included
	version    uint16
	lowPC      uint64 // the base address of its location lists
	addrBase   uint64 // DW_AT_addr_base (DWARF 5), 0 if none
	locBase    uint64 // DW_AT_loclists_base (DWARF 5), 0 if none
}

// New returns a Reader for the DWARF of f.
func New(f *elfx.File) (*Reader, error) {
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("locals: %w", err)
	}
	if d == nil {
		return nil, fmt.Errorf("locals: %s has no DWARF", f.Name)
	}
	info, _, err := f.SectionData(".debug_info")
	if err != nil {
		return nil, fmt.Errorf("locals: %w", err)
	}
	r := &Reader{d: d, bo: f.ByteOrder, types: make(map[dwarf.Offset]godwarf.Type), trees: make(map[dwarf.Offset]*godwarf.Tree), files: make(map[dwarf.Offset][]*dwarf.LineFile)}
	if r.units, err = readUnits(info, f.ByteOrder); err != nil {
		return nil, err
	}
	r.dir = addrindex.NewDir(len(r.units), r.unitStart)
	if err := r.readUnitBases(); err != nil {
		return nil, err
	}
	for name, dst := range map[string]*[]byte{".debug_loc": &r.loc, ".debug_loclists": &r.loclists, ".debug_addr": &r.addr} {
		if *dst, _, err = f.SectionData(name); err != nil {
			return nil, fmt.Errorf("locals: %w", err)
		}
	}
	return r, nil
}

// readUnits reads the unit headers of .debug_info: where each unit lies
// and its DWARF version (DWARF 5 section 7.5.1), which decides the
// location list format. debug/dwarf keeps the version to itself.
func readUnits(info []byte, bo binary.ByteOrder) ([]unit, error) {
	c := cursor.New(".debug_info", 0, info)
	c.SetByteOrder(bo)
	var units []unit
	for !c.Done() {
		start := c.Offset()
		n := uint64(c.U32())
		if n == 0xffffffff {
			n = c.U64()
		}
		if c.Err() != nil {
			break
		}
		if n < 2 || n > uint64(c.Len()) {
			return nil, fmt.Errorf("locals: %w", cursor.Errorf(".debug_info", start, cursor.ErrTruncated, "unit length %d exceeds the section", n))
		}
		body := c.Sub(int(n))
		units = append(units, unit{start: dwarf.Offset(start), end: dwarf.Offset(c.Offset()), version: body.U16()})
	}
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("locals: %w", err)
	}
	return units, nil
}

// readUnitBases reads each unit's base address and DW_AT_addr_base from
// its root entry.
func (r *Reader) readUnitBases() error {
	rd := dies.NewReader(r.d)
	for {
		e, err := rd.Next()
		if err != nil {
			return fmt.Errorf("locals: %w", err)
		}
		if e == nil {
			return nil
		}
		if u := r.unitOf(e.Offset); u != nil {
			u.lowPC, _ = e.Val(dwarf.AttrLowpc).(uint64)
			if b, ok := e.Val(dwarf.AttrAddrBase).(int64); ok {
				u.addrBase = uint64(b)
			}
			if b, ok := e.Val(dwarf.AttrLoclistsBase).(int64); ok {
				u.locBase = uint64(b)
			}
		}
		rd.SkipChildren()
	}
}

// unitOf returns the unit holding the entry at off, nil if none does.
func (r *Reader) unitOf(off dwarf.Offset) *unit {
	if i := r.dir.Find(uint64(off), r.unitStart); i >= 0 && off < r.units[i].end {
		return &r.units[i]
	}
	return nil
}

func (r *Reader) unitStart(i int) uint64 { return uint64(r.units[i].start) }

// tree returns the subprogram at off with its children, in link-time
// addresses.
func (r *Reader) tree(off dwarf.Offset) (*godwarf.Tree, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.trees[off]; ok {
		return t, nil
	}
	t, err := godwarf.LoadTree(off, r.d, 0)
	if err != nil {
		return nil, fmt.Errorf("locals: subprogram at %#x: %w", off, err)
	}
	if t.Tag != dwarf.TagSubprogram {
		return nil, fmt.Errorf("locals: entry at %#x is a %v, not a subprogram", off, t.Tag)
	}
	r.trees[off] = t
	return t, nil
}

// typeAt returns the type whose entry is at off.
func (r *Reader) typeAt(off dwarf.Offset) (godwarf.Type, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return godwarf.ReadType(r.d, 0, off, r.types)
}

// errNoLocation reports a variable with no location at the frame's PC:
// the compiler dropped it there ("optimized out").
var errNoLocation = errors.New("no location at this PC (optimized out)")

// locationExpr returns the location expression of attribute attr of e at
// the link-time address pc, and its description as Delve gives it (see
// api.Variable.LocationExpr; Delve shows runtime PCs, this the link-time
// one).
func (r *Reader) locationExpr(e *godwarf.Tree, attr dwarf.Attr, pc uint64) ([]byte, string, error) {
	switch v := e.Val(attr).(type) {
	case nil:
		return nil, "", fmt.Errorf("no %v attribute", attr)
	case []byte:
		return v, "[block] ", nil
	case int64, uint64: // DW_FORM_sec_offset, DW_FORM_loclistx
		u := r.unitOf(e.Offset)
		if u == nil {
			return nil, "", fmt.Errorf("entry at %#x is in no unit", e.Offset)
		}
		off, err := r.listOffset(u, v)
		if err != nil {
			return nil, "", err
		}
		expr, err := r.findLocation(u, off, pc)
		if err != nil {
			return nil, "", err
		}
		if expr == nil {
			return nil, "", errNoLocation
		}
		return expr, fmt.Sprintf("[%#x:%#x] ", off, pc), nil
	default:
		return nil, "", fmt.Errorf("%v of class %T", attr, v)
	}
}
