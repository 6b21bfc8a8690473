package elfx_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// eachSymbol collects what EachSymbol yields.
func eachSymbol(f *elfx.File) ([]elf.Symbol, error) {
	var out []elf.Symbol
	err := f.EachSymbol(func(s *elf.Symbol) { out = append(out, *s) })
	return out, err
}

// TestEachSymbolMatchesDebugELF checks EachSymbol against debug/elf's
// Symbols (DynamicSymbols without .symtab) on every test binary and
// object: 64- and 32-bit, little- and big-endian, mapped.
func TestEachSymbolMatchesDebugELF(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(testbin.Dir(), "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			continue
		}
		ef, err := elf.Open(p)
		if err != nil {
			continue
		}
		want, werr := ef.Symbols()
		if errors.Is(werr, elf.ErrNoSymbols) {
			want, werr = ef.DynamicSymbols()
		}
		ef.Close()
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, gerr := eachSymbol(f)
		f.Close()
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: debug/elf: %v; EachSymbol: %v", p, werr, gerr)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: EachSymbol differs from debug/elf (-want +got):\n%s", p, d)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d ELF files compared", n)
	}
}

// FuzzEachSymbol reads mutated .symtab and .strtab sections: the symbols
// debug/elf reads, or an error, never a panic.
func FuzzEachSymbol(f *testing.F) {
	raw, err := os.ReadFile(testbin.Path(f, "gcc-cold"))
	if err != nil {
		f.Fatal(err)
	}
	ef, err := elf.NewFile(bytesReader(raw))
	if err != nil {
		f.Fatal(err)
	}
	tab, str := ef.Section(".symtab"), ef.Section(".strtab")
	f.Add(raw[tab.Offset:tab.Offset+tab.Size], raw[str.Offset:str.Offset+str.Size])
	f.Fuzz(func(t *testing.T, symtab, strtab []byte) {
		data := append([]byte(nil), raw...)
		for _, x := range []struct {
			s *elf.Section
			b []byte
		}{{tab, symtab}, {str, strtab}} {
			sec := data[x.s.Offset : x.s.Offset+x.s.Size]
			clear(sec)
			copy(sec, x.b)
		}
		e, err := elf.NewFile(bytesReader(data))
		if err != nil {
			return
		}
		want, werr := e.Symbols()
		f, err := elfx.NewBytes("fuzz", data)
		if err != nil {
			return
		}
		got, gerr := eachSymbol(f)
		if werr == nil && gerr == nil {
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("EachSymbol differs from debug/elf (-want +got):\n%s", d)
			}
		}
		// The code symbols through a prefilter: those of EachCodeSymbol
		// it accepts.
		var all, kept []elfx.Symbol
		aerr := f.EachCodeSymbol(func(s *elfx.Symbol) { all = append(all, *s) })
		kerr := f.EachCodeSymbolWhere(func(v uint64, _ []byte) bool { return v%2 == 0 }, func(s *elfx.Symbol) { kept = append(kept, *s) })
		if (aerr == nil) != (kerr == nil) {
			t.Fatalf("EachCodeSymbol: %v; EachCodeSymbolWhere: %v", aerr, kerr)
		}
		var even []elfx.Symbol
		for _, s := range all {
			if s.Value%2 == 0 {
				even = append(even, s)
			}
		}
		if d := cmp.Diff(even, kept); aerr == nil && d != "" {
			t.Errorf("EachCodeSymbolWhere differs from EachCodeSymbol filtered (-want +got):\n%s", d)
		}
	})
}

// TestEachCodeSymbolWhere checks on every test binary that a Prefilter
// of EachCodeSymbolWhere is asked about the code symbols, in table order,
// with their values and names (and only about them: whether a symbol is
// code does not depend on its name), and that what it rejects is not
// yielded.
func TestEachCodeSymbolWhere(t *testing.T) {
	n := 0
	for _, name := range testbin.Linked(t) {
		f, err := elfx.Open(testbin.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		all, err := f.CodeSymbols()
		if err != nil {
			f.Close()
			continue
		}
		var asked, got []elfx.Symbol
		err = f.EachCodeSymbolWhere(func(v uint64, b []byte) bool {
			asked = append(asked, elfx.Symbol{Value: v, Name: string(b[:max(0, bytes.IndexByte(b, 0))])})
			return len(asked)%3 != 0
		}, func(s *elfx.Symbol) { got = append(got, *s) })
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var wantAsked, want []elfx.Symbol
		for i, s := range all {
			wantAsked = append(wantAsked, elfx.Symbol{Value: s.Value, Name: s.Name})
			if (i+1)%3 != 0 {
				want = append(want, s)
			}
		}
		// The prefilter sees the name as the table has it, with its
		// version.
		for i := range asked {
			if i < len(all) && all[i].Version != "" {
				asked[i].Name, _ = elfx.SplitVersion(asked[i].Name)
			}
		}
		if d := cmp.Diff(wantAsked, asked); d != "" {
			t.Errorf("%s: the prefilter was asked (-code symbols +asked):\n%s", name, d)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: yielded (-want +got):\n%s", name, d)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d binaries with symbols", n)
	}
}
