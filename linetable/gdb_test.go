package linetable_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

var update = flag.Bool("update", false, "rewrite docs/DEBUGGERS.md from the gdb comparison")

// debuggerCase is one breakpoint location: a marked cold line or a split
// function, with where its code is.
type debuggerCase struct {
	spec, what string
	proc       string // the logical function
	frag       string // fragment symbol the address must be in; "" = entry fragment
}

var (
	gdbAddrRe = regexp.MustCompile(`\b0x([0-9a-f]{16})\b(?:\s+in\s+(\S+))?`)
	gdbInfoRe = regexp.MustCompile(`(starts at|is at) address 0x([0-9a-f]+) <([^>]+)>( but contains no code)?`)
)

type gdbAnswer struct {
	addrs    []uint64
	funcs    []string // "in FUNC" per address, "" when gdb names none
	infoLine string   // info line's answer, for line specs
}

// runGDB asks gdb where it puts each case's breakpoint.
func runGDB(t *testing.T, gdb, bin string, cases []debuggerCase) []gdbAnswer {
	args := []string{"-batch", "-nx", "-iex", "set debuginfod enabled off"}
	for i, c := range cases {
		args = append(args, "-ex", fmt.Sprintf("echo @@CASE %d\\n", i), "-ex", "break "+c.spec,
			"-ex", "info breakpoints $bpnum")
		if strings.Contains(c.spec, ":") {
			args = append(args, "-ex", "info line "+c.spec)
		}
		args = append(args, "-ex", "delete")
	}
	out, _ := testbin.RunCombined(t, gdb, append(args, bin)...)
	answers := make([]gdbAnswer, len(cases))
	cur := -1
	for line := range strings.Lines(out) {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "@@CASE "); ok {
			cur, _ = strconv.Atoi(n)
			continue
		}
		if cur < 0 {
			continue
		}
		a := &answers[cur]
		if m := gdbInfoRe.FindStringSubmatch(line); m != nil {
			a.infoLine = fmt.Sprintf("0x%s <%s>", m[2], m[3])
			if m[4] != "" {
				a.infoLine += " \"no code\""
			}
			continue
		}
		if strings.HasPrefix(line, "Breakpoint ") { // the creation message
			continue
		}
		for _, m := range gdbAddrRe.FindAllStringSubmatch(line, -1) {
			v, _ := strconv.ParseUint(m[1], 16, 64)
			if !slices.Contains(a.addrs, v) {
				a.addrs = append(a.addrs, v)
				a.funcs = append(a.funcs, m[2])
			}
		}
	}
	return answers
}

// verdict judges addresses against a case: right if one is in the
// expected fragment of the logical function and none is elsewhere.
func verdict(procs *splitinfo.Table, c debuggerCase, addrs []uint64, funcs []string) (string, bool) {
	if len(addrs) == 0 {
		return "no address", false
	}
	var parts []string
	right, wrong := false, false
	for i, a := range addrs {
		where := "no function"
		ok := false
		if loc, found := procs.Lookup(a); found {
			f := loc.Fragment()
			where = loc.Proc.Name
			if f.Symbol != "" && f.Symbol != loc.Proc.Name {
				where += " in " + f.Symbol
			} else if loc.Frag == 0 {
				where += " entry fragment"
			}
			ok = loc.Proc.Name == c.proc && (c.frag == "" && loc.Frag == 0 || f.Symbol == c.frag && c.frag != "")
		}
		if i < len(funcs) && funcs[i] == "" && ok {
			where += ", shown in no function"
			ok = false
		}
		if ok {
			right = true
		} else {
			wrong = true
		}
		parts = append(parts, fmt.Sprintf("%#x (%s)", a, where))
	}
	return strings.Join(parts, ", "), right && !wrong
}

