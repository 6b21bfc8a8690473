package bat_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo/bat"
)

// benchBinaries are the BOLT outputs the benchmarks use: a small one from
// testdata and one with over 5,000 functions from bench/gen-bat.sh.
func benchBinaries(b *testing.B) []string {
	large := filepath.Join(testbin.Dir(), "..", "..", "bench", "out", "bat", "bat-bolt22")
	return []string{testbin.Path(b, "bolt22"), large}
}

func openBench(b *testing.B, path string) *bat.Table {
	if _, err := os.Stat(path); err != nil {
		b.Skipf("%s missing (bench/gen-bat.sh builds it): %v", path, err)
	}
	tab, err := bat.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	return tab
}

// BenchmarkTranslate translates random addresses spread over every byte of
// every BAT fragment, alternating branch sources and targets.
func BenchmarkTranslate(b *testing.B) {
	for _, path := range benchBinaries(b) {
		b.Run(filepath.Base(path), func(b *testing.B) {
			tab := openBench(b, path)
			var frags []*bat.Func
			for f := range tab.All() {
				frags = append(frags, f)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			addrs := make([]uint64, 1<<16)
			for i := range addrs {
				f := frags[rng.IntN(len(frags))]
				addrs[i] = f.Addr + rng.Uint64N(f.Size)
			}
			b.ReportMetric(float64(tab.NumHot()), "hot")
			b.ReportMetric(float64(tab.NumCold()), "cold")
			b.ReportAllocs()
			// The machines are shared: also report the thread's CPU time
			// per translation, which other processes do not inflate.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			b.ResetTimer()
			var sink uint64
			for i := range b.N {
				loc, ok := tab.Translate(addrs[i&(len(addrs)-1)], i&1 == 0)
				if !ok {
					b.Fatalf("Translate(%#x) failed", addrs[i&(len(addrs)-1)])
				}
				sink += loc.InputOffset
			}
			b.StopTimer()
			b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			_ = sink
		})
	}
}

// threadCPU returns the CPU time (user + system) of the calling OS thread
// in nanoseconds.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

const rusageThread = 1 // RUSAGE_THREAD (Linux)

// BenchmarkOpen decodes the note and names the fragments.
func BenchmarkOpen(b *testing.B) {
	for _, path := range benchBinaries(b) {
		b.Run(filepath.Base(path), func(b *testing.B) {
			openBench(b, path)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bat.Open(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
