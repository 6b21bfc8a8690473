package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestASan runs a program built with AddressSanitizer (GCC -O2 -g
// objects linked with clang-22's compiler-rt runtime, which runs the
// symbolizer ASAN_SYMBOLIZER_PATH names) whose heap overflow happens in
// the cold fragment of sum_or_report: with splitdbg as the symbolizer the
// report is llvm-symbolizer-22's, frame for frame, except that the
// fragment's frame is named sum_or_report, not sum_or_report.cold.
func TestASan(t *testing.T) {
	gcc := testbin.Tool(t, "gcc")
	clang := testbin.LLVMTool(t, "clang", 22)
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	src, err := filepath.Abs("../../testdata/src/asan/asan.c")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	obj, bin := filepath.Join(dir, "asan.o"), filepath.Join(dir, "asan")
	for _, c := range [][]string{
		{gcc, "-O2", "-g", "-fsanitize=address", "-c", src, "-o", obj},
		{clang, "-fsanitize=address", obj, "-o", bin},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Skipf("cannot build the ASan program (%v): %v\n%s", c, err, out)
		}
	}
	if syms := symbolAddrs(t, bin); syms["sum_or_report.cold"].Value == 0 {
		t.Fatalf("%s has no sum_or_report.cold: GCC did not split it", bin)
	}
	report := func(symbolizer string) string {
		cmd := exec.Command(bin, "-4")
		cmd.Env = append(os.Environ(), "SPLITDBG_MAIN=1", "ASAN_SYMBOLIZER_PATH="+symbolizer, "ASAN_OPTIONS=detect_leaks=0")
		out, _ := cmd.CombinedOutput()
		// Addresses and the process ID change from run to run.
		s := regexp.MustCompile(`0x[0-9a-f]+`).ReplaceAllString(string(out), "0x?")
		return regexp.MustCompile(`==\d+==`).ReplaceAllString(s, "==?==")
	}
	want := report(sym)
	if !strings.Contains(want, "in sum_or_report.cold ") {
		t.Fatalf("the report with llvm-symbolizer-22 does not name sum_or_report.cold:\n%s", want)
	}
	want = strings.ReplaceAll(want, "sum_or_report.cold", "sum_or_report")
	got := report(filepath.Join(symbolizerDir(t), "llvm-symbolizer"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ASan report (-llvm-symbolizer-22 with logical names, +splitdbg):\n%s", diff)
	}
	if !regexp.MustCompile(`#0 0x\? in sum_or_report .*asan\.c:18:11\n`).MatchString(got) {
		t.Errorf("frame #0 is not sum_or_report at asan.c:18:11:\n%s", got)
	}
}
