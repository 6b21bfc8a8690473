package x86scan

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// testBinDir is the project's testdata/bin.
func testBinDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "bin")
}

// systemBinaries are large binaries of different origins scanned when
// present: GCC C and C++ code, glibc with its hand-written SSE, AVX2 and
// AVX-512 (EVEX) string functions in 64- and 32-bit builds, Go code,
// Haskell (GHC) code, and LLVM.
var systemBinaries = []struct {
	path string
	long bool // skipped with -short
}{
	{"/usr/bin/gdb", false},
	{"/lib/x86_64-linux-gnu/libc.so.6", false},
	{"/lib/x86_64-linux-gnu/libm.so.6", false},
	{"/usr/lib32/libc.so.6", false},
	{"/usr/lib32/libm.so.6", false},
	{"/usr/local/go/bin/go", true},
	{"/usr/bin/shellcheck", true},
	{"/usr/bin/perf", true},
	{"/usr/lib/llvm-22/lib/libLLVM.so.22.1", true},
}

// scanStats counts what a differential scan saw.
type scanStats struct {
	bytes, insts int
	kinds        [LEA + 1]int
	diffs        int
}

func (s scanStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d bytes, %d instructions:", s.bytes, s.insts)
	for k, n := range s.kinds {
		fmt.Fprintf(&b, " %v %d", Kind(k), n)
	}
	fmt.Fprintf(&b, "; %d differences", s.diffs)
	return b.String()
}

// diffScan scans code linearly as splitinfo does (decode at the offset;
// skip one byte when nothing decodes) with Decode and with x86asm and
// reports where they disagree, resynchronizing on x86asm's boundaries.
func diffScan(t *testing.T, name string, code []byte, pc uint64, mode int, st *scanStats) {
	st.bytes += len(code)
	for off := 0; off < len(code); {
		got := Decode(code[off:], pc+uint64(off), mode)
		want := reference(code[off:], pc+uint64(off), mode)
		st.insts++
		st.kinds[want.Kind]++
		if got != want {
			st.diffs++
			if st.diffs <= 10 {
				t.Errorf("%s+%#x: %s\n\tgot  %+v\n\twant %+v", name, off, describe(code[off:], mode), got, want)
			}
		}
		off += want.Len
	}
}

// diffELF runs diffScan over every executable section of the ELF file at
// path.
func diffELF(t *testing.T, path string) scanStats {
	var st scanStats
	f, err := elf.Open(path)
	if err != nil {
		t.Skipf("not an ELF file: %v", err)
	}
	defer f.Close()
	mode := ModeOf(f.Machine)
	if mode == 0 {
		t.Skipf("machine %v", f.Machine)
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 {
			continue
		}
		code, err := s.Data()
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		diffScan(t, s.Name, code, s.Addr, mode, &st)
	}
	t.Logf("mode %d: %v", mode, st)
	return st
}

// TestDiffTestdata compares Decode with x86asm on the executable sections
// of every ELF file in testdata/bin.
func TestDiffTestdata(t *testing.T) {
	ents, err := os.ReadDir(testBinDir())
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("testdata/bin missing (testdata/gen.sh builds it)")
	}
	if err != nil {
		t.Fatal(err)
	}
	var total scanStats
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			st := diffELF(t, filepath.Join(testBinDir(), e.Name()))
			total.bytes += st.bytes
			total.insts += st.insts
			total.diffs += st.diffs
			for k, n := range st.kinds {
				total.kinds[k] += n
			}
		})
	}
	t.Logf("total: %v", total)
}

// TestDiffSystem compares Decode with x86asm on large system binaries,
// each skipped when absent.
func TestDiffSystem(t *testing.T) {
	for _, b := range systemBinaries {
		t.Run(filepath.Base(filepath.Dir(b.path))+"/"+filepath.Base(b.path), func(t *testing.T) {
			if b.long && testing.Short() {
				t.Skip("large; skipped with -short")
			}
			if _, err := os.Stat(b.path); err != nil {
				t.Skipf("%s absent: %v", b.path, err)
			}
			diffELF(t, b.path)
		})
	}
}
