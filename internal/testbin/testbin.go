// Package testbin finds the project's test binaries (testdata/bin) and the
// reference tools that tests compare against, skipping a test with a
// clear reason when one is missing, and runs those tools.
package testbin

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
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

// OpenELF opens the ELF file at path, failing the test on error; the file
// is closed when the test ends.
func OpenELF(tb testing.TB, path string) *elf.File {
	tb.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ef.Close() })
	return ef
}

// BBAddrMapFiles returns the test binaries that carry a BB address map:
// the yaml2obj objects, the clang builds in testdata/bin/bbaddrmap, and
// the clang split builds of testdata/bin. It skips the test if there are
// none.
func BBAddrMapFiles(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, pat := range []string{"bbaddrmap-*.o", "bbaddrmap/*", "clang*-mfs", "clang*-bbsections", "clang*-bbsections.o"} {
		m, err := filepath.Glob(filepath.Join(Dir(), pat))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		tb.Skip("no BB address map test binaries (testdata/gen.sh clang19-bbaddrmap clang22-bbaddrmap bbaddrmap-yaml)")
	}
	return out
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

// FindLLVM returns the path of the LLVM tool name of major version v
// (name-v in PATH, or name in /usr/lib/llvm-v/bin), or "" if it is not
// installed.
func FindLLVM(name string, v int) string {
	vs := strconv.Itoa(v)
	if p, err := exec.LookPath(name + "-" + vs); err == nil {
		return p
	}
	if p := filepath.Join("/usr/lib/llvm-"+vs, "bin", name); isExec(p) {
		return p
	}
	return ""
}

// LLVMTool is FindLLVM, skipping the test if the tool is not installed.
func LLVMTool(tb testing.TB, name string, v int) string {
	tb.Helper()
	p := FindLLVM(name, v)
	if p == "" {
		tb.Skipf("%s-%d is not installed (.ci/run installs LLVM 19 and 22)", name, v)
	}
	return p
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Run runs a tool and returns its standard output, failing the test on
// error.
func Run(tb testing.TB, tool string, args ...string) string {
	tb.Helper()
	out, _ := RunStderr(tb, tool, args...)
	return out
}

// RunStderr runs a tool and returns its standard output and standard
// error, failing the test on error.
func RunStderr(tb testing.TB, tool string, args ...string) (stdout, stderr string) {
	tb.Helper()
	cmd := exec.Command(tool, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, errb.String())
	}
	return string(out), errb.String()
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

// MappedRss returns the resident size in KiB of the process's mappings of
// the file at path (their Rss in /proc/self/smaps); false when the
// system has no smaps or no mapping of path.
func MappedRss(path string) (int, bool) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	in, found, rss := false, false, 0
	for line := range strings.Lines(string(b)) {
		fields := strings.Fields(line)
		if len(fields) >= 6 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = strings.HasSuffix(strings.TrimSpace(line), path)
			continue
		}
		if in && len(fields) >= 2 && fields[0] == "Rss:" {
			if kb, err := strconv.Atoi(fields[1]); err == nil {
				rss += kb
				found = true
			}
		}
	}
	return rss, found
}
