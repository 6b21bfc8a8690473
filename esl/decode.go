package esl

import (
	"io"
	"iter"
	"math"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// Program is one procedure's ESL program with what it takes to run it.
type Program struct {
	Start  Start
	PCUnit int // bytes per pc unit, 1 to 255
	Code   []byte
	// NumFiles, when positive, is the size of the file table: a file
	// index at or above it is an error. Zero leaves file indexes unchecked.
	NumFiles int
	// Section and Offset name where Code lies, for errors: Code[0] is at
	// Offset in Section (DefaultSection when empty).
	Section string
	Offset  int64
}

// Rows iterates over the rows of the program. A malformed program yields
// one last (Row{}, err) with err a *cursor.DecodeError.
func (p Program) Rows() iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		var r Reader
		r.Reset(p)
		var row Row
		for {
			err := r.Next(&row)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Row{}, err)
				return
			}
			if !yield(row, nil) {
				return
			}
		}
	}
}

// Reader decodes the rows of one program. The zero Reader has no rows;
// Reset makes it read a program without allocating.
type Reader struct {
	code    []byte
	pos     int
	unit    uint64
	nfiles  uint64
	section string
	base    int64

	cur     Row   // the registers; the per-row flags apply to the next row
	pending bool  // cur holds per-row flags to clear
	mode    uint8 // the data mode, current or to resume to: 1 or 2
	cmd     bool  // in command mode
	err     error
}

// NewReader returns a Reader over p.
func NewReader(p Program) *Reader {
	r := new(Reader)
	r.Reset(p)
	return r
}

// Reset makes r read p from its start.
func (r *Reader) Reset(p Program) {
	*r = Reader{
		code:    p.Code,
		unit:    uint64(p.PCUnit),
		section: sectionName(p.Section),
		base:    p.Offset,
		cur:     Row{Address: p.Start.Address, File: p.Start.File, Line: p.Start.Line, IsStmt: true},
		mode:    1,
	}
	if p.NumFiles > 0 {
		r.nfiles = uint64(p.NumFiles)
		if uint64(p.Start.File) >= r.nfiles {
			r.err = cursor.Errorf(r.section, r.base, cursor.ErrCorrupt, "initial file %d not below the %d files", p.Start.File, p.NumFiles)
		}
	}
	if p.PCUnit < 1 || p.PCUnit > 255 {
		r.err = cursor.Errorf(r.section, r.base, cursor.ErrCorrupt, "pc unit %d", p.PCUnit)
	}
	if r.err != nil {
		r.code = nil
	}
}

// Offset returns the section offset of the next byte to decode.
func (r *Reader) Offset() int64 { return r.base + int64(r.pos) }

func (r *Reader) fail(pos int, sentinel error, format string, args ...any) error {
	r.err = cursor.Errorf(r.section, r.base+int64(pos), sentinel, format, args...)
	r.pos = len(r.code)
	return r.err
}

// Next decodes the next row into row. It returns io.EOF after the last
// row, and a *cursor.DecodeError for malformed input, after which it returns the
// same error again. The program may end at any command or row boundary;
// commands after the last row that do not emit one have no effect.
func (r *Reader) Next(row *Row) error {
	// Fast path: a data row with nothing pending. Per-row flags are set
	// only by commands, and the row that follows commands is decoded by
	// the general loop, so a data row reached here has none.
	code, pos := r.code, r.pos
	if pos < len(code) && !r.cmd {
		b := code[pos]
		if b&0xf0 != Escape {
			l := uint64(int64(r.cur.Line) + int64(int8(b)>>4))
			if l <= math.MaxUint32 {
				addr := r.cur.Address
				if r.mode == 1 {
					addr += uint64(b&0x0f+1) * r.unit
					pos++
				} else if pos+1 < len(code) {
					addr += uint64(b&0x0f) * r.unit
					c := code[pos+1]
					r.cur.IsStmt = r.cur.IsStmt != (c&0x80 != 0)
					r.cur.Column = uint32(c & 0x7f)
					pos += 2
				} else {
					return r.next(row)
				}
				r.pos = pos
				r.cur.Address = addr
				r.cur.Line = uint32(l)
				row.Address = addr
				row.File = r.cur.File
				row.Line = uint32(l)
				row.Column = r.cur.Column
				row.Discriminator = r.cur.Discriminator
				row.IsStmt = r.cur.IsStmt
				row.PrologueEnd = false
				row.EpilogueBegin = false
				row.EndSequence = false
				return nil
			}
		}
	}
	return r.next(row)
}

