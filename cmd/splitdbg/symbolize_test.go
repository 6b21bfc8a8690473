package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// runSymbolize runs the symbolize command in process.
func runSymbolize(t *testing.T, stdin string, addr2line bool, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := (&cli{strings.NewReader(stdin), &out, &errb}).symbolize("llvm-symbolizer", args, addr2line)
	return out.String(), errb.String(), code
}

// TestSymbolizeProtocol: for requests that involve no moved fragment,
// standard output is llvm-symbolizer 22's (llvm-addr2line's) byte for
// byte, on odd input lines too, in every output style.
func TestSymbolizeProtocol(t *testing.T) {
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	a2l := testbin.LLVMTool(t, "llvm-addr2line", 22)
	bin := testbin.Path(t, "demo")
	syms := symbolAddrs(t, bin)
	sum, main := syms["sum"], syms["main"]
	data := syms["__data_start"]
	objLines := []string{
		hex(sum.Value), "", "  ", hex(sum.Value) + " extra", "sum", "sum+0x4", "sum+4", "sum+", "+4", "main",
		"nosuch", "010", "0b1", "0x", "12z", "-1", `"quoted`, "DATA " + hex(data.Value), "DATA sum", "CODE " + hex(main.Value),
		"FRAME 0x0", "CODE", "FILE:BUILDID:x 1", "FILE:", "BUILDID: ", "BUILDID:zz", "0X" + strings.ToUpper(hex(sum.Value)[2:]), "\t" + hex(sum.Value),
	}
	fileLines := []string{
		bin + " " + hex(sum.Value), `"` + bin + `" ` + hex(main.Value), "'" + bin + "' " + hex(sum.Value),
		"FILE:" + bin + " " + hex(sum.Value), "CODE " + bin + " " + hex(sum.Value), "DATA " + bin + " " + hex(data.Value),
		bin, bin + " ", "nosuchfile 0x10", "nosuchfile 0x20", "BUILDID:zz 0x10", "BUILDID:abcd 0x10", bin + " sum",
		bin + " 12z", "", `"` + bin + " 0x10",
		"\"odd\x01\x1f\x7f\xff\t\\name\" 0x10", "'quote\"d' 0x10",
		"/etc/passwd 0x10", os.TempDir() + " 0x10", "/dev/null 0x10", "FILE:", "FILE: \t", "BUILDID:", "BUILDID: foo",
	}
	styles := [][]string{nil, {"--output-style=GNU"}, {"--output-style=JSON"}, {"-a", "-p"}, {"--output-style=JSON", "-p"}, {"--output-style=GNU", "-a", "--no-inlines"},
		{"--adjust-vma", "0x4", "--relative-address", "-s", "-a", "--output-style=JSON"}, {"-aCfip", "--functions=short", "--relativenames"}}
	for _, style := range styles {
		for _, c := range []struct {
			args  []string
			lines []string
		}{{[]string{"--obj=" + bin}, objLines}, {nil, fileLines}} {
			args := append(append([]string{}, c.args...), style...)
			var lines []string
			for _, l := range c.lines {
				// llvm-symbolizer -a prints whatever address its memory
				// holds for DATA of a symbol.
				if !(strings.HasPrefix(l, "DATA sum") && (slices.Contains(style, "-a") || slices.Contains(style, "-aCfip"))) {
					lines = append(lines, l)
				}
			}
			in := strings.Join(lines, "\n") + "\n"
			for _, addr2line := range []bool{false, true} {
				tool := sym
				if addr2line {
					tool = a2l
				}
				cmd := exec.Command(tool, args...)
				cmd.Stdin = strings.NewReader(in)
				want, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s %v: %v", tool, args, err)
				}
				got, _, code := runSymbolize(t, in, addr2line, args...)
				if diff := cmp.Diff(string(want), got); code != 0 || diff != "" {
					t.Errorf("%s %v (exit %d) (-llvm +ours):\n%s", tool, args, code, diff)
				}
			}
		}
		// Addresses on the command line: one JSON array.
		sameArgsOutput(t, sym, append([]string{"--obj=" + bin, hex(sum.Value), hex(main.Value), "sum", "zz"}, style...)...)
	}
}

