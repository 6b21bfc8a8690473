// Package dwarfline decodes DWARF line-number programs (.debug_line,
// DWARF 2 to 5; DWARF 5 section 6.2) with splitdbg's byte cursor: every
// count is checked against the bytes that remain before anything is
// allocated, and malformed input is a *cursor.DecodeError naming the
// section and offset. Go's debug/dwarf sizes its directory and file tables
// from unchecked counts, so a crafted line header can make it panic.
//
// File names are joined as debug/dwarf joins them: DWARF 2-4 include
// directories relative to the compile directory, file names relative to
// their directory; DWARF 5 file names relative to their directory entry.
package dwarfline

import (
	"io"
	"path"
	"strings"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/elfx"
)

// Sections holds the sections a line program refers to.
type Sections struct {
	Line    []byte // .debug_line
	LineStr []byte // .debug_line_str (DWARF 5)
	Str     []byte // .debug_str
}

// Row is one row of the line-number state machine.
type Row struct {
	Addr          uint64
	File          int // index into Program.Files; -1 if out of range
	Line          int
	Column        int
	IsStmt        bool
	PrologueEnd   bool
	EpilogueBegin bool
	Discriminator int
	EndSequence   bool
}

// Program reads the rows of one unit's line-number program.
type Program struct {
	Version uint16
	Files   []string // full names, as debug/dwarf joins them
	Dirs    []string
	// Entries are the file entries as the header states them, parallel to
	// Files, and RawDirs its include directories unjoined (before DWARF 5
	// directory 1 is RawDirs[0]), for tools that join names their own way.
	Entries    []FileEntry
	RawDirs    []string
	CompDir    string
	addrSize   int
	dwarf64    bool
	minInstLen uint64
	maxOps     uint64
	defStmt    bool
	lineBase   int64
	lineRange  uint64
	opBase     uint8
	opLens     []byte // standard_opcode_lengths[1:opBase]

	secs *Sections
	c    cursor.Cursor // the opcodes
	st   Row
	op   uint64 // op_index
}

// FileEntry is a file entry of a line header: its name and directory
// index, unjoined.
type FileEntry struct {
	Name string
	Dir  uint64
}

const section = ".debug_line"

// New parses the header of the program at offset off of secs.Line and
// returns a reader of its rows. compDir is the unit's DW_AT_comp_dir and
// addrSize its address size (used when the header has none).
func New(secs *Sections, off uint64, compDir string, addrSize int) (*Program, error) {
	c := cursor.New(section, 0, secs.Line)
	if off > uint64(len(secs.Line)) {
		return nil, cursor.Errorf(section, int64(off), cursor.ErrCorrupt, "program offset beyond the section")
	}
	c.Skip(int(off))
	p := &Program{secs: secs, addrSize: addrSize, CompDir: compDir}
	unitLen := uint64(c.U32())
	if unitLen == 0xffffffff {
		p.dwarf64 = true
		unitLen = c.U64()
	} else if unitLen >= 0xfffffff0 {
		return nil, c.Fail(cursor.ErrCorrupt, "reserved unit length %#x", unitLen)
	}
	if unitLen > uint64(c.Len()) {
		return nil, c.Fail(cursor.ErrTruncated, "unit length %d exceeds the %d bytes left", unitLen, c.Len())
	}
	unit := c.Sub(int(unitLen))
	if err := c.Err(); err != nil {
		return nil, err
	}
	p.Version = unit.U16()
	if unit.Err() == nil && (p.Version < 2 || p.Version > 5) {
		return nil, unit.Fail(cursor.ErrUnsupportedVersion, "line table version %d", p.Version)
	}
	if p.Version >= 5 {
		p.addrSize = int(unit.U8())
		unit.U8() // segment_selector_size
	}
	var hdrLen uint64
	if p.dwarf64 {
		hdrLen = unit.U64()
	} else {
		hdrLen = uint64(unit.U32())
	}
	if hdrLen > uint64(unit.Len()) {
		return nil, unit.Fail(cursor.ErrTruncated, "header length %d exceeds the unit", hdrLen)
	}
	programStart := unit.Pos() + int(hdrLen)
	p.minInstLen = uint64(unit.U8())
	p.maxOps = 1
	if p.Version >= 4 {
		p.maxOps = uint64(unit.U8())
	}
	p.defStmt = unit.U8() != 0
	p.lineBase = int64(int8(unit.U8()))
	p.lineRange = uint64(unit.U8())
	p.opBase = unit.U8()
	if unit.Err() == nil && (p.lineRange == 0 || p.maxOps == 0 || p.opBase == 0) {
		return nil, unit.Fail(cursor.ErrCorrupt, "line_range %d, maximum_operations_per_instruction %d, opcode_base %d",
			p.lineRange, p.maxOps, p.opBase)
	}
	if p.opBase > 0 {
		p.opLens = unit.Bytes(int(p.opBase) - 1)
	}
	if p.Version >= 5 {
		p.readV5Tables(&unit)
	} else {
		p.readV4Tables(&unit, compDir)
	}
	if err := unit.Err(); err != nil {
		return nil, err
	}
	if programStart > unit.Pos()+unit.Len() || programStart < unit.Pos() {
		return nil, unit.Fail(cursor.ErrCorrupt, "header length points outside the unit")
	}
	unit.Skip(programStart - unit.Pos())
	p.c = unit
	p.reset()
	return p, nil
}

