package symbolize

import (
	"io"
	"slices"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
)

// TestAddrBlocksNoAlloc: the block lookup keeps addr's per-address path
// allocation-free.
func TestAddrBlocksNoAlloc(t *testing.T) {
	lt, err := linetable.Open(testbin.Path(t, "clang22-mfs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		w := NewAddrWriter(io.Discard, lt, asJSON)
		addrs := []uint64{0x10e0, 0x10ea, 0x1480, 0x14a9, 0x10}
		for _, a := range addrs {
			w.Write(a) // grow the buffer
		}
		n := testing.AllocsPerRun(100, func() {
			for _, a := range addrs {
				w.Write(a)
			}
		})
		if n != 0 {
			t.Errorf("json %v: %v allocations per %d addresses", asJSON, n, len(addrs))
		}
	}
}

// TestAddrOrder: the indices with an address come in address order, or
// in input order once an address is too large to pack with its index;
// the others are left out.
func TestAddrOrder(t *testing.T) {
	for _, tc := range []struct {
		addrs []uint64 // ^0: no address
		want  []int
	}{
		{[]uint64{0x30, ^uint64(0), 0x10, 0x20, 0x10}, []int{2, 4, 3, 0}},
		{[]uint64{0x30, ^uint64(0), 1 << 60, 0x10}, []int{0, 2, 3}},
		{nil, nil},
	} {
		order := addrOrder([]uint64{7, 7, 7}, len(tc.addrs), func(k int) (uint64, bool) { return tc.addrs[k], tc.addrs[k] != ^uint64(0) })
		var got []int
		for _, key := range order {
			got = append(got, int(key&(1<<batchBits-1)))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("addrOrder(%#x) gives the indices %v, want %v", tc.addrs, got, tc.want)
		}
	}
}
