package dies

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/elfx"
)

// This file is a walker of debugging information entries that does not
// allocate per entry: an abbreviation-driven decoder of .debug_info
// (DWARF 2 to 5; DWARF 5, sections 7.5.1 to 7.5.6) that yields each
// entry's tag, offset and depth and the values of the few attributes its
// caller asks for, and skips every other attribute by its form. Values
// are decoded lazily: an Entry keeps an attribute's form and raw value,
// and its accessors resolve string, address and range list indices
// through the unit's bases (DW_AT_str_offsets_base, DW_AT_addr_base,
// DW_AT_rnglists_base) when asked.

// Sections are the DWARF sections an entry's values refer to; nil where
// the file has none.
type Sections struct {
	Info, Abbrev, Str, LineStr, StrOffsets, Addr, Ranges, Rnglists []byte
	// ByteOrder is the file's (the ELF header's); nil is little-endian.
	ByteOrder binary.ByteOrder
}

// Data is the DWARF of one file and its units. It is immutable and safe
// for concurrent use; each goroutine walks it with its own Walker.
type Data struct {
	file  string
	secs  Sections
	units []Unit
}

// Unit is a unit header of .debug_info (DWARF 5, section 7.5.1).
type Unit struct {
	Off       uint64 // of the header
	End       uint64 // of the unit's last byte + 1
	entries   uint64 // of the first entry
	Version   uint16
	Type      uint8 // DW_UT_*, DW_UT_compile before DWARF 5
	AddrSize  uint8
	Dwarf64   bool
	AbbrevOff uint64
}

// Load reads the DWARF sections of f; nil and no error if f has no
// .debug_info (or .zdebug_info, the older GNU compression).
func Load(f *elfx.File) (*Data, error) {
	secs := Sections{ByteOrder: f.ByteOrder}
	for _, x := range []struct {
		name string
		dst  *[]byte
	}{
		{"info", &secs.Info}, {"abbrev", &secs.Abbrev}, {"str", &secs.Str}, {"line_str", &secs.LineStr},
		{"str_offsets", &secs.StrOffsets}, {"addr", &secs.Addr},
		{"ranges", &secs.Ranges}, {"rnglists", &secs.Rnglists},
	} {
		b, err := sectionData(f, x.name)
		if err != nil {
			return nil, err
		}
		if x.name == "info" && b == nil {
			return nil, nil
		}
		*x.dst = b
	}
	return New(f.Name, secs)
}

// sectionData returns the contents of .debug_NAME, or of .zdebug_NAME
// (the GNU compression before SHF_COMPRESSED, which debug/elf undoes).
func sectionData(f *elfx.File, name string) ([]byte, error) {
	b, s, err := f.SectionData(".debug_" + name)
	if err != nil || s != nil {
		return b, err
	}
	b, _, err = f.SectionData(".zdebug_" + name)
	return b, err
}

// New reads the unit headers of secs.Info; file names the file in
// errors.
func New(file string, secs Sections) (*Data, error) {
	if secs.ByteOrder == nil {
		secs.ByteOrder = binary.LittleEndian
	}
	d := &Data{file: file, secs: secs}
	c := cursor.New(".debug_info", 0, secs.Info)
	c.SetByteOrder(secs.ByteOrder)
	for !c.Done() {
		u, err := readUnitHeader(c)
		if err != nil {
			return nil, d.wrap(err)
		}
		d.units = append(d.units, u)
	}
	return d, nil
}

func (d *Data) wrap(err error) error { return fmt.Errorf("%s: %w", d.file, err) }

// Unit types (DWARF 5, section 7.5.1).
const (
	utCompile      = 1
	utType         = 2
	utSkeleton     = 4
	utSplitCompile = 5
	utSplitType    = 6
)

