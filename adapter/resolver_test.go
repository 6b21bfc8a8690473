package adapter

import (
	"debug/elf"
	"strings"
	"testing"

	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
)

func newResolver(t testing.TB, bin string) *Resolver {
	t.Helper()
	r, err := NewResolver(testbin.Path(t, bin))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestResolverColdLines resolves every test case's cold line without a
// debugger: an address in moved code, whose logical frame is the function
// at that line, at link time and at a PIE load bias.
func TestResolverColdLines(t *testing.T) {
	for _, tc := range coldCases {
		t.Run(tc.bin, func(t *testing.T) {
			r := newResolver(t, tc.bin)
			file, line := coldLine(t, tc.src, tc.marker)
			check := func(bias uint64) {
				t.Helper()
				res, err := r.Resolve(spec(file, line))
				if err != nil {
					t.Fatal(err)
				}
				if !res.Moved() || !strings.HasSuffix(res.File, tc.file) || res.Line != line {
					t.Fatalf("Resolve = %s:%d moved=%v", res.File, res.Line, res.Moved())
				}
				for _, l := range res.Locs {
					if l.Function != tc.fn || l.Bias != bias || l.Entry != l.Proc.Entry+bias {
						t.Errorf("location %#x: %s bias %#x entry %#x", l.PC, l.Function, l.Bias, l.Entry)
					}
					f, ok := r.Frame(l.PC, false)
					if !ok || f.Function != tc.fn || f.File != res.File || f.Line != line || f.Frag != l.Frag {
						t.Errorf("Frame(%#x) = %s %s:%d frag %d; want %s %s:%d frag %d", l.PC, f.Function, f.File, f.Line, f.Frag, tc.fn, res.File, line, l.Frag)
					}
					if !l.Proc.Fragments[l.Frag].Contains(l.PC - bias) {
						t.Errorf("location %#x - bias %#x is not in fragment %d", l.PC, bias, l.Frag)
					}
				}
				rs := r.Ranges(res.Locs[0].PC)
				p := res.Locs[0].Proc
				if len(rs) != len(p.Fragments) || rs[0].Start != p.Entry+bias {
					t.Errorf("Ranges = %v; want %d fragments from %#x", rs, len(p.Fragments), p.Entry+bias)
				}
			}
			check(0)
			if r.exe.tab.f.Type == elf.ET_DYN {
				const bias = 0x7f1234500000
				r.SetExecutableBias(bias)
				check(bias)
				res, _ := r.Resolve(spec(file, line))
				if _, ok := r.Frame(res.Locs[0].PC-bias, false); ok {
					t.Errorf("link-time address %#x still resolves at bias %#x", res.Locs[0].PC-bias, bias)
				}
			}
		})
	}
}

// TestStatementRow checks that a PC with a statement row followed by a
// non-statement row at the same address (GCC's cold fragment starts) gets
// the statement's line, as debuggers show it.
func TestStatementRow(t *testing.T) {
	r := newResolver(t, "cgo")
	file, line := coldLine(t, "cgo/split.c", "c_classify")
	res, err := r.Resolve(spec(file, line))
	if err != nil || len(res.Locs) != 1 {
		t.Fatalf("Resolve: %+v, %v", res, err)
	}
	pc := res.Locs[0].PC
	tab, _ := r.exe.load()
	if pos, _ := tab.lines.PC(pc); pos.Line == line {
		t.Logf("linetable.PC(%#x) now gives line %d itself", pc, line)
	}
	if f, _ := r.Frame(pc, false); f.Line != line {
		t.Errorf("Frame(%#x).Line = %d; want the statement's line %d", pc, f.Line, line)
	}
}

func TestDelveName(t *testing.T) {
	for _, tc := range []struct {
		p    splitinfo.Proc
		want string
	}{
		{splitinfo.Proc{Name: "process", SourceName: "process", CompUnit: "./gcccold/main.c"}, "C.process"},
		{splitinfo.Proc{Name: "tally", SourceName: "tally", CompUnit: "bolt/bolt.c"}, "C.tally"},
		{splitinfo.Proc{Name: "_cgo_1_Cfunc_f", CompUnit: "main.cgo2.c"}, "C._cgo_1_Cfunc_f"},
		{splitinfo.Proc{Name: "x", File: "/tmp/go-build/cgo-gcc-prolog"}, "C.x"},
		{splitinfo.Proc{Name: "main.main", SourceName: "main.main", CompUnit: "main", File: "p/main.go"}, "main.main"},
		{splitinfo.Proc{Name: "runtime.asmcgocall.abi0", SourceName: "runtime.asmcgocall", CompUnit: "runtime", File: "runtime/asm_amd64.s"}, "runtime.asmcgocall"},
		{splitinfo.Proc{Name: "f", CompUnit: "x/y.S"}, "C.f"},
	} {
		if got := delveName(&tc.p); got != tc.want {
			t.Errorf("delveName(%+v) = %q; want %q", tc.p, got, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	for spec, want := range map[string]specKind{
		"main.c:49": specLine, "/abs/path/main.c:49": specLine, "process": specFunc,
		"C.process": specFunc, "main.main": specFunc, "*0x1234": specOther, "/re/": specOther,
		"+1": specOffset, "-2": specOffset, "12": specOffset, "process:3": specLine,
		"a.c:helper": specFunc, "pkg.T:method": specFunc, "": specOther,
	} {
		if got := classify(spec); got != want {
			t.Errorf("classify(%q) = %d; want %d", spec, got, want)
		}
	}
}

func TestBiasCandidates(t *testing.T) {
	for _, bin := range []string{"gcc-cold", "bolt22", "gcc-pgo", "clang22-bbsections", "demo"} {
		r := newResolver(t, bin)
		tab, _ := r.exe.load()
		cs := biasCandidates(tab.procs, 4)
		if len(cs) == 0 || cs[0].Name != "main" {
			t.Errorf("%s: candidates %v; want main first", bin, cs)
		}
	}
}

// TestResolverLibraries places a second split binary as a shared library
// at a load bias, as Delve's image list reports one, and resolves in it.
func TestResolverLibraries(t *testing.T) {
	r := newResolver(t, "demo")
	r.SetExecutableBias(0x555500000000)
	const bias = 0x7f0012340000
	lib := testbin.Path(t, "gcc-cold")
	r.SetLibraries([]api.Image{{Path: lib, Address: bias, LoadError: "no debug info"}})
	file, line := coldLine(t, "gcccold/main.c", "process")
	res, err := r.Resolve(spec(file, line))
	if err != nil {
		t.Fatal(err)
	}
	l := res.Locs[0]
	if l.Image != lib || l.Bias != bias || !l.Moved() || l.Function != "C.process" {
		t.Fatalf("Resolve(%s) in the library = %+v", spec(file, line), l)
	}
	f, ok := r.Frame(l.PC, false)
	if !ok || f.Function != "C.process" || f.Line != line || f.Image != lib {
		t.Errorf("Frame(%#x) = %+v", l.PC, f)
	}
	if _, ok := r.Frame(l.PC-bias, false); ok {
		t.Errorf("the library's link-time address %#x resolves", l.PC-bias)
	}
	// The executable still comes first.
	if res, err := r.Resolve("demo.c:25"); err != nil || res.Locs[0].Image != r.Executable() {
		t.Errorf("Resolve(demo.c:25) = %+v, %v", res.Locs, err)
	}
	r.SetLibraries(nil)
	if _, ok := r.Frame(l.PC, false); ok {
		t.Errorf("Frame(%#x) resolves after the library is gone", l.PC)
	}
}

// remoteDelve is a Delve client whose process is not local, as the
// proxy's may be: its mappings cannot be read.
type remoteDelve struct{ service.Client }

func (remoteDelve) ProcessPid() int { return 0 }

// TestExecutableBias checks the executable's load bias found from the
// process's mappings at start-up, which builds none of the executable's
// tables, against the bias read off Delve's functions, the way for a
// process that is not local (clang 19 puts another fragment than the
// entry at a function's DWARF low PC).
func TestExecutableBias(t *testing.T) {
	for _, bin := range []string{"gcc-cold", "clang19-mfs", "bolt22", "cgo"} {
		t.Run(bin, func(t *testing.T) {
			s := startInProcess(t, bin)
			if s.client.res.exe.tab != nil {
				t.Errorf("adapter.New built the executable's tables")
			}
			local := s.client.res.ExecutableBias()
			c, err := New(remoteDelve{s.plain}, s.bin)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if remote := c.res.ExecutableBias(); remote != local {
				t.Errorf("bias %#x from Delve's functions; %#x from the mappings", remote, local)
			}
			if local == 0 && s.client.res.exe.f.Type != elf.ET_EXEC {
				t.Errorf("a position-independent executable at bias 0")
			}
		})
	}
}
