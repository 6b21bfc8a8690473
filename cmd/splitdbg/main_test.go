package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/demo"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = (&cli{strings.NewReader(stdin), &out, &errb}).main(args)
	return out.String(), errb.String(), code
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, s)
	}
	return v
}

// TestFuncsContract checks the fields the CLI contract promises.
func TestFuncsContract(t *testing.T) {
	bin := testbin.Path(t, "gcc-cold")
	out, stderr, code := run(t, "", "funcs", "-json", bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	funcs := decode[[]map[string]any](t, out)
	if len(funcs) != 4 {
		t.Errorf("%d split functions, want 4 (process, validate, helper twice)", len(funcs))
	}
	for _, f := range funcs {
		for _, k := range []string{"name", "entry", "size", "fragments", "sources"} {
			if _, ok := f[k]; !ok {
				t.Errorf("function %v lacks %q", f["name"], k)
			}
		}
		frags := f["fragments"].([]any)
		if len(frags) < 2 {
			t.Errorf("%v: %d fragments in a split-only listing", f["name"], len(frags))
		}
		for i, fr := range frags {
			m := fr.(map[string]any)
			for _, k := range []string{"start", "end", "symbol", "kind", "branch_addrs"} {
				if _, ok := m[k]; !ok {
					t.Errorf("%v fragment %d lacks %q", f["name"], i, k)
				}
			}
			if i == 0 && (m["start"] != f["entry"] || m["kind"] != "hot") {
				t.Errorf("%v: first fragment %v is not the entry %v", f["name"], m, f["entry"])
			}
		}
	}
	out, _, _ = run(t, "", "funcs", bin, "-all", "-json")
	all := decode[[]map[string]any](t, out)
	if len(all) <= len(funcs) {
		t.Errorf("-all lists %d functions, split-only %d", len(all), len(funcs))
	}
	names := map[any]bool{}
	for _, f := range all {
		names[f["name"]] = true
	}
	if !names["main"] || !names["process"] {
		t.Errorf("-all lacks main or process: %v", names)
	}
}

type addrResult struct {
	Addr     uint64 `json:"addr"`
	Found    bool   `json:"found"`
	Function string `json:"function"`
	Fragment int    `json:"fragment"`
	Symbol   string `json:"symbol"`
	Offset   uint64 `json:"offset"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
}

func symbolAddrs(t *testing.T, bin string) map[string]elf.Symbol {
	syms, err := testbin.OpenELF(t, bin).Symbols()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]elf.Symbol{}
	for _, s := range syms {
		m[s.Name] = s
	}
	return m
}

func TestAddr(t *testing.T) {
	bin := testbin.Path(t, "demo")
	syms := symbolAddrs(t, bin)
	sum, cold := syms["sum"], syms["sum.cold"]
	args := []string{"addr", "-json", bin, hex(sum.Value), hex(cold.Value + 2), "16"}
	out, stderr, code := run(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Lines from llvm-dwarfdump --debug-line testdata/bin/demo.
	want := []addrResult{
		{Addr: sum.Value, Found: true, Function: "sum", Fragment: 0, Symbol: "sum", Offset: 0, File: "demo/demo.c", Line: 35, Column: 20},
		{Addr: cold.Value + 2, Found: true, Function: "sum", Fragment: 1, Symbol: "sum.cold", Offset: sum.Size + 2, File: "demo/demo.c", Line: 37, Column: 4},
		{Addr: 16},
	}
	if diff := cmp.Diff(want, decode[[]addrResult](t, out)); diff != "" {
		t.Errorf("addr (-want +got):\n%s", diff)
	}
	// The same from standard input.
	out, _, code = run(t, hex(sum.Value)+"\n"+hex(cold.Value+2)+"\n\n16\n", "addr", "-json", bin, "-")
	if diff := cmp.Diff(want, decode[[]addrResult](t, out)); code != 0 || diff != "" {
		t.Errorf("addr - (exit %d, -want +got):\n%s", code, diff)
	}
}

func hex(v uint64) string { return fmt.Sprintf("%#x", v) }

// TestAddrStreams: each answer arrives before the next address is sent.
func TestAddrStreams(t *testing.T) {
	bin := testbin.Path(t, "demo")
	syms := symbolAddrs(t, bin)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		done <- (&cli{inR, outW, io.Discard}).main([]string{"addr", bin, "-"})
		outW.Close()
	}()
	lines := bufio.NewReader(outR)
	for _, name := range []string{"scale", "scale.cold", "sum.cold"} {
		if _, err := io.WriteString(inW, hex(syms[name].Value)+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer for %s: %v", name, err)
		}
		if want := strings.TrimSuffix(name, ".cold") + "+0x"; !strings.Contains(line, want) {
			t.Errorf("answer for %s: %q, want %q", name, line, want)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "notelf")
	os.WriteFile(notELF, []byte("#!/bin/sh\necho hi\n"), 0o755)
	// A copy of demo whose .debug_info is overwritten with garbage.
	demo, err := os.ReadFile(testbin.Path(t, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	ef, _ := elf.NewFile(bytes.NewReader(demo))
	info := ef.Section(".debug_info")
	for i := info.Offset + 20; i < info.Offset+info.FileSize; i++ {
		demo[i] = 0xff
	}
	corrupt := filepath.Join(dir, "corrupt")
	os.WriteFile(corrupt, demo, 0o644)

	tests := []struct {
		args    []string
		code    int
		wantErr []string // substrings of the one-line error
	}{
		{nil, 2, []string{"Usage"}},
		{[]string{"nope"}, 2, []string{"unknown command"}},
		{[]string{"funcs"}, 2, []string{"usage: splitdbg funcs"}},
		{[]string{"funcs", "-bogus", "x"}, 2, []string{"flag provided but not defined"}},
		{[]string{"addr", "x"}, 2, []string{"usage: splitdbg addr"}},
		{[]string{"addr", "x", "0xzz"}, 2, []string{"bad address"}},
		{[]string{"funcs", filepath.Join(dir, "missing")}, 1, []string{"missing", "no such file"}},
		{[]string{"funcs", notELF}, 1, []string{notELF, "not an ELF file"}},
		// The section and offset where decoding failed (a DecodeError).
		{[]string{"funcs", corrupt}, 1, []string{corrupt, ".debug_", "+0x", "corrupt"}},
		{[]string{"help"}, 0, nil},
		{[]string{"funcs", "-help"}, 0, nil},
		{[]string{"help", "addr"}, 0, nil},
	}
	for _, tt := range tests {
		_, stderr, code := run(t, "", tt.args...)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", tt.args, code, tt.code, stderr)
		}
		if tt.code == 1 && strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: error is not one line: %q", tt.args, stderr)
		}
		for _, w := range tt.wantErr {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr %q lacks %q", tt.args, stderr, w)
			}
		}
	}
}

func TestHelpTexts(t *testing.T) {
	for _, cmd := range commands {
		out, _, code := run(t, "", cmd.name, "-help")
		if code != 0 || !strings.HasPrefix(out, "usage: splitdbg "+cmd.name) {
			t.Errorf("%s -help: exit %d, %q", cmd.name, code, out)
		}
	}
	out, _, _ := run(t, "", "help")
	for _, cmd := range commands {
		if !strings.Contains(out, cmd.name) {
			t.Errorf("help does not list %s", cmd.name)
		}
	}
}

func TestDemo(t *testing.T) {
	out := demoOutput(t)
	wantAll(t, "demo output", out, "sum", "sum.cold", "scale.cold", "(fragment 1 cold sum.cold)", "??")
	// The Delve part runs where the kernel lets this process trace; it
	// says when it cannot.
	if i := strings.Index(out, "(skipped: "); i >= 0 {
		t.Logf("the demo skipped Delve: %s", out[i:])
	} else {
		wantAll(t, "demo output", out, "in C.scale at demo/demo.c:25", "plain Delve: error: unable to find function context", "splitdbg   : x = 7 k = 0")
	}
	// The embedded binary is the checked-in one.
	sameAsTestbin(t, demo.Binary, "demo", "internal/demo/data/demo differs from testdata/bin/demo: rerun testdata/gen.sh")
}

// demoOutput runs "splitdbg demo" and returns what it prints.
func demoOutput(t *testing.T) string {
	t.Helper()
	out, stderr, code := run(t, "", "demo")
	if code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	return out
}

// wantAll reports each of wants that out, named what, lacks.
func wantAll(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, out)
		}
	}
}

// sameAsTestbin reports msg if embedded differs from testdata/bin/name,
// when that file is there.
func sameAsTestbin(t *testing.T, embedded []byte, name, msg string) {
	t.Helper()
	disk, err := os.ReadFile(testbin.Path(t, name))
	if err == nil && !bytes.Equal(disk, embedded) {
		t.Error(msg)
	}
}

func TestBreak(t *testing.T) {
	bin := testbin.Path(t, "gcc-cold")
	syms := symbolAddrs(t, bin)
	type loc struct {
		Addr     uint64 `json:"addr"`
		Function string `json:"function"`
		Fragment int    `json:"fragment"`
		Kind     string `json:"kind"`
		Symbol   string `json:"symbol"`
		File     string `json:"file"`
		Line     int    `json:"line"`
		IsStmt   bool   `json:"is_stmt"`
	}
	type bp struct {
		Location  string   `json:"location"`
		Function  string   `json:"function"`
		Line      int      `json:"line"`
		Addrs     []uint64 `json:"addrs"`
		Locations []loc    `json:"locations"`
	}
	// main.c:49 is the COLD-LINE "process": its code is in process.cold.
	out, stderr, code := run(t, "", "break", "-json", bin, "main.c:49")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := decode[bp](t, out)
	cold := syms["process.cold"]
	if got.Function != "process" || len(got.Addrs) != 1 || got.Addrs[0] < cold.Value || got.Addrs[0] >= cold.Value+cold.Size {
		t.Errorf("break main.c:49 = %+v, want one address in process.cold [%#x,+%#x)", got, cold.Value, cold.Size)
	}
	if l := got.Locations[0]; l.Kind != "cold" || l.Symbol != "process.cold" || l.Line != 49 || !l.IsStmt {
		t.Errorf("location %+v", l)
	}
	// FUNC: after the prologue, in the entry fragment.
	out, _, _ = run(t, "", "break", "-json", bin, "process")
	got = decode[bp](t, out)
	p := syms["process"]
	if len(got.Addrs) != 1 || got.Addrs[0] < p.Value || got.Addrs[0] >= p.Value+p.Size {
		t.Errorf("break process = %+v, want an address in [%#x,+%#x)", got, p.Value, p.Size)
	}
	// *ADDR
	out, _, _ = run(t, "", "break", "-json", bin, fmt.Sprintf("*%#x", cold.Value))
	if got = decode[bp](t, out); got.Function != "process" || got.Addrs[0] != cold.Value {
		t.Errorf("break *%#x = %+v", cold.Value, got)
	}
	// Two static functions of one name: a location in each, as gdb
	// sets them (0x13a0 a.c:17, 0x13d0 b.c:15); FILE:FUNC picks one.
	out, _, code = run(t, "", "break", "-json", bin, "helper")
	if got = decode[bp](t, out); code != 0 || len(got.Locations) != 2 ||
		!strings.HasSuffix(got.Locations[0].File, "a.c") || !strings.HasSuffix(got.Locations[1].File, "b.c") {
		t.Errorf("break helper = %+v, want a location in a.c's and one in b.c's", got)
	}
	out, _, code = run(t, "", "break", "-json", bin, "b.c:helper")
	if got = decode[bp](t, out); code != 0 || got.Function != "helper" || len(got.Addrs) != 1 {
		t.Errorf("break b.c:helper = %+v", got)
	}
	// A line without code moves to the next line with code, as in gdb;
	// past the last one there is none.
	out, _, code = run(t, "", "break", "-json", bin, "main.c:2")
	if got = decode[bp](t, out); code != 0 || len(got.Addrs) != 1 || got.Line <= 2 {
		t.Errorf("break main.c:2 (a comment) = %+v, want the next line with code", got)
	}
	_, stderr, code = run(t, "", "break", bin, "main.c:9999")
	if code != 1 || !strings.Contains(stderr, "no code") {
		t.Errorf("break past the last line with code: exit %d, %q", code, stderr)
	}
}

func TestLines(t *testing.T) {
	bin := testbin.Path(t, "demo")
	out, stderr, code := run(t, "", "lines", "-json", bin, "sum")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type row struct {
		Addr     uint64 `json:"addr"`
		Line     int    `json:"line"`
		Fragment int    `json:"fragment"`
	}
	rows := decode[[]row](t, out)
	// The walk enters sum.cold at its branch and comes back: fragment
	// numbers go 0... 1... 0..., and the cold rows carry line 37.
	var frags []int
	for _, r := range rows {
		if len(frags) == 0 || frags[len(frags)-1] != r.Fragment {
			frags = append(frags, r.Fragment)
		}
	}
	if diff := cmp.Diff([]int{0, 1, 0}, frags); diff != "" {
		t.Errorf("fragment sequence (-want +got):\n%s", diff)
	}
	for _, r := range rows {
		if r.Fragment == 1 && r.Line != 37 && r.Line != 38 {
			t.Errorf("cold row %+v: want line 37 or 38", r)
		}
	}
}
