package symbolize

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// benchModule opens bench/out/mfs (bench/gen-mfs.sh: 30,000 functions
// split by clang 22) if it has been generated, else the small clang 22
// test binary, and returns addresses spread over its fragments, half in
// moved ones.
func benchModule(b *testing.B) (*Module, []uint64) {
	path := "../bench/out/mfs"
	if _, err := os.Stat(path); err != nil {
		path = testbin.Path(b, "clang22-mfs")
	}
	m, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	var hot, moved [][2]uint64
	for p := range m.Procs().All() {
		for i, f := range p.Fragments {
			if i == 0 {
				hot = append(hot, [2]uint64{f.Start, f.End})
			} else {
				moved = append(moved, [2]uint64{f.Start, f.End})
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, 1<<16)
	for i := range addrs {
		set := hot
		if i%2 == 1 && len(moved) > 0 {
			set = moved
		}
		f := set[r.IntN(len(set))]
		addrs[i] = f[0] + r.Uint64N(f[1]-f[0])
	}
	b.Logf("%s: %d hot and %d moved fragments", path, len(hot), len(moved))
	return m, addrs
}

// BenchmarkFrames: one address's frames, inline chain included, as pprof
// asks for them (linkage names, not demangled).
func BenchmarkFrames(b *testing.B) {
	m, addrs := benchModule(b)
	o := &Options{Inlines: true}
	frames := make([]Frame, 0, 16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		frames = m.Frames(frames[:0], addrs[i&(len(addrs)-1)], o)
	}
}

// BenchmarkAnswerJSON: Frames and llvm-symbolizer's JSON answer.
func BenchmarkAnswerJSON(b *testing.B) {
	m, addrs := benchModule(b)
	o := &Options{Inlines: true}
	p := &Printer{Style: JSON, Functions: true}
	frames := make([]Frame, 0, 16)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := addrs[i&(len(addrs)-1)]
		frames = m.Frames(frames[:0], a, o)
		buf = p.AppendCode(buf[:0], &Request{Module: "mfs", Addr: a, HasAddr: true}, frames)
	}
}

// BenchmarkOpen builds the tables of bench/out/mfs (else the small
// clang 22 test binary): what a symbolizer does before its first answer.
func BenchmarkOpen(b *testing.B) {
	path := "../bench/out/mfs"
	if _, err := os.Stat(path); err != nil {
		path = testbin.Path(b, "clang22-mfs")
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Open(path); err != nil {
			b.Fatal(err)
		}
	}
}
