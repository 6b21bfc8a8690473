package symbolize

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// TestScopeMatchesWhole checks that a question answered over its scope
// (the compile units it needs) gets the whole file's answer, byte for
// byte, on every test binary: for each procedure (every split one, and
// a sample of the rest), the "addr -json" answers and the symbolizer's
// frames (JSON, inlining on) at its fragments' starts, middles and last
// bytes, and the breakpoints of its name, of its moved fragments'
// symbols, of FILE:FUNC and of FILE:LINE for the lines of its rows.
func TestScopeMatchesWhole(t *testing.T) {
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) {
			f, whole := openWhole(t, name)
			scoped, fallbacks := 0, 0
			for _, p := range sampleProcs(whole.Procs()) {
				var addrs []uint64
				for _, fr := range p.Fragments {
					addrs = append(addrs, fr.Start, fr.Start+fr.Len()/2, fr.End-1)
				}
				s, err := splitinfo.ScopeOfAddrs(f, addrs)
				if err != nil {
					t.Fatal(err)
				}
				if s == nil {
					fallbacks++
					continue // the whole file: the answer is whole's
				}
				scoped++
				part, err := FromELFIn(f, s)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range addrs {
					if d := cmp.Diff(addrAnswer(whole, a), addrAnswer(part, a)); d != "" {
						t.Errorf("%s: addr %#x (%s): scoped answer differs (-whole +scoped):\n%s", name, a, p.Name, d)
					}
					if d := cmp.Diff(frameAnswer(whole, a), frameAnswer(part, a)); d != "" {
						t.Errorf("%s: symbolize %#x (%s): scoped answer differs (-whole +scoped):\n%s", name, a, p.Name, d)
					}
				}
				for _, spec := range procSpecs(whole.Lines(), p) {
					if d := cmp.Diff(breakAnswer(t, f, whole.Lines(), spec), breakAnswer(t, f, nil, spec)); d != "" {
						t.Errorf("%s: break %s: scoped answer differs (-whole +scoped):\n%s", name, spec, d)
					}
				}
			}
			t.Logf("%s: %d procedures answered over a scope, %d over the whole file", name, scoped, fallbacks)
			// BOLT's output of GCC code has GCC's cold fragments outside
			// every unit's ranges: there every split question falls back.
			if scoped == 0 && (strings.HasPrefix(name, "gcc") || strings.HasPrefix(name, "clang")) {
				t.Errorf("%s: no question had a scope", name)
			}
		})
	}
}

// TestScopeDiffCatchesWrongScope checks that the comparison of
// TestScopeMatchesWhole fails for a scope without the unit of the
// address asked about: in the cgo binary, the C function's cold
// fragment asked about over the scope of a Go function.
func TestScopeDiffCatchesWrongScope(t *testing.T) {
	f, whole := openWhole(t, "cgo")
	var cold, other uint64
	for p := range whole.Procs().Split() {
		cold = p.Fragments[1].Start
		break
	}
	for p := range whole.Procs().All() {
		if p.Name == "main.main" {
			other = p.Entry
		}
	}
	if cold == 0 || other == 0 {
		t.Fatal("cgo: no split procedure or no main.main")
	}
	s, err := splitinfo.ScopeOfAddrs(f, []uint64{other})
	if err != nil || s == nil || s.Holds(cold) {
		t.Fatalf("scope of main.main: %v, %v; want one without %#x", s, err, cold)
	}
	part, err := FromELFIn(f, s)
	if err != nil {
		t.Fatal(err)
	}
	if addrAnswer(whole, cold) == addrAnswer(part, cold) {
		t.Errorf("addr %#x: the same answer over a scope without its unit: %s", cold, addrAnswer(part, cold))
	}
	if frameAnswer(whole, cold) == frameAnswer(part, cold) {
		t.Errorf("symbolize %#x: the same answer over a scope without its unit: %s", cold, frameAnswer(part, cold))
	}
}

// openWhole opens the test binary name and reads it whole.
func openWhole(t *testing.T, name string) (*elfx.File, *Module) {
	f, err := elfx.Open(testbin.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := FromELF(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, m
}

// sampleProcs returns every split procedure and up to 40 others, spread
// over the table (the cgo binary has thousands, of the Go runtime).
func sampleProcs(t *splitinfo.Table) []*splitinfo.Proc {
	var out []*splitinfo.Proc
	step := max(1, t.Len()/40)
	for i := range t.Len() {
		if p := t.Proc(i); len(p.Fragments) > 1 || i%step == 0 {
			out = append(out, p)
		}
	}
	return out
}

// addrAnswer is "splitdbg addr -json" for addr.
func addrAnswer(m *Module, addr uint64) string {
	var b bytes.Buffer
	w := NewAddrWriter(&b, m.Lines(), true)
	w.Write(addr)
	w.Close()
	return b.String()
}

// frameAnswer is "splitdbg symbolize --output-style=JSON" for addr.
func frameAnswer(m *Module, addr uint64) string {
	o := Options{Inlines: true, Demangle: true}
	p := Printer{Style: JSON, Functions: true}
	return string(p.AppendCode(nil, &Request{Addr: addr, HasAddr: true}, m.Frames(nil, addr, &o)))
}

// procSpecs returns the locations a debugger user would give for p: its
// names, FILE:FUNC, its moved fragments' symbols, and FILE:LINE for
// each line of its rows.
func procSpecs(t *linetable.Table, p *splitinfo.Proc) []string {
	specs := []string{p.Name}
	if p.SourceName != "" && p.SourceName != p.Name {
		specs = append(specs, p.SourceName)
	}
	if p.File != "" {
		specs = append(specs, path.Base(p.File)+":"+p.Name)
	}
	for i, fr := range p.Fragments {
		if i > 0 && fr.Symbol != "" {
			specs = append(specs, fr.Symbol)
		}
	}
	seen := make(map[string]bool)
	for _, fr := range p.Fragments {
		for _, a := range []uint64{fr.Start, fr.Start + fr.Len()/2, fr.End - 1} {
			if li, ok := t.LineInfo(a); ok && li.Line > 0 {
				spec := fmt.Sprintf("%s:%d", path.Base(li.File), li.Line)
				if !seen[spec] {
					seen[spec] = true
					specs = append(specs, spec)
				}
			}
		}
	}
	return specs
}

// breakAnswer is "splitdbg break -json BIN spec": over the whole file's
// table t, or with t nil as the command resolves it (ResolveELF).
func breakAnswer(tb testing.TB, f *elfx.File, t *linetable.Table, spec string) string {
	var b linetable.Breakpoint
	var err error
	if t == nil {
		b, err = linetable.ResolveELF(f, spec)
	} else {
		b, err = t.Resolve(spec)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	var out bytes.Buffer
	if err := b.Write(&out, true); err != nil {
		tb.Fatal(err)
	}
	return out.String()
}
