package splitinfo_test

import (
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// TestBBAddrMapSource: in clang's binaries every range of the map is a
// fragment of its procedure, and the block lookup agrees with the map
// for every block.
func TestBBAddrMapSource(t *testing.T) {
	for _, name := range []string{"clang19-mfs", "clang22-mfs", "clang19-bbsections", "clang22-bbsections"} {
		tab, err := splitinfo.Open(testbin.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		idx := tab.BBAddrMap()
		if idx == nil {
			t.Fatalf("%s: no BB address map", name)
		}
		blocks := 0
		for _, fn := range idx.Funcs() {
			loc, ok := tab.Lookup(fn.Addr())
			if !ok || loc.Frag != 0 || loc.Proc.Entry != fn.Addr() {
				t.Errorf("%s: map function at %#x is not a procedure entry", name, fn.Addr())
				continue
			}
			if len(fn.Ranges) > 1 && loc.Proc.Sources&splitinfo.FromBBAddrMap == 0 {
				t.Errorf("%s: %s: sources %v lack the map", name, loc.Proc.Name, loc.Proc.Sources)
			}
			for _, r := range fn.Ranges {
				for _, b := range r.Blocks {
					pc := r.Addr + uint64(b.Offset)
					bl, ok := tab.Block(pc)
					if !ok || bl.ID != b.ID || bl.Proc != loc.Proc || bl.Start != pc {
						t.Errorf("%s: Block(%#x) = %+v, %v; want block %d of %s", name, pc, bl, ok, b.ID, loc.Proc.Name)
					}
					blocks++
				}
				if f := loc.Proc.Fragment(r.Addr); f < 0 {
					t.Errorf("%s: range %#x of %s is in no fragment", name, r.Addr, loc.Proc.Name)
				}
			}
		}
		if blocks == 0 {
			t.Errorf("%s: no blocks checked", name)
		}
	}
}

// TestBATSource: BOLT's cold fragments belong to their hot parents by BAT
// too, and their logical keys are input offsets of the parent.
func TestBATSource(t *testing.T) {
	for _, name := range []string{"bolt19", "bolt22", "bolt22-over-gcc"} {
		tab, err := splitinfo.Open(testbin.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if tab.BAT() == nil {
			t.Fatalf("%s: no BAT", name)
		}
		n := 0
		for f := range tab.BAT().Cold() {
			loc, ok := tab.Lookup(f.Addr)
			if !ok || loc.Proc.Entry != f.Parent().Addr {
				t.Errorf("%s: cold fragment %s at %#x not in its parent's procedure", name, f.Name, f.Addr)
				continue
			}
			if loc.Fragment().Sources&splitinfo.FromBAT == 0 {
				t.Errorf("%s: %s sources %v lack BAT", name, f.Name, loc.Fragment().Sources)
			}
			origin, _, ok := tab.LogicalKey(f.Addr)
			if !ok || origin != f.Parent().Addr {
				t.Errorf("%s: LogicalKey(%#x) origin %#x, %v; want %#x", name, f.Addr, origin, ok, f.Parent().Addr)
			}
			n++
		}
		if n == 0 {
			t.Errorf("%s: no cold fragments in BAT", name)
		}
	}
}
