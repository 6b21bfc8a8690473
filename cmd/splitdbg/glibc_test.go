package main

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/elfx"
)

// libcPath is Debian's stripped glibc.
const libcPath = "/lib/x86_64-linux-gnu/libc.so.6"

// glibc returns the path of the stripped libc and of its separate debug
// file from libc6-dbg, skipping the test when either is missing.
func glibc(t *testing.T) (lib, debug string) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the glibc tests read Debian's x86-64 libc (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	elfx.DebugDirs = []string{elfx.DefaultDebugDir} // as a command run starts
	f, err := elfx.Open(libcPath)
	if err != nil {
		t.Skipf("no Debian glibc: %v", err)
	}
	defer f.Close()
	id, err := f.BuildID()
	if err != nil || len(id) < 2 {
		t.Skipf("%s has no build ID (%v)", libcPath, err)
	}
	h := fmt.Sprintf("%x", id)
	debug = filepath.Join(elfx.DefaultDebugDir, ".build-id", h[:2], h[2:]+".debug")
	if _, err := os.Stat(debug); err != nil {
		t.Skipf("glibc's debug file is missing (apt-get install libc6-dbg; .ci/run installs it): %v", err)
	}
	if f.Debug == nil || f.Debug.Name != debug {
		t.Fatalf("%s opened without its debug file %s", libcPath, debug)
	}
	return libcPath, debug
}

type glibcFrag struct {
	Start  uint64 `json:"start"`
	End    uint64 `json:"end"`
	Symbol string `json:"symbol"`
	Kind   string `json:"kind"`
	// branch_addr and branch_addrs are left out: finding them needs the
	// code, which the debug file has as SHT_NOBITS.
	Sources []string `json:"sources"`
}

type glibcFunc struct {
	Name       string      `json:"name"`
	SourceName string      `json:"source_name"`
	Aliases    []string    `json:"aliases"`
	Entry      uint64      `json:"entry"`
	Size       uint64      `json:"size"`
	CompUnit   string      `json:"compile_unit"`
	File       string      `json:"file"`
	Line       int         `json:"line"`
	Fragments  []glibcFrag `json:"fragments"`
	Sources    []string    `json:"sources"`
	Conflicts  []struct {
		Addr   uint64 `json:"addr"`
		Detail string `json:"detail"`
	} `json:"conflicts"`
}

func funcsJSON(t *testing.T, bin string) []glibcFunc {
	t.Helper()
	stdout, stderr, code := run(t, "", "funcs", "-all", "-json", bin)
	if code != 0 {
		t.Fatalf("funcs %s: exit %d: %s", bin, code, stderr)
	}
	return decode[[]glibcFunc](t, stdout)
}