func readUnitHeader(c *cursor.Cursor) (Unit, error) {
	u := Unit{Off: uint64(c.Offset()), Type: utCompile}
	n := uint64(c.U32())
	if n == 0xffffffff {
		u.Dwarf64 = true
		n = c.U64()
	} else if n >= 0xfffffff0 {
		return u, c.FailAt(int64(u.Off), cursor.ErrCorrupt, "reserved unit length %#x", n)
	}
	if c.Err() != nil {
		return u, c.Err()
	}
	if n > uint64(c.Len()) {
		return u, c.FailAt(int64(u.Off), cursor.ErrTruncated, "unit length %d with %d bytes left", n, c.Len())
	}
	u.End = uint64(c.Offset()) + n
	h := c.Sub(int(n))
	u.Version = h.U16()
	switch {
	case h.Err() != nil:
	case u.Version < 2 || u.Version > 5:
		return u, h.FailAt(int64(u.Off), cursor.ErrUnsupportedVersion, "unit version %d", u.Version)
	case u.Version == 5:
		u.Type = h.U8()
		u.AddrSize = h.U8()
		u.AbbrevOff = h.Uint(offSize(u.Dwarf64))
		switch u.Type {
		case utSkeleton, utSplitCompile:
			h.Skip(8) // dwo_id
		case utType, utSplitType:
			h.Skip(8 + offSize(u.Dwarf64)) // type_signature, type_offset
		}
	default:
		u.AbbrevOff = h.Uint(offSize(u.Dwarf64))
		u.AddrSize = h.U8()
	}
	if h.Err() != nil {
		return u, h.Err()
	}
	switch u.AddrSize {
	case 2, 4, 8:
	default:
		return u, h.FailAt(int64(u.Off), cursor.ErrCorrupt, "address size %d", u.AddrSize)
	}
	u.entries = uint64(h.Offset())
	return u, nil
}

func offSize(dwarf64 bool) int {
	if dwarf64 {
		return 8
	}
	return 4
}

// Units returns the units in .debug_info order. The slice is shared:
// callers must not modify it.
func (d *Data) Units() []Unit { return d.units }

// unitAt returns the index of the unit holding off, or -1.
func (d *Data) unitAt(off uint64) int {
	i := sort.Search(len(d.units), func(i int) bool { return d.units[i].End > off })
	if i == len(d.units) || off < d.units[i].entries {
		return -1
	}
	return i
}

// maxAttrs is how many attributes a Walker can be asked for.
const maxAttrs = 32

// Walker walks the entries of one unit at a time, decoding the
// attributes it was made for. The Entry it returns is reused by its next
// call.
type Walker struct {
	d      *Data
	attrs  []dwarf.Attr
	tables map[uint64]*abbrevTable

	unit      int // index in d.units, -1 before Reset
	u         *Unit
	tab       *abbrevTable
	bases     bases
	basesRead bool          // the unit's entry has been decoded
	c         cursor.Cursor // the unit's entries
	depth     int
	e         Entry
	err       error

	slotLow, slotHigh, slotRanges int // see Entry.Ranges; maxAttrs if not asked for
}

// bases are what a unit's entry says of the unit as a whole.
type bases struct {
	strOffsets, addr, rnglists       uint64
	hasStrOffsets, hasAddr, hasRngls bool
	low, entry                       value // DW_AT_low_pc, DW_AT_entry_pc
}

// Entry is a debugging information entry and the values of the
// attributes its Walker decodes.
type Entry struct {
	Offset   dwarf.Offset
	Tag      dwarf.Tag
	Depth    int // 0 for the unit's entry
	Children bool
	sibling  uint64 // DW_AT_sibling, 0 if absent
	has      uint32 // bit i: attrs[i] is present
	vals     [maxAttrs]value
	w        *Walker
}

// value is an attribute's form and raw value: a number, a unit-relative
// reference made absolute, an index, or the bytes of a block or inline
// string.
type value struct {
	form uint64
	u    uint64
	b    []byte
}

// NewWalker returns a walker decoding attrs (at most 32); Entry's
// accessors take an index into attrs.
func (d *Data) NewWalker(attrs ...dwarf.Attr) *Walker {
	if len(attrs) > maxAttrs {
		panic("dies: more than 32 attributes asked for")
	}
	w := &Walker{d: d, attrs: attrs, tables: make(map[uint64]*abbrevTable), unit: -1}
	w.e.w = w
	w.c.SetByteOrder(d.secs.ByteOrder) // Reset keeps it
	w.slots()
	return w
}

