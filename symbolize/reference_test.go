package symbolize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
)

// variant is one set of llvm-symbolizer options and their equivalent.
type variant struct {
	name string
	args []string
	opts Options
	p    Printer
}

var variants = []variant{
	{"llvm", nil, Options{Inlines: true, Demangle: true}, Printer{Style: LLVM, Functions: true}},
	{"gnu", []string{"--output-style=GNU"}, Options{Inlines: true, Demangle: true}, Printer{Style: GNU, Functions: true}},
	{"json", []string{"--output-style=JSON"}, Options{Inlines: true, Demangle: true}, Printer{Style: JSON, Functions: true}},
	{"pprof", []string{"--inlining", "-demangle=false", "--output-style=JSON"}, Options{Inlines: true}, Printer{Style: JSON, Functions: true}},
	{"short-pretty", []string{"--functions=short", "-p"}, Options{Functions: ShortNames, Inlines: true, Demangle: true}, Printer{Style: LLVM, Functions: true, Pretty: true}},
	{"noinline", []string{"--no-inlines", "--basenames"}, Options{Demangle: true, Paths: linetable.PathBase}, Printer{Style: LLVM, Functions: true}},
	{"relative-json", []string{"--relativenames", "--output-style=JSON", "--functions=short"}, Options{Functions: ShortNames, Inlines: true, Demangle: true, Paths: linetable.PathRelative}, Printer{Style: JSON, Functions: true}},
	{"noinline-json", []string{"--no-inlines", "--output-style=JSON", "--no-demangle"}, Options{}, Printer{Style: JSON, Functions: true}},
	{"nofunc-gnu", []string{"--functions=none", "--output-style=GNU", "-p"}, Options{Functions: NoNames, Inlines: true, Demangle: true}, Printer{Style: GNU, Pretty: true}},
}

// testAddrs returns the addresses the differential test asks about:
// every fragment's start, middle and last byte, a sample of line-table
// rows (inlined call sites among them) and a few addresses outside code.
func testAddrs(m *Module) []uint64 {
	var out []uint64
	for p := range m.Procs().All() {
		for _, f := range p.Fragments {
			out = append(out, f.Start, f.Start+(f.End-f.Start)/2, f.End-1)
		}
	}
	n := m.Lines().Len()
	step := max(1, n/3000)
	i := 0
	for r := range m.Lines().Rows() {
		if i%step == 0 && !r.EndSequence {
			out = append(out, r.Addr, r.Addr+1)
		}
		i++
	}
	return append(out, 0, 1<<40)
}

// logicalName returns what a Module says differently from
// llvm-symbolizer for addr: the outermost frame's function and start
// address, when addr is in a moved fragment of a split procedure.
func logicalName(m *Module, addr uint64, o *Options) (from, to string, entry uint64, ok bool) {
	loc, found := m.Procs().Lookup(addr)
	if !found || loc.Frag == 0 {
		return "", "", 0, false
	}
	name := func(s string) string {
		if o.Demangle {
			return demangleName(s)
		}
		return s
	}
	switch o.Functions {
	case LinkageNames:
		s := m.syms.at(addr)
		if s == nil {
			return "", "", 0, false
		}
		return name(s.name), name(loc.Proc.Name), loc.Proc.Entry, true
	case ShortNames:
		return "", loc.Proc.SourceName, 0, true
	}
	return "", "", 0, false
}

func TestReference(t *testing.T) {
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	// The comparison must have met logical names and inline chains.
	c := counts{data: true}
	defer c.check(t)
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) { compareWithLLVM(t, sym, testbin.Path(t, name), &c) })
	}
}

// TestReferenceMFS builds a small corpus with bench/gen-mfs.sh (clang 22
// machine function splitting, an inlined helper in the hot and the cold
// fragment of every function) and compares it too.
func TestReferenceMFS(t *testing.T) {
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	testbin.LLVMTool(t, "clang", 22)
	testbin.LLVMTool(t, "llvm-profdata", 22)
	dir := t.TempDir()
	cmd := exec.Command("bash", "../bench/gen-mfs.sh", dir)
	cmd.Env = append(os.Environ(), "N=120", "UNITS=2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-mfs.sh: %v\n%s", err, out)
	}
	c := counts{data: true}
	defer c.check(t)
	compareWithLLVM(t, sym, filepath.Join(dir, "mfs"), &c)
	if c.movedInlined == 0 {
		t.Errorf("no address in a moved fragment had inlined frames")
	}
}

