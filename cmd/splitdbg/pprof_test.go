package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// pprofVersion is the upstream pprof the test builds: the version of
// github.com/google/pprof in go.mod.
const pprofVersion = "v0.0.0-20261105003125-4bf881d7fb0b"

// symbolizerDir returns a directory holding llvm-symbolizer, a symlink
// to this test binary, which is splitdbg when SPLITDBG_MAIN=1 is in the
// environment (TestMain).
func symbolizerDir(t *testing.T) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, "llvm-symbolizer")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildPprof builds the upstream pprof command, pinned, through the
// module proxy, skipping the test if it cannot.
func buildPprof(t *testing.T) string {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	dir := t.TempDir()
	cmd := exec.Command(goTool, "install", "github.com/google/pprof@"+pprofVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot build pprof %s (module proxy unreachable?): %v\n%s", pprofVersion, err, out)
	}
	return filepath.Join(dir, "pprof")
}

// writeProfile writes a CPU profile of bin with samples samples at each
// address.
func writeProfile(t *testing.T, bin string, samples map[uint64]int64) string {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := &profile.Mapping{ID: 1, File: bin}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			m.Start, m.Limit, m.Offset = p.Vaddr, p.Vaddr+p.Memsz, p.Off
		}
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1,
		Mapping:    []*profile.Mapping{m},
	}
	for addr, n := range samples {
		loc := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Address: addr}
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{n}})
	}
	path := filepath.Join(t.TempDir(), "cpu.pb.gz")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := p.Write(out); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPprof runs the upstream pprof over a profile whose samples lie in
// process and process.cold: with splitdbg as its llvm-symbolizer, the
// top list has one row for process whose flat value is the sum of both
// fragments' samples; with llvm-symbolizer-22 it has two.
func TestPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pprof")
	}
	bin := testbin.Path(t, "gcc-cold-nopie")
	syms := symbolAddrs(t, bin)
	hot, cold := syms["process"], syms["process.cold"]
	prof := writeProfile(t, bin, map[uint64]int64{hot.Value + 4: 7, hot.Value + 0x20: 5, cold.Value + 2: 11})
	pprof := buildPprof(t)
	run := func(tools string) string {
		cmd := exec.Command(pprof, "-symbolize=local", "-tools="+tools, "-top", prof)
		cmd.Env = append(os.Environ(), "SPLITDBG_MAIN=1", "HOME="+t.TempDir(), "PPROF_TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pprof: %v\n%s", err, out)
		}
		return string(out)
	}
	flat := func(out, fn string) int {
		m := regexp.MustCompile(`(?m)^\s*(\d+)\s.*\s` + regexp.QuoteMeta(fn) + `$`).FindStringSubmatch(out)
		if m == nil {
			return -1
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	out := run(symbolizerDir(t))
	t.Logf("pprof -top with splitdbg:\n%s", out)
	if strings.Contains(out, "process.cold") || flat(out, "process") != 23 {
		t.Errorf("pprof -top with splitdbg symbolize: want one row for process with flat 23 (7+5+11), no process.cold:\n%s", out)
	}
	if p := testbin.FindLLVM("llvm-symbolizer", 22); p != "" {
		dir := t.TempDir()
		if err := os.Symlink(p, filepath.Join(dir, "llvm-symbolizer")); err != nil {
			t.Fatal(err)
		}
		before := run(dir)
		t.Logf("pprof -top with llvm-symbolizer-22:\n%s", before)
		if flat(before, "process") != 12 || flat(before, "process.cold") != 11 {
			t.Errorf("pprof -top with llvm-symbolizer-22: want process 12 and process.cold 11:\n%s", before)
		}
	}
}
