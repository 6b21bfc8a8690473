package splitinfo_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// largeBinary returns bench/out/large (bench/gen-large.sh builds it:
// 20,000 split functions), or skips.
func largeBinary(b *testing.B) string {
	p := filepath.Join(testbin.Dir(), "..", "..", "bench", "out", "large")
	if _, err := os.Stat(p); err != nil {
		b.Skip("bench/out/large missing: run bench/gen-large.sh")
	}
	return p
}

func benchmarkOpen(b *testing.B, path string) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := splitinfo.Open(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenCgo builds the Table of the largest test binary: 2.3 MB,
// the Go runtime and cgo C code.
func BenchmarkOpenCgo(b *testing.B) { benchmarkOpen(b, testbin.Path(b, "cgo")) }

// BenchmarkOpenLarge builds the Table of the generated 20 MB binary with
// 20,000 split functions.
func BenchmarkOpenLarge(b *testing.B) { benchmarkOpen(b, largeBinary(b)) }

// scaleQuestion returns the binary SCALE_BIN names (an input of
// bench/gen-scale.sh) and the address and name of bench/scale-first.sh's
// question there: the cold fragment of the middle function of the last
// copy (KQnnn_f1250). It skips without SCALE_BIN.
func scaleQuestion(b *testing.B) (*elfx.File, uint64, string) {
	p := os.Getenv("SCALE_BIN")
	if p == "" {
		b.Skip("SCALE_BIN unset: set it to an input of bench/gen-scale.sh")
	}
	f, err := elfx.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	var addr uint64
	name := ""
	f.EachCodeSymbol(func(s *elfx.Symbol) {
		if fn, ok := strings.CutSuffix(s.Name, ".cold"); ok && strings.HasPrefix(fn, "KQ") && strings.HasSuffix(fn, "_f1250") && fn > name {
			name, addr = fn, s.Value+s.Size/2
		}
	})
	if name == "" {
		b.Fatalf("%s: no KQnnn_f1250.cold", p)
	}
	return f, addr, name
}

// BenchmarkScopeOfAddrs finds the scope of scale-first.sh's address: its
// units (every unit's range list at clang) and one pass over the symbol
// table; BenchmarkNameAddrs is break FUNC's pass for the symbols of
// its function. On the scale inputs these are what grows with the file
// in a first answer (BENCHMARKS.md, "First answers with one
// symbol-table pass"). ns/op is wall time: under load, take the CPU
// time of the process (perf stat -e task-clock) over many calls.
func BenchmarkScopeOfAddrs(b *testing.B) {
	f, addr, _ := scaleQuestion(b)
	b.ReportAllocs()
	for b.Loop() {
		if s, err := splitinfo.ScopeOfAddrs(f, []uint64{addr}); err != nil || s == nil {
			b.Fatalf("scope of %#x: %v, %v", addr, s, err)
		}
	}
}

func BenchmarkNameAddrs(b *testing.B) {
	f, _, name := scaleQuestion(b)
	b.ReportAllocs()
	for b.Loop() {
		if len(splitinfo.NameAddrs(f, name)) == 0 {
			b.Fatalf("no symbols of %s", name)
		}
	}
}
