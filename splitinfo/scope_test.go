package splitinfo

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
