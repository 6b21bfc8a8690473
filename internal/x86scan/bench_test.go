package x86scan

import (
	"debug/elf"
	"path/filepath"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// cgoText returns the .text of testdata/bin/cgo, a Go program with C code.
func cgoText(b *testing.B) ([]byte, uint64) {
	f, err := elf.Open(filepath.Join(testBinDir(), "cgo"))
	if err != nil {
		b.Skipf("testdata/bin/cgo: %v (testdata/gen.sh builds it)", err)
	}
	defer f.Close()
	s := f.Section(".text")
	if s == nil {
		b.Fatal("cgo has no .text")
	}
	text, err := s.Data()
	if err != nil {
		b.Fatal(err)
	}
	return text, s.Addr
}

// BenchmarkScan scans the .text of testdata/bin/cgo linearly with Decode.
func BenchmarkScan(b *testing.B) {
	text, addr := cgoText(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	branches := 0
	for b.Loop() {
		for off := 0; off < len(text); {
			inst := Decode(text[off:], addr+uint64(off), 64)
			if inst.Kind >= Jump {
				branches++
			}
			off += inst.Len
		}
	}
}

// BenchmarkScanAll is BenchmarkScan through the All iterator.
func BenchmarkScanAll(b *testing.B) {
	text, addr := cgoText(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	branches := 0
	for b.Loop() {
		for _, inst := range All(text, addr, 64) {
			if inst.Kind >= Jump {
				branches++
			}
		}
	}
}

// BenchmarkX86asm scans the same code with x86asm.Decode as splitinfo did:
// decode at the offset, skip a byte on error.
func BenchmarkX86asm(b *testing.B) {
	text, _ := cgoText(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	branches := 0
	for b.Loop() {
		for off := 0; off < len(text); {
			inst, err := x86asm.Decode(text[off:], 64)
			if err != nil || inst.Len == 0 {
				off++
				continue
			}
			if _, ok := inst.Args[0].(x86asm.Rel); ok {
				branches++
			}
			off += inst.Len
		}
	}
}
