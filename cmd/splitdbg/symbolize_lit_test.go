package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// llvmTestsDir is where a copy of LLVM's llvm/test/tools/llvm-symbolizer
// tests is looked for: $SPLITDBG_LLVM_TESTS, else
// testdata/llvm-symbolizer (see its README for what to put there).
func llvmTestsDir() string {
	if d := os.Getenv("SPLITDBG_LLVM_TESTS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "testdata", "llvm-symbolizer")
}

// litLeftOut are RUN lines of LLVM's tests that do not apply, by file
// and a part of the line, with why.
var litLeftOut = []struct{ file, part, why string }{
	{"discarded-code-range.yaml", "EM_386", "32-bit x86, not x86-64"},
	{"discarded-code-range.yaml", "%t.32", "32-bit x86, not x86-64"},
	{"discarded-code-range.yaml", "ET_REL", "a relocatable object: splitdbg reads linked files"},
	{"discarded-code-range.yaml", "%t.o ", "a relocatable object: splitdbg reads linked files"},
	{"debug-info-line-info.yaml", "", "a relocatable object: splitdbg reads linked files"},
	{"", "llvm-dwarfdump", "checks llvm-dwarfdump, not the symbolizer"},
	{"", "llvm-mc", "assembles LLVM's source: nothing fetched is built here"},
	{"", "--verbose", "--verbose is not supported"},
	{"", "--skip-line-zero", "--skip-line-zero is not supported"},
	{"", "--filter-markup", "--filter-markup is not supported"},
	{"", "debuginfod", "no debuginfod server in tests"},
}

var (
	litRun     = regexp.MustCompile(`^\s*(?:#|;|//)?\s*RUN:\s?(.*)$`)
	litTool    = regexp.MustCompile(`(^|[\s|;(])(?:env\s+\S+=('[^']*'|\S+)\s+)*(llvm-symbolizer|llvm-addr2line)(\s|$)`)
	litChecker = regexp.MustCompile(`\|\s*FileCheck\b`)
)

// TestLLVMLitTests runs the RUN lines of LLVM's own llvm-symbolizer
// tests (a copy in llvmTestsDir) that apply to ELF x86-64: each line
// that runs llvm-symbolizer or llvm-addr2line runs twice, once with
// llvm-symbolizer-22's and once with this command under those names, and
// must give the same standard output, standard error and exit status;
// the line's FileCheck then runs on this command's output wherever it
// passes on llvm-symbolizer-22's. Where llvm-symbolizer-22 gives another
// answer than the test expects (a test newer than LLVM 22), this
// command must pass the test's FileCheck. The other RUN lines (yaml2obj,
// llvm-objcopy, echo, FileCheck of a saved file) run once, in order.
func TestLLVMLitTests(t *testing.T) {
	dir := llvmTestsDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	var tests []string
	for _, f := range files {
		if strings.HasSuffix(f, ".test") || strings.HasSuffix(f, ".yaml") {
			tests = append(tests, f)
		}
	}
	if len(tests) == 0 {
		t.Skipf("no copy of LLVM's llvm/test/tools/llvm-symbolizer tests in %s (see testdata/llvm-symbolizer/README.md)", dir)
	}
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	if real, err := filepath.EvalSymlinks(sym); err == nil {
		sym = real // /usr/bin/llvm-symbolizer-22 -> /usr/lib/llvm-22/bin/llvm-symbolizer
	}
	llvmBin := filepath.Dir(sym)
	for _, tool := range []string{"llvm-addr2line", "yaml2obj", "FileCheck", "not", "llvm-objcopy"} {
		if _, err := os.Stat(filepath.Join(llvmBin, tool)); err != nil {
			t.Skipf("%s is not installed next to %s", tool, sym)
		}
	}
	ref := t.TempDir()
	for _, tool := range []string{"llvm-symbolizer", "llvm-addr2line"} {
		if err := os.Symlink(filepath.Join(llvmBin, tool), filepath.Join(ref, tool)); err != nil {
			t.Fatal(err)
		}
	}
	ours := symbolizerDir(t)
	if err := os.Symlink(filepath.Join(ours, "llvm-symbolizer"), filepath.Join(ours, "llvm-addr2line")); err != nil {
		t.Fatal(err)
	}
	var taken, leftOut, newer atomic.Int32
	t.Run("files", func(t *testing.T) {
		for _, test := range tests {
			name := filepath.Base(test)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runLitTest(t, test, ref, ours, llvmBin, &taken, &leftOut, &newer)
			})
		}
	})
	t.Logf("%d files: %d symbolizer RUN lines compared (%d of them newer than LLVM 22 and checked by FileCheck only), %d left out",
		len(tests), taken.Load(), newer.Load(), leftOut.Load())
}