func (p *Program) readV4Tables(c *cursor.Cursor, compDir string) {
	p.Dirs = append(p.Dirs, compDir)
	for c.Err() == nil {
		d := c.CString()
		if len(d) == 0 {
			break
		}
		dir := string(d)
		p.RawDirs = append(p.RawDirs, dir)
		if !isAbs(dir) {
			dir = join(compDir, dir)
		}
		p.Dirs = append(p.Dirs, dir)
	}
	p.Files = append(p.Files, "") // file 0 is not a file before DWARF 5
	p.Entries = append(p.Entries, FileEntry{})
	for c.Err() == nil {
		if !p.readFileEntry(c) {
			break
		}
	}
}

// readFileEntry reads a DWARF 2-4 file entry (also DW_LNE_define_file);
// false at the terminating empty name.
func (p *Program) readFileEntry(c *cursor.Cursor) bool {
	name := c.CString()
	if len(name) == 0 {
		return false
	}
	off := c.Offset()
	dir := c.ULEB128()
	c.ULEB128() // mtime
	c.ULEB128() // length
	n := string(name)
	p.Entries = append(p.Entries, FileEntry{n, dir})
	if !isAbs(n) {
		if dir >= uint64(len(p.Dirs)) {
			c.FailAt(off, cursor.ErrCorrupt, "directory index %d of %d", dir, len(p.Dirs))
			return false
		}
		n = join(p.Dirs[dir], n)
	}
	p.Files = append(p.Files, n)
	return c.Err() == nil
}

// DWARF 5 content types and forms used in line headers.
const (
	lnctPath     = 1
	lnctDirIndex = 2

	formBlock     = 0x09
	formData1     = 0x0b
	formData2     = 0x05
	formData4     = 0x06
	formData8     = 0x07
	formData16    = 0x1e
	formString    = 0x08
	formStrp      = 0x0e
	formLineStrp  = 0x1f
	formUdata     = 0x0f
	formSdata     = 0x0d
	formStrx      = 0x1a
	formStrx1     = 0x25
	formStrx2     = 0x26
	formStrx3     = 0x27
	formStrx4     = 0x28
	formStrpSup   = 0x1d
	formSecOffset = 0x17
)

type entryFormat struct{ lnct, form uint64 }

func (p *Program) readFormats(c *cursor.Cursor) []entryFormat {
	n := int(c.U8())
	if c.CheckCount(uint64(n), 2, "entry formats"); c.Err() != nil {
		return nil
	}
	fs := make([]entryFormat, n)
	for i := range fs {
		fs[i] = entryFormat{c.ULEB128(), c.ULEB128()}
	}
	return fs
}