// TestSymbolizeObj: --obj's file is read before any request; one that
// cannot be read ends the command with llvm-symbolizer 22's message and
// status; grouped flags may end in -e and its file.
func TestSymbolizeObj(t *testing.T) {
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	bin := testbin.Path(t, "demo")
	sum := hex(symbolAddrs(t, bin)["sum"].Value)
	for _, c := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"--obj=/nonexistent", sum}, ""},
		{[]string{"--obj=/nonexistent"}, sum + "\n"},
		{[]string{"-e", os.TempDir(), "--output-style=JSON", sum, sum}, ""},
		{[]string{"--obj=/etc/passwd", "--output-style=JSON"}, sum + "\n"},
		{[]string{"-e/dev/null", "--output-style=GNU", sum}, ""},
		{[]string{"-apCie", bin}, sum + "\nzz\n"},
		{[]string{"-apCie=" + bin}, sum + "\n"},
		{[]string{"-afe" + bin, "--output-style=GNU"}, sum + "\n"},
	} {
		cmd := exec.Command(sym, c.args...)
		cmd.Stdin = strings.NewReader(c.stdin)
		var wantErr bytes.Buffer
		cmd.Stderr = &wantErr
		want, err := cmd.Output()
		wantCode := 0
		if x, ok := err.(*exec.ExitError); ok {
			wantCode = x.ExitCode()
		}
		got, gotErr, code := runSymbolize(t, c.stdin, false, c.args...)
		wantErrS := strings.ReplaceAll(wantErr.String(), sym+":", "llvm-symbolizer:")
		if got != string(want) || gotErr != wantErrS || code != wantCode {
			t.Errorf("symbolize %v: exit %d\n%s%s\nllvm-symbolizer-22: exit %d\n%s%s", c.args, code, got, gotErr, wantCode, want, wantErrS)
		}
	}
}

// TestSymbolizeResponseFiles: @FILE arguments are read as llvm-symbolizer
// 22 reads them: GNU quoting, nested files, a file that cannot be read
// kept as an input.
func TestSymbolizeResponseFiles(t *testing.T) {
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	bin := testbin.Path(t, "demo")
	sum := hex(symbolAddrs(t, bin)["sum"].Value)
	dir := t.TempDir()
	inner := filepath.Join(dir, "inner.rsp")
	outer := filepath.Join(dir, "outer.rsp")
	for name, text := range map[string]string{
		inner: "sum\n\n\"x\\\\y\" '' a''b\n--output-style=JSON\n",
		outer: "--obj=" + bin + " 'a b' \"c\\\"d\" e\\ f " + sum + " @" + inner + "\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"@" + outer}, {"@" + outer, "@" + filepath.Join(dir, "none.rsp")}, {"@" + inner, "--obj=" + bin, sum}} {
		sameArgsOutput(t, sym, args...)
	}
}

// sameArgsOutput checks that the command prints what llvm-symbolizer
// (sym) prints for the command line args, without standard input.
func sameArgsOutput(t *testing.T, sym string, args ...string) {
	t.Helper()
	want, err := exec.Command(sym, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := runSymbolize(t, "", false, args...)
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("llvm-symbolizer %v (-llvm +ours):\n%s", args, diff)
	}
}

