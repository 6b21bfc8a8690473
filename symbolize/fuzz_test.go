package symbolize

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
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
		symbolizeAll(t, with(info, abbrev))
	})
}

// symbolizeAll reads the ELF file data and, if it can, symbolizes the
// first and last address and the data at the start of every fragment,
// the addresses also as Serve does, a group at a time read ahead
// (Module.warm), for the same frames.
func symbolizeAll(t *testing.T, data []byte) {
	ef, err := elfx.NewBytes("fuzz", data)
	if err != nil {
		return
	}
	m, err := FromELF(ef)
	if err != nil {
		return
	}
	o := &Options{Inlines: true, Demangle: true}
	var frames []Frame
	var first *splitinfo.Proc
	var group []uint64 // at most warmGroup addresses
	for p := range m.Procs().All() {
		if first == nil || len(p.Fragments) > len(first.Fragments) {
			first = p
		}
		for _, fr := range p.Fragments {
			frames = m.Frames(frames[:0], fr.Start, o)
			frames = m.Frames(frames[:0], fr.End-1, o)
			m.Data(fr.Start, o)
			if len(group)+2 < warmGroup {
				group = append(group, fr.Start, fr.End-1)
			}
		}
	}
	group = append(group, 0, ^uint64(0))
	var where [warmGroup]found
	m.warm(group, where[:len(group)])
	for i, a := range group {
		frames = m.Frames(frames[:0], a, o)
		if got := m.framesAt(nil, a, where[i], o); !slices.Equal(got, frames) {
			t.Errorf("%#x: after warm %+v, Frames %+v", a, got, frames)
		}
	}
	if first == nil {
		return
	}
	// The first answer's path: the scope of one procedure's fragments,
	// and a breakpoint on its name and its first line.
	var addrs []uint64
	for _, fr := range first.Fragments {
		addrs = append(addrs, fr.Start)
	}
	if s, err := splitinfo.ScopeOfAddrs(ef, addrs); err == nil {
		if part, err := FromELFIn(ef, s); err == nil {
			for _, a := range addrs {
				frames = part.Frames(frames[:0], a, o)
			}
		}
	}
	linetable.ResolveELF(ef, first.Name)
	if li, ok := m.Lines().LineInfo(first.Entry); ok {
		linetable.ResolveELF(ef, fmt.Sprintf("%s:%d", li.File, li.Line))
	}
}

// FuzzModuleTables symbolizes with mutated line table, range lists and
// symbol table, which the goroutine of FromELF reads too (the inline
// scopes' file names and ranges, the symbols): an error or answers,
// never a panic or a hang.
func FuzzModuleTables(f *testing.F) {
	orig, with := withSections(f, "demo", ".debug_line", ".debug_rnglists", ".symtab")
	f.Add(orig[0], orig[1], orig[2])
	f.Fuzz(func(t *testing.T, line, rnglists, symtab []byte) {
		symbolizeAll(t, with(line, rnglists, symtab))
	})
}

// TestTypeCycle symbolizes a global whose array type names itself as
// its element type (gcc-inv's stock, patched): a FuzzModule worker once
// died of the endless recursion debug/dwarf's Type.Size makes of such a
// chain. The global is still found, with the size of one byte a type of
// unknown size gets.
func TestTypeCycle(t *testing.T) {
	orig, with := withSections(t, "gcc-inv", ".debug_info", ".debug_abbrev")
	f, err := elf.Open(testbin.Path(t, "gcc-inv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	// stock's DIE, its array type's DIE and the unit holding them.
	var stock, array *dwarf.Entry
	var unit dwarf.Offset
	r := d.Reader()
	for e, _ := r.Next(); e != nil && stock == nil; e, _ = r.Next() {
		if e.Tag == dwarf.TagCompileUnit {
			unit = e.Offset - 12 // DWARF 5, 32-bit: a 12-byte unit header
		}
		if e.Tag == dwarf.TagVariable && e.Val(dwarf.AttrName) == "stock" {
			stock = e
		}
	}
	if stock == nil {
		t.Fatal("gcc-inv has no variable stock")
	}
	r.Seek(stock.Val(dwarf.AttrType).(dwarf.Offset))
	if array, _ = r.Next(); array == nil || array.Tag != dwarf.TagArrayType {
		t.Fatalf("stock's type is %v, want an array", array)
	}
	next, _ := r.Next()
	// The array's DW_FORM_ref4 to its element type, unit-relative.
	elem := array.Val(dwarf.AttrType).(dwarf.Offset)
	info := append([]byte(nil), orig[0]...)
	ref := binary.LittleEndian.AppendUint32(nil, uint32(elem-unit))
	at := bytes.Index(info[array.Offset:next.Offset], ref)
	if at < 0 {
		t.Fatalf("no ref4 %x in the array DIE at %#x", ref, array.Offset)
	}
	binary.LittleEndian.PutUint32(info[int(array.Offset)+at:], uint32(array.Offset-unit))

	ef, err := elfx.NewBytes("gcc-inv-cycle", with(info, orig[1]))
	if err != nil {
		t.Fatal(err)
	}
	m, err := FromELF(ef)
	if err != nil {
		t.Fatal(err)
	}
	addr := symbolAddr(t, f, "stock")
	g := m.Data(addr, &Options{})
	if g.Name != "stock" || g.DeclLine == 0 {
		t.Errorf("DATA %#x = %+v, want stock with its declaration line", addr, g)
	}
}

func symbolAddr(t *testing.T, f *elf.File, name string) uint64 {
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("no symbol %s", name)
	return 0
}