// next is Next's general loop: escapes, commands and the data row that
// may follow them, errors and the end of the program.
func (r *Reader) next(row *Row) error {
	if r.err != nil {
		return r.err
	}
	code, pos := r.code, r.pos
	// The registers live in locals here and go back to r when a row is
	// emitted or the program ends.
	addr, line := r.cur.Address, int64(r.cur.Line)
	stmt, cmd := r.cur.IsStmt, r.cmd
loop:
	for pos < len(code) {
		b := code[pos]
		if !cmd {
			if b&0xf0 != Escape {
				hi := int64(int8(b) >> 4)
				if line += hi; uint64(line) > math.MaxUint32 {
					return r.fail(pos, cursor.ErrCorrupt, "line %d%+d out of range", line-hi, hi)
				}
				if r.mode == 1 {
					addr += uint64(b&0x0f+1) * r.unit
					pos++
				} else {
					if pos+1 >= len(code) {
						return r.fail(pos, cursor.ErrTruncated, "data mode 2 row needs 2 bytes")
					}
					addr += uint64(b&0x0f) * r.unit
					c := code[pos+1]
					stmt = stmt != (c&0x80 != 0)
					r.cur.Column = uint32(c & 0x7f)
					pos += 2
				}
				r.pos, r.cmd = pos, false
				r.cur.Address, r.cur.Line, r.cur.IsStmt = addr, uint32(line), stmt
				r.emit(row)
				return nil
			}
			// Escape: straight on to the command that follows.
			addr += uint64(b&0x0f) * r.unit
			cmd = true
			if pos++; pos >= len(code) {
				break
			}
			b = code[pos]
		}
		for {
			start := pos
			pos++
			// The commands most frequent in compiler output come first.
			switch op := Command(b & 0x3f); {
			case op == CmdNegateStmt:
				stmt = !stmt
			case op >= CmdSetDiscrimShort:
				r.cur.Discriminator = uint32(op - CmdSetDiscrimShort)
			case op == CmdAddPCLine || op == CmdAddPCLineCol:
				a, n := sleb1(code, pos)
				if n <= 0 {
					return r.lebError(start, pos, n)
				}
				pos += n
				l, n := sleb1(code, pos)
				if n <= 0 {
					return r.lebError(start, pos, n)
				}
				pos += n
				if op == CmdAddPCLineCol {
					c, n := uleb1(code, pos)
					if n <= 0 {
						return r.lebError(start, pos, n)
					}
					pos += n
					if c > math.MaxUint32 {
						return r.fail(start, cursor.ErrCorrupt, "column %d out of range", c)
					}
					r.cur.Column = uint32(c)
				}
				addr += uint64(a) * r.unit
				if line += l; l > math.MaxUint32 || l < -math.MaxUint32 || uint64(line) > math.MaxUint32 {
					return r.fail(start, cursor.ErrCorrupt, "line %d%+d out of range", line-l, l)
				}
			case op == CmdAddPC || op == CmdAddLine:
				v, n := sleb1(code, pos)
				if n <= 0 {
					return r.lebError(start, pos, n)
				}
				pos += n
				if op == CmdAddPC {
					addr += uint64(v) * r.unit
				} else if line += v; v > math.MaxUint32 || v < -math.MaxUint32 || uint64(line) > math.MaxUint32 {
					return r.fail(start, cursor.ErrCorrupt, "line %d%+d out of range", line-v, v)
				}
			case op == CmdSetCol || op == CmdSetFile || op == CmdSetDataMode || op == CmdSetDiscrim:
				v, n := uleb1(code, pos)
				if n <= 0 {
					return r.lebError(start, pos, n)
				}
				pos += n
				switch {
				case v > math.MaxUint32:
					return r.fail(start, cursor.ErrCorrupt, "%v operand %d out of range", op, v)
				case op == CmdSetCol:
					r.cur.Column = uint32(v)
				case op == CmdSetFile:
					if r.nfiles > 0 && v >= r.nfiles {
						return r.fail(start, cursor.ErrCorrupt, "file %d not below the %d files", v, r.nfiles)
					}
					r.cur.File = uint32(v)
				case op == CmdSetDiscrim:
					r.cur.Discriminator = uint32(v)
				case v != 1 && v != 2:
					return r.fail(start, cursor.ErrCorrupt, "data mode %d", v)
				default:
					r.mode = uint8(v)
				}
			case op == CmdPrologueEnd:
				r.cur.PrologueEnd, r.pending = true, true
			case op == CmdEpilogueBegin:
				r.cur.EpilogueBegin, r.pending = true, true
			case op == CmdEndSequence:
				r.cur.EndSequence, r.pending = true, true
			default:
				return r.fail(start, ErrUnknownCommand, "%#02x in command byte %#02x", uint8(op), b)
			}
			if b&Mark != 0 {
				r.pos, r.cmd = pos, b&Resume == 0
				r.cur.Address, r.cur.Line, r.cur.IsStmt = addr, uint32(line), stmt
				r.emit(row)
				return nil
			}
			if b&Resume != 0 {
				cmd = false
				continue loop
			}
			if pos >= len(code) {
				break loop
			}
			b = code[pos]
		}
	}
	r.pos, r.cmd = pos, cmd
	r.cur.Address, r.cur.Line, r.cur.IsStmt = addr, uint32(line), stmt
	return io.EOF
}

