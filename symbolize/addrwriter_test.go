package symbolize

import (
	"io"
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
