package splitinfo

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/splitdbg/splitdbg/internal/addrindex"
	"github.com/splitdbg/splitdbg/splitinfo/bat"
	"github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

// Table holds the procedures of one ELF file with an address index over
// all their fragments and a name index. It is immutable and safe for
// concurrent use.
type Table struct {
	procs []*Proc     // the builder's records, not copies of them
	spans []span      // every fragment, sorted by start, non-overlapping
	names []nameEntry // sorted by name

	dir addrindex.Dir // page directory over the spans' starts

	blocks *bbaddrmap.Index // nil without a BB address map
	bat    *bat.Table       // nil without BOLT address translation
	keyers []logicalKeyer   // the sources that answer LogicalKey
}

// span is one fragment in the address index.
type span struct {
	start   uint64
	length  uint32
	logical uint32 // logical offset of start within the procedure
	proc    int32
	frag    int32
}

func (s *span) end() uint64 { return s.start + uint64(s.length) }

type nameEntry struct {
	name string
	proc int32
}

// NewTable builds a Table from procedures. Each procedure must have at
// least one fragment, Fragments[0] must contain Entry, and fragments must
// be non-empty. Where fragments of different procedures overlap, the
// address index keeps the earlier-starting one and both procedures get a
// Conflict. NewTable takes ownership of procs.
func NewTable(procs []Proc) (*Table, error) {
	ptrs := make([]*Proc, len(procs))
	for i := range procs {
		ptrs[i] = &procs[i]
	}
	return newTable(ptrs)
}

// newTable is NewTable over procedures held elsewhere.
func newTable(procs []*Proc) (*Table, error) {
	t := &Table{procs: procs}
	n := 0
	for _, p := range procs {
		if len(p.Fragments) == 0 {
			return nil, fmt.Errorf("splitinfo: procedure %q has no fragments", p.Name)
		}
		if !p.Fragments[0].Contains(p.Entry) {
			return nil, fmt.Errorf("splitinfo: procedure %q: entry %#x is not in its first fragment [%#x,%#x)",
				p.Name, p.Entry, p.Fragments[0].Start, p.Fragments[0].End)
		}
		var size uint64
		for j := range p.Fragments {
			f := &p.Fragments[j]
			if f.End <= f.Start {
				return nil, fmt.Errorf("splitinfo: procedure %q: empty fragment [%#x,%#x)", p.Name, f.Start, f.End)
			}
			size += f.Len()
			if f.Len() > math.MaxUint32 || size > math.MaxUint32 {
				return nil, fmt.Errorf("splitinfo: procedure %q: larger than 4 GiB", p.Name)
			}
		}
		n += len(p.Fragments)
	}
	if len(procs) >= 1<<31 || n >= 1<<31 {
		return nil, fmt.Errorf("splitinfo: too many procedures")
	}
	t.spans = make([]span, 0, n)
	for i, p := range procs {
		var logical uint64
		for j := range p.Fragments {
			f := &p.Fragments[j]
			t.spans = append(t.spans, span{start: f.Start, length: uint32(f.Len()), logical: uint32(logical), proc: int32(i), frag: int32(j)})
			logical += f.Len()
		}
	}
	slices.SortFunc(t.spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.length, a.length), cmp.Compare(a.proc, b.proc))
	})
	// Clip overlaps so that the index is a sorted set of disjoint spans.
	out := t.spans[:0]
	for _, s := range t.spans {
		if len(out) > 0 {
			prev := &out[len(out)-1]
			if pe := prev.end(); s.start < pe {
				if s.proc != prev.proc {
					t.conflict(prev.proc, s.start, fmt.Sprintf("overlaps %s [%#x,%#x)", procs[s.proc].Name, s.start, s.end()))
					t.conflict(s.proc, s.start, fmt.Sprintf("overlaps %s [%#x,%#x)", procs[prev.proc].Name, prev.start, pe))
				}
				if s.end() <= pe {
					continue
				}
				cut := pe - s.start
				s.logical += uint32(cut)
				s.length -= uint32(cut)
				s.start = pe
			}
		}
		out = append(out, s)
	}
	t.spans = slices.Clip(out)
	t.buildIndex()

	t.names = make([]nameEntry, 0, len(procs))
	for i, p := range procs {
		t.names = append(t.names, nameEntry{p.Name, int32(i)})
		if p.SourceName != "" && p.SourceName != p.Name {
			t.names = append(t.names, nameEntry{p.SourceName, int32(i)})
		}
		for _, a := range p.Aliases {
			t.names = append(t.names, nameEntry{a, int32(i)})
		}
	}
	slices.SortFunc(t.names, func(a, b nameEntry) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(a.proc, b.proc))
	})
	t.names = slices.CompactFunc(t.names, func(a, b nameEntry) bool { return a == b })
	return t, nil
}