// Reset positions w at the entry of the i-th unit of Units.
func (w *Walker) Reset(i int) {
	u := &w.d.units[i]
	w.unit, w.u, w.err, w.depth = i, u, nil, 0
	w.bases, w.basesRead = bases{}, false
	w.c.Reset(".debug_info", int64(u.entries), w.d.secs.Info[u.entries:u.End])
	w.tab, w.err = w.table(u.AbbrevOff)
}

// Unit returns the unit w walks.
func (w *Walker) Unit() *Unit { return w.u }

// Next returns the next entry of the unit, nil at its end, or an error
// for malformed DWARF (which it keeps returning). A null entry ending a
// list of children is not returned: Depth tells where an entry lies.
func (w *Walker) Next() (*Entry, error) {
	if w.err != nil {
		return nil, w.err
	}
	for {
		if w.c.Len() == 0 {
			return nil, nil
		}
		if !w.decode(&w.e, true) {
			return nil, w.err
		}
		if w.e.Tag != 0 {
			return &w.e, nil
		}
	}
}

// SkipChildren moves past the children of the entry Next returned last:
// to its DW_AT_sibling where given, else past the null entry ending
// them.
func (w *Walker) SkipChildren() {
	e := &w.e
	if w.err != nil || !e.Children || e.Tag == 0 {
		return
	}
	if s := e.sibling; s > uint64(w.c.Offset()) && s <= w.u.End && s >= w.u.entries {
		w.c.Reset(".debug_info", int64(s), w.d.secs.Info[s:w.u.End])
		w.depth = e.Depth
		return
	}
	var scratch Entry
	scratch.w = w
	for w.depth > e.Depth && w.c.Len() > 0 {
		if !w.decode(&scratch, false) {
			return
		}
	}
}

// EntryAt returns the entry at off, in whichever unit holds it, and
// leaves w walking from there (Depth counted from that entry).
func (w *Walker) EntryAt(off dwarf.Offset) (*Entry, error) {
	o := uint64(off)
	i := w.d.unitAt(o)
	if i < 0 {
		return nil, w.d.wrap(cursor.Errorf(".debug_info", int64(o), cursor.ErrCorrupt, "reference to an offset in no unit's entries"))
	}
	if i != w.unit || w.err != nil || !w.basesRead {
		w.Reset(i)
		if _, err := w.Next(); err != nil { // the unit's entry: its bases
			return nil, err
		}
	}
	u := w.u
	w.c.Reset(".debug_info", int64(o), w.d.secs.Info[o:u.End])
	w.depth = 0
	e, err := w.Next()
	if err == nil && e == nil {
		err = w.d.wrap(cursor.Errorf(".debug_info", int64(o), cursor.ErrCorrupt, "reference to the end of a unit"))
	}
	return e, err
}

func (w *Walker) fail(off int64, sentinel error, format string, args ...any) bool {
	if w.err == nil {
		w.err = w.d.wrap(cursor.Errorf(".debug_info", off, sentinel, format, args...))
	}
	return false
}

// decode reads one entry into e; keep records the asked-for attributes.
func (w *Walker) decode(e *Entry, keep bool) bool {
	c := &w.c
	off := c.Offset()
	code := c.ULEB128()
	if c.Err() != nil {
		w.err = w.d.wrap(c.Err())
		return false
	}
	e.Offset, e.Depth, e.has, e.sibling = dwarf.Offset(off), w.depth, 0, 0
	if code == 0 {
		e.Tag, e.Children = 0, false
		if w.depth > 0 {
			w.depth--
		}
		return true
	}
	ab := w.tab.lookup(code)
	if ab == nil {
		return w.fail(off, cursor.ErrCorrupt, "abbreviation code %d not in the table at .debug_abbrev+%#x", code, w.u.AbbrevOff)
	}
	e.Tag, e.Children = dwarf.Tag(ab.tag), ab.children
	unitEntry := off == int64(w.u.entries)
	for _, a := range w.tab.attrs[ab.first:ab.end] {
		form := a.form
		v := value{form: form}
		if form == formIndirect {
			if form = c.ULEB128(); form == formIndirect {
				return w.fail(off, cursor.ErrCorrupt, "DW_FORM_indirect naming DW_FORM_indirect")
			}
			v.form = form
		}
		if !w.read(&v, a.implicit) {
			return false
		}
		if a.attr == attrSibling && isRef(v.form) {
			e.sibling = v.u
		}
		if unitEntry {
			w.noteBase(a.attr, &v)
		}
		if keep && a.slot >= 0 {
			e.vals[a.slot] = v
			e.has |= 1 << a.slot
		}
	}
	if c.Err() != nil {
		w.err = w.d.wrap(c.Err())
		return false
	}
	if unitEntry {
		w.basesRead = true
	}
	if ab.children {
		w.depth++
	}
	return true
}

