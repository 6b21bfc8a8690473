package linetable

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/splitdbg/splitdbg/splitinfo"
)

// MatchFiles returns the files of the table that name matches, by the
// rules debuggers use: the same path; or a path suffix at a '/' boundary
// ("a.c" and "src/a.c" match "./src/a.c"), either way round, so an
// absolute name matches a file recorded relative to a compile directory.
// If one file is named exactly, only it matches.
func (t *Table) MatchFiles(name string) []string {
	var out []string
	for _, id := range t.matchFiles(name, nil) {
		out = append(out, t.files[id])
	}
	return out
}

// matchFiles appends the ids of the files name matches to buf.
func (t *Table) matchFiles(name string, buf []uint32) []uint32 {
	name = path.Clean(name)
	t.lineIndex()
	// A match shares the base name: only those files are candidates.
	exact, suffix := buf[:0], []uint32(nil)
	for _, id := range t.byBase[path.Base(name)] {
		f := t.files[id]
		switch {
		case f == name:
			exact = append(exact, id)
		case hasPathSuffix(f, name), !path.IsAbs(f) && hasPathSuffix(name, strings.TrimPrefix(f, "./")):
			suffix = append(suffix, id)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	slices.SortFunc(suffix, func(a, b uint32) int { return strings.Compare(t.files[a], t.files[b]) })
	return suffix
}

func hasPathSuffix(p, suffix string) bool {
	if suffix == "" || suffix == "." {
		return false
	}
	return p == suffix || strings.HasSuffix(p, suffix) && p[len(p)-len(suffix)-1] == '/'
}

// Location is one breakpoint address.
type Location struct {
	Position
	// NoStmt reports that the fragment has rows of the line but none
	// marked is_stmt (BOLT drops the flag), so Addr is the first row of
	// its block rather than a statement start.
	NoStmt bool
}

// Breakpoint is the resolution of a location spec.
type Breakpoint struct {
	Spec string // as given
	// File and Line are the resolved source line for FILE:LINE specs, and
	// the position of the address for FUNC and *ADDR.
	File string
	Line int
	Locs []Location
}

// Procs returns the distinct procedures of the locations, in order.
func (b *Breakpoint) Procs() []*splitinfo.Proc {
	var out []*splitinfo.Proc
	for _, l := range b.Locs {
		if l.Proc != nil && !slices.Contains(out, l.Proc) {
			out = append(out, l.Proc)
		}
	}
	return out
}

// Resolve resolves a location spec: FUNC, FILE:LINE, FILE:FUNC (to pick one
// of several static functions of one name) or *ADDR.
func (t *Table) Resolve(spec string) (Breakpoint, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return Breakpoint{}, err
	}
	return t.ResolveSpec(s)
}

// ResolveSpec resolves a parsed location.
func (t *Table) ResolveSpec(s Spec) (Breakpoint, error) {
	switch {
	case s.IsAddr:
		return t.addrBreakpoint(s.Text, s.Addr)
	case s.Line > 0:
		return t.LineAddrs(s.File, s.Line)
	}
	return t.funcBreakpoint(s.Text, s.File, s.Func)
}

// ParseAddr parses "0x..." as hexadecimal and anything else as decimal.
func ParseAddr(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	base := 10
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		s, base = h, 16
	}
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, fmt.Errorf("bad address %q", s)
	}
	return v, nil
}

func (t *Table) addrBreakpoint(spec string, addr uint64) (Breakpoint, error) {
	b := Breakpoint{Spec: spec}
	pos, ok := t.PC(addr)
	if !ok {
		pos = Position{Addr: addr}
		if loc, ok := t.procs.Lookup(addr); ok {
			pos.Proc, pos.Frag = loc.Proc, loc.Frag
		}
	}
	b.File, b.Line = pos.File, pos.Line
	b.Locs = []Location{{Position: pos, NoStmt: !pos.IsStmt}}
	return b, nil
}

// LookupFunc returns the one procedure named by spec, FUNC or FILE:FUNC;
// several matches are an *AmbiguousError.
func (t *Table) LookupFunc(spec string) (*splitinfo.Proc, error) {
	file, name := "", spec
	if i := strings.LastIndexByte(spec, ':'); i > 0 && i < len(spec)-1 {
		file, name = spec[:i], spec[i+1:]
	}
	return t.lookupFunc(spec, file, name)
}

// funcBreakpoint resolves FUNC and FILE:FUNC: the start of every
// function of the name (gdb sets one breakpoint with a location in each
// of several static functions of one name; FILE:FUNC picks one), or, for
// the symbol of a moved fragment (foo.cold), the fragment's start.
func (t *Table) funcBreakpoint(spec, file, name string) (Breakpoint, error) {
	procs, err := t.funcProcs(spec, file, name)
	if err != nil {
		if pos, ok := t.fragmentStart(name); ok && file == "" {
			return Breakpoint{Spec: spec, File: pos.File, Line: pos.Line, Locs: []Location{{Position: pos}}}, nil
		}
		return Breakpoint{}, err
	}
	b := Breakpoint{Spec: spec}
	for _, p := range procs {
		b.Locs = append(b.Locs, Location{Position: t.FuncStart(p)})
	}
	if len(b.Locs) == 1 {
		b.File, b.Line = b.Locs[0].File, b.Locs[0].Line
	}
	return b, nil
}

