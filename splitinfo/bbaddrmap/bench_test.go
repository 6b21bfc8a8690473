package bbaddrmap_test

import (
	"debug/elf"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	bam "github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

// benchBinary returns bench/out/bbaddrmap, built by bench/gen-bbaddrmap.sh
// (20,000 functions, about 590,000 blocks), skipping when it is missing.
func benchBinary(b *testing.B) string {
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "bench", "out", "bbaddrmap")
	if _, err := os.Stat(p); err != nil {
		b.Skipf("benchmark binary missing: run bench/gen-bbaddrmap.sh (%v)", err)
	}
	return p
}

// benchSection returns the benchmark binary's map section, read into
// memory, and its layout.
func benchSection(b *testing.B) (bam.Section, []byte) {
	f, err := elf.Open(benchBinary(b))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bam.Sections(f)[0]
	sec, err := bam.SectionOf(f, s)
	if err != nil {
		b.Fatal(err)
	}
	data, err := s.Data()
	if err != nil {
		b.Fatal(err)
	}
	return sec, data
}

// BenchmarkDecode decodes the whole benchmark map: Next over the section
// in memory (nothing kept), ReadAll (every function kept), and ReadFile
// (read from disk, every function kept).
func BenchmarkDecode(b *testing.B) {
	sec, data := benchSection(b)
	b.Run("Next", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		blocks := 0
		for b.Loop() {
			d := bam.NewDecoder(sec, data)
			var f bam.Func
			var err error
			for err = d.Next(&f); err == nil; err = d.Next(&f) {
				blocks += len(f.Ranges[0].Blocks)
			}
			if err != io.EOF {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(blocks)/b.Elapsed().Seconds(), "blocks/s")
	})
	b.Run("ReadAll", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := bam.Decode(sec, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadFile", func(b *testing.B) {
		path := benchBinary(b)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := bam.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLookup maps random addresses inside the benchmark binary's
// blocks to blocks; it must not allocate.
func BenchmarkLookup(b *testing.B) {
	funcs, err := bam.ReadFile(benchBinary(b))
	if err != nil {
		b.Fatal(err)
	}
	x := bam.NewIndex(funcs)
	r := rand.New(rand.NewPCG(1, 2))
	pcs := make([]uint64, 1<<16)
	for i := range pcs {
		f := &funcs[r.IntN(len(funcs))]
		rg := &f.Ranges[r.IntN(len(f.Ranges))]
		if len(rg.Blocks) == 0 {
			pcs[i] = rg.Addr
			continue
		}
		bl := &rg.Blocks[r.IntN(len(rg.Blocks))]
		pcs[i] = rg.Addr + uint64(bl.Offset) + uint64(r.Uint32N(max(bl.Size, 1)))
	}
	b.Logf("%d functions, %d blocks indexed", len(funcs), x.Len())
	b.ReportAllocs()
	found := 0
	i := 0
	for b.Loop() {
		if _, ok := x.Lookup(pcs[i&(len(pcs)-1)]); ok {
			found++
		}
		i++
	}
	if found == 0 {
		b.Fatal("nothing found")
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "lookups/s")
}