// Attributes and forms the walker itself reads (DWARF 5, sections 7.5.4
// and 7.5.6).
const (
	attrSibling       = 0x01
	attrLowpc         = 0x11
	attrEntrypc       = 0x52
	attrStrOffsetBase = 0x72
	attrAddrBase      = 0x73
	attrRnglistsBase  = 0x74
	attrGNUAddrBase   = 0x2133

	formAddr          = 0x01
	formBlock2        = 0x03
	formBlock4        = 0x04
	formData2         = 0x05
	formData4         = 0x06
	formData8         = 0x07
	formString        = 0x08
	formBlock         = 0x09
	formBlock1        = 0x0a
	formData1         = 0x0b
	formFlag          = 0x0c
	formSdata         = 0x0d
	formStrp          = 0x0e
	formUdata         = 0x0f
	formRefAddr       = 0x10
	formRef1          = 0x11
	formRef2          = 0x12
	formRef4          = 0x13
	formRef8          = 0x14
	formRefUdata      = 0x15
	formIndirect      = 0x16
	formSecOffset     = 0x17
	formExprloc       = 0x18
	formFlagPresent   = 0x19
	formStrx          = 0x1a
	formAddrx         = 0x1b
	formRefSup4       = 0x1c
	formStrpSup       = 0x1d
	formData16        = 0x1e
	formLineStrp      = 0x1f
	formRefSig8       = 0x20
	formImplicitConst = 0x21
	formLoclistx      = 0x22
	formRnglistx      = 0x23
	formRefSup8       = 0x24
	formStrx1         = 0x25
	formStrx2         = 0x26
	formStrx3         = 0x27
	formStrx4         = 0x28
	formAddrx1        = 0x29
	formAddrx2        = 0x2a
	formAddrx3        = 0x2b
	formAddrx4        = 0x2c
	formGNUAddrIndex  = 0x1f01
	formGNUStrIndex   = 0x1f02
	formGNURefAlt     = 0x1f20
	formGNUStrpAlt    = 0x1f21
)

func isRef(form uint64) bool {
	switch form {
	case formRefAddr, formRef1, formRef2, formRef4, formRef8, formRefUdata:
		return true
	}
	return false
}

// read reads the value of form v.form into v.
func (w *Walker) read(v *value, implicit int64) bool {
	c, u := &w.c, w.u
	switch v.form {
	case formAddr:
		v.u = c.Uint(int(u.AddrSize))
	case formBlock1:
		v.b = w.block(uint64(c.U8()))
	case formBlock2:
		v.b = w.block(uint64(c.U16()))
	case formBlock4:
		v.b = w.block(uint64(c.U32()))
	case formBlock, formExprloc:
		v.b = w.block(c.ULEB128())
	case formData1, formFlag, formRef1, formStrx1, formAddrx1:
		v.u = uint64(c.U8())
	case formData2, formRef2, formStrx2, formAddrx2:
		v.u = uint64(c.U16())
	case formStrx3, formAddrx3:
		if b := c.Bytes(3); len(b) == 3 {
			v.u = w.d.uint(b, 3)
		}
	case formData4, formRef4, formStrx4, formAddrx4, formRefSup4:
		v.u = uint64(c.U32())
	case formData8, formRef8, formRefSig8, formRefSup8:
		v.u = c.U64()
	case formData16:
		v.b = c.Bytes(16)
	case formString:
		v.b = c.CString()
	case formSdata:
		v.u = uint64(c.SLEB128())
	case formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx, formGNUAddrIndex, formGNUStrIndex:
		v.u = c.ULEB128()
	case formStrp, formLineStrp, formSecOffset, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		v.u = c.Uint(offSize(u.Dwarf64))
	case formRefAddr:
		if u.Version == 2 {
			v.u = c.Uint(int(u.AddrSize))
		} else {
			v.u = c.Uint(offSize(u.Dwarf64))
		}
	case formFlagPresent:
		v.u = 1
	case formImplicitConst:
		v.u = uint64(implicit)
	default:
		return w.fail(c.Offset(), cursor.ErrCorrupt, "unknown attribute form %#x", v.form)
	}
	switch v.form {
	case formRef1, formRef2, formRef4, formRef8, formRefUdata:
		v.u += u.Off
	}
	return c.Err() == nil || w.fail(c.Offset(), cursor.ErrTruncated, "%v", c.Err())
}

