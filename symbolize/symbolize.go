// Package symbolize answers an address of an ELF file with its source
// frames, as a symbolizer does, and names code in any fragment of a split
// function by its logical function.
//
// Frames are what llvm-symbolizer reports (LLVM's DIInliningInfo): the
// chain of DWARF inlined subroutines holding the address (DWARF 5,
// section 3.3.8, whose ranges may lie in several fragments), innermost
// first, each at its caller's DW_AT_call_file, DW_AT_call_line and
// DW_AT_call_column, and outermost the subprogram, named from the ELF
// symbol table. Where llvm-symbolizer names an address in foo.cold by the
// symbol foo.cold, a Module names it foo, the procedure (package
// splitinfo) whose fragment holds it; everything else is as
// llvm-symbolizer 22 computes it, so that its output formats (format.go)
// can be reproduced byte for byte.
//
// Answer is the combined answer of "splitdbg addr": the procedure,
// fragment, logical offset, basic block and source position of one
// address.
package symbolize

import (
	"github.com/ianlancetaylor/demangle"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// Module is one ELF file ready for lookups. It is immutable and safe
// for concurrent use.
type Module struct {
	lines   *linetable.Table
	inlines *linetable.Inlines
	syms    symtab
	moved   []int32 // per symbol, linkMoved's link
	names   []int32 // per piece of inlines' partition, pieceNames's symbol
}

// Open reads the ELF file at path.
func Open(path string) (*Module, error) {
	return elfx.OpenWith(path, FromELF)
}

// FromELF reads f: its procedures and line table, and on another
// goroutine its inline scopes and symbol table (the only users of the
// file's shared DWARF data there that write to it are in NewInlines). A
// panic there is raised again on the caller's goroutine.
func FromELF(f *elfx.File) (*Module, error) { return FromELFIn(f, nil) }

// FromELFIn is FromELF over the compile units of scope s (nil: the
// whole file): its answers for addresses in s are FromELF's. Of the
// symbol table it keeps the symbols that can name such an address.
func FromELFIn(f *elfx.File, s *splitinfo.Scope) (*Module, error) {
	var (
		inl  *linetable.Inlines
		syms symtab
		ierr error
	)
	wait := goCarry(func() {
		if inl, ierr = linetable.NewInlines(f, s); ierr == nil {
			syms, ierr = readSymtab(f, s)
		}
	})
	procs, err := splitinfo.FromELFIn(f, s)
	var lines *linetable.Table
	if err == nil {
		lines, err = linetable.FromELFIn(f, procs, s)
	}
	wait()
	if err != nil {
		return nil, err
	}
	if ierr != nil {
		return nil, ierr
	}
	moved := linkMoved(&syms, procs)
	return &Module{lines: lines, inlines: inl, syms: syms, moved: moved, names: pieceNames(inl, &syms, moved)}, nil
}

// Lines returns the module's line table.
func (m *Module) Lines() *linetable.Table { return m.lines }

// Procs returns the module's procedures.
func (m *Module) Procs() *splitinfo.Table { return m.lines.Procs() }

// FunctionNames says which name a frame gives its function
// (llvm-symbolizer's --functions).
type FunctionNames uint8

const (
	LinkageNames FunctionNames = iota // the symbol or DW_AT_linkage_name
	ShortNames                        // DW_AT_name
	NoNames                           // no function names
)

// Options select what a lookup reports.
type Options struct {
	Functions FunctionNames
	// Inlines reports the whole inline chain; without it, one frame: the
	// innermost function's name at the address's position.
	Inlines bool
	// Demangle demangles C++ and Rust names.
	Demangle bool
	// Paths selects the form of file names.
	Paths linetable.PathStyle
}

// Frame is one source frame of an address.
type Frame struct {
	Function      string // "" if unknown
	File          string // "" if unknown
	Line, Column  int
	Discriminator int
	// StartFile and StartLine are the function's declaration; StartAddr
	// its first address, if HasStartAddr.
	StartFile    string
	StartLine    int
	StartAddr    uint64
	HasStartAddr bool
}

// Frames appends the frames of addr to dst, innermost first, and returns
// the extended slice. With Inlines it appends at least one frame. It
// allocates only to grow dst and to demangle.
func (m *Module) Frames(dst []Frame, addr uint64, o *Options) []Frame {
	return m.framesAt(dst, addr, m.find(addr), o)
}

// found is where Frames looks first: the piece of the inline partition
// holding an address and its line-table row.
type found struct{ piece, row int }

func (m *Module) find(addr uint64) found {
	return found{m.inlines.Piece(addr), m.lines.RowIndex(addr)}
}

// warm finds addrs' pieces and rows into at (at[i] for addrs[i], at
// most warmGroup of them), then reads the records their frames read
// first (their scopes and symbols, then those records' names), each
// step for every address before the next, so that the cache misses of
// different addresses overlap. It returns a sum of what it read, for
// the caller to keep.
func (m *Module) warm(addrs []uint64, at []found) uint64 {
	var sum uint64
	for _, a := range addrs {
		sum += m.lines.TouchRow(a) + m.inlines.TouchPiece(a)
	}
	for i, a := range addrs {
		at[i] = m.find(a)
	}
	var (
		scopes [warmGroup]*linetable.Scope
		syms   [warmGroup]*symbol
	)
	for i := range addrs {
		p := at[i].piece
		scopes[i] = m.inlines.Innermost(p)
		if p >= 0 && m.names[p] > 0 {
			syms[i] = &m.syms.syms[m.names[p]-1]
		}
	}
	for i := range addrs {
		sum += m.inlines.Touch(scopes[i])
		if s := syms[i]; s != nil && s.name != "" {
			sum += uint64(s.name[0])
		}
	}
	return sum
}

// framesAt is Frames of addr, found at where.
func (m *Module) framesAt(dst []Frame, addr uint64, where found, o *Options) []Frame {
	base := len(dst)
	piece := where.piece
	dst = m.dwarfFrames(dst, piece, where.row, o)
	noDWARF := len(dst) == base
	if noDWARF {
		dst = append(dst, Frame{})
	}
	outer := &dst[len(dst)-1]
	if !o.Inlines {
		outer = &dst[base]
	}
	m.nameOutermost(outer, piece, addr, o, noDWARF)
	if o.Demangle {
		for i := base; i < len(dst); i++ {
			dst[i].Function = demangleName(dst[i].Function)
		}
	}
	return dst
}

// dwarfFrames appends addr's frames from DWARF: the scopes holding it
// (those of its piece of the inline partition), or with none only its
// line-table position; nothing outside every compile unit.
func (m *Module) dwarfFrames(dst []Frame, piece, row int, o *Options) []Frame {
	base := len(dst)
	var prev *linetable.Scope
	inUnit := m.inlines.ChainOf(piece, func(s *linetable.Scope) bool {
		f := Frame{Function: scopeName(s, o.Functions), StartFile: s.DeclFile.Name(o.Paths), StartLine: s.DeclLine,
			StartAddr: s.LowPC, HasStartAddr: s.HasLowPC}
		if prev == nil {
			m.position(&f, row, o)
		} else {
			f.File = prev.CallFile.Name(o.Paths)
			f.Line, f.Column, f.Discriminator = prev.CallLine, prev.CallColumn, prev.CallDiscriminator
		}
		dst = append(dst, f)
		prev = s
		return o.Inlines
	})
	if inUnit && len(dst) == base {
		var f Frame
		if m.position(&f, row, o) {
			dst = append(dst, f)
		}
	}
	return dst
}

// position sets f's file, line, column and discriminator from line
// table row (linetable.Table.RowIndex).
func (m *Module) position(f *Frame, row int, o *Options) bool {
	li, ok := m.lines.LineInfoAt(row)
	if !ok {
		return false
	}
	f.File = li.File
	if li.Names != nil {
		f.File = li.Names.Name(o.Paths)
	}
	f.Line, f.Column, f.Discriminator = li.Line, li.Column, li.Discriminator
	return true
}

func scopeName(s *linetable.Scope, k FunctionNames) string {
	switch k {
	case LinkageNames:
		if s.LinkageName != "" {
			return s.LinkageName
		}
		return s.Name
	case ShortNames:
		return s.Name
	}
	return ""
}

// nameOutermost names the outermost frame: with linkage names from the
// symbol table, by the symbol holding addr, or for an address in a
// moved fragment of a split procedure by the symbol at the procedure's
// entry (through the symbol's linkMoved link, or where it is mixed the
// procedures); with short names by the procedure's DWARF name where
// DWARF gives none. Where DWARF gives no frame at all (noDWARF), the
// STT_FILE of a local symbol holding addr is the frame's file; where it
// gives one, the name of addr's piece of the inline partition
// (pieceNames), if it has one, is the name.
func (m *Module) nameOutermost(f *Frame, piece int, addr uint64, o *Options, noDWARF bool) {
	switch o.Functions {
	case LinkageNames:
		if !noDWARF && piece >= 0 && m.names[piece] > 0 {
			s := &m.syms.syms[m.names[piece]-1]
			f.Function, f.StartAddr, f.HasStartAddr = s.name, s.addr, true
			return
		}
		i := m.syms.holding(addr)
		if i < 0 {
			return
		}
		s := &m.syms.syms[i]
		// Where DWARF has no frame, a local symbol's file stands in.
		if noDWARF && s.file != "" {
			f.File = s.file
		}
		switch link := m.moved[i]; {
		case link > 0:
			s = &m.syms.syms[link-1]
		case link == mixed:
			if proc := m.movedProc(addr); proc != nil {
				if e := m.syms.at(proc.Entry); e != nil && e.addr == proc.Entry {
					s = e
				}
			}
		}
		f.Function, f.StartAddr, f.HasStartAddr = s.name, s.addr, true
	case ShortNames:
		if proc := m.movedProc(addr); proc != nil && f.Function == "" {
			f.Function = proc.SourceName
		}
	}
}

// movedProc returns the procedure whose moved fragment holds addr, or
// nil.
func (m *Module) movedProc(addr uint64) *splitinfo.Proc {
	if loc, ok := m.lines.Procs().Lookup(addr); ok && loc.Frag > 0 {
		return loc.Proc
	}
	return nil
}

// demangleName demangles an Itanium C++ or Rust name as LLVM does, and
// returns any other name unchanged.
func demangleName(name string) string {
	if len(name) < 2 || name[0] != '_' {
		return name
	}
	if out, err := demangle.ToString(name, demangle.LLVMStyle); err == nil {
		return out
	}
	return name
}
