package symbolize

import (
	"bytes"
	"debug/elf"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestWarmAgreesWithFrames: what Serve answers from Module.warm's
// lookups (framesAt of each address of a group, at what warm found for
// it) is Frames, for every address of every executable section of every
// test binary (and of the demo binary without DWARF) and a few outside
// them, in groups of neighbouring addresses as Serve renders them and in
// groups of addresses far apart, under each option that changes which
// records a frame reads.
func TestWarmAgreesWithFrames(t *testing.T) {
	opts := []Options{
		{Inlines: true},
		{Inlines: true, Functions: ShortNames, Demangle: true},
		{Functions: LinkageNames},
	}
	// The demo binary without DWARF too: its sections renamed, it has an
	// empty inline partition and line table.
	raw, err := os.ReadFile(testbin.Path(t, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	noDWARF := bytes.ReplaceAll(raw, []byte(".debug_"), []byte(".nodbg_"))
	for _, name := range append(testbin.Linked(t), "demo without DWARF") {
		var f *elfx.File
		if name == "demo without DWARF" {
			f, err = elfx.NewBytes(name, noDWARF)
		} else {
			f, err = elfx.Open(testbin.Path(t, name))
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := FromELF(f)
		if err != nil {
			f.Close()
			t.Fatalf("%s: %v", name, err)
		}
		addrs := []uint64{0, 1, ^uint64(0)}
		for _, s := range f.File.Sections {
			if s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 {
				for a := s.Addr; a < s.Addr+s.Size; a++ {
					addrs = append(addrs, a)
				}
				addrs = append(addrs, s.Addr-1, s.Addr+s.Size)
			}
		}
		f.Close()
		if name == "demo without DWARF" && (m.inlines.Pieces() != 0 || m.lines.RowIndex(0x1250) >= 0) {
			t.Errorf("%s: %d inline pieces, row %d at 0x1250", name, m.inlines.Pieces(), m.lines.RowIndex(0x1250))
		}
		slices.Sort(addrs)
		shuffled := slices.Clone(addrs)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) {
			shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
		})
		var (
			where       [warmGroup]found
			got, want   []Frame
			differences int
		)
		for _, order := range [][]uint64{addrs, shuffled} {
			for start := 0; start < len(order); start += warmGroup {
				group := order[start:min(len(order), start+warmGroup)]
				m.warm(group, where[:len(group)])
				for i, a := range group {
					for _, o := range opts {
						got = m.framesAt(got[:0], a, where[i], &o)
						want = m.Frames(want[:0], a, &o)
						if !slices.Equal(got, want) && differences < 5 {
							differences++
							t.Errorf("%s: %#x, %+v: after warm %+v, Frames %+v", name, a, o, got, want)
						}
					}
				}
			}
		}
	}
}