// block reads n bytes, checked against what the unit has left.
func (w *Walker) block(n uint64) []byte {
	if n > uint64(w.c.Len()) {
		w.c.Fail(cursor.ErrTruncated, "block of %d bytes with %d left", n, w.c.Len())
		return nil
	}
	return w.c.Bytes(int(n))
}

// noteBase records what the unit's entry says of the unit.
func (w *Walker) noteBase(attr uint64, v *value) {
	b := &w.bases
	switch attr {
	case attrStrOffsetBase:
		b.strOffsets, b.hasStrOffsets = v.u, true
	case attrAddrBase, attrGNUAddrBase:
		b.addr, b.hasAddr = v.u, true
	case attrRnglistsBase:
		b.rnglists, b.hasRngls = v.u, true
	case attrLowpc:
		b.low = *v
	case attrEntrypc:
		b.entry = *v
	}
}

// base returns the unit's base address for range lists: as debug/dwarf
// takes it, DW_AT_entry_pc if it has one, else DW_AT_low_pc, else 0.
func (w *Walker) base() uint64 {
	if a, ok := w.address(&w.bases.entry); ok {
		return a
	}
	a, _ := w.address(&w.bases.low)
	return a
}

// address resolves an address-class value.
func (w *Walker) address(v *value) (uint64, bool) {
	switch v.form {
	case formAddr:
		return v.u, true
	case formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4, formGNUAddrIndex:
		a, ok := w.debugAddr(v.u)
		if !ok {
			w.failLazy(".debug_addr", int64(w.bases.addr), "address index %d beyond the section (%d bytes)", v.u, len(w.d.secs.Addr))
		}
		return a, ok
	}
	return 0, false
}

// debugAddr returns entry i of the unit's .debug_addr table.
func (w *Walker) debugAddr(i uint64) (uint64, bool) {
	size := uint64(w.u.AddrSize)
	sec := w.d.secs.Addr
	off := w.bases.addr + i*size
	if i > uint64(len(sec)) || off < w.bases.addr || off+size > uint64(len(sec)) {
		return 0, false
	}
	return w.d.uint(sec[off:], int(size)), true
}

// failLazy records an error found while resolving a value: Next returns
// it.
func (w *Walker) failLazy(section string, off int64, format string, args ...any) {
	if w.err == nil {
		w.err = w.d.wrap(cursor.Errorf(section, off, cursor.ErrCorrupt, format, args...))
	}
}

// uint reads an n-byte integer (2, 3, 4 or 8) in the file's byte order
// (DW_FORM_strx3 and DW_FORM_addrx3 too, DWARF 5, section 7.5.6).
func (d *Data) uint(b []byte, n int) uint64 {
	o := d.secs.ByteOrder
	switch n {
	case 2:
		return uint64(o.Uint16(b))
	case 3:
		if o == binary.BigEndian {
			return uint64(b[0])<<16 | uint64(b[1])<<8 | uint64(b[2])
		}
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16
	case 4:
		return uint64(o.Uint32(b))
	}
	return o.Uint64(b)
}

// Err returns the error that ended the walk, if any: a malformed entry,
// or a value an accessor could not resolve.
func (w *Walker) Err() error { return w.err }

// Has reports whether the entry has attribute i.
func (e *Entry) Has(i int) bool { return i >= 0 && i < maxAttrs && e.has&(1<<i) != 0 }

