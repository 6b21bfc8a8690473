package splitinfo

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo/bat"
	"github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

// Open builds the Table of the ELF file at path (the seed's sp_init).
func Open(path string) (*Table, error) { return elfx.OpenWith(path, FromOwnELF) }

// Read builds the Table of the ELF file read from r; name is used in
// error messages.
func Read(name string, r io.ReaderAt) (*Table, error) { return elfx.ReadWith(name, r, FromOwnELF) }

// FromOwnELF is FromELF for a caller that reads no more of f once it has
// the Table, as Open and Read do: the build lets go of each mapped
// section's resident pages when it is done with them. Other Files of the
// same file in the process share its mapping: they read the same bytes
// afterwards, faulted in again from the page cache.
func FromOwnELF(f *elfx.File) (*Table, error) { return buildTable(f, nil, true) }

// FromELF builds the Table of an opened ELF file. It is how splitdbg's
// own packages share one open file between the Table and other readers.
func FromELF(f *elfx.File) (*Table, error) { return FromELFIn(f, nil) }

// FromELFIn builds the Table of the procedures of f within scope s (nil:
// the whole file): each is the procedure FromELF builds, from the same
// evidence, and nothing outside s is decoded.
func FromELFIn(f *elfx.File, s *Scope) (*Table, error) { return buildTable(f, s, false) }

// buildTable is FromELFIn; with evict, it drops the resident pages of the
// sections it has read once it is done with them (see evictSections).
func buildTable(f *elfx.File, s *Scope, evict bool) (*Table, error) {
	if f.Type == elf.ET_REL {
		return nil, fmt.Errorf("%s: relocatable object: procedures need final addresses; link it first", f.Name)
	}
	b := &builder{f: f, fragAt: make(map[uint64]fragRef), scope: s, evict: evict}
	var syms []elfx.Symbol
	var err error
	if s != nil {
		syms = slices.DeleteFunc(slices.Clone(s.syms), func(s elfx.Symbol) bool { return !keepSymbol(&s) })
	} else {
		syms, err = codeSymbols(f)
		// The names point into the string table, not into .symtab.
		b.evictSections(func(s *elf.Section) bool { return s.Type == elf.SHT_SYMTAB })
	}
	if err != nil && !errors.Is(err, elfx.ErrNoSymbols) {
		return nil, err
	}
	b.addSymbols(syms)
	// Each subprogram merges as it is read: the list of them is never
	// held (at 300,000 functions it was as large as the table). The
	// subprograms' names are copies, and a unit's DIEs, ranges and
	// addresses are read once: the DWARF sections' pages go after each
	// unit.
	// A compressed section's bytes are read once, when it is
	// decompressed (dies.Load): they go after the first unit only.
	first := true
	hasDWARF, err := readSubprograms(f, s, b.addDWARF, func() {
		b.evictSections(func(s *elf.Section) bool {
			return strings.HasPrefix(s.Name, ".debug_") && (first || s.Flags&elf.SHF_COMPRESSED == 0)
		})
		first = false
	})
	if err != nil {
		return nil, err
	}
	if hasDWARF {
		b.checkDWARFCoverage()
	}
	if err := b.readSources(); err != nil {
		return nil, err
	}
	return b.finish()
}

// codeSymbols returns the code symbols of f that keepSymbol keeps, in
// table order, read in one pass into one slice: not through
// CodeSymbols, whose copy of the whole table the File would keep for as
// long as it is open.
func codeSymbols(f *elfx.File) ([]elfx.Symbol, error) {
	syms := make([]elfx.Symbol, 0, f.SymtabLen())
	err := f.EachCodeSymbol(func(s *elfx.Symbol) {
		if keepSymbol(s) {
			syms = append(syms, *s)
		}
	})
	return syms, err
}

// readSubprograms calls add with each subprogram with code of f's
// DWARF in the units of scope s (nil: every unit), and unitDone after
// each unit; it reports whether f has DWARF.
func readSubprograms(f *elfx.File, s *Scope, add func(*dwarfFunc), unitDone func()) (bool, error) {
	d, err := dies.Load(f)
	if err != nil || d == nil {
		return false, err
	}
	lines, err := dwarfline.Load(f)
	if err != nil {
		return false, err
	}
	units := func(yield func(int) bool) {
		for ui := range s.Units(len(d.Units())) {
			if !yield(ui) { // returns when dwarfFuncs is done with the unit
				return
			}
			unitDone()
		}
	}
	return true, dwarfFuncs(d, lines, isCodeRange, units, add) // its errors name the file
}

