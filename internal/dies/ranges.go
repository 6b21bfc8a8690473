package dies

import (
	"debug/dwarf"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// Range list entry kinds of .debug_rnglists (DWARF 5, section 7.25).
const (
	rleEndOfList    = 0
	rleBaseAddressx = 1
	rleStartxEndx   = 2
	rleStartxLength = 3
	rleOffsetPair   = 4
	rleBaseAddress  = 5
	rleStartEnd     = 6
	rleStartLength  = 7
)

// Ranges appends to dst the address ranges of e (DWARF 5, section 2.17)
// as debug/dwarf's Data.Ranges computes them: [DW_AT_low_pc,
// DW_AT_high_pc) if both are present, then the ranges of DW_AT_ranges
// (.debug_ranges before DWARF 5, .debug_rnglists from DWARF 5 on, based
// at the unit's base address). Its walker must have been asked for
// dwarf.AttrLowpc, dwarf.AttrHighpc and dwarf.AttrRanges. On an error it
// returns dst unextended.
func (e *Entry) Ranges(dst [][2]uint64) ([][2]uint64, error) {
	w := e.w
	n := len(dst)
	low, lowOK := e.Addr(w.slotLow)
	if lowOK && e.Has(w.slotHigh) {
		if hi, ok := e.Addr(w.slotHigh); ok {
			dst = append(dst, [2]uint64{low, hi})
		} else if d, ok := e.Int(w.slotHigh); ok {
			dst = append(dst, [2]uint64{low, low + uint64(d)})
		}
	}
	if w.err != nil {
		return dst[:n], w.err
	}
	if !e.Has(w.slotRanges) {
		return dst, nil
	}
	v := &e.vals[w.slotRanges]
	var err error
	if w.u.Version >= 5 {
		if w.d.secs.Rnglists == nil {
			return dst, nil
		}
		switch v.form {
		case formSecOffset:
			dst, err = w.rnglist(dst, v.u)
		case formRnglistx:
			var off uint64
			if off, err = w.rnglistx(v.u); err == nil {
				dst, err = w.rnglist(dst, off)
			}
		}
	} else if off, ok := e.Int(w.slotRanges); ok || v.form == formSecOffset {
		if !ok {
			off = int64(v.u)
		}
		if w.d.secs.Ranges != nil {
			dst, err = w.ranges(dst, uint64(off))
		}
	}
	if err != nil {
		return dst[:n], err
	}
	return dst, nil
}

func (w *Walker) rangeErr(section string, off uint64, sentinel error, format string, args ...any) error {
	return w.d.wrap(cursor.Errorf(section, int64(off), sentinel, format, args...))
}

// rnglistx returns the offset of range list i of the unit: the table of
// offsets at DW_AT_rnglists_base holds it, relative to that base.
func (w *Walker) rnglistx(i uint64) (uint64, error) {
	sec := w.d.secs.Rnglists
	size := uint64(offSize(w.u.Dwarf64))
	base := w.bases.rnglists
	off := base + i*size
	if i > uint64(len(sec)) || off < base || off+size > uint64(len(sec)) {
		return 0, w.rangeErr(".debug_rnglists", off, cursor.ErrCorrupt, "range list index %d beyond the section (%d bytes)", i, len(sec))
	}
	return base + w.d.uint(sec[off:], int(size)), nil
}

// rnglist appends the ranges of the DWARF 5 range list at off.
func (w *Walker) rnglist(dst [][2]uint64, off uint64) ([][2]uint64, error) {
	sec := w.d.secs.Rnglists
	if off > uint64(len(sec)) {
		return dst, w.rangeErr(".debug_rnglists", off, cursor.ErrCorrupt, "range list beyond the section (%d bytes)", len(sec))
	}
	var c cursor.Cursor
	c.SetByteOrder(w.d.secs.ByteOrder)
	c.Reset(".debug_rnglists", int64(off), sec[off:])
	size := int(w.u.AddrSize)
	base := w.base()
	addr := func(i uint64) uint64 {
		a, ok := w.debugAddr(i)
		if !ok {
			c.Fail(cursor.ErrCorrupt, "address index %d beyond .debug_addr", i)
		}
		return a
	}
	for c.Err() == nil {
		switch kind := c.U8(); kind {
		case rleEndOfList:
			if c.Err() != nil {
				break
			}
			return dst, nil
		case rleBaseAddressx:
			base = addr(c.ULEB128())
		case rleStartxEndx:
			s, e := c.ULEB128(), c.ULEB128()
			dst = append(dst, [2]uint64{addr(s), addr(e)})
		case rleStartxLength:
			s := addr(c.ULEB128())
			dst = append(dst, [2]uint64{s, s + c.ULEB128()})
		case rleOffsetPair:
			s, e := c.ULEB128(), c.ULEB128()
			dst = append(dst, [2]uint64{base + s, base + e})
		case rleBaseAddress:
			base = c.Uint(size)
		case rleStartEnd:
			s, e := c.Uint(size), c.Uint(size)
			dst = append(dst, [2]uint64{s, e})
		case rleStartLength:
			s := c.Uint(size)
			dst = append(dst, [2]uint64{s, s + c.ULEB128()})
		default:
			// debug/dwarf reads on past a kind it does not know (as in
			// the unrelocated lists of an object file); so does this.
		}
	}
	return dst, w.d.wrap(c.Err())
}

// ranges appends the ranges of the DWARF 2 to 4 range list at off in
// .debug_ranges (DWARF 4, section 2.17.3).
func (w *Walker) ranges(dst [][2]uint64, off uint64) ([][2]uint64, error) {
	sec := w.d.secs.Ranges
	if off > uint64(len(sec)) {
		return dst, w.rangeErr(".debug_ranges", off, cursor.ErrCorrupt, "range list beyond the section (%d bytes)", len(sec))
	}
	var c cursor.Cursor
	c.SetByteOrder(w.d.secs.ByteOrder)
	c.Reset(".debug_ranges", int64(off), sec[off:])
	size := int(w.u.AddrSize)
	sel := ^uint64(0) >> uint((8-size)*8)
	base := w.base()
	for c.Len() > 0 {
		lo, hi := c.Uint(size), c.Uint(size)
		if c.Err() != nil {
			return dst, w.d.wrap(c.Err())
		}
		switch {
		case lo == 0 && hi == 0:
			return dst, nil
		case lo == sel:
			base = hi
		default:
			dst = append(dst, [2]uint64{base + lo, base + hi})
		}
	}
	return dst, nil
}

// slots finds the walker's indices of the attributes Ranges reads.
func (w *Walker) slots() {
	w.slotLow, w.slotHigh, w.slotRanges = maxAttrs, maxAttrs, maxAttrs
	for i, a := range w.attrs {
		switch a {
		case dwarf.AttrLowpc:
			w.slotLow = i
		case dwarf.AttrHighpc:
			w.slotHigh = i
		case dwarf.AttrRanges:
			w.slotRanges = i
		}
	}
}
