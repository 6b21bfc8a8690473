package elfx_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
// object, mapped: 64- and 32-bit (the big-endian objects have no
// symbols: TestEachSymbolByteOrders).
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

// TestEachSymbolByteOrders checks EachSymbol and EachCodeSymbolWhere
// against debug/elf on objects of both classes in both byte orders that
// yaml2obj writes with the same symbols, whose fields have a different
// value in each byte: the test binaries' big-endian objects have no
// symbols, and the entries are read without binary.ByteOrder.
func TestEachSymbolByteOrders(t *testing.T) {
	yaml2obj := testbin.Tool(t, "yaml2obj")
	const doc = `--- !ELF
FileHeader:
  Class:   ELFCLASS%d
  Data:    ELFDATA2%s
  Type:    ET_EXEC
  Machine: %s
Sections:
  - Name:    .text
    Type:    SHT_PROGBITS
    Flags:   [ SHF_ALLOC, SHF_EXECINSTR ]
    Address: 0x10203000
    Size:    0x1000
  - Name:    .data
    Type:    SHT_PROGBITS
    Flags:   [ SHF_ALLOC, SHF_WRITE ]
    Address: 0x10305000
    Size:    0x100
Symbols:
  - { Name: a.c, Type: STT_FILE, Index: SHN_ABS }
  - { Name: hot, Type: STT_FUNC, Section: .text, Value: 0x10203040, Size: 0x0102 }
  - { Name: hot.cold, Type: STT_FUNC, Section: .text, Value: 0x10203a0b, Size: 0x0304 }
  - { Name: label, Type: STT_NOTYPE, Section: .text, Value: 0x10203c0d, Size: 0x0506, Other: [ STV_HIDDEN ] }
  - { Name: var, Type: STT_OBJECT, Section: .data, Value: 0x10305010, Size: 0x0708 }
  - { Name: 'api@@VER_1', Type: STT_FUNC, Section: .text, Value: 0x10203e0f, Size: 0x090a, Binding: STB_GLOBAL }
  - { Name: ifn, Type: STT_GNU_IFUNC, Section: .text, Value: 0x10203f01, Size: 0x0b0c, Binding: STB_WEAK }
  - { Name: ext, Type: STT_FUNC, Binding: STB_GLOBAL }
`
	dir := t.TempDir()
	for _, c := range []struct {
		class   int
		data    string
		machine string
	}{{64, "MSB", "EM_PPC64"}, {32, "MSB", "EM_PPC"}, {32, "LSB", "EM_386"}, {64, "LSB", "EM_X86_64"}} {
		name := fmt.Sprintf("%d%s", c.class, c.data)
		y, p := filepath.Join(dir, name+".yaml"), filepath.Join(dir, name)
		if err := os.WriteFile(y, fmt.Appendf(nil, doc, c.class, c.data, c.machine), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(yaml2obj, y, "-o", p).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", yaml2obj, err, out)
		}
		ef, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ef.Symbols()
		ef.Close()
		if err != nil || len(want) != 8 {
			t.Fatalf("%s: debug/elf reads %d symbols, %v", name, len(want), err)
		}
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := eachSymbol(f)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: EachSymbol differs from debug/elf (-want +got):\n%s", name, d)
		}
		// The prefilter is asked about the code symbols, with their values
		// and names.
		var asked []string
		err = f.EachCodeSymbolWhere(func(v uint64, b []byte) bool {
			asked = append(asked, fmt.Sprintf("%#x %s", v, b[:bytes.IndexByte(b, 0)]))
			return true
		}, func(*elfx.Symbol) {})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		wantAsked := []string{"0x10203040 hot", "0x10203a0b hot.cold", "0x10203c0d label", "0x10203e0f api@@VER_1", "0x10203f01 ifn"}
		if d := cmp.Diff(wantAsked, asked); d != "" {
			t.Errorf("%s: the prefilter was asked (-want +got):\n%s", name, d)
		}
	}
}
