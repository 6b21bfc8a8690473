package linetable

import (
	"strings"

	"github.com/splitdbg/splitdbg/internal/dwarfline"
)

// FileNames are a source file's names in the three forms symbolizers
// print (llvm-symbolizer's FileLineInfoKind): Absolute joins the unit's
// compilation directory, the entry's include directory and its name as
// written, without cleaning ("./demo/demo.c"); Relative leaves out the
// compilation directory; Base is the name's last element.
type FileNames struct {
	Absolute, Relative, Base string
}

// PathStyle selects one of a file's FileNames.
type PathStyle uint8

const (
	PathAbsolute PathStyle = iota // llvm-symbolizer's default
	PathRelative                  // --relativenames
	PathBase                      // --basenames
)

// Name returns the name of n in style s, "" for a nil n.
func (n *FileNames) Name(s PathStyle) string {
	switch {
	case n == nil:
		return ""
	case s == PathRelative:
		return n.Relative
	case s == PathBase:
		return n.Base
	}
	return n.Absolute
}

// appendFileNames appends the names of p's file entries from len(dst)
// on (DW_LNE_define_file adds entries as the program runs).
func appendFileNames(dst []*FileNames, p *dwarfline.Program) []*FileNames {
	for i := len(dst); i < len(p.Entries); i++ {
		dst = append(dst, fileNames(p, i))
	}
	return dst
}

// fileNames joins file entry i of p as the DWARF 5 specification
// (section 6.2.4, items 11 and 12) and LLVM's line-table reader do: a
// relative name below its include directory, a relative include
// directory below the compilation directory, except that in DWARF 5
// directory 0 is the compilation directory itself.
func fileNames(p *dwarfline.Program, i int) *FileNames {
	e := p.Entries[i]
	if isAbsPath(e.Name) {
		return &FileNames{e.Name, e.Name, baseName(e.Name)}
	}
	var dir string
	v5 := p.Version >= 5
	switch {
	case v5 && e.Dir < uint64(len(p.RawDirs)):
		dir = p.RawDirs[e.Dir]
	case !v5 && e.Dir > 0 && e.Dir <= uint64(len(p.RawDirs)):
		dir = p.RawDirs[e.Dir-1]
	}
	rel := e.Name
	if !v5 || e.Dir != 0 {
		rel = appendPath(dir, e.Name)
	}
	abs := appendPath(dir, e.Name)
	if (!v5 || e.Dir != 0) && p.CompDir != "" && !isAbsPath(dir) {
		abs = appendPath(appendPath(p.CompDir, dir), e.Name)
	}
	return &FileNames{abs, rel, baseName(e.Name)}
}

// appendPath adds elem to dir as a path component, with one separator
// between them and no other change (LLVM's sys::path::append).
func appendPath(dir, elem string) string {
	switch {
	case elem == "":
		return dir
	case dir == "":
		return elem
	case strings.HasSuffix(dir, "/"):
		return dir + strings.TrimLeft(elem, "/")
	case strings.HasPrefix(elem, "/"):
		return dir + elem
	}
	return dir + "/" + elem
}

func isAbsPath(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) ||
		len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

func packDisc(d int) [3]uint8 {
	v := uint32(min(max(d, 0), 1<<24-1))
	return [3]uint8{uint8(v), uint8(v >> 8), uint8(v >> 16)}
}

func (r *row) discriminator() int { return int(r.disc[0]) | int(r.disc[1])<<8 | int(r.disc[2])<<16 }

// LineInfo is the source position of an address as a symbolizer prints
// it.
type LineInfo struct {
	File          string     // the cleaned name, as Position's
	Names         *FileNames // nil when the source has none (ESL)
	Line, Column  int
	Discriminator int
}

// LineInfo returns pc's position as PC does (the last row at or below
// pc in its sequence), with the file's header names and the row's
// discriminator. It does not allocate.
func (t *Table) LineInfo(pc uint64) (LineInfo, bool) {
	return t.LineInfoAt(t.RowIndex(pc))
}

// RowIndex returns the index of the row LineInfo reads for pc, or -1:
// a caller that looks up many addresses can find all their rows before
// reading any (LineInfoAt), so that the memory reads of the searches
// overlap.
func (t *Table) RowIndex(pc uint64) int { return t.rowAt(pc) }

// TouchRow reads the first of the rows RowIndex(pc) searches, and
// returns it: a caller that looks up many addresses touches all their
// rows before searching any, so that the cache misses overlap.
func (t *Table) TouchRow(pc uint64) uint64 {
	lo, hi, ok := t.dir.Bounds(pc)
	if !ok || lo >= hi {
		return 0
	}
	return t.start(lo)
}

// LineInfoAt returns the position of row i from RowIndex, false for -1.
func (t *Table) LineInfoAt(i int) (LineInfo, bool) {
	if i < 0 {
		return LineInfo{}, false
	}
	r := &t.rows[i]
	return LineInfo{File: t.files[r.file], Names: t.names[r.file], Line: int(r.line), Column: int(r.column),
		Discriminator: r.discriminator()}, true
}