// sleb1 is cursor.DecodeSLEB128(code[pos:]) with the one-byte case inline.
func sleb1(code []byte, pos int) (int64, int) {
	if pos < len(code) && code[pos] < 0x80 {
		return int64(int8(code[pos]<<1) >> 1), 1
	}
	return cursor.DecodeSLEB128(code[pos:])
}

// uleb1 is cursor.DecodeULEB128(code[pos:]) with the one-byte case inline.
func uleb1(code []byte, pos int) (uint64, int) {
	if pos < len(code) && code[pos] < 0x80 {
		return uint64(code[pos]), 1
	}
	return cursor.DecodeULEB128(code[pos:])
}

// emit writes the registers to row and clears the per-row ones.
func (r *Reader) emit(row *Row) {
	// Field by field: a whole-struct copy would read r.cur with wide loads
	// across the narrow stores that just updated it, which stalls store
	// forwarding and costs more than the rest of the row.
	row.Address = r.cur.Address
	row.File = r.cur.File
	row.Line = r.cur.Line
	row.Column = r.cur.Column
	row.Discriminator = r.cur.Discriminator
	row.IsStmt = r.cur.IsStmt
	row.PrologueEnd = r.cur.PrologueEnd
	row.EpilogueBegin = r.cur.EpilogueBegin
	row.EndSequence = r.cur.EndSequence
	if r.pending {
		r.cur.PrologueEnd, r.cur.EpilogueBegin, r.cur.EndSequence = false, false, false
		r.pending = false
	}
}

// lebError reports a bad operand of the command at start whose operand
// begins at pos; n is what uleb1 or sleb1 returned.
func (r *Reader) lebError(start, pos, n int) error {
	if n == 0 {
		return r.fail(pos, cursor.ErrTruncated, "unterminated LEB128 operand of %v", Command(r.code[start]&0x3f))
	}
	return r.fail(pos, cursor.ErrOverflow, "operand of %v", Command(r.code[start]&0x3f))
}

// AppendRows decodes the rest of the program, appending its rows to dst.
// At the end of the program it returns a nil error; on malformed input,
// the rows before the error and a *cursor.DecodeError.
func (r *Reader) AppendRows(dst []Row) ([]Row, error) {
	var row Row
	for {
		err := r.Next(&row)
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
		dst = append(dst, row)
	}
}

// AppendRows appends the rows of p to dst, as Reader.AppendRows does.
func (p Program) AppendRows(dst []Row) ([]Row, error) {
	var r Reader
	r.Reset(p)
	return r.AppendRows(dst)
}
