package splitinfo_test

import (
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// TestBlocks: every block of a split procedure's map function is listed
// once, under the fragment that holds it, and the lookup of its address
// finds it; a procedure without a map function has no blocks.
func TestBlocks(t *testing.T) {
	tab, err := splitinfo.Open(testbin.Path(t, "clang22-mfs"))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[uint64]int{} // map function entry -> blocks
	for _, fn := range tab.BBAddrMap().Funcs() {
		for _, r := range fn.Ranges {
			counts[fn.Addr()] += len(r.Blocks)
		}
	}
	split := 0
	for p := range tab.Split() {
		frags := tab.Blocks(p)
		if _, ok := counts[p.Entry]; !ok {
			if frags != nil {
				t.Errorf("%s: blocks without a map function", p.Name)
			}
			continue
		}
		split++
		n := 0
		for k, bs := range frags {
			f := &p.Fragments[k]
			for _, b := range bs {
				n++
				if b.Addr < f.Start || b.Addr >= f.End {
					t.Errorf("%s: block %d at %#x listed under fragment %d [%#x,%#x)", p.Name, b.ID, b.Addr, k, f.Start, f.End)
				}
				if bl, ok := tab.Block(b.Addr); !ok || bl.ID != b.ID || bl.Start != b.Addr {
					t.Errorf("%s: Block(%#x) = %+v, %v; want block %d", p.Name, b.Addr, bl, ok, b.ID)
				}
			}
		}
		if n != counts[p.Entry] {
			t.Errorf("%s: %d blocks listed, the map has %d", p.Name, n, counts[p.Entry])
		}
	}
	if split == 0 {
		t.Fatal("no split procedure with a map function")
	}
}