// fragmentStart returns the position of the start of the moved fragment
// whose symbol is name.
func (t *Table) fragmentStart(name string) (Position, bool) {
	for p := range t.procs.Split() {
		for i, f := range p.Fragments {
			if i == 0 || f.Symbol != name {
				continue
			}
			pos, ok := t.PC(f.Start)
			if !ok {
				pos = Position{Addr: f.Start}
			}
			pos.Proc, pos.Frag = p, i
			return pos, true
		}
	}
	return Position{}, false
}

func (t *Table) lookupFunc(spec, file, name string) (*splitinfo.Proc, error) {
	procs, err := t.funcProcs(spec, file, name)
	if err != nil {
		return nil, err
	}
	if len(procs) == 1 {
		return procs[0], nil
	}
	var cands []string
	for _, p := range procs {
		cands = append(cands, qualifiedName(p))
	}
	return nil, &AmbiguousError{Spec: spec, Candidates: cands}
}

// funcProcs returns the procedures FUNC or FILE:FUNC names, at least one.
func (t *Table) funcProcs(spec, file, name string) ([]*splitinfo.Proc, error) {
	procs := t.procs.ByName(name)
	if file != "" {
		files := t.MatchFiles(file)
		procs = slices.DeleteFunc(procs, func(p *splitinfo.Proc) bool {
			return !slices.Contains(files, path.Clean(p.File)) && !slices.Contains(files, path.Clean(p.CompUnit))
		})
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("function %s: %w", spec, ErrNotFound)
	}
	return procs, nil
}

// qualifiedName is FILE:NAME for a procedure with a file, else NAME.
func qualifiedName(p *splitinfo.Proc) string {
	switch {
	case p.File != "":
		return p.File + ":" + p.Name
	case p.CompUnit != "":
		return p.CompUnit + ":" + p.Name
	}
	return p.Name
}

// FuncStart returns where a debugger stops for a breakpoint on the
// function: the first prologue_end row of the entry fragment (clang emits
// them), else the entry itself, which is what gdb does for GCC code. The
// "second row" rule some debuggers use is unsafe on optimized code: in
// BOLT's output of testdata/src/bolt/bolt.c, tally's second row follows a
// branch to its cold fragment, so a breakpoint there misses the calls
// that take it. The address is always in the entry fragment, never in
// moved code, whichever range DWARF lists first. The line reported is the
// last is_stmt row at the address, as gdb reports it.
func (t *Table) FuncStart(p *splitinfo.Proc) Position {
	hot := &p.Fragments[0]
	at := t.rowAt(p.Entry)
	if at < 0 {
		return Position{Addr: p.Entry, Proc: p}
	}
	first := at
	for first > 0 && t.rows[first-1].addr == p.Entry && !t.rows[first-1].isEnd() {
		first--
	}
	for i := first; i < len(t.rows) && t.rows[i].addr < hot.End && !t.rows[i].isEnd(); i++ {
		if r := &t.rows[i]; r.prologueEnd() && r.addr >= p.Entry {
			return t.position(t.stmtRowAt(r.addr, i), r.addr)
		}
	}
	return t.position(t.stmtRow(p.Entry, at), p.Entry)
}

// stmtRowAt returns the row a debugger reports for a stop at addr: the
// last is_stmt row at exactly addr, else the row covering addr, else
// fallback.
func (t *Table) stmtRowAt(addr uint64, fallback int) int {
	i := t.rowAt(addr)
	if i < 0 {
		return fallback
	}
	return t.stmtRow(addr, i)
}

// stmtRow is stmtRowAt for i, the row covering addr (rowAt(addr) >= 0).
func (t *Table) stmtRow(addr uint64, i int) int {
	for j := i; j >= 0 && t.rows[j].addr == addr && !t.rows[j].isEnd(); j-- {
		if t.rows[j].isStmt() {
			return j
		}
	}
	return i
}