// builder merges the evidence of all sources into procedures.
type builder struct {
	f      *elfx.File
	scope  *Scope // nil: the whole file
	procs  []*bproc
	fragAt map[uint64]fragRef // fragment start → owner

	blocks *bbaddrmap.Index    // set by the BB address map's merge
	bat    *bat.Table          // set by BAT's merge
	order  []map[uint64]uint32 // by rank: fragment start → order key (see splitSource)
	keyers []logicalKeyer      // the sources LogicalKey asks
	evict  bool                // let go of sections' pages (evictSections)
}

// evictSections drops from the resident set the pages of the mapped
// sections of b's file (and its debug file) that match, once the build is
// done with them (elfx.File.EvictSection): a whole-file build then holds the
// pages of the section it reads, not of every section it has read. Only
// a builder that owns its file does; one that shares it leaves the pages
// for the other readers.
func (b *builder) evictSections(match func(*elf.Section) bool) {
	if !b.evict {
		return
	}
	for o := b.f; o != nil; o = o.Debug {
		for _, s := range o.Sections {
			if match(s) {
				b.f.EvictSection(s)
			}
		}
	}
}

type bproc struct {
	Proc
	// die is the subprogram that owns the entry; each fragment's
	// Subprogram is the one whose ranges hold it.
	die    dwarf.Offset
	orphan bool // a fragment-named symbol whose parent was not found
	dead   bool // merged into another procedure
}

type fragRef struct {
	p *bproc
	i int
}

func (p *bproc) conflict(addr uint64, format string, args ...any) {
	p.Conflicts = append(p.Conflicts, Conflict{Addr: addr, Detail: fmt.Sprintf(format, args...)})
}

func (b *builder) addFragment(p *bproc, f Fragment, die dwarf.Offset) {
	f.Subprogram = die
	p.Fragments = append(p.Fragments, f)
	p.Sources |= f.Sources
	if _, taken := b.fragAt[f.Start]; !taken {
		b.fragAt[f.Start] = fragRef{p, len(p.Fragments) - 1}
	}
}

// isCodeRange rejects the addresses linkers give to discarded code: 0
// and the -1/-2 tombstones.
func isCodeRange(r Range) bool {
	return r.Start != 0 && r.Start < ^uint64(1)
}

// keepSymbol reports whether a code symbol starts or names a fragment:
// a function symbol, or an untyped one named as a fragment, at an
// address of code.
func keepSymbol(s *elfx.Symbol) bool {
	if !s.IsFunc() {
		// Untyped code symbols count only as named fragments.
		if _, _, ok := fragmentName(s.Name); !ok {
			return false
		}
	}
	return isCodeRange(Range{s.Value, s.Value + 1})
}

// symGroup is the set of function symbols at one address.
type symGroup struct {
	addr, size uint64
	names      []string // primary first
	local      bool
	file       string
	proc       *bproc
}

// fragment reports whether the group's name is a fragment's (foo.cold):
// its parent is then the procedure it belongs to.
func (g *symGroup) fragment() bool {
	_, _, ok := fragmentName(g.names[0])
	return ok
}

