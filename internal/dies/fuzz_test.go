package dies

import (
	"errors"
	"testing"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// fuzzBases are the binaries whose DWARF the fuzz target mutates: DWARF 5
// from clang 22 with inlining, DWARF 4 from GCC.
var fuzzBases = []string{"clang22-inl", "gcc-cold-dwarf4"}

func loadSections(tb testing.TB, name string) Sections {
	_, d := openTest(tb, name)
	return d.secs
}

// section returns a pointer to the i-th (mod 8) section of s.
func section(s *Sections, i uint8) *[]byte {
	return [...]*[]byte{&s.Info, &s.Abbrev, &s.Str, &s.LineStr, &s.StrOffsets, &s.Addr, &s.Ranges, &s.Rnglists}[i%8]
}

// FuzzWalk replaces one DWARF section of a real binary (sel picks the
// binary and the section) and walks every entry, reading every
// attribute and range list and following every reference: an error must
// be a *cursor.DecodeError, and nothing may panic or hang.
func FuzzWalk(f *testing.F) {
	bases := make([]Sections, len(fuzzBases))
	for i, name := range fuzzBases {
		bases[i] = loadSections(f, name)
		for sel := uint8(0); sel < 8; sel++ {
			s := bases[i]
			f.Add(uint8(i)*8+sel, append([]byte(nil), *section(&s, sel)...))
		}
	}
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		s := bases[int(sel/8)%len(bases)]
		*section(&s, sel) = data
		err := walkAll(t, "fuzz", s)
		var de *cursor.DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("error %v (%T) is not a DecodeError", err, err)
		}
	})
}