// LineAddrs returns the breakpoint addresses of a source line: in every
// fragment holding rows of the line, one address per contiguous block of
// its rows — the first is_stmt row of the block — or, in a fragment of
// code BOLT laid out (it drops most is_stmt flags) with rows of the line
// but none is_stmt, the first row of each block, marked NoStmt. GCC and
// clang mean what they mark: their rows of a line without is_stmt (a
// shared epilogue, an instruction scheduled into another line) are no
// place to stop for it. Line-0 rows never match. A file name that matches several files
// is an *AmbiguousError.
//
// As in gdb 13: a location at a function's entry moves past its
// prologue, to the function's start (see FuncStart); and a line with no
// address (a blank line, a declaration, a line whose rows are none a
// statement) moves to the next line of the file that has one.
func (t *Table) LineAddrs(file string, line int) (Breakpoint, error) {
	spec := file + ":" + strconv.Itoa(line)
	var fbuf [4]uint32
	files := t.matchFiles(file, fbuf[:0])
	switch {
	case len(files) == 0:
		return Breakpoint{}, fmt.Errorf("%s: no file %s in the line table: %w", spec, file, ErrNotFound)
	case len(files) > 1:
		var cands []string
		for _, id := range files {
			cands = append(cands, t.files[id])
		}
		return Breakpoint{}, &AmbiguousError{Spec: spec, Candidates: cands}
	}
	fid := files[0]
	if b := t.lineAddrs(spec, fid, line); len(b.Locs) > 0 {
		return t.pastPrologue(b), nil
	}
	for l := line + 1; l < line+maxLineMove; l++ {
		if nb := t.lineAddrs(spec, fid, l); len(nb.Locs) > 0 {
			return t.pastPrologue(nb), nil
		}
	}
	return Breakpoint{Spec: spec, File: t.files[fid], Line: line}, fmt.Errorf("%s: no code: %w", spec, ErrNotFound)
}

// pastPrologue moves the locations of b that are a function's entry to
// the function's start, as gdb does for a line whose code begins at the
// entry; b's line becomes the start's when every location moved.
func (t *Table) pastPrologue(b Breakpoint) Breakpoint {
	moved := 0
	for i := range b.Locs {
		l := &b.Locs[i]
		if l.Proc == nil || l.Addr != l.Proc.Entry {
			continue
		}
		if pos := t.FuncStart(l.Proc); pos.Addr != l.Addr && pos.Line > 0 {
			l.Position, l.NoStmt = pos, false
			moved++
		}
	}
	if moved > 0 && moved == len(b.Locs) {
		b.File, b.Line = b.Locs[0].File, b.Locs[0].Line
	}
	return b
}

// maxLineMove bounds how far a breakpoint on a line without code looks
// for one that has code.
const maxLineMove = 200

// lineAddrs is LineAddrs for one file (by id) and line, without moving.
func (t *Table) lineAddrs(spec string, fid uint32, line int) Breakpoint {
	b := Breakpoint{Spec: spec, File: t.files[fid], Line: line}
	rows := t.lineRows(fid, line)
	if len(rows) == 0 {
		return b
	}
	// Blocks: runs of consecutive rows of the line within one fragment.
	type block struct {
		first, stmt int // row indices; stmt -1 if none is_stmt
		pos         Position
	}
	var bbuf [16]block
	blocks := bbuf[:0]
	prev := -2
	var frag splitinfo.Range // the fragment of the last lookup
	var loc splitinfo.Loc
	for _, ri := range rows {
		i := int(ri)
		r := &t.rows[i]
		if !frag.Contains(r.addr) {
			var ok bool
			if loc, ok = t.procs.Lookup(r.addr); ok {
				frag = loc.Fragment().Range
			} else {
				loc, frag = splitinfo.Loc{}, splitinfo.Range{}
			}
		}
		if n := len(blocks); n > 0 && i == prev+1 && blocks[n-1].pos.Proc == loc.Proc && blocks[n-1].pos.Frag == loc.Frag {
			if blocks[n-1].stmt < 0 && r.isStmt() {
				blocks[n-1].stmt = i
			}
		} else {
			// A new block: only its first row's position is kept.
			pos := t.rowPosition(i, r.addr)
			pos.Proc, pos.Frag = loc.Proc, loc.Frag
			s := -1
			if r.isStmt() {
				s = i
			}
			blocks = append(blocks, block{first: i, stmt: s, pos: pos})
		}
		prev = i
	}
	// Per fragment: statement starts if it has any, else block starts.
	b.Locs = make([]Location, 0, len(blocks))
	for k := range blocks {
		bl := &blocks[k]
		if bl.stmt >= 0 {
			pos := bl.pos // the same fragment: only the row differs
			r := &t.rows[bl.stmt]
			pos.Addr, pos.Column, pos.IsStmt, pos.PrologueEnd = r.addr, int(r.column), true, r.prologueEnd()
			b.Locs = append(b.Locs, Location{Position: pos})
			continue
		}
		if p := bl.pos.Proc; p == nil || p.Sources&splitinfo.FromBAT == 0 {
			continue // not BOLT's: no is_stmt means no statement here
		}
		hasStmt := false
		for j := range blocks {
			if blocks[j].stmt >= 0 && sameFragment(blocks[j].pos, bl.pos) {
				hasStmt = true
				break
			}
		}
		if !hasStmt {
			b.Locs = append(b.Locs, Location{Position: bl.pos, NoStmt: true})
		}
	}
	slices.SortFunc(b.Locs, func(x, y Location) int { return cmp.Compare(x.Addr, y.Addr) })
	b.Locs = slices.CompactFunc(b.Locs, func(x, y Location) bool { return x.Addr == y.Addr })
	return b
}

func sameFragment(a, b Position) bool { return a.Proc == b.Proc && a.Frag == b.Frag }