// readEntries reads count entries of the given formats: their paths and
// directory indices.
func (p *Program) readEntries(c *cursor.Cursor, what string) (paths []string, dirs []uint64) {
	formats := p.readFormats(c)
	off := c.Offset()
	count := c.ULEB128()
	if c.Err() != nil {
		return nil, nil
	}
	if count > 0 && len(formats) == 0 {
		c.FailAt(off, cursor.ErrCorrupt, "%d %s entries with no format", count, what)
		return nil, nil
	}
	// Every form takes at least one byte.
	n := c.CheckCount(count, len(formats), what)
	paths, dirs = make([]string, n), make([]uint64, n)
	for i := 0; i < n && c.Err() == nil; i++ {
		for _, f := range formats {
			s, v := p.readForm(c, f.form)
			switch f.lnct {
			case lnctPath:
				paths[i] = s
			case lnctDirIndex:
				dirs[i] = v
			}
		}
	}
	return paths, dirs
}

func (p *Program) readV5Tables(c *cursor.Cursor) {
	p.Dirs, _ = p.readEntries(c, "directory")
	p.RawDirs = p.Dirs
	names, dirs := p.readEntries(c, "file name")
	if c.Err() != nil {
		return
	}
	p.Files = make([]string, len(names))
	p.Entries = make([]FileEntry, len(names))
	for i, n := range names {
		p.Entries[i] = FileEntry{n, dirs[i]}
		if !isAbs(n) && n != "" {
			if dirs[i] >= uint64(len(p.Dirs)) {
				c.Fail(cursor.ErrCorrupt, "file %d: directory index %d of %d", i, dirs[i], len(p.Dirs))
				return
			}
			n = join(p.Dirs[dirs[i]], n)
		}
		p.Files[i] = n
	}
}

// readForm reads one attribute value: a string for string forms, a number
// for constants.
func (p *Program) readForm(c *cursor.Cursor, form uint64) (string, uint64) {
	offSize := 4
	if p.dwarf64 {
		offSize = 8
	}
	switch form {
	case formString:
		return string(c.CString()), 0
	case formLineStrp, formStrp:
		off := c.Offset()
		o := c.Uint(offSize)
		sec, name := p.secs.LineStr, ".debug_line_str"
		if form == formStrp {
			sec, name = p.secs.Str, ".debug_str"
		}
		if c.Err() != nil {
			return "", 0
		}
		if o >= uint64(len(sec)) {
			c.FailAt(off, cursor.ErrCorrupt, "%s offset %#x beyond the section (%d bytes)", name, o, len(sec))
			return "", 0
		}
		s := cursor.New(name, int64(o), sec[o:])
		str := s.CString()
		if s.Err() != nil {
			c.FailAt(off, cursor.ErrCorrupt, "%v", s.Err())
		}
		return string(str), 0
	case formUdata:
		return "", c.ULEB128()
	case formSdata:
		return "", uint64(c.SLEB128())
	case formData1:
		return "", uint64(c.U8())
	case formData2:
		return "", uint64(c.U16())
	case formData4:
		return "", uint64(c.U32())
	case formData8:
		return "", c.U64()
	case formData16:
		c.Skip(16)
		return "", 0
	case formBlock:
		n := c.ULEB128()
		c.Skip(c.CheckCount(n, 1, "block bytes"))
		return "", 0
	case formSecOffset, formStrpSup:
		c.Uint(offSize)
		return "", 0
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4:
		c.Fail(cursor.ErrUnsupported, "string index form %#x in a line table header", form)
		return "", 0
	}
	c.Fail(cursor.ErrCorrupt, "form %#x in a line table header", form)
	return "", 0
}

func (p *Program) reset() {
	p.st = Row{File: 1, Line: 1, IsStmt: p.defStmt}
	p.op = 0
}

// Standard and extended opcodes (DWARF 5, section 6.2.5).
const (
	lnsCopy             = 1
	lnsAdvancePC        = 2
	lnsAdvanceLine      = 3
	lnsSetFile          = 4
	lnsSetColumn        = 5
	lnsNegateStmt       = 6
	lnsSetBasicBlock    = 7
	lnsConstAddPC       = 8
	lnsFixedAdvancePC   = 9
	lnsSetPrologueEnd   = 10
	lnsSetEpilogueBegin = 11
	lnsSetISA           = 12

	lneEndSequence      = 1
	lneSetAddress       = 2
	lneDefineFile       = 3
	lneSetDiscriminator = 4
)