func debuggerCases(t *testing.T, bin string, markers map[string]string, tab *linetable.Table) []debuggerCase {
	lines := coldLines(t)
	var cases []debuggerCase
	for _, marker := range slices.Sorted(mapsKeys(markers)) {
		loc := lines[marker]
		spec := loc[strings.LastIndexByte(loc, '/')+1:]
		b, err := tab.Resolve(spec)
		if err != nil || len(b.Procs()) == 0 {
			t.Fatalf("%s: %s: %v", bin, spec, err)
		}
		cases = append(cases, debuggerCase{spec: spec, what: "cold line (" + marker + ")", proc: b.Procs()[0].Name, frag: markers[marker]})
	}
	for p := range tab.Procs().Split() {
		spec := p.Name
		if len(tab.Procs().ByName(p.Name)) > 1 {
			spec = filepath.Base(p.File) + ":" + p.Name
		}
		cases = append(cases, debuggerCase{spec: spec, what: "function", proc: p.Name})
	}
	return cases
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestDebuggers asks gdb where it puts breakpoints on the marked cold
// lines and on the split functions of every test binary, checks that
// splitdbg puts each in the right fragment of the right function, and
// keeps docs/DEBUGGERS.md — the table of where gdb is wrong and splitdbg
// right — true (go test ./linetable -run TestDebuggers -update rewrites
// it).
func TestDebuggers(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	want, _ := coldLineExpectations()
	var doc strings.Builder
	doc.WriteString(debuggersHeader)
	wrongs, total := 0, 0
	for _, bin := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		tab, err := linetable.Open(testbin.Path(t, bin))
		if err != nil {
			t.Fatal(err)
		}
		cases := debuggerCases(t, bin, want[bin], tab)
		answers := runGDB(t, gdb, testbin.Path(t, bin), cases)
		for i, c := range cases {
			b, err := tab.Resolve(c.spec)
			if err != nil {
				t.Errorf("%s: %s: %v", bin, c.spec, err)
				continue
			}
			var ours []uint64
			for _, l := range b.Locs {
				ours = append(ours, l.Addr)
			}
			oursText, oursOK := verdict(tab.Procs(), c, ours, nil)
			if !oursOK {
				t.Errorf("%s: break %s (%s): splitdbg gives %s", bin, c.spec, c.what, oursText)
			}
			gdbText, gdbOK := verdict(tab.Procs(), c, answers[i].addrs, answers[i].funcs)
			total++
			mark := "right"
			if !gdbOK {
				mark = "**wrong**"
				wrongs++
			}
			info := answers[i].infoLine
			if info == "" {
				info = "—"
			}
			fmt.Fprintf(&doc, "| %s | `%s` | %s | %s: %s | %s | %s |\n", bin, c.spec, c.what, mark, gdbText, info, oursText)
		}
	}
	fmt.Fprintf(&doc, "\ngdb is wrong in %d of %d cases; splitdbg is right in all of them.\n", wrongs, total)
	path := filepath.Join(testbin.Dir(), "..", "..", "docs", "DEBUGGERS.md")
	if *update {
		if err := os.WriteFile(path, []byte(doc.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil || string(old) != doc.String() {
		t.Errorf("docs/DEBUGGERS.md is out of date: go test ./linetable -run TestDebuggers -update")
	}
}

const debuggersHeader = `# Where debuggers put breakpoints in split functions

Generated by ` + "`go test ./linetable -run TestDebuggers -update`" + ` from the test
binaries in testdata/bin: for each line marked COLD-LINE in testdata/src
(code the optimizer moved out of the function's entry fragment) and each
split function, where gdb 13 puts ` + "`break LOC`" + ` (and what ` + "`info line LOC`" + `
says), beside splitdbg's ` + "`splitdbg break BIN LOC`" + `. "Right" means every address
is in the fragment that holds the code, of the logical function, and named
as that function. A function breakpoint belongs in the entry fragment.

Delve 1.27.2 creates a breakpoint on every one of these cold lines with no
address at all (it keeps only the first DW_AT_ranges entry of a function);
its column is added with the Delve adapter.

| binary | location | what | gdb 13 ` + "`break`" + ` | gdb ` + "`info line`" + ` | splitdbg |
|---|---|---|---|---|---|
`
