package locals

import (
	"fmt"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// findLocation returns the expression of the location list at off that
// covers the link-time address pc, nil if none does. Units of DWARF 2-4
// use .debug_loc (DWARF 4 section 2.6.2), DWARF 5 units .debug_loclists
// (DWARF 5 section 2.6.2 and 7.7.3). Delve's pkg/dwarf/loclist reads the
// same lists but slices past the end of a malformed one.
func (r *Reader) findLocation(u *unit, off, pc uint64) ([]byte, error) {
	if u.version >= 5 {
		return r.findLocLists(u, off, pc)
	}
	c, err := r.listCursor(".debug_loc", r.loc, off)
	if err != nil {
		return nil, err
	}
	base := u.lowPC
	for !c.Done() {
		lo, hi := c.U64(), c.U64()
		switch {
		case c.Err() != nil:
		case lo == 0 && hi == 0:
			return nil, nil
		case lo == ^uint64(0):
			base = hi
		default:
			expr := c.Bytes(int(c.U16()))
			if c.Err() == nil && base+lo <= pc && pc < base+hi {
				return expr, nil
			}
		}
	}
	return nil, fmt.Errorf("locals: %w", c.Err())
}

// listOffset returns the offset of a location list given by attribute
// value v: a section offset (int64), or an index (uint64, DW_FORM_loclistx)
// into the unit's table of offsets at DW_AT_loclists_base, relative to it
// (DWARF 5 section 7.29).
func (r *Reader) listOffset(u *unit, v any) (uint64, error) {
	switch v := v.(type) {
	case int64:
		return uint64(v), nil
	case uint64:
		at := u.locBase + 4*v
		if v >= uint64(len(r.loclists))/4 || at+4 > uint64(len(r.loclists)) {
			return 0, fmt.Errorf("locals: %w", cursor.Errorf(".debug_loclists", int64(u.locBase), cursor.ErrCorrupt, "location list index %d beyond the section", v))
		}
		return u.locBase + uint64(r.bo.Uint32(r.loclists[at:])), nil
	}
	return 0, fmt.Errorf("location list reference of type %T", v)
}

// listCursor returns a cursor on the location list at off in section
// name, whose contents are data (nil when the file has no such section).
func (r *Reader) listCursor(name string, data []byte, off uint64) (*cursor.Cursor, error) {
	if data == nil {
		return nil, fmt.Errorf("location list at %#x: no %s section", off, name)
	}
	if off >= uint64(len(data)) {
		return nil, fmt.Errorf("locals: %w", cursor.Errorf(name, int64(off), cursor.ErrTruncated, "location list offset beyond the section"))
	}
	c := cursor.New(name, int64(off), data[off:])
	c.SetByteOrder(r.bo)
	return c, nil
}

// DW_LLE_* (DWARF 5 section 7.7.3).
const (
	lleEndOfList = iota
	lleBaseAddressx
	lleStartxEndx
	lleStartxLength
	lleOffsetPair
	lleDefaultLocation
	lleBaseAddress
	lleStartEnd
	lleStartLength
)

func (r *Reader) findLocLists(u *unit, off, pc uint64) ([]byte, error) {
	c, err := r.listCursor(".debug_loclists", r.loclists, off)
	if err != nil {
		return nil, err
	}
	base := u.lowPC
	var deflt []byte
	for !c.Done() {
		at := c.Offset()
		var lo, hi uint64
		kind := c.U8()
		switch kind {
		case lleEndOfList:
			return deflt, nil
		case lleBaseAddressx:
			base = r.debugAddr(c, u, c.ULEB128())
			continue
		case lleStartxEndx:
			lo = r.debugAddr(c, u, c.ULEB128())
			hi = r.debugAddr(c, u, c.ULEB128())
		case lleStartxLength:
			lo = r.debugAddr(c, u, c.ULEB128())
			hi = lo + c.ULEB128()
		case lleOffsetPair:
			lo, hi = base+c.ULEB128(), base+c.ULEB128()
		case lleDefaultLocation:
		case lleBaseAddress:
			base = c.U64()
			continue
		case lleStartEnd:
			lo, hi = c.U64(), c.U64()
		case lleStartLength:
			lo = c.U64()
			hi = lo + c.ULEB128()
		default:
			c.FailAt(at, cursor.ErrCorrupt, "unknown location list entry kind %#x", kind)
			continue
		}
		expr := c.Bytes(c.CheckCount(c.ULEB128(), 1, "expression bytes"))
		switch {
		case c.Err() != nil:
		case kind == lleDefaultLocation:
			deflt = expr
		case lo <= pc && pc < hi:
			return expr, nil
		}
	}
	return nil, fmt.Errorf("locals: %w", c.Err())
}

// debugAddr returns entry i of the unit's .debug_addr table; a bad index
// fails c.
func (r *Reader) debugAddr(c *cursor.Cursor, u *unit, i uint64) uint64 {
	off := u.addrBase + 8*i
	if i >= uint64(len(r.addr))/8 || off+8 > uint64(len(r.addr)) {
		c.Fail(cursor.ErrCorrupt, "address index %d beyond .debug_addr", i)
		return 0
	}
	return r.bo.Uint64(r.addr[off:])
}