// TestSymbolizeLogical: an address in a moved fragment is named by its
// function, in every style.
func TestSymbolizeLogical(t *testing.T) {
	bin := testbin.Path(t, "demo")
	cold := symbolAddrs(t, bin)["sum.cold"]
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "sum\n./demo/demo.c:37:4\n\n"},
		{[]string{"--output-style=GNU"}, "sum\n./demo/demo.c:37 (discriminator 1)\n"},
		{[]string{"--output-style=JSON"}, `{"Address":"` + hex(cold.Value+2) + `","ModuleName":"` + bin + `","Symbol":[{"Column":4,"Discriminator":1,"FileName":"./demo/demo.c","FunctionName":"sum","Line":37,"StartAddress":"0x1250","StartFileName":"./demo/demo.c","StartLine":32}]}` + "\n"},
	} {
		got, _, _ := runSymbolize(t, hex(cold.Value+2)+"\n", false, append([]string{"--obj=" + bin}, c.args...)...)
		if got != c.want {
			t.Errorf("symbolize %v %s = %q, want %q", c.args, hex(cold.Value+2), got, c.want)
		}
	}
}

// TestSymbolizeStreams: each answer arrives before the next request is
// sent, as pprof and the sanitizer runtimes wait for it.
func TestSymbolizeStreams(t *testing.T) {
	bin := testbin.Path(t, "demo")
	sum := symbolAddrs(t, bin)["sum"]
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		done <- (&cli{inR, outW, io.Discard}).symbolize("llvm-symbolizer", []string{"--output-style=JSON"}, false)
		outW.Close()
	}()
	var buf [4096]byte
	for i := 0; i < 3; i++ {
		req := `CODE "` + bin + `" ` + hex(sum.Value) + "\n"
		if i == 1 {
			req = "zz\n"
		}
		if _, err := io.WriteString(inW, req); err != nil {
			t.Fatal(err)
		}
		got := make(chan string)
		go func() {
			n, _ := outR.Read(buf[:])
			got <- string(buf[:n])
		}()
		select {
		case s := <-got:
			if !strings.HasSuffix(s, "}\n") {
				t.Errorf("answer %d = %q, want one JSON line", i, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to request %d within 10s", i)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}

func TestSymbolizeAs(t *testing.T) {
	for _, c := range []struct {
		argv0          string
		sym, addr2line bool
	}{
		{"/usr/bin/llvm-symbolizer", true, false},
		{"llvm-symbolizer-22", true, false},
		{"/x/addr2line", true, true},
		{"llvm-addr2line", true, true},
		{"/go/bin/splitdbg", false, false},
	} {
		if sym, a2l := symbolizeAs(c.argv0); sym != c.sym || a2l != c.addr2line {
			t.Errorf("symbolizeAs(%q) = %v, %v; want %v, %v", c.argv0, sym, a2l, c.sym, c.addr2line)
		}
	}
}

// TestSymbolizeBuildID: BUILDID: requests find the file under
// --debug-file-directory's .build-id tree, as llvm-symbolizer does.
func TestSymbolizeBuildID(t *testing.T) {
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	bin := testbin.Path(t, "demo")
	f, err := elfx.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	id, err := f.BuildID()
	f.Close()
	if err != nil || len(id) < 2 {
		t.Skipf("%s has no build ID: %v", bin, err)
	}
	h := fmt.Sprintf("%x", id)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".build-id", h[:2]), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(dir, ".build-id", h[:2], h[2:]+".debug")); err != nil {
		t.Fatal(err)
	}
	sum := symbolAddrs(t, bin)["sum"]
	in := "BUILDID:" + h + " " + hex(sum.Value) + "\nBUILDID:" + strings.ToUpper(h) + " sum\nBUILDID:00ff 0x10\n"
	for _, style := range []string{"LLVM", "JSON"} {
		args := []string{"--debug-file-directory=" + dir, "--output-style=" + style}
		cmd := exec.Command(sym, append(args, "--no-debuginfod")...)
		cmd.Stdin = strings.NewReader(in)
		want, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := runSymbolize(t, in, false, args...)
		if diff := cmp.Diff(string(want), got); diff != "" {
			t.Errorf("%s (-llvm-symbolizer +ours):\n%s", style, diff)
		}
	}
}