// form returns the form of attribute i, 0 if absent.
func (e *Entry) form(i int) uint64 {
	if !e.Has(i) {
		return 0
	}
	return e.vals[i].form
}

// IsImplicitConst reports whether attribute i has the form
// DW_FORM_implicit_const (its value lives in the abbreviation).
func (e *Entry) IsImplicitConst(i int) bool { return e.form(i) == formImplicitConst }

// Int returns attribute i as a constant (DWARF 5, section 7.5.5, class
// constant), as debug/dwarf reads it: data forms unsigned, sdata and
// implicit_const signed.
func (e *Entry) Int(i int) (int64, bool) {
	if !e.Has(i) {
		return 0, false
	}
	switch v := &e.vals[i]; v.form {
	case formData1, formData2, formData4, formData8, formUdata, formSdata, formImplicitConst:
		return int64(v.u), true
	}
	return 0, false
}

// SecOffset returns attribute i as an offset into another section
// (DW_FORM_sec_offset, or before DWARF 4 data4/data8).
func (e *Entry) SecOffset(i int) (uint64, bool) {
	if !e.Has(i) {
		return 0, false
	}
	switch v := &e.vals[i]; v.form {
	case formSecOffset, formData4, formData8:
		return v.u, true
	}
	return 0, false
}

// Ref returns attribute i as the .debug_info offset of the entry it
// refers to.
func (e *Entry) Ref(i int) (dwarf.Offset, bool) {
	if !e.Has(i) || !isRef(e.vals[i].form) {
		return 0, false
	}
	return dwarf.Offset(e.vals[i].u), true
}

// Addr returns attribute i as an address, resolving an index into
// .debug_addr.
func (e *Entry) Addr(i int) (uint64, bool) {
	if !e.Has(i) {
		return 0, false
	}
	return e.w.address(&e.vals[i])
}

// AddrIndex returns entry i of the unit's .debug_addr table, at its
// DW_AT_addr_base, as DW_OP_addrx names it (DWARF 5, section 2.5.1.1).
func (e *Entry) AddrIndex(i uint64) (uint64, bool) { return e.w.debugAddr(i) }

// Block returns attribute i as the bytes of a block or expression.
func (e *Entry) Block(i int) ([]byte, bool) {
	if !e.Has(i) {
		return nil, false
	}
	switch v := &e.vals[i]; v.form {
	case formBlock, formBlock1, formBlock2, formBlock4, formExprloc:
		return v.b, true
	}
	return nil, false
}

// StringBytes returns attribute i as a string's bytes, within the
// section that holds it (callers must not modify them).
func (e *Entry) StringBytes(i int) ([]byte, bool) {
	if !e.Has(i) {
		return nil, false
	}
	w := e.w
	v := &e.vals[i]
	switch v.form {
	case formString:
		return v.b, true
	case formStrp:
		return w.cstring(".debug_str", w.d.secs.Str, v.u)
	case formLineStrp:
		return w.cstring(".debug_line_str", w.d.secs.LineStr, v.u)
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4, formGNUStrIndex:
		size := uint64(offSize(w.u.Dwarf64))
		sec := w.d.secs.StrOffsets
		off := w.bases.strOffsets + v.u*size
		if v.u > uint64(len(sec)) || off < w.bases.strOffsets || off+size > uint64(len(sec)) {
			w.failLazy(".debug_str_offsets", int64(off), "string index %d beyond the section (%d bytes)", v.u, len(sec))
			return nil, false
		}
		return w.cstring(".debug_str", w.d.secs.Str, w.d.uint(sec[off:], int(size)))
	}
	return nil, false
}

// String is StringBytes as a string.
func (e *Entry) String(i int) (string, bool) {
	b, ok := e.StringBytes(i)
	return string(b), ok
}

func (w *Walker) cstring(name string, sec []byte, off uint64) ([]byte, bool) {
	if off >= uint64(len(sec)) {
		w.failLazy(name, int64(off), "string offset beyond the section (%d bytes)", len(sec))
		return nil, false
	}
	s := sec[off:]
	for i, b := range s {
		if b == 0 {
			return s[:i], true
		}
	}
	w.failLazy(name, int64(off), "string without its NUL")
	return nil, false
}