// TestGlibcSeparateDebug runs funcs, addr and break on Debian's stripped
// libc.so.6, which splitdbg reads with libc6-dbg's debug file, and on
// that debug file alone: the answers are the same. The split functions
// are the debug file's X.cold symbols.
func TestGlibcSeparateDebug(t *testing.T) {
	lib, debug := glibc(t)
	t.Setenv("DEBUGINFOD_URLS", "")
	stripped, alone := funcsJSON(t, lib), funcsJSON(t, debug)
	if diff := cmp.Diff(alone, stripped); diff != "" {
		t.Errorf("funcs -all (-%s +%s):\n%s", debug, lib, diff)
	}
	// Every X.cold function symbol of the debug file is a cold fragment
	// of a split procedure, and every cold fragment is one of them.
	ef, err := elf.Open(debug)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	wantCold := map[uint64]bool{}
	for _, s := range syms {
		if strings.HasSuffix(s.Name, ".cold") && s.Size > 0 && s.Section != elf.SHN_UNDEF {
			wantCold[s.Value] = true
		}
	}
	gotCold := map[uint64]bool{}
	var addrs, names, lines []string
	procOf := map[string]string{} // address → procedure
	for _, f := range stripped {
		for _, fr := range f.Fragments {
			if fr.Kind != "cold" {
				continue
			}
			gotCold[fr.Start] = true
			for _, x := range []uint64{fr.Start, fr.End - 1} {
				addrs = append(addrs, fmt.Sprintf("%#x", x))
				procOf[addrs[len(addrs)-1]] = f.Name
			}
		}
		if len(f.Fragments) > 1 && len(names) < 2 {
			names = append(names, f.Name)
		}
	}
	if len(wantCold) < 50 || !cmp.Equal(wantCold, gotCold) {
		t.Errorf("%d cold fragments, the debug file has %d X.cold symbols:\n%s", len(gotCold), len(wantCold), cmp.Diff(wantCold, gotCold))
	}
	// addr at both ends of every cold fragment.
	addr := func(bin string) string {
		stdout, stderr, code := run(t, "", append([]string{"addr", "-json", bin}, addrs...)...)
		if code != 0 {
			t.Fatalf("addr %s: exit %d: %s", bin, code, stderr)
		}
		return stdout
	}
	a, b := addr(lib), addr(debug)
	if a != b {
		t.Errorf("addr differs (-%s +%s):\n%s", debug, lib, cmp.Diff(b, a))
	}
	type loc struct {
		Function string `json:"function"`
		Kind     string `json:"kind"`
		File     string `json:"file"`
		Line     int    `json:"line"`
	}
	found := decode[[]loc](t, a)
	for i, l := range found {
		if l.Kind != "cold" || l.Function != procOf[addrs[i]] {
			t.Errorf("addr %s: %+v; want a cold fragment of %s", addrs[i], l, procOf[addrs[i]])
		}
		// Some fragments have no line rows (llvm-symbolizer: ??:0).
		if l.Line != 0 && len(lines) < 2 {
			lines = append(lines, fmt.Sprintf("%s:%d", filepath.Base(l.File), l.Line))
		}
	}
	if len(found) != len(addrs) || len(lines) < 2 {
		t.Errorf("addr answered %d of %d addresses, %d with a line", len(found), len(addrs), len(lines))
	}
	// break on split functions and on the line of a cold fragment.
	for _, loc := range append(names, lines...) {
		x, xerr, xc := run(t, "", "break", "-json", lib, loc)
		y, yerr, yc := run(t, "", "break", "-json", debug, loc)
		if xc != 0 || x != y || xerr != yerr || xc != yc {
			t.Errorf("break %s: %s: exit %d %s%s; %s: exit %d %s%s", loc, lib, xc, x, xerr, debug, yc, y, yerr)
		}
	}
}

// TestGlibcNamesAgainstGDB checks the name of every function of the
// stripped libc.so.6 (with its debug file) against gdb 13's "info symbol"
// at its entry, versions removed: gdb prints a trailing ".N" of
// foo.part.N or foo.isra.N without the number.
func TestGlibcNamesAgainstGDB(t *testing.T) {
	lib, _ := glibc(t)
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		t.Skip("gdb is not installed (.ci/run installs it)")
	}
	t.Setenv("DEBUGINFOD_URLS", "")
	funcs := funcsJSON(t, lib)
	var script strings.Builder
	for _, f := range funcs {
		fmt.Fprintf(&script, "info symbol %#x\n", f.Entry)
	}
	cmds := filepath.Join(t.TempDir(), "cmds")
	if err := os.WriteFile(cmds, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gdb, "-nx", "-batch", "-x", cmds, lib)
	cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gdb: %v", err)
	}
	answer := regexp.MustCompile(`^(\S+?)(@\S*)? (\+ \d+ )?in section `)
	var got []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, " in section ") || strings.HasPrefix(l, "No symbol matches") {
			got = append(got, l)
		}
	}
	if len(got) != len(funcs) {
		t.Fatalf("gdb answered %d of %d addresses", len(got), len(funcs))
	}
	trailing := regexp.MustCompile(`\.\d+$`)
	bad := 0
	for i, f := range funcs {
		m := answer.FindStringSubmatch(got[i])
		if m == nil || m[3] != "" || trailing.ReplaceAllString(m[1], "") != trailing.ReplaceAllString(f.Name, "") {
			if bad++; bad <= 20 {
				t.Errorf("%#x: splitdbg names it %s (aliases %v), gdb says %q", f.Entry, f.Name, f.Aliases, got[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d names differ from gdb's", bad, len(funcs))
	}
}