func (b *builder) addSymbols(syms []elfx.Symbol) {
	// Sort small keys, not the symbols: by address, then by name; then
	// put the symbols in that order in place.
	type key struct {
		value uint64
		i     int32
	}
	keys := make([]key, len(syms))
	for i := range syms {
		keys[i] = key{syms[i].Value, int32(i)}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.value != b.value {
			return cmp.Compare(a.value, b.value)
		}
		x, y := &syms[a.i], &syms[b.i]
		return cmp.Or(strings.Compare(x.Name, y.Name), strings.Compare(x.File, y.File), cmp.Compare(a.i, b.i))
	})
	permute(syms, func(i int) int { return int(keys[i].i) })
	keys = nil
	ngroups := 0
	for i := range syms {
		if i == 0 || syms[i].Value != syms[i-1].Value {
			ngroups++
		}
	}
	// One backing array for the groups and one for their names (a
	// group's names are among its symbols'): not one allocation each.
	groups := make([]symGroup, 0, ngroups)
	names := make([]string, 0, len(syms))
	for i := 0; i < len(syms); {
		j := i + 1
		for j < len(syms) && syms[j].Value == syms[i].Value {
			j++
		}
		at := syms[i:j]
		p := &at[preferred(at)]
		start := len(names)
		names = append(names, p.Name)
		g := symGroup{addr: p.Value, local: p.Bind == elf.STB_LOCAL, file: p.File}
		for k := range at {
			if !slices.Contains(names[start:], at[k].Name) {
				names = append(names, at[k].Name)
			}
			g.size = max(g.size, at[k].Size)
		}
		g.names = names[start:len(names):len(names)]
		groups = append(groups, g)
		i = j
	}
	groups = b.sizeUnsized(groups, syms)
	// Groups by name, for finding parents: the first group of a name in
	// a map, the others chained (most names are unique).
	type named struct {
		g    *symGroup
		next int32 // index of the next entry with the same name, -1 at the end
	}
	first := make(map[string]int32, len(groups))
	chain := make([]named, 0, len(names))
	for gi := range groups {
		g := &groups[gi]
		for _, n := range g.names {
			next := int32(-1)
			if i, ok := first[n]; ok {
				next = i
			}
			first[n] = int32(len(chain))
			chain = append(chain, named{g, next})
		}
	}
	candidates := func(name string, yield func(*symGroup)) {
		i, ok := first[name]
		for ok && i >= 0 {
			yield(chain[i].g)
			i = chain[i].next
		}
	}
	// Procedures start at every symbol that is not a fragment.
	for gi := range groups {
		if g := &groups[gi]; !g.fragment() {
			g.proc = b.newProc(g)
		}
	}
	// Attach fragments to their parents, following chains such as
	// foo.cold.cold.0 → foo.cold → foo.
	var resolve func(g *symGroup, depth int) *bproc
	resolve = func(g *symGroup, depth int) *bproc {
		if g.proc != nil {
			return g.proc
		}
		name, kind, _ := fragmentName(g.names[0])
		parent := pickParent(g, func(yield func(*symGroup)) { candidates(name, yield) })
		if parent == nil || depth > 8 {
			g.proc = b.newProc(g)
			g.proc.orphan = true
			g.proc.conflict(g.addr, "fragment symbol %s has no parent symbol %s", g.names[0], name)
			return g.proc
		}
		p := resolve(parent, depth+1)
		if p.orphan {
			// The parent chain ended without an entry: keep g on its own.
			g.proc = b.newProc(g)
			g.proc.orphan = true
			return g.proc
		}
		b.addFragment(p, Fragment{Range: Range{g.addr, g.addr + g.size}, Symbol: g.names[0], Kind: kind, Sources: FromSymbols}, 0)
		g.proc = p
		return p
	}
	for gi := range groups {
		resolve(&groups[gi], 0)
	}
}

// permute puts s in the order where s[i] is the element at index from(i),
// in place: from is a permutation of s's indices.
func permute[T any](s []T, from func(i int) int) {
	done := make([]bool, len(s))
	for i := range s {
		if done[i] {
			continue
		}
		// Follow the cycle through i: each element moves into the slot
		// that takes it.
		tmp := s[i]
		j := i
		for {
			done[j] = true
			k := from(j)
			if k == i {
				s[j] = tmp
				break
			}
			s[j] = s[k]
			j = k
		}
	}
}

// pickParent chooses among the symbols named like g's parent: the one in
// the same STT_FILE, else a global one, else the nearest.
func pickParent(g *symGroup, cands func(yield func(*symGroup))) *symGroup {
	var best *symGroup
	score := func(c *symGroup) (int, uint64) {
		s := 2
		switch {
		case c.local && g.file != "" && c.file == g.file:
			s = 0
		case !c.local:
			s = 1
		}
		d := c.addr - g.addr
		if g.addr > c.addr {
			d = g.addr - c.addr
		}
		return s, d
	}
	cands(func(c *symGroup) {
		if c == g {
			return
		}
		if best == nil {
			best = c
			return
		}
		cs, cd := score(c)
		bs, bd := score(best)
		if cs < bs || cs == bs && cd < bd {
			best = c
		}
	})
	return best
}

func (b *builder) newProc(g *symGroup) *bproc {
	p := &bproc{Proc: Proc{Name: g.names[0], Aliases: slices.Clone(g.names[1:]), Entry: g.addr, Local: g.local, CompUnit: g.file}}
	b.addFragment(p, Fragment{Range: Range{g.addr, g.addr + g.size}, Symbol: g.names[0], Kind: Hot, Sources: FromSymbols}, 0)
	b.procs = append(b.procs, p)
	return p
}

