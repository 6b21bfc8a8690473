package bbaddrmap_test

import (
	"debug/elf"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	bam "github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

func indexFuncs() []bam.Func {
	return []bam.Func{
		{Ranges: []bam.Range{
			{Addr: 0x1000, Blocks: []bam.Block{
				{ID: 0, Offset: 0, Size: 4, Metadata: bam.CanFallThrough},
				{ID: 9, Offset: 4, Size: 0}, // empty: never found
				{ID: 1, Offset: 6, Size: 2, Metadata: bam.HasReturn},
			}},
			{Addr: 0x9000, Blocks: []bam.Block{{ID: 2, Offset: 0, Size: 0x10, Metadata: bam.HasTailCall | bam.HasReturn}}},
		}},
		{Ranges: []bam.Range{{Addr: 0x2000, Blocks: []bam.Block{{ID: 0, Offset: 0, Size: 8}}}}},
		// A relocatable object's ranges, in sections 3 and 5.
		{Ranges: []bam.Range{{Addr: 0, Section: 3, Blocks: []bam.Block{{ID: 0, Size: 4}}}}},
		{Ranges: []bam.Range{{Addr: 0x10, Section: 5, Blocks: []bam.Block{{ID: 7, Size: 4}}}}},
		// Wraps around the address space: left out.
		{Ranges: []bam.Range{{Addr: 0xffff_ffff_ffff_fff0, Blocks: []bam.Block{{ID: 0, Offset: 8, Size: 0x10}}}}},
	}
}

func TestLookup(t *testing.T) {
	x := bam.NewIndex(indexFuncs())
	if x.Len() != 6 {
		t.Errorf("Len = %d, want 6", x.Len())
	}
	type probe struct {
		sec  elf.SectionIndex
		pc   uint64
		want *bam.Loc
	}
	loc := func(f, r, b int, id uint32, md bam.Metadata, start uint64, size uint32) *bam.Loc {
		return &bam.Loc{Func: f, Range: r, Block: b, ID: id, Metadata: md, Start: start, Size: size}
	}
	probes := []probe{
		{0, 0, nil},
		{0, 0xfff, nil},
		{0, 0x1000, loc(0, 0, 0, 0, bam.CanFallThrough, 0x1000, 4)},
		{0, 0x1003, loc(0, 0, 0, 0, bam.CanFallThrough, 0x1000, 4)},
		{0, 0x1004, nil},
		{0, 0x1005, nil},
		{0, 0x1006, loc(0, 0, 2, 1, bam.HasReturn, 0x1006, 2)},
		{0, 0x1007, loc(0, 0, 2, 1, bam.HasReturn, 0x1006, 2)},
		{0, 0x1008, nil},
		{0, 0x2000, loc(1, 0, 0, 0, 0, 0x2000, 8)},
		{0, 0x2008, nil},
		{0, 0x9000, loc(0, 1, 0, 2, bam.HasTailCall|bam.HasReturn, 0x9000, 0x10)},
		{0, 0x900f, loc(0, 1, 0, 2, bam.HasTailCall|bam.HasReturn, 0x9000, 0x10)},
		{0, 0x9010, nil},
		{0, ^uint64(0), nil},
		{3, 0, loc(2, 0, 0, 0, 0, 0, 4)},
		{3, 4, nil},
		{4, 0, nil},
		{5, 0x13, loc(3, 0, 0, 7, 0, 0x10, 4)},
		{5, 0x14, nil},
	}
	for _, p := range probes {
		got, ok := x.LookupSection(p.sec, p.pc)
		var gotp *bam.Loc
		if ok {
			gotp = &got
		}
		if diff := cmp.Diff(p.want, gotp); diff != "" {
			t.Errorf("LookupSection(%d, %#x) (-want +got):\n%s", p.sec, p.pc, diff)
		}
		if p.sec == 0 {
			if got2, ok2 := x.Lookup(p.pc); ok2 != ok || got2 != got {
				t.Errorf("Lookup(%#x) = %+v, %v; LookupSection says %+v, %v", p.pc, got2, ok2, got, ok)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { x.Lookup(0x1006) }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
	var empty bam.Index
	if _, ok := empty.Lookup(0x1000); ok {
		t.Error("zero Index found something")
	}
}

// TestLookupEveryBlock: in every test binary, each non-empty block's first
// and last byte map back to it.
func TestLookupEveryBlock(t *testing.T) {
	for _, bin := range mapFiles(t) {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			funcs, err := bam.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			x := bam.NewIndex(funcs)
			n := 0
			for fi, f := range x.Funcs() {
				for ri, r := range f.Ranges {
					for bi, b := range r.Blocks {
						if b.Size == 0 {
							continue
						}
						start := r.Addr + uint64(b.Offset)
						for _, pc := range []uint64{start, start + uint64(b.Size) - 1} {
							got, ok := x.LookupSection(r.Section, pc)
							if !ok || got.Func != fi || got.Range != ri || got.Block != bi || got.ID != b.ID || got.Start != start {
								t.Errorf("%#x in section %d: %+v, %v; want function %d range %d block %d (ID %d)", pc, r.Section, got, ok, fi, ri, bi, b.ID)
							}
						}
						n++
					}
				}
			}
			if n != x.Len() {
				t.Errorf("%d non-empty blocks, index has %d", n, x.Len())
			}
		})
	}
}