// runLitTest runs the RUN lines of one test file; ref and ours are the
// directories of the two symbolizers, llvmBin LLVM 22's tools.
func runLitTest(t *testing.T, test, ref, ours, llvmBin string, taken, leftOut, newer *atomic.Int32) {
	name := filepath.Base(test)
	src, err := os.ReadFile(test)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(test)
	tmp := t.TempDir()
	subst := strings.NewReplacer("%s", abs, "%p", filepath.Dir(abs), "%t", filepath.Join(tmp, name+".tmp"),
		"%errc_ENOENT", "'No such file or directory'", "%errc_EISDIR", "'Is a directory'", "%%", "%")
	shell := func(path, line string) (stdout, stderr []byte, code int) {
		cmd := exec.Command("bash", "-o", "pipefail", "-c", line)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "PATH="+path+":"+llvmBin+":"+os.Getenv("PATH"), "SPLITDBG_MAIN=1",
			"LLVM_SYMBOLIZER_OPTS=", "LLVM_ADDR2LINE_OPTS=")
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.Bytes(), e.Bytes(), code
	}
lines:
	for _, line := range runLines(string(src)) {
		for _, l := range litLeftOut {
			if (l.file == "" || l.file == name) && strings.Contains(line, l.part) {
				t.Logf("left out (%s): %s", l.why, line)
				leftOut.Add(1)
				continue lines
			}
		}
		line = subst.Replace(line)
		if !litTool.MatchString(line) {
			if out, errb, code := shell(ref, line); code != 0 {
				t.Errorf("%s: exit %d\n%s%s", line, code, out, errb)
			}
			continue
		}
		taken.Add(1)
		run, check := line, ""
		if loc := litChecker.FindAllStringIndex(line, -1); loc != nil {
			last := loc[len(loc)-1]
			run, check = line[:last[0]], line[last[0]:]
		}
		wantOut, wantErr, wantCode := shell(ref, run)
		gotOut, gotErr, gotCode := shell(ours, run)
		same := bytes.Equal(gotOut, wantOut) && bytes.Equal(gotErr, wantErr) && gotCode == wantCode
		refChecks, ourChecks := check == "", check == ""
		if check != "" {
			_, _, c := shell(ref, run+check)
			refChecks = c == 0
			_, _, c = shell(ours, run+check)
			ourChecks = c == 0
		}
		switch {
		case same && (ourChecks || !refChecks):
			if !refChecks {
				t.Logf("same as llvm-symbolizer-22, whose output the test's checks do not expect (an input not fetched?): %s", line)
			}
		case !same && !refChecks && ourChecks:
			newer.Add(1)
			t.Logf("differs from llvm-symbolizer-22, which fails the test's checks that this command passes (a test newer than LLVM 22): %s", line)
		default:
			t.Errorf("%s\n llvm-symbolizer-22: exit %d\n%s%s\n splitdbg: exit %d\n%s%s\n checks pass: llvm-symbolizer-22 %v, splitdbg %v",
				line, wantCode, wantOut, wantErr, gotCode, gotOut, gotErr, refChecks, ourChecks)
		}
	}
}

// runLines returns a lit test's RUN lines, continuation lines joined.
func runLines(src string) []string {
	var out []string
	cont := false
	for _, l := range strings.Split(src, "\n") {
		m := litRun.FindStringSubmatch(l)
		if m == nil {
			cont = false
			continue
		}
		body := strings.TrimSpace(m[1])
		joined := strings.HasSuffix(body, "\\")
		body = strings.TrimSuffix(body, "\\")
		if cont {
			out[len(out)-1] += " " + strings.TrimSpace(body)
		} else {
			out = append(out, body)
		}
		cont = joined
	}
	return slices.DeleteFunc(out, func(s string) bool { return strings.TrimSpace(s) == "" })
}
