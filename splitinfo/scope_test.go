package splitinfo

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestScopeHoldsFragments checks, on GCC's and clang's split functions,
// that the scope of a procedure's entry holds its moved fragments (they
// are in the same unit, or closeOver adds theirs), that the procedure
// built over it is the whole file's, and that the same comparison fails
// for a scope that lacks the cold fragment's symbol: a scope is only
// right when it has every fragment.
func TestScopeHoldsFragments(t *testing.T) {
	for _, name := range []string{"gcc-cold", "gcc-cold-dwarf4", "clang22-mfs", "clang19-bbsections", "bolt22", "cgo"} {
		t.Run(name, func(t *testing.T) {
			f, err := elfx.Open(testbin.Path(t, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			whole, err := FromELF(f)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for p := range whole.Split() {
				s, err := ScopeOfAddrs(f, []uint64{p.Entry})
				if err != nil {
					t.Fatal(err)
				}
				if s == nil {
					t.Errorf("%s: no scope for the entry of %s", name, p.Name)
					continue
				}
				for _, fr := range p.Fragments {
					if !s.Holds(fr.Start) {
						t.Errorf("%s: the scope of %s does not hold its fragment %s at %#x", name, p.Name, fr.Symbol, fr.Start)
					}
				}
				if d := cmp.Diff(procJSON(t, whole, p.Entry), procJSON(t, build(t, f, s), p.Entry)); d != "" {
					t.Errorf("%s: %s over its scope differs (-whole +scoped):\n%s", name, p.Name, d)
				}
				// The same units, but the ranges and symbols of the entry
				// fragment only: the cold fragment's symbol is lost.
				hot := p.Fragments[0].Range
				wrong := &Scope{units: s.units, ranges: []Range{hot}}
				for _, sym := range s.syms {
					if hot.Contains(sym.Value) {
						wrong.syms = append(wrong.syms, sym)
					}
				}
				if procJSON(t, whole, p.Entry) == procJSON(t, build(t, f, wrong), p.Entry) {
					t.Errorf("%s: %s built without its cold fragment's symbol is the whole file's", name, p.Name)
				}
				n++
			}
			if n == 0 {
				t.Fatalf("%s: no split procedure", name)
			}
		})
	}
}

func build(t *testing.T, f *elfx.File, s *Scope) *Table {
	t.Helper()
	tab, err := FromELFIn(f, s)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// procJSON is `splitdbg funcs -json`'s object of the procedure at entry.
func procJSON(t *testing.T, tab *Table, entry uint64) string {
	t.Helper()
	loc, ok := tab.Lookup(entry)
	if !ok {
		return "no procedure"
	}
	return string(loc.Proc.AppendJSON(nil))
}

// TestScopeFallsBack checks the questions a scope cannot answer: an
// address in no unit (the ELF entry point, _start, has no DWARF) and a
// name no symbol has are the whole file (nil).
func TestScopeFallsBack(t *testing.T) {
	f, err := elfx.Open(testbin.Path(t, "gcc-cold"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s, err := ScopeOfAddrs(f, []uint64{f.Entry}); err != nil || s != nil {
		t.Errorf("ScopeOfAddrs(_start %#x) = %v, %v; want nil (the whole file)", f.Entry, s, err)
	}
	if s, err := ScopeOfName(f, "no_such_function"); err != nil || s != nil {
		t.Errorf("ScopeOfName(no_such_function) = %v, %v; want nil", s, err)
	}
}

// TestNameKey checks the property closeOver's one pass rests on: a
// name whose rootName is r, or that rootsFilter accepts for the root r,
// has r's nameKey, however the string table goes on after it; and
// names that differ before their first '.' have different keys.
func TestNameKey(t *testing.T) {
	for _, r := range []string{"", "f", "main", "KQ119_f1", "KQ119_f12", "KQ119_f1250", "a_name_of_sixteen", "foo.constprop.0", "@lead"} {
		key := nameKey([]byte(r))
		for _, name := range []string{r, r + ".cold", r + ".cold.0", r + ".part.12", r + ".__part.3", r + ".isra.0.cold", r + ".cold.1", r + "@@GLIBC_2.2.5", r + "@V", r + ".cold@V1"} {
			for _, rest := range []string{"\x00", "\x00next_name\x00", ".", "@"} {
				b := []byte(name + rest)
				if got := nameKey(b); got != key {
					t.Errorf("nameKey(%q) = %#x, nameKey(%q) = %#x; want equal", b, got, r, key)
				}
				// At the end of the table, without its NUL.
				if got := nameKey([]byte(name)); got != key {
					t.Errorf("nameKey(%q) without a NUL = %#x, want %#x", name, got, key)
				}
			}
		}
	}
	seen := make(map[uint64]string)
	for i := range 3000 {
		for _, n := range []string{fmt.Sprintf("KQ119_f%04d", i), fmt.Sprintf("f%d", i), fmt.Sprintf("a_longer_function_name_%d", i)} {
			k := nameKey([]byte(n + ".cold\x00"))
			if o, ok := seen[k]; ok {
				t.Fatalf("nameKey(%q) = nameKey(%q) = %#x", n, o, k)
			}
			seen[k] = n
		}
	}
	if nameKey(nil) != nameKey([]byte("\x00")) {
		t.Errorf("nameKey(nil) != nameKey(NUL)")
	}
}

// TestScopeMatchesClosure checks the scopes NewScope makes in one pass
// over the symbol table against the closure computed from the whole
// table in plain steps, on every test binary: the units whose ranges
// hold an address, then, until nothing changes, every unit holding a
// code symbol whose rootName is one of the scope's symbols'. The units
// and the symbols must be the same, or both nil.
func TestScopeMatchesClosure(t *testing.T) {
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) {
			f, err := elfx.Open(testbin.Path(t, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			d, err := dies.Load(f)
			if err != nil || d == nil {
				t.Skipf("%s: no DWARF (%v)", name, err)
			}
			ur, err := readUnits(d)
			if err != nil {
				t.Fatal(err)
			}
			all, err := f.CodeSymbols()
			if err != nil {
				t.Skipf("%s: no symbols (%v)", name, err)
			}
			// Every split procedure's entry and a spread of others.
			whole, err := FromELF(f)
			if err != nil {
				t.Fatal(err)
			}
			step := max(1, whole.Len()/40)
			scoped := 0
			for i := range whole.Len() {
				p := whole.Proc(i)
				if len(p.Fragments) < 2 && i%step != 0 {
					continue
				}
				for _, fr := range p.Fragments {
					got, err := ScopeOfAddrs(f, []uint64{fr.Start})
					if err != nil {
						t.Fatal(err)
					}
					wantUnits, wantSyms := closure(ur, all, fr.Start)
					if got == nil {
						if wantUnits != nil {
							t.Errorf("%s at %#x: no scope; want units %v", p.Name, fr.Start, wantUnits)
						}
						continue
					}
					scoped++
					if d := cmp.Diff(wantUnits, got.units); d != "" {
						t.Errorf("%s at %#x: units differ (-closure +scope):\n%s", p.Name, fr.Start, d)
					}
					if d := cmp.Diff(wantSyms, got.syms); d != "" {
						t.Errorf("%s at %#x: symbols differ (-closure +scope):\n%s", p.Name, fr.Start, d)
					}
				}
			}
			t.Logf("%s: %d scopes compared", name, scoped)
		})
	}
}

// closure is the scope of addr computed in plain steps from every
// unit's ranges and every code symbol: the indices (dies.Data.Units) of
// its units and its symbols in table order; nil when addr or a family
// member is in no unit, or the scope has no symbols.
func closure(ur *unitRanges, all []elfx.Symbol, addr uint64) ([]int, []elfx.Symbol) {
	unitOf := func(a uint64) []int {
		var out []int
		for i := range ur.units {
			for _, r := range ur.of(i) {
				if r.Contains(a) {
					out = append(out, i)
					break
				}
			}
		}
		return out
	}
	in := make(map[int]bool)
	for _, i := range unitOf(addr) {
		in[i] = true
	}
	if len(in) == 0 {
		return nil, nil
	}
	for {
		holds := func(a uint64) bool {
			for i := range in {
				for _, r := range ur.of(i) {
					if r.Contains(a) {
						return true
					}
				}
			}
			return false
		}
		var syms []elfx.Symbol
		roots := make(map[string]bool)
		for _, s := range all {
			if holds(s.Value) {
				syms = append(syms, s)
				roots[rootName(s.Name)] = true
			}
		}
		if len(syms) == 0 {
			return nil, nil
		}
		grew := false
		for _, s := range all {
			if holds(s.Value) || !roots[rootName(s.Name)] || !isCodeRange(Range{s.Value, s.Value + 1}) {
				continue
			}
			us := unitOf(s.Value)
			if len(us) == 0 {
				return nil, nil
			}
			grew = grew || !in[us[0]]
			in[us[0]] = true
		}
		if !grew {
			var units []int
			for i := range ur.units {
				if in[i] {
					units = append(units, ur.units[i].index)
				}
			}
			return units, syms
		}
	}
}

// TestScopeNextSymbol checks how a scope bounds its zero-sized symbols
// (setNext, nextSymbol): by the first kept code symbol above them in
// the whole file, in scope or not, and not at all for a scope without
// one; and that on the cgo binary, whose runtime.text is a zero-sized
// function symbol in the first Go unit, the procedure there over its
// scope is the whole file's.
func TestScopeNextSymbol(t *testing.T) {
	table := []elfx.Symbol{
		{Name: "outside_below", Value: 0x1000, Size: 0x10, Type: elf.STT_FUNC},
		{Name: "label", Value: 0x2000, Type: elf.STT_FUNC},
		{Name: "in_scope", Value: 0x2040, Size: 0x20, Type: elf.STT_FUNC},
		{Name: "end_label", Value: 0x2100, Type: elf.STT_FUNC},
		{Name: "untyped", Value: 0x2200, Size: 8, Type: elf.STT_NOTYPE}, // not kept: not a fragment's name
		{Name: "outside_above", Value: 0x3000, Size: 0x10, Type: elf.STT_FUNC},
		{Name: "discarded", Value: 0, Size: 0x10, Type: elf.STT_FUNC},
	}
	symbols := func(keep elfx.Prefilter, yield func(*elfx.Symbol)) error {
		for i := range table {
			s := table[i]
			if keep == nil || keep(s.Value, append([]byte(s.Name), 0)) {
				yield(&s)
			}
		}
		return nil
	}
	s := &Scope{ranges: []Range{{0x2000, 0x2180}}}
	for _, sym := range table {
		if s.Holds(sym.Value) {
			s.syms = append(s.syms, sym)
		}
	}
	s.setNext(symbols)
	for _, c := range []struct{ addr, want uint64 }{
		{0x2000, 0x2040}, // label: the next symbol is in scope
		{0x2100, 0x3000}, // end_label: outside, above the untyped symbol
		{0x1000, 0x2000},
		{0x3000, 0},
	} {
		if got := s.nextSymbol(c.addr); got != c.want {
			t.Errorf("nextSymbol(%#x) = %#x, want %#x", c.addr, got, c.want)
		}
	}
	sized := &Scope{ranges: []Range{{0x2040, 0x2060}}, syms: []elfx.Symbol{table[2]}}
	sized.setNext(symbols)
	if sized.next != nil {
		t.Errorf("a scope without zero-sized symbols read the next ones: %#x", sized.next)
	}

	f, err := elfx.Open(testbin.Path(t, "cgo"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var text uint64
	f.EachCodeSymbol(func(s *elfx.Symbol) {
		if s.Name == "runtime.text" && s.Size == 0 {
			text = s.Value
		}
	})
	if text == 0 {
		t.Fatal("cgo: no zero-sized runtime.text")
	}
	sc, err := ScopeOfAddrs(f, []uint64{text})
	if err != nil || sc == nil {
		t.Fatalf("cgo: scope of runtime.text %#x: %v, %v", text, sc, err)
	}
	if len(sc.next) == 0 {
		t.Fatalf("cgo: the scope of runtime.text has no next symbols")
	}
	whole, err := FromELF(f)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(procJSON(t, whole, text), procJSON(t, build(t, f, sc), text)); d != "" {
		t.Errorf("cgo: the procedure at runtime.text over its scope differs (-whole +scoped):\n%s", d)
	}
}

// TestCloseOverNameShapes checks closeOver's one pass against the
// closure in plain steps on tables made for it, one per name shape the
// real binaries lack: a root in the first unit and a symbol in the
// second, which the scope must bring in when it is of the root's family
// (foo.cold.1, a clone's foo.isra.0.cold, a C++ name with a '.',
// foo@@VER and foo.cold@VER as the string table has them, a second
// empty name) and not when it only shares the root's start or its
// nameKey (foo_bar, foo.isra.1 against foo.isra.0, @V: not a version).
// A round whose roots' keys no symbol outside has takes one pass: a
// member's takes three (two in the first round, one in the second).
func TestCloseOverNameShapes(t *testing.T) {
	for _, c := range []struct {
		root, other string
		family      bool
		passes      int
	}{
		{"foo", "foo.cold.1", true, 3},
		{"bar.isra.0", "bar.isra.0.cold", true, 3},
		{"_ZN1a1bEv", "_ZN1a1bEv.cold", true, 3},
		{"baz", "baz@@VER_1.2", true, 3},
		{"qux", "qux.cold@VER_2", true, 3},
		{"", "", true, 3},
		{"foo", "foo_bar", false, 1},
		{"_ZN1a1bEv", "_ZN1a1bEvx.cold", false, 1},
		{"bar.isra.0", "bar.isra.1", false, 2},
		{"", "@V", false, 2},
	} {
		ur := &unitRanges{read: []bool{true, true, true}}
		var raws []string
		var all []elfx.Symbol
		for i, names := range [][]string{{c.root, "main"}, {c.other}, {"unrelated"}} {
			start := uint64(0x1000 * (i + 1))
			ur.units = append(ur.units, Unit{index: i, offset: dwarf.Offset(0x100 * i), Ranges: []Range{{start, start + 0x800}}})
			for k, raw := range names {
				name, version := elfx.SplitVersion(raw)
				raws = append(raws, raw)
				all = append(all, elfx.Symbol{Name: name, Version: version, Value: start + 0x10*uint64(k), Size: 8, Type: elf.STT_FUNC})
			}
		}
		passes := 0
		symbols := func(keep elfx.Prefilter, yield func(*elfx.Symbol)) error {
			passes++
			for i := range all {
				// The prefilter sees the string table from the name on.
				if keep == nil || keep(all[i].Value, []byte(raws[i]+"\x00next\x00")) {
					s := all[i]
					yield(&s)
				}
			}
			return nil
		}
		wantUnits, wantSyms := closure(ur, all, 0x1000)
		if want := []int{0}; c.family {
			want = []int{0, 1}
			if !cmp.Equal(want, wantUnits) {
				t.Fatalf("%q, %q: the closure has units %v, want %v: the table is wrong", c.root, c.other, wantUnits, want)
			}
		}
		got := closeOver(ur, []bool{true, false, false}, symbols, len(all))
		if got == nil {
			t.Errorf("%q, %q: no scope; want units %v", c.root, c.other, wantUnits)
			continue
		}
		if d := cmp.Diff(wantUnits, got.units); d != "" {
			t.Errorf("%q, %q: units differ (-closure +closeOver):\n%s", c.root, c.other, d)
		}
		if d := cmp.Diff(wantSyms, got.syms); d != "" {
			t.Errorf("%q, %q: symbols differ (-closure +closeOver):\n%s", c.root, c.other, d)
		}
		if passes != c.passes {
			t.Errorf("%q, %q: %d passes, want %d", c.root, c.other, passes, c.passes)
		}
	}
}