// TestReferenceCXX compares a C++ program (testdata/src/symbolize/cxx.cc)
// built with g++ -O2 -g: demangled names, inlined library code in a cold
// fragment.
func TestReferenceCXX(t *testing.T) {
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	gxx := testbin.Tool(t, "g++")
	bin := filepath.Join(t.TempDir(), "cxx")
	if out, err := exec.Command(gxx, "-O2", "-g", "../testdata/src/symbolize/cxx.cc", "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	var c counts
	defer c.check(t)
	compareWithLLVM(t, sym, bin, &c)
	if c.movedInlined == 0 {
		t.Errorf("no address in a moved fragment had inlined frames")
	}
}

// counts are what the comparisons met.
type counts struct {
	moved, inlined, movedInlined int
	// data also compares DATA answers. Not for the C++ program: its
	// libstdc++ has a static array of 201 elements whose DW_FORM_data1
	// upper bound (0xc8) LLVM 22 reads as -56, so that llvm-symbolizer
	// finds no declaration for it, where splitdbg gives charconv.h:77.
	data bool
}

func (c *counts) check(t *testing.T) {
	if !t.Failed() && (c.moved == 0 || c.inlined == 0) {
		t.Errorf("%d addresses in moved fragments and %d with inlined frames; want some of each", c.moved, c.inlined)
	}
}

// compareWithLLVM compares the answers for testAddrs(bin) with
// llvm-symbolizer's in every variant.
func compareWithLLVM(t *testing.T, sym, bin string, c *counts) {
	m, err := Open(bin)
	if err != nil {
		t.Skipf("not a symbolizable file: %v", err)
	}
	addrs := testAddrs(m)
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "0x%x\n", a)
	}
	for _, v := range variants {
		args := append([]string{"--obj=" + bin, "-a"}, v.args...)
		cmd := exec.Command(sym, args...)
		cmd.Stdin = bytes.NewReader(in.Bytes())
		ref, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v: %v", sym, args, err)
		}
		answers := splitAnswers(t, string(ref), v.p.Style, len(addrs))
		p := v.p
		p.Addresses = true
		var frames []Frame
		bad := 0
		for k, a := range addrs {
			frames = m.Frames(frames[:0], a, &v.opts)
			got := string(p.AppendCode(nil, &Request{Module: bin, Addr: a, HasAddr: true}, frames))
			want := answers[k]
			from, to, entry, moved := logicalName(m, a, &v.opts)
			if moved {
				want = patch(t, want, p.Style, from, to, entry, v.opts.Functions)
				c.moved++
			}
			if len(frames) > 1 {
				c.inlined++
				if moved {
					c.movedInlined++
				}
			}
			if got != want {
				if bad++; bad <= 5 {
					t.Errorf("%s 0x%x (-llvm-symbolizer, logical names patched +ours):\n%s", v.name, a, cmp.Diff(want, got))
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d of %d addresses differ", v.name, bad, len(addrs))
		}
	}
	if c.data {
		compareData(t, sym, bin, m)
	}
}

// compareData compares DATA answers for the start and middle of every
// symbol, in the LLVM and JSON styles.
func compareData(t *testing.T, sym, bin string, m *Module) {
	var addrs []uint64
	for _, s := range m.syms.syms {
		addrs = append(addrs, s.addr, s.addr+s.size/2)
	}
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "DATA 0x%x\n", a)
	}
	for _, p := range []Printer{{Style: LLVM, Functions: true, Addresses: true}, {Style: JSON, Functions: true}} {
		args := []string{"--obj=" + bin, "-a"}
		if p.Style == JSON {
			args = append(args, "--output-style=JSON")
		}
		cmd := exec.Command(sym, args...)
		cmd.Stdin = bytes.NewReader(in.Bytes())
		ref, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v: %v", sym, args, err)
		}
		answers := splitAnswers(t, string(ref), p.Style, len(addrs))
		bad := 0
		for k, a := range addrs {
			g := m.Data(a, &Options{Demangle: true})
			got := string(p.AppendData(nil, &Request{Module: bin, Addr: a, HasAddr: true}, &g))
			if got != answers[k] {
				if bad++; bad <= 3 {
					t.Errorf("DATA 0x%x (-llvm-symbolizer +ours):\n%s", a, cmp.Diff(answers[k], got))
				}
			}
		}
	}
}

// splitAnswers splits llvm-symbolizer's output for n addresses: one JSON
// line each, or text answers that each begin with the address (-a).
func splitAnswers(t *testing.T, out string, s Style, n int) []string {
	var answers []string
	if s == JSON {
		for _, l := range strings.SplitAfter(out, "\n") {
			if l != "" {
				answers = append(answers, l[:len(l)-1])
			}
		}
	} else {
		cur := -1
		for _, l := range strings.SplitAfter(out, "\n") {
			if strings.HasPrefix(l, "0x") {
				answers = append(answers, "")
				cur++
			}
			if cur >= 0 {
				answers[cur] += l
			}
		}
	}
	if len(answers) != n {
		t.Fatalf("llvm-symbolizer gave %d answers for %d addresses", len(answers), n)
	}
	return answers
}

// patch puts the logical name (and, in JSON, the entry) in place of
// llvm-symbolizer's outermost function name.
func patch(t *testing.T, ans string, s Style, from, to string, entry uint64, k FunctionNames) string {
	if s == JSON {
		var v map[string]any
		d := json.NewDecoder(strings.NewReader(ans))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatalf("llvm-symbolizer JSON %q: %v", ans, err)
		}
		frames := v["Symbol"].([]any)
		outer := frames[len(frames)-1].(map[string]any)
		if k == LinkageNames || outer["FunctionName"] == "" {
			outer["FunctionName"] = to
		}
		if k == LinkageNames {
			outer["StartAddress"] = "0x" + strconv.FormatUint(entry, 16)
		}
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		e.Encode(v)
		return strings.TrimSuffix(b.String(), "\n")
	}
	if from == "" {
		from = "??"
	}
	for _, sep := range []string{"\n", " at "} {
		if i := strings.LastIndex(ans, from+sep); i >= 0 {
			return ans[:i] + to + ans[i+len(from):]
		}
	}
	return ans
}
