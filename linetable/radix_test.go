package linetable

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRadixSortIsStableSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, bits := range []uint{1, 11, 12, 22, 23, 40} {
		for _, n := range []int{0, 1, 5, 1000} {
			keys := make([]uint64, n)
			idx := make([]uint32, n)
			for i := range keys {
				keys[i] = r.Uint64N(1<<bits/3*2 + 1) // duplicates likely
				idx[i] = uint32(i)
			}
			type pair struct {
				k uint64
				i uint32
			}
			want := make([]pair, n)
			for i := range keys {
				want[i] = pair{keys[i], idx[i]}
			}
			slices.SortStableFunc(want, func(a, b pair) int { return cmp.Compare(a.k, b.k) })
			radixSort(keys, idx, bits)
			for i := range want {
				if keys[i] != want[i].k || idx[i] != want[i].i {
					t.Fatalf("bits %d n %d: position %d = (%d,%d), want %v", bits, n, i, keys[i], idx[i], want[i])
				}
			}
		}
	}
}
