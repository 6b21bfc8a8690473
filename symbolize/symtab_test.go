package symbolize

import (
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// TestScopedSymtabMatchesWhole checks that the symbol table read over a
// scope names every address of the scope's ranges as the whole table
// does: at each range's first, second and last byte, and around every
// symbol of the whole table that starts in it, on every test binary.
// The symbol kept from below a range answers at its first bytes when
// the range starts inside a symbol; the test binaries' ranges start at
// one.
func TestScopedSymtabMatchesWhole(t *testing.T) {
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) {
			f, whole := openWhole(t, name)
			all, err := readSymtab(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, p := range sampleProcs(whole.Procs()) {
				s, err := splitinfo.ScopeOfAddrs(f, []uint64{p.Entry})
				if err != nil {
					t.Fatal(err)
				}
				if s == nil {
					continue
				}
				part, err := readSymtab(f, s)
				if err != nil {
					t.Fatal(err)
				}
				if len(part.syms) >= len(all.syms) && len(all.syms) > 100 {
					t.Errorf("%s: the scope of %s kept %d of %d symbols", name, p.Name, len(part.syms), len(all.syms))
				}
				for _, r := range s.Ranges() {
					addrs := []uint64{r.Start, r.Start + 1, r.End - 1}
					for _, sym := range all.syms {
						if r.Contains(sym.addr) {
							addrs = append(addrs, sym.addr-1, sym.addr, sym.addr+1)
						}
					}
					for _, a := range addrs {
						if !r.Contains(a) {
							continue
						}
						checked++
						if w, g := all.at(a), part.at(a); w == nil != (g == nil) || w != nil && *w != *g {
							t.Errorf("%s: %#x (scope of %s): whole table %+v, scoped %+v", name, a, p.Name, w, g)
						}
					}
				}
			}
			t.Logf("%s: %d addresses checked", name, checked)
		})
	}
}
