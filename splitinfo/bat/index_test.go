package bat

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func TestSpanIndexAgreesWithSortSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 1000} {
		for _, spread := range []uint64{1 << 10, 1 << 20, 1 << 62} {
			starts := make([]uint64, n)
			for i := range starts {
				starts[i] = 1000 + r.Uint64N(spread)
			}
			slices.Sort(starts)
			starts = slices.Compact(starts)
			spans := make([]span, len(starts))
			for i, s := range starts {
				spans[i].start = s
			}
			x := newSpanIndex(spans)
			probes := []uint64{0, 999, 1000, ^uint64(0)}
			for _, s := range starts {
				probes = append(probes, s-1, s, s+1)
			}
			for range 200 {
				probes = append(probes, r.Uint64())
			}
			for _, a := range probes {
				want := sort.Search(len(starts), func(i int) bool { return starts[i] > a }) - 1
				if got := x.find(a); got != want {
					t.Fatalf("n=%d spread=%d: find(%#x) = %d, want %d", n, spread, a, got, want)
				}
			}
		}
	}
	// A huge gap must not make the directory huge.
	x := newSpanIndex([]span{{start: 0x10}, {start: 0x20}, {start: 1 << 63}, {start: 1<<63 + 8}})
	if x.dir.Bytes() > 16*4 {
		t.Errorf("%d directory bytes for 4 spans", x.dir.Bytes())
	}
}

func TestSearchKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 40 {
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = r.Uint64N(64) << 32
		}
		slices.Sort(keys)
		for off := uint64(0); off < 70; off++ {
			want := sort.Search(n, func(i int) bool { return keys[i]>>32 > off }) - 1
			if got := searchKeys(keys, off); got != want {
				t.Fatalf("n=%d: searchKeys(%d) = %d, want %d", n, off, got, want)
			}
		}
		if got := searchKeys(keys, 1<<40); got != n-1 {
			t.Fatalf("n=%d: searchKeys(1<<40) = %d", n, got)
		}
	}
}
