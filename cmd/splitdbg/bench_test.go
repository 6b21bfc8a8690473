package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// BenchmarkFuncsAllJSON runs "funcs -all -json" in process on the
// generated 20,000-split-function binary (bench/gen-large.sh).
func BenchmarkFuncsAllJSON(b *testing.B) {
	bin := filepath.Join(testbin.Dir(), "..", "..", "bench", "out", "large")
	if _, err := os.Stat(bin); err != nil {
		b.Skip("bench/out/large missing: run bench/gen-large.sh")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as main does
	c := &cli{stdout: io.Discard, stderr: io.Discard}
	b.ReportAllocs()
	for b.Loop() {
		if code := c.main([]string{"funcs", "-all", "-json", bin}); code != 0 {
			b.Fatal("exit", code)
		}
	}
}