func (t *Table) buildIndex() { t.dir = addrindex.NewDir(len(t.spans), t.spanStart) }

func (t *Table) spanStart(i int) uint64 { return t.spans[i].start }

func (t *Table) conflict(proc int32, addr uint64, detail string) {
	p := t.procs[proc]
	p.Conflicts = append(p.Conflicts, Conflict{Addr: addr, Detail: detail})
}

// Len returns the number of procedures.
func (t *Table) Len() int { return len(t.procs) }

// Proc returns the i'th procedure, in entry address order for tables
// built by New.
func (t *Table) Proc(i int) *Proc { return t.procs[i] }

// All yields every procedure.
func (t *Table) All() iter.Seq[*Proc] {
	return func(yield func(*Proc) bool) {
		for _, p := range t.procs {
			if !yield(p) {
				return
			}
		}
	}
}

// Split yields the procedures that have more than one fragment.
func (t *Table) Split() iter.Seq[*Proc] {
	return func(yield func(*Proc) bool) {
		for _, p := range t.procs {
			if p.Split() && !yield(p) {
				return
			}
		}
	}
}

// Loc is the result of an address lookup.
type Loc struct {
	Proc *Proc
	// Frag is the index of the fragment in Proc.Fragments.
	Frag int
	// Offset is the logical offset: the offset of the address within the
	// procedure's fragments concatenated in logical order.
	Offset uint64
}

// Fragment returns the fragment the address is in.
func (l Loc) Fragment() *Fragment { return &l.Proc.Fragments[l.Frag] }

// Lookup returns the procedure whose fragments contain addr, in any
// fragment (the seed's address_to_procedure). It does not allocate.
func (t *Table) Lookup(addr uint64) (Loc, bool) {
	// The span starting last at or below addr, searched among the few
	// spans of addr's page: a directory line and a span line.
	i := t.dir.Find(addr, t.spanStart)
	if i < 0 {
		return Loc{}, false
	}
	s := &t.spans[i]
	if addr-s.start >= uint64(s.length) {
		return Loc{}, false
	}
	return Loc{Proc: t.procs[s.proc], Frag: int(s.frag), Offset: uint64(s.logical) + addr - s.start}, true
}

// ByName returns the procedures named name: by symbol, alias or DWARF
// name, and "C.name" for the cgo view of a C function. Static functions
// of the same name in different compile units are distinct procedures;
// tell them apart by CompUnit.
func (t *Table) ByName(name string) []*Proc {
	out := t.byName(name)
	if c, ok := strings.CutPrefix(name, "C."); ok && len(out) == 0 {
		out = t.byName(c)
	}
	return out
}

func (t *Table) byName(name string) []*Proc {
	i, _ := slices.BinarySearchFunc(t.names, name, func(e nameEntry, n string) int { return strings.Compare(e.name, n) })
	var out []*Proc
	for ; i < len(t.names) && t.names[i].name == name; i++ {
		p := t.procs[t.names[i].proc]
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return out
}
