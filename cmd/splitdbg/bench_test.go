package main

import (
	"bytes"
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

// BenchmarkAddrStream streams a million addresses (bench/compare-addr.sh
// makes such a file: ADDRS=path) through "addr -json BIN -" in process.
func BenchmarkAddrStream(b *testing.B) {
	bin := filepath.Join(testbin.Dir(), "..", "..", "bench", "out", "large")
	addrs := os.Getenv("ADDRS")
	if _, err := os.Stat(bin); err != nil || addrs == "" {
		b.Skip("needs bench/out/large and ADDRS=file of addresses (bench/compare-addr.sh KEEP=1 keeps one)")
	}
	data, err := os.ReadFile(addrs)
	if err != nil {
		b.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.ReportAllocs()
	for b.Loop() {
		c := &cli{stdin: bytes.NewReader(data), stdout: io.Discard, stderr: io.Discard}
		if code := c.main([]string{"addr", "-json", bin, "-"}); code != 0 {
			b.Fatal("exit", code)
		}
	}
}
