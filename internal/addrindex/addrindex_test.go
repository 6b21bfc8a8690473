package addrindex

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func TestFindAgreesWithSortSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 1000} {
		for _, spread := range []uint64{1, 16, 1 << 20, 1 << 62} {
			starts := make([]uint64, n)
			for i := range starts {
				starts[i] = 1000 + r.Uint64N(spread)
			}
			slices.Sort(starts)
			x := New(starts)
			probes := []uint64{0, 999, 1000, ^uint64(0)}
			for _, s := range starts {
				probes = append(probes, s-1, s, s+1)
			}
			for range 200 {
				probes = append(probes, r.Uint64())
			}
			for _, a := range probes {
				want := sort.Search(len(starts), func(i int) bool { return starts[i] > a }) - 1
				if got := x.Find(a); got != want {
					t.Fatalf("n=%d spread=%d: Find(%#x) = %d, want %d", n, spread, a, got, want)
				}
				// Touch reads one of the starts, or none.
				if v := x.Touch(a); v != 0 && !slices.Contains(starts, v) {
					t.Fatalf("n=%d spread=%d: Touch(%#x) = %#x, not a start", n, spread, a, v)
				}
			}
		}
	}
}

func TestPathologicalGaps(t *testing.T) {
	// A huge gap must not make the directory huge.
	starts := []uint64{0x10, 0x20, 1 << 63, 1<<63 + 8}
	x := New(starts)
	if len(x.dir.pages) > 8 {
		t.Errorf("%d pages for 4 starts", len(x.dir.pages))
	}
	if got := x.Find(1<<63 + 4); got != 2 {
		t.Errorf("Find = %d, want 2", got)
	}
}
