// Package esl encodes and decodes Extended Source Location (ESL) line
// programs and the per-procedure TLV container that holds them, as
// proposed in "A Symbol Table Proposal to Extend Source Location
// Information" (Brender, Murphy, Thompson; the second half of seed 003 of
// this project).
//
// An ESL program is a byte stream that describes one procedure's line
// table. It starts in data mode 1, where each byte is one row: a signed
// line delta in the high nibble (-7..7) and a pc delta of 1..16 pc units
// in the low nibble. The nibble 1000b escapes to command mode, where each
// command byte carries a mark bit (bit 7: this command ends the row), a
// resume bit (bit 6: return to the data mode) and a 6-bit command followed
// by LEB128 operands. Data mode 2 adds the column and an is_stmt toggle
// for lines that hold several statements. Moved (split) code is described
// in logical order: negative and positive add_pc commands jump between a
// procedure's fragments, and an end_sequence row closes each fragment.
//
// The seed leaves gaps that this package fills; docs/FORMAT.md describes
// the result byte by byte: the layout of data mode 2, the command numbers,
// the pc delta carried by the escape byte, extension commands for what a
// debugger needs (negate_stmt, prologue_end, epilogue_begin, end_sequence,
// set_discriminator), the unit with its file table and address index, the
// TLV chains and the procedure's initial state.
//
// AppendProgram and Reader work on bare programs; Builder writes a unit
// of the .splitdbg.esl section and Parse reads one or more, finding a
// procedure by its entry address without a scan.
package esl

import "fmt"

// SectionName is the name of the ELF section that holds ESL units.
const SectionName = ".splitdbg.esl"

// Version is the unit format version this package reads and writes.
const Version = 1

// Row is one row of a line table: the source position of the code that
// starts at Address. It carries what a DWARF .debug_line row carries
// except the op_index, isa and basic_block registers.
type Row struct {
	Address uint64
	// File indexes the file table of the unit that holds the program.
	File   uint32
	Line   uint32
	Column uint32
	// Discriminator tells apart blocks that share a source position.
	// Unlike DWARF's, the ESL register keeps its value from row to row
	// until a command changes it.
	Discriminator uint32
	IsStmt        bool
	PrologueEnd   bool
	EpilogueBegin bool
	// EndSequence marks the first address past a fragment; its other
	// fields are only the state the program was in.
	EndSequence bool
}

// Start is the state a program begins in: the procedure's entry address
// and the file and line from the procedure header. The column starts at
// 0, is_stmt true and the data mode 1.
type Start struct {
	Address uint64
	File    uint32
	Line    uint32
}

// Command is the low 6 bits of a command byte.
type Command uint8

// The commands. Numbers 1 to 7 are the seed's commands, 8 to 12 and 32 to
// 63 this package's extensions; every other number (0, 13 to 31) is an
// error.
const (
	CmdAddPC         Command = 0x01 // SLEB128 delta, in pc units
	CmdAddLine       Command = 0x02 // SLEB128 delta
	CmdSetCol        Command = 0x03 // ULEB128 column
	CmdSetFile       Command = 0x04 // ULEB128 file index
	CmdSetDataMode   Command = 0x05 // ULEB128 1 or 2
	CmdAddPCLine     Command = 0x06 // SLEB128 pc delta, SLEB128 line delta
	CmdAddPCLineCol  Command = 0x07 // SLEB128 pc delta, SLEB128 line delta, ULEB128 column
	CmdNegateStmt    Command = 0x08 // no operand: is_stmt = !is_stmt
	CmdPrologueEnd   Command = 0x09 // no operand: the next row has prologue_end
	CmdEpilogueBegin Command = 0x0a // no operand: the next row has epilogue_begin
	CmdEndSequence   Command = 0x0b // no operand: the next row ends a fragment
	CmdSetDiscrim    Command = 0x0c // ULEB128: the discriminator, kept until changed
	// CmdSetDiscrimShort+n, for n from 0 to 31, sets the discriminator to
	// n with no operand.
	CmdSetDiscrimShort Command = 0x20
)

// Bits of a command byte besides the command.
const (
	Mark   = 0x80 // this command ends the row: emit it
	Resume = 0x40 // after this command, return to the previous data mode
)

// Escape is the high nibble (in place in the byte) that switches a data
// mode to command mode. The low nibble of the escape byte is a pc delta
// of 0 to 15 units applied before the first command.
const Escape = 0x80

var cmdNames = [...]string{
	CmdAddPC:         "add_pc",
	CmdAddLine:       "add_line",
	CmdSetCol:        "set_col",
	CmdSetFile:       "set_file",
	CmdSetDataMode:   "set_data_mode",
	CmdAddPCLine:     "add_pc_line",
	CmdAddPCLineCol:  "add_pc_line_col",
	CmdNegateStmt:    "negate_stmt",
	CmdPrologueEnd:   "prologue_end",
	CmdEpilogueBegin: "epilogue_begin",
	CmdEndSequence:   "end_sequence",
	CmdSetDiscrim:    "set_discriminator",
}

// String returns the command's name as the seed and docs/FORMAT.md spell it.
func (c Command) String() string {
	if int(c) < len(cmdNames) && cmdNames[c] != "" {
		return cmdNames[c]
	}
	if c >= CmdSetDiscrimShort && c <= CmdSetDiscrimShort+31 {
		return fmt.Sprintf("set_discriminator_%d", c-CmdSetDiscrimShort)
	}
	return fmt.Sprintf("command(%#02x)", uint8(c))
}

// String formats the row as ADDR FILE:LINE:COL followed by its flags,
// the notation of testdata/golden.txt.
func (r Row) String() string {
	s := fmt.Sprintf("%#x %d:%d:%d", r.Address, r.File, r.Line, r.Column)
	if r.IsStmt {
		s += " stmt"
	}
	if r.PrologueEnd {
		s += " pe"
	}
	if r.EpilogueBegin {
		s += " eb"
	}
	if r.EndSequence {
		s += " end"
	}
	if r.Discriminator != 0 {
		s += fmt.Sprintf(" d%d", r.Discriminator)
	}
	return s
}