// addDWARF merges one subprogram into the procedures.
func (b *builder) addDWARF(fn *dwarfFunc) {
	var owner *bproc
	for _, r := range fn.ranges {
		if owner = b.entryProc(r.Start); owner != nil {
			break
		}
	}
	if owner == nil {
		b.addDWARFOnly(fn)
		return
	}
	if owner.die != 0 {
		// Identical code folding: two subprograms share the code.
		if n := fn.name; n != "" && !owner.HasName(n) {
			owner.Aliases = append(owner.Aliases, n)
		}
		owner.conflict(owner.Entry, "DWARF subprogram %s at %#x describes the same code as %s", fn.name, fn.off, owner.SourceName)
		return
	}
	owner.die = fn.off
	owner.Sources |= FromDWARF
	owner.SourceName, owner.CompUnit, owner.File, owner.Line = fn.name, fn.cu, fn.file, fn.line
	if fn.hasLow && fn.lowPC != owner.Entry && len(fn.ranges) > 1 {
		owner.conflict(fn.lowPC, "DW_AT_low_pc %#x is not the entry symbol %s", fn.lowPC, owner.Name)
	}
	for _, r := range fn.ranges {
		b.claim(owner, evidence{src: FromDWARF, name: fn.name, die: fn.off, exact: true}, r)
	}
}

// evidence is one source's claim that a range belongs to a procedure.
type evidence struct {
	src  Source
	name string       // what the source calls the function, for conflicts
	die  dwarf.Offset // the subprogram, for DWARF
	// exact: the source knows the range's exact end (DWARF); others may
	// stop short of padding and do not correct symbol sizes.
	exact bool
}

// claim records that a source places range r in owner.
func (b *builder) claim(owner *bproc, ev evidence, r Range) {
	ref, ok := b.fragAt[r.Start]
	if ok && ref.p.dead {
		ok = false
	}
	if !ok {
		// A range with no symbol: inside one of owner's fragments, or new.
		for i := range owner.Fragments {
			if f := &owner.Fragments[i]; f.Start <= r.Start && r.End <= f.End {
				f.Sources |= ev.src
				if ev.die != 0 {
					f.Subprogram = ev.die
				}
				return
			}
		}
		b.addFragment(owner, Fragment{Range: r, Kind: Part, Sources: ev.src}, ev.die)
		return
	}
	p, f := ref.p, &ref.p.Fragments[ref.i]
	if p != owner {
		if ref.i == 0 && !p.orphan {
			owner.conflict(r.Start, "%s range [%#x,%#x) of %s starts at procedure %s", ev.src, r.Start, r.End, ev.name, p.Name)
			return
		}
		// A compiler's or optimizer's own record beats a name: move the
		// fragment.
		moved := *f
		owner.conflict(r.Start, "symbols attach %s to %s; %s puts it in %s", f.Symbol, p.Name, ev.src, ev.name)
		b.removeFragment(p, ref.i)
		b.fragAt[r.Start] = fragRef{owner, len(owner.Fragments)}
		if moved.Kind == Hot {
			moved.Kind = Part
			if _, k, ok := fragmentName(moved.Symbol); ok {
				moved.Kind = k
			}
		}
		moved.Subprogram = 0
		owner.Fragments = append(owner.Fragments, moved)
		ref = fragRef{owner, len(owner.Fragments) - 1}
		f = &owner.Fragments[ref.i]
	}
	f.Sources |= ev.src
	owner.Sources |= ev.src
	if ev.die != 0 {
		f.Subprogram = ev.die
	}
	if ev.exact && r.End != f.End {
		owner.conflict(r.Start, "symbol %s ends at %#x, DWARF range at %#x; using DWARF", f.Symbol, f.End, r.End)
		f.End = r.End
	}
}

func (b *builder) removeFragment(p *bproc, i int) {
	p.Fragments = slices.Delete(p.Fragments, i, i+1)
	for j := range p.Fragments {
		b.fragAt[p.Fragments[j].Start] = fragRef{p, j}
	}
	if len(p.Fragments) == 0 || i == 0 {
		p.dead = true
		for j := range p.Fragments {
			delete(b.fragAt, p.Fragments[j].Start)
		}
	}
}

