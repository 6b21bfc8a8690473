// Package testbin finds the project's test binaries (testdata/bin) and the
// reference tools that tests compare against, skipping a test with a
// clear reason when one is missing.
package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Dir returns the absolute path of testdata/bin.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "bin")
}

// Path returns the path of testdata/bin/name, skipping the test if it is
// missing (run testdata/gen.sh to rebuild).
func Path(tb testing.TB, name string) string {
	p := filepath.Join(Dir(), name)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("test binary %s missing (testdata/gen.sh builds it): %v", name, err)
	}
	return p
}

// Linked returns the names of the linked ELF test binaries (no
// relocatable objects), sorted.
func Linked(tb testing.TB) []string {
	ents, err := os.ReadDir(Dir())
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".o") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		out = append(out, e.Name())
	}
	if len(out) == 0 {
		tb.Fatal("no test binaries in testdata/bin")
	}
	return out
}

// Tool returns the path of the first of names found in PATH or in the
// LLVM 22 and 19 tool directories, skipping the test if none is.
func Tool(tb testing.TB, names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/lib/llvm-22/bin", "/usr/lib/llvm-19/bin"} {
			if p := filepath.Join(dir, n); isExec(p) {
				return p
			}
		}
	}
	tb.Skipf("none of %v is installed (.ci/run installs them)", names)
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Run runs a tool and returns its standard output, failing the test on
// error.
func Run(tb testing.TB, tool string, args ...string) string {
	out, err := exec.Command(tool, args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		tb.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, msg)
	}
	return string(out)
}

// RunCombined runs a tool and returns its standard output and error
// together; a non-zero exit is not a failure (gdb exits 1 when a batch
// command fails).
func RunCombined(tb testing.TB, tool string, args ...string) (string, error) {
	out, err := exec.Command(tool, args...).CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		tb.Fatalf("%s: %v", tool, err)
	}
	return string(out), err
}
