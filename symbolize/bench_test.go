package symbolize

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
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

// BenchmarkServe: Serve's answers to 65,536 addresses (benchModule's) on
// standard input, as pprof asks for them (--inlining, JSON), the module
// already read: what the stream costs per address.
func BenchmarkServe(b *testing.B) {
	m, addrs := benchModule(b)
	var in []byte
	for _, a := range addrs {
		in = append(strconv.AppendUint(append(in, "0x"...), a, 16), '\n')
	}
	cfg, _, _, err := ParseArgs([]string{"--obj=bench", "--inlining", "--output-style=JSON"}, false)
	if err != nil {
		b.Fatal(err)
	}
	s := NewServer(cfg, "bench", io.Discard)
	s.objMod = &module{m: m}
	s.modules["bench"] = s.objMod
	out := bufio.NewWriterSize(io.Discard, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Serve(bytes.NewReader(in), out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(addrs)), "ns/addr")
}

// BenchmarkWarm: Frames and the JSON answer of benchModule's addresses,
// in runs of 8,192 sorted by address and in groups of warmGroup as Serve
// renders them, with each group's records read ahead (Module.warm) and
// without.
func BenchmarkWarm(b *testing.B) {
	m, addrs := benchModule(b)
	addrs = slices.Clone(addrs)
	for i := 0; i < len(addrs); i += 1 << 13 {
		slices.Sort(addrs[i:min(len(addrs), i+1<<13)])
	}
	o := &Options{Inlines: true}
	p := &Printer{Style: JSON, Functions: true}
	for _, warm := range []bool{true, false} {
		b.Run(fmt.Sprintf("warm=%v", warm), func(b *testing.B) {
			frames := make([]Frame, 0, 16)
			buf := make([]byte, 0, 4096)
			var where [warmGroup]found
			var sum uint64
			b.ReportAllocs()
			for i := 0; i < b.N; i += warmGroup {
				at := i & (len(addrs) - 1)
				group := addrs[at:min(len(addrs), at+warmGroup)]
				if warm {
					sum += m.warm(group, where[:len(group)])
				} else {
					for j, a := range group {
						where[j] = m.find(a)
					}
				}
				for j, a := range group {
					frames = m.framesAt(frames[:0], a, where[j], o)
					buf = p.AppendCode(buf[:0], &Request{Module: "mfs", Addr: a, HasAddr: true}, frames)
				}
			}
			warmSink = sum
		})
	}
}

// warmSink keeps what BenchmarkWarm's reads ahead read.
var warmSink uint64