// addDWARFOnly handles a subprogram whose ranges hold no procedure entry.
func (b *builder) addDWARFOnly(fn *dwarfFunc) {
	touched := false
	for _, r := range fn.ranges {
		if ref, ok := b.fragAt[r.Start]; ok && !ref.p.dead {
			// A fragment attached by name, described by its own subprogram
			// (GCC's foo.part.N is a concrete out-of-line instance of foo).
			f := &ref.p.Fragments[ref.i]
			f.Sources |= FromDWARF
			f.Subprogram = fn.off
			ref.p.Sources |= FromDWARF
			touched = true
		}
	}
	if touched {
		return
	}
	// No symbol: a procedure known only from DWARF. Without a symbol the
	// entry is DW_AT_low_pc, else DW_AT_entry_pc-less first range.
	entry := fn.ranges[0].Start
	first := 0
	if fn.hasLow {
		for i, r := range fn.ranges {
			if r.Contains(fn.lowPC) {
				entry, first = fn.lowPC, i
				break
			}
		}
	}
	name := fn.name
	if name == "" {
		name = fn.linkage
	}
	p := &bproc{Proc: Proc{Name: name, SourceName: fn.name, Entry: entry, CompUnit: fn.cu, File: fn.file, Line: fn.line}, die: fn.off}
	b.addFragment(p, Fragment{Range: fn.ranges[first], Kind: Hot, Sources: FromDWARF}, fn.off)
	for i, r := range fn.ranges {
		if i != first {
			b.addFragment(p, Fragment{Range: r, Kind: Part, Sources: FromDWARF}, fn.off)
		}
	}
	if len(fn.ranges) > 1 && !fn.hasLow {
		p.conflict(entry, "no entry symbol: entry taken from the first DWARF range")
	}
	b.procs = append(b.procs, p)
}

// checkDWARFCoverage reports fragments that symbols attach to a procedure
// described by DWARF but that are not in its subprogram's ranges.
func (b *builder) checkDWARFCoverage() {
	for _, p := range b.procs {
		if p.dead || p.die == 0 {
			continue
		}
		for i := range p.Fragments {
			f := &p.Fragments[i]
			switch d := f.Subprogram; {
			case d == p.die:
			case d == 0:
				p.conflict(f.Start, "fragment %s [%#x,%#x) is in no DW_AT_ranges of %s", f.Symbol, f.Start, f.End, p.displayName())
			default:
				p.conflict(f.Start, "fragment %s [%#x,%#x) is described by its own DWARF subprogram", f.Symbol, f.Start, f.End)
			}
		}
	}
}

// parallel calls f(0) ... f(n-1) on GOMAXPROCS goroutines.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

func (p *Proc) displayName() string {
	if p.SourceName != "" {
		return p.SourceName
	}
	return p.Name
}

// finish finds branch sites, orders fragments logically and builds the
// table.
func (b *builder) finish() (*Table, error) {
	b.fragAt = nil // the table holds the procedures; the index of starts is done
	decode := branchDecoder(b.f)
	var split []*Proc
	procs := make([]*Proc, 0, len(b.procs))
	for _, p := range b.procs {
		if p.dead || len(p.Fragments) == 0 {
			continue
		}
		// Fragment 0 holds the entry; the rest start in address order.
		rest := p.Fragments[1:]
		slices.SortFunc(rest, func(x, y Fragment) int { return cmp.Compare(x.Start, y.Start) })
		if len(p.Fragments) > 1 && decode != nil {
			split = append(split, &p.Proc)
		}
		procs = append(procs, &p.Proc)
	}
	b.procs = nil
	// Decoding the code of split procedures is the costly part: share it
	// among the processors.
	parallel(len(split), func(i int) { orderLogically(split[i], decode) })
	split = nil
	b.evictSections(func(s *elf.Section) bool { return s.Flags&elf.SHF_EXECINSTR != 0 })
	for _, p := range procs {
		if len(p.Fragments) > 2 {
			b.orderBySource(p)
		}
	}
	slices.SortFunc(procs, func(x, y *Proc) int { return cmp.Or(cmp.Compare(x.Entry, y.Entry), strings.Compare(x.Name, y.Name)) })
	t, err := newTable(procs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.f.Name, err)
	}
	t.blocks, t.bat, t.keyers = b.blocks, b.bat, b.keyers
	return t, nil
}
