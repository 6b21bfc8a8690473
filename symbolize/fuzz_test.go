package symbolize

import (
	"debug/elf"
	"os"
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// withSections returns the contents of bin's sections names and a
// function that returns bin's bytes with new contents in their place
// (each cut or zero-padded to its section's size).
func withSections(tb testing.TB, bin string, names ...string) ([][]byte, func(...[]byte) []byte) {
	path := testbin.Path(tb, bin)
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var secs []*elf.Section
	var orig [][]byte
	for _, n := range names {
		s := f.Section(n)
		if s == nil || s.Type == elf.SHT_NOBITS {
			tb.Fatalf("%s has no %s", bin, n)
		}
		secs = append(secs, s)
		orig = append(orig, raw[s.Offset:s.Offset+s.FileSize])
	}
	return orig, func(data ...[]byte) []byte {
		out := append([]byte(nil), raw...)
		for i, s := range secs {
			sec := out[s.Offset : s.Offset+s.FileSize]
			clear(sec)
			copy(sec, data[i])
		}
		return out
	}
}

// FuzzModule symbolizes with mutated .debug_info and .debug_abbrev
// sections: an error or answers, never a panic or a hang.
func FuzzModule(f *testing.F) {
	orig, with := withSections(f, "demo", ".debug_info", ".debug_abbrev")
	f.Add(orig[0], orig[1])
	f.Fuzz(func(t *testing.T, info, abbrev []byte) {
		ef, err := elfx.NewBytes("fuzz", with(info, abbrev))
		if err != nil {
			return
		}
		m, err := FromELF(ef)
		if err != nil {
			return
		}
		o := &Options{Inlines: true, Demangle: true}
		var frames []Frame
		for p := range m.Procs().All() {
			for _, fr := range p.Fragments {
				frames = m.Frames(frames[:0], fr.Start, o)
				frames = m.Frames(frames[:0], fr.End-1, o)
			}
		}
	})
}
