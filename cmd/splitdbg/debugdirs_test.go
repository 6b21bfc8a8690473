package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/objcopy"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestDebugFileDirectory strips a split test binary, puts its debug file
// under a build-id directory given with -debug-file-directory (after
// another, empty one), and checks that funcs, addr and break answer on
// the stripped file exactly as on the original; without the flag the
// debug file is not found.
func TestDebugFileDirectory(t *testing.T) {
	if _, err := objcopy.Tool(); err != nil {
		t.Skip(err)
	}
	t.Setenv("DEBUGINFOD_URLS", "")
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	// The flag sets elfx.DebugDirs for the rest of the process.
	t.Cleanup(func() { elfx.DebugDirs = []string{elfx.DefaultDebugDir} })
	orig := testbin.Path(t, "gcc-cold")
	dir, global := t.TempDir(), t.TempDir()
	f, err := elfx.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	id, err := f.BuildID()
	f.Close()
	if err != nil || len(id) < 2 {
		t.Fatalf("build ID %x, %v", id, err)
	}
	h := filepath.Join(global, ".build-id", fmt.Sprintf("%x", id[:1]), fmt.Sprintf("%x", id[1:])+".debug")
	if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
		t.Fatal(err)
	}
	stripped := filepath.Join(dir, "gcc-cold")
	if err := objcopy.Run(orig, h, "--only-keep-debug"); err != nil {
		t.Fatal(err)
	}
	if err := objcopy.Run(orig, stripped, "--strip-all"); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-debug-file-directory", t.TempDir(), "-debug-file-directory", global}
	runOK := func(args ...string) string {
		stdout, stderr, code := run(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	funcs := func(bin string, extra ...string) string {
		return runOK(append(append([]string{"funcs"}, extra...), "-all", "-json", bin)...)
	}
	want := funcs(orig)
	if got := funcs(stripped, flags...); got != want {
		t.Errorf("funcs on the stripped file with -debug-file-directory (-original +stripped):\n%s", cmp.Diff(want, got))
	}
	if got := funcs(stripped); got == want {
		t.Errorf("funcs found the debug file without -debug-file-directory")
	}
	// addr at every fragment's start, break on every split function.
	addrs := []string{"addr", "-json", "BIN"}
	var breaks [][]string
	for _, p := range decode[[]glibcFunc](t, want) {
		for _, fr := range p.Fragments {
			addrs = append(addrs, fmt.Sprintf("%#x", fr.Start))
		}
		if len(p.Fragments) > 1 {
			breaks = append(breaks, []string{"break", "-json", "BIN", p.Name})
		}
	}
	if len(breaks) == 0 {
		t.Fatal("gcc-cold has no split functions")
	}
	for _, args := range append(breaks, addrs) {
		// The answer, errors included (break on an ambiguous name fails).
		with := func(bin string, extra ...string) string {
			a := append(append([]string{args[0]}, extra...), args[1:]...)
			for i := range a {
				if a[i] == "BIN" {
					a[i] = bin
				}
			}
			stdout, stderr, code := run(t, "", a...)
			return fmt.Sprintf("exit %d\n%s%s", code, stdout, strings.ReplaceAll(stderr, bin, "BIN"))
		}
		if want, got := with(orig), with(stripped, flags...); got != want {
			t.Errorf("%v (-original +stripped):\n%s", args, cmp.Diff(want, got))
		}
	}
}
