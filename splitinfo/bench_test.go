package splitinfo_test

import (
	"os"
	"path/filepath"
	"testing"

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