// Next reads the next row into r. It returns io.EOF after the last row,
// and a *cursor.DecodeError for malformed input, after which it returns
// the same error again.
func (p *Program) Next(r *Row) error {
	c := &p.c
	for c.Err() == nil {
		if c.Len() == 0 {
			return io.EOF
		}
		op := c.U8()
		if op >= p.opBase {
			adj := uint64(op - p.opBase)
			p.advance(adj / p.lineRange)
			p.st.Line += int(p.lineBase + int64(adj%p.lineRange))
			p.emit(r)
			return nil
		}
		switch op {
		case 0:
			off := c.Offset()
			n := c.ULEB128()
			if c.Err() != nil {
				break
			}
			if n == 0 || n > uint64(c.Len()) {
				c.FailAt(off, cursor.ErrCorrupt, "extended opcode length %d with %d bytes left", n, c.Len())
				break
			}
			ext := c.Sub(int(n))
			switch ext.U8() {
			case lneEndSequence:
				p.st.EndSequence = true
				p.emit(r)
				p.reset()
				return nil
			case lneSetAddress:
				size := int(n) - 1
				if size != 4 && size != 8 && size != 2 {
					c.FailAt(off, cursor.ErrCorrupt, "DW_LNE_set_address of %d bytes", size)
					break
				}
				p.st.Addr = ext.Uint(size)
				p.op = 0
			case lneDefineFile:
				p.readFileEntry(&ext)
			case lneSetDiscriminator:
				p.st.Discriminator = int(ext.ULEB128())
			}
			// Other extended opcodes are skipped by their length.
			if err := ext.Err(); err != nil {
				c.FailAt(off, cursor.ErrCorrupt, "%v", err)
			}
		case lnsCopy:
			p.emit(r)
			return nil
		case lnsAdvancePC:
			p.advance(c.ULEB128())
		case lnsAdvanceLine:
			p.st.Line += int(c.SLEB128())
		case lnsSetFile:
			p.st.File = int(min(c.ULEB128(), 1<<31-1))
		case lnsSetColumn:
			p.st.Column = int(min(c.ULEB128(), 1<<31-1))
		case lnsNegateStmt:
			p.st.IsStmt = !p.st.IsStmt
		case lnsSetBasicBlock:
		case lnsConstAddPC:
			p.advance(uint64(255-p.opBase) / p.lineRange)
		case lnsFixedAdvancePC:
			p.st.Addr += uint64(c.U16())
			p.op = 0
		case lnsSetPrologueEnd:
			p.st.PrologueEnd = true
		case lnsSetEpilogueBegin:
			p.st.EpilogueBegin = true
		case lnsSetISA:
			c.ULEB128()
		default:
			// An opcode this reader does not know: skip its operands.
			for range p.opLens[op-1] {
				c.ULEB128()
			}
		}
	}
	return c.Err()
}

// advance applies an operation advance (DWARF 5, section 6.2.5.1).
func (p *Program) advance(n uint64) {
	if p.maxOps == 1 {
		p.st.Addr += p.minInstLen * n
		return
	}
	p.st.Addr += p.minInstLen * ((p.op + n) / p.maxOps)
	p.op = (p.op + n) % p.maxOps
}

func (p *Program) emit(r *Row) {
	*r = p.st
	if r.File < 0 || r.File >= len(p.Files) {
		r.File = -1
	}
	p.st.Discriminator = 0
	p.st.PrologueEnd = false
	p.st.EpilogueBegin = false
}

func isAbs(p string) bool { return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) }

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return path.Join(dir, name)
}

// Load reads the sections line programs use from an ELF file,
// decompressed. Missing sections are nil.
func Load(f *elfx.File) (*Sections, error) {
	var secs Sections
	for _, x := range []struct {
		name string
		dst  *[]byte
	}{{".debug_line", &secs.Line}, {".debug_line_str", &secs.LineStr}, {".debug_str", &secs.Str}} {
		d, _, err := f.SectionData(x.name)
		if err != nil {
			return nil, err
		}
		*x.dst = d
	}
	return &secs, nil
}
