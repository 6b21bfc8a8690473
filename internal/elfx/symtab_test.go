package elfx_test

import (
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
	})
}
