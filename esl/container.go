package esl

import (
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"sort"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// TLV tags of the elements in a procedure's chain.
const (
	// TagEnd is the terminal entry of a procedure's chain: the single
	// byte 0x00, with no length and no value.
	TagEnd = 0
	// TagESL is the Extended Source Location element: ULEB128 initial
	// file, ULEB128 initial line, then the program.
	TagESL = 1
)

var magic = [3]byte{'E', 'S', 'L'}

// headerSize is the fixed part of a unit header: magic, version,
// unit_length, pc_unit, addr_width, offset_width, flags.
const headerSize = 12

// maxUnitBody bounds what a Builder puts in one unit, so that unit_length
// fits its 32 bits with room for the header.
const maxUnitBody = math.MaxUint32 - 1<<20

// Builder collects procedures and writes them as one ESL unit. It is not
// safe for concurrent use.
type Builder struct {
	pcUnit int
	files  []string
	fileIx map[string]uint32
	procs  []builtProc
	procIx map[uint64]int
	size   int
}

type builtProc struct {
	entry uint64
	elems []byte // TLV elements, without the terminal entry
	esl   bool
}

// NewBuilder returns a Builder for a unit whose pc deltas count units of
// pcUnit bytes (1 for x86-64, 4 for fixed-width instruction sets).
func NewBuilder(pcUnit int) (*Builder, error) {
	if pcUnit < 1 || pcUnit > 255 {
		return nil, fmt.Errorf("%w: pc unit %d, want 1 to 255", ErrUnencodable, pcUnit)
	}
	return &Builder{pcUnit: pcUnit, fileIx: map[string]uint32{}, procIx: map[uint64]int{}}, nil
}

// File returns the index of name in the unit's file table, adding it if
// it is not there yet.
func (b *Builder) File(name string) uint32 {
	if i, ok := b.fileIx[name]; ok {
		return i
	}
	i := uint32(len(b.files))
	b.files = append(b.files, name)
	b.fileIx[name] = i
	b.size += cursor.ULEB128Len(uint64(len(name))) + len(name)
	return i
}

func (b *Builder) proc(entry uint64) *builtProc {
	i, ok := b.procIx[entry]
	if !ok {
		i = len(b.procs)
		b.procIx[entry] = i
		b.procs = append(b.procs, builtProc{entry: entry})
		b.size += 2*8 + 1
	}
	return &b.procs[i]
}

// Add encodes rows as the ESL element of the procedure whose entry
// address is entry. Row.File indexes the file table built by File. The
// first row's file and line become the procedure header's initial state.
// A procedure has at most one ESL element.
func (b *Builder) Add(entry uint64, rows []Row) error {
	if i, ok := b.procIx[entry]; ok && b.procs[i].esl {
		return fmt.Errorf("%w: procedure %#x already has an ESL element", ErrUnencodable, entry)
	}
	start := Start{Address: entry}
	if len(rows) > 0 {
		start.File, start.Line = rows[0].File, rows[0].Line
	}
	for i := range rows {
		if int(rows[i].File) >= len(b.files) {
			return fmt.Errorf("%w: procedure %#x row %d: file %d not in the %d-file table", ErrUnencodable, entry, i, rows[i].File, len(b.files))
		}
	}
	val := cursor.AppendULEB128(nil, uint64(start.File))
	val = cursor.AppendULEB128(val, uint64(start.Line))
	val, err := AppendProgram(val, b.pcUnit, start, rows)
	if err != nil {
		return fmt.Errorf("procedure %#x: %w", entry, err)
	}
	if err := b.addElement(entry, TagESL, val); err != nil {
		return err
	}
	b.procs[b.procIx[entry]].esl = true
	return nil
}

// AddElement adds a TLV element with another tag to the chain of the
// procedure at entry, for producers of elements this package does not
// interpret; readers skip them. Tags TagEnd and TagESL are refused.
func (b *Builder) AddElement(entry, tag uint64, value []byte) error {
	if tag == TagEnd || tag == TagESL {
		return fmt.Errorf("%w: tag %d is reserved", ErrUnencodable, tag)
	}
	return b.addElement(entry, tag, value)
}

func (b *Builder) addElement(entry, tag uint64, value []byte) error {
	n := cursor.ULEB128Len(tag) + cursor.ULEB128Len(uint64(len(value))) + len(value)
	if b.size+n > maxUnitBody {
		return fmt.Errorf("%w: unit would exceed %d bytes", ErrUnencodable, maxUnitBody)
	}
	b.size += n
	p := b.proc(entry)
	p.elems = cursor.AppendULEB128(p.elems, tag)
	p.elems = cursor.AppendULEB128(p.elems, uint64(len(value)))
	p.elems = append(p.elems, value...)
	return nil
}

// AppendUnit appends the unit holding every procedure added so far.
func (b *Builder) AppendUnit(dst []byte) []byte {
	order := make([]int, len(b.procs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return b.procs[order[i]].entry < b.procs[order[j]].entry })
	var base, span, off uint64
	if len(order) > 0 {
		base = b.procs[order[0]].entry
		span = b.procs[order[len(order)-1]].entry - base
	}
	offs := make([]uint64, len(order))
	for k, i := range order {
		offs[k] = off
		off += uint64(len(b.procs[i].elems)) + 1
	}
	aw := widthOf(span)
	ow := 1
	if len(order) > 0 {
		ow = widthOf(offs[len(offs)-1])
	}

	start := len(dst)
	dst = append(dst, magic[:]...)
	dst = append(dst, Version, 0, 0, 0, 0, byte(b.pcUnit), byte(aw), byte(ow), 0)
	dst = cursor.AppendULEB128(dst, base)
	dst = cursor.AppendULEB128(dst, uint64(len(b.files)))
	for _, f := range b.files {
		dst = cursor.AppendULEB128(dst, uint64(len(f)))
		dst = append(dst, f...)
	}
	dst = cursor.AppendULEB128(dst, uint64(len(order)))
	var le [8]byte
	for k, i := range order {
		binary.LittleEndian.PutUint64(le[:], b.procs[i].entry-base)
		dst = append(dst, le[:aw]...)
		binary.LittleEndian.PutUint64(le[:], offs[k])
		dst = append(dst, le[:ow]...)
	}
	for _, i := range order {
		dst = append(dst, b.procs[i].elems...)
		dst = append(dst, TagEnd)
	}
	binary.LittleEndian.PutUint32(dst[start+4:], uint32(len(dst)-start-8))
	return dst
}

// widthOf returns how many bytes, 1 to 8, hold v.
func widthOf(v uint64) int {
	n := 1
	for v >>= 8; v != 0; v >>= 8 {
		n++
	}
	return n
}

// Table is a parsed ESL section: one or more units, as a linker
// concatenates them. It is immutable and safe for concurrent readers; it
// aliases the section bytes.
type Table struct {
	section string
	units   []unit
	n       int
}

type unit struct {
	pcUnit     int
	files      []string
	base       uint64
	aw, ow     int
	n          int
	index      []byte
	entries    []byte
	entriesOff int64 // section offset of entries[0]
}

// Proc is one procedure of a Table: its ESL program (Start.Address is the
// entry address) and the file table its rows index.
type Proc struct {
	Program
	// Files is the unit's file table, shared by its procedures: do not
	// modify it.
	Files []string
}

// Entry returns the procedure's entry address.
func (p Proc) Entry() uint64 { return p.Start.Address }

// Parse reads the ESL units in data, the contents of a section named
// section (DefaultSection if empty), which errors carry. Every unit header,
// file table and index is checked; programs are checked as they are read.
func Parse(section string, data []byte) (*Table, error) {
	section = sectionName(section)
	t := &Table{section: section}
	for off := 0; off < len(data); {
		c := cursor.New(section, int64(off), data[off:])
		if !c.Need(4, "unit header") {
			return nil, c.Err()
		}
		m := c.Bytes(4)
		if [3]byte(m[:3]) != magic {
			return nil, cursor.Errorf(section, int64(off), cursor.ErrCorrupt, "unit magic %q, want \"ESL\"", m[:3])
		}
		if m[3] != Version {
			return nil, cursor.Errorf(section, int64(off+3), cursor.ErrUnsupportedVersion, "unit version %d, want %d", m[3], Version)
		}
		var n uint64
		if c.Need(4, "unit_length") {
			n = uint64(c.U32())
		}
		if c.Err() == nil && n > uint64(c.Len()) {
			c.FailAt(int64(off+4), cursor.ErrTruncated, "unit_length %d exceeds the %d bytes left", n, c.Len())
		}
		if err := c.Err(); err != nil {
			return nil, err
		}
		end := off + 8 + int(n)
		u, err := parseUnit(section, cursor.New(section, int64(off+8), data[off+8:end]))
		if err != nil {
			return nil, err
		}
		t.units = append(t.units, u)
		t.n += u.n
		off = end
	}
	return t, nil
}

// parseUnit reads a unit of section from c, which holds the unit from
// the header field after unit_length to the unit's end.
func parseUnit(section string, c *cursor.Cursor) (unit, error) {
	var u unit
	u8 := func(what string) int {
		if !c.Need(1, what) {
			return 0
		}
		return int(c.U8())
	}
	pcOff := c.Offset()
	u.pcUnit = u8("pc_unit")
	u.aw = u8("addr_width")
	u.ow = u8("offset_width")
	flags := u8("flags")
	if err := c.Err(); err != nil {
		return u, err
	}
	switch {
	case u.pcUnit == 0:
		return u, c.FailAt(pcOff, cursor.ErrCorrupt, "pc_unit 0")
	case u.aw < 1 || u.aw > 8:
		return u, c.FailAt(pcOff+1, cursor.ErrCorrupt, "addr_width %d", u.aw)
	case u.ow < 1 || u.ow > 8:
		return u, c.FailAt(pcOff+2, cursor.ErrCorrupt, "offset_width %d", u.ow)
	case flags != 0:
		return u, c.FailAt(pcOff+3, cursor.ErrUnsupported, "flags %#02x", flags)
	}
	u.base = c.ULEB128Of("base_address")
	nf := c.Count(1, "file")
	if err := c.Err(); err != nil {
		return u, err
	}
	u.files = make([]string, nf)
	for i := range u.files {
		lenOff := c.Offset()
		l := c.ULEB128Of("file name length")
		if c.Err() == nil && l > uint64(c.Len()) {
			c.FailAt(lenOff, cursor.ErrTruncated, "file name of %d bytes, %d left", l, c.Len())
		}
		u.files[i] = string(c.Bytes(int(l)))
	}
	u.n = c.Count(u.aw+u.ow, "procedure")
	idxOff := c.Offset()
	u.index = c.Bytes(u.n * (u.aw + u.ow))
	if err := c.Err(); err != nil {
		return u, err
	}
	u.entriesOff = c.Offset()
	u.entries = c.Bytes(c.Len())
	var prev uint64
	for i := range u.n {
		e := u.index[i*(u.aw+u.ow):]
		d := leUint(e[:u.aw])
		addr := u.base + d
		if addr < u.base || i > 0 && addr <= prev {
			return u, cursor.Errorf(section, idxOff+int64(i*(u.aw+u.ow)), cursor.ErrCorrupt, "index entry %d: address %#x not above %#x", i, addr, prev)
		}
		if o := leUint(e[u.aw : u.aw+u.ow]); o >= uint64(len(u.entries)) {
			return u, cursor.Errorf(section, idxOff+int64(i*(u.aw+u.ow)+u.aw), cursor.ErrCorrupt, "index entry %d: offset %d beyond the %d bytes of entries", i, o, len(u.entries))
		}
		prev = addr
	}
	return u, nil
}

// Len returns the number of procedures in all units.
func (t *Table) Len() int { return t.n }

// Procs iterates over every procedure, unit by unit, each in entry
// address order. A malformed procedure yields (Proc{}, err) and stops the
// iteration.
func (t *Table) Procs() iter.Seq2[Proc, error] {
	return func(yield func(Proc, error) bool) {
		for ui := range t.units {
			u := &t.units[ui]
			for i := range u.n {
				p, err := t.proc(u, i)
				if err != nil {
					yield(Proc{}, err)
					return
				}
				if !yield(p, nil) {
					return
				}
			}
		}
	}
}

// Find returns the procedure whose entry address is entry, found through
// the units' indexes by binary search. ok is false if no unit indexes it.
// A procedure whose chain has no ESL element (a nonfatal error, says the
// seed) has an empty program.
func (t *Table) Find(entry uint64) (p Proc, ok bool, err error) {
	for ui := range t.units {
		u := &t.units[ui]
		if entry < u.base {
			continue
		}
		w := u.aw + u.ow
		lo, hi := 0, u.n
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if u.base+leUint(u.index[m*w:m*w+u.aw]) < entry {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if i := lo; i < u.n && u.base+leUint(u.index[i*w:i*w+u.aw]) == entry {
			p, err := t.proc(u, i)
			return p, err == nil, err
		}
	}
	return Proc{}, false, nil
}

// proc reads the i-th procedure of u: it walks the procedure's TLV chain,
// skipping unknown tags, to its ESL element or its terminal entry.
func (t *Table) proc(u *unit, i int) (Proc, error) {
	w := u.aw + u.ow
	e := u.index[i*w : (i+1)*w]
	p := Proc{Files: u.files}
	p.Start.Address = u.base + leUint(e[:u.aw])
	p.PCUnit = u.pcUnit
	p.NumFiles = len(u.files)
	p.Section = t.section
	var c cursor.Cursor
	c.Reset(t.section, u.entriesOff, u.entries)
	c.Skip(int(leUint(e[u.aw:]))) // checked by Parse
	for {
		tag := c.ULEB128Of("tag")
		if c.Err() == nil && tag == TagEnd {
			p.Offset = c.Offset()
			return p, nil
		}
		sizeOff := c.Offset()
		size := c.ULEB128Of("length")
		if c.Err() == nil && size > uint64(c.Len()) {
			c.FailAt(sizeOff, cursor.ErrTruncated, "element of tag %d and length %d, %d bytes left", tag, size, c.Len())
		}
		val := c.Sub(int(size))
		if err := c.Err(); err != nil {
			return Proc{}, err
		}
		if tag != TagESL {
			continue
		}
		fileOff := val.Offset()
		f := val.ULEB128Of("initial file")
		// Only an empty program may go without a file table.
		if val.Err() == nil && f >= uint64(len(u.files)) && !(f == 0 && val.Len() == 1) {
			val.FailAt(fileOff, cursor.ErrCorrupt, "initial file %d not below the %d files", f, len(u.files))
		}
		lineOff := val.Offset()
		l := val.ULEB128Of("initial line")
		if val.Err() == nil && l > math.MaxUint32 {
			val.FailAt(lineOff, cursor.ErrCorrupt, "initial line %d out of range", l)
		}
		if err := val.Err(); err != nil {
			return Proc{}, err
		}
		p.Start.File, p.Start.Line = uint32(f), uint32(l)
		p.Offset = val.Offset()
		p.Code = val.Bytes(val.Len())
		return p, nil
	}
}
