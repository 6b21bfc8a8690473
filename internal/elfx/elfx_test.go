package elfx_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestCodeSymbolsCopies checks that CodeSymbols, which parses the symbol
// table once, gives every caller, concurrent ones too, its own copy.
func TestCodeSymbolsCopies(t *testing.T) {
	f, err := elfx.Open(testbin.Path(t, "bolt22"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := f.CodeSymbols()
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("no code symbols")
	}
	want = slices.Clone(want)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got, err := f.CodeSymbols()
			if err != nil {
				t.Error(err)
				return
			}
			if !slices.Equal(got, want) {
				t.Error("symbols differ between calls")
				return
			}
			// Callers sort and rename the symbols they get.
			slices.Reverse(got)
			got[0].Name = "clobbered"
		})
	}
	wg.Wait()
	got, err := f.CodeSymbols()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Error("a caller's changes reached the cached symbols")
	}
}

// TestCodeSymbolsNone checks that a file without symbol tables reports
// ErrNoSymbols on every call.
func TestCodeSymbolsNone(t *testing.T) {
	var h [64]byte // ELF64 header, no sections
	copy(h[:], "\x7fELF")
	h[4], h[5], h[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	binary.LittleEndian.PutUint16(h[16:], uint16(elf.ET_EXEC))
	binary.LittleEndian.PutUint16(h[18:], uint16(elf.EM_X86_64))
	binary.LittleEndian.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	binary.LittleEndian.PutUint16(h[52:], 64)
	f, err := elfx.NewBytes("empty", h[:])
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if syms, err := f.CodeSymbols(); !errors.Is(err, elfx.ErrNoSymbols) || syms != nil {
			t.Fatalf("CodeSymbols = %v, %v; want nil, ErrNoSymbols", syms, err)
		}
	}
}

// BenchmarkCodeSymbols compares parsing the symbol table (a new File each
// time) with the copies later calls on one File return.
func BenchmarkCodeSymbols(b *testing.B) {
	data, err := os.ReadFile(testbin.Path(b, "bolt22"))
	if err != nil {
		b.Fatal(err)
	}
	f, err := elfx.NewBytes("bolt22", data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			g, err := elfx.NewBytes("bolt22", data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := g.CodeSymbols(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.CodeSymbols(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestReadVABeyondFile: a section whose header claims more bytes than
// the file holds is read up to the file's end, and past it is an error,
// whether the reader tells its size or not.
func TestReadVABeyondFile(t *testing.T) {
	raw, err := os.ReadFile(testbin.Path(t, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytesReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	text := ef.Section(".text")
	idx := slices.Index(ef.Sections, text)
	// Elf64_Shdr.sh_size, at offset 32 of the header, grown past the file.
	shoff := binary.LittleEndian.Uint64(raw[0x28:])
	at := shoff + uint64(idx)*64 + 32
	grown := uint64(len(raw)) - text.Offset + 4096
	binary.LittleEndian.PutUint64(raw[at:], grown)
	for _, r := range []interface {
		ReadAt([]byte, int64) (int, error)
	}{bytesReader(raw), struct{ io.ReaderAt }{bytesReader(raw)}} {
		f, err := elfx.NewFile("grown", r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.ReadVA(text.Addr, 16); err != nil {
			t.Errorf("%T: ReadVA at .text: %v", r, err)
		}
		tail := uint64(len(raw)) - text.Offset // the first address past the file
		if _, err := f.ReadVA(text.Addr, tail+8); err == nil || !strings.Contains(err.Error(), "beyond the end of the file") {
			t.Errorf("%T: ReadVA across the end of the file: %v, want beyond the end of the file", r, err)
		}
		if _, err := f.ReadVA(text.Addr, tail); err != nil {
			t.Errorf("%T: ReadVA up to the end of the file: %v", r, err)
		}
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestOpenMapsSections checks that a file opened by path gives the same
// section contents and code as one read through an io.ReaderAt, without
// copies: a second open of the same file shares the first one's bytes.
func TestOpenMapsSections(t *testing.T) {
	path := testbin.Path(t, "bolt22")
	a, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := elfx.NewFile(path, io.NewSectionReader(bytes.NewReader(raw), 0, int64(len(raw))))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".debug_info", ".debug_line", ".text"} {
		da, _, err := a.SectionData(name)
		if err != nil {
			t.Fatal(err)
		}
		db, _, err := b.SectionData(name)
		if err != nil {
			t.Fatal(err)
		}
		dr, _, err := r.SectionData(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(da) == 0 || !bytes.Equal(da, dr) {
			t.Fatalf("%s: %d bytes mapped, %d read; contents differ or are empty", name, len(da), len(dr))
		}
		if &da[0] != &db[0] {
			t.Errorf("%s: two opens of one file hold two copies", name)
		}
	}
	text := a.Section(".text")
	ca, err := a.ReadVA(text.Addr, 64)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := r.ReadVA(text.Addr, 64)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ca, cr) {
		t.Errorf("ReadVA(%#x): mapped % x, read % x", text.Addr, ca, cr)
	}
}

// TestEvict checks that EvictSection drops a mapped section's pages from
// the resident set (the mapping's Rss in /proc/self/smaps), a compressed
// section's compressed bytes included, and that each section reads the
// same bytes afterwards; on a file that is not mapped it reads nothing
// and leaves its data alone.
func TestEvict(t *testing.T) {
	path := testbin.Path(t, "cgo") // Go compresses its DWARF
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Reading a section makes its pages resident: the comparison with
	// the file's bytes, or the decompression.
	var plain, packed []*elf.Section
	var packedBytes uint64
	inflated := make(map[*elf.Section][]byte)
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS {
			continue
		}
		d, err := f.Data(s)
		if err != nil {
			t.Fatal(err)
		}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			packed = append(packed, s)
			packedBytes += s.FileSize
			inflated[s] = d
			continue
		}
		if !bytes.Equal(d, raw[s.Offset:s.Offset+s.FileSize]) {
			t.Fatalf("%s: mapped contents differ from the file's", s.Name)
		}
		plain = append(plain, s)
	}
	if packedBytes < 64<<10 {
		t.Fatalf("%d bytes of compressed sections: too few to see their pages go", packedBytes)
	}
	before, ok := testbin.MappedRss(path)
	if !ok {
		t.Skip("no /proc/self/smaps entry for the mapping")
	}
	for _, s := range packed {
		f.EvictSection(s)
	}
	mid, _ := testbin.MappedRss(path)
	if want := int(packedBytes / 1024 / 2); before-mid < want {
		t.Errorf("mapping's Rss %d KiB before evicting the compressed sections, %d KiB after: want at least %d KiB gone", before, mid, want)
	}
	for _, s := range plain {
		f.EvictSection(s)
	}
	after, _ := testbin.MappedRss(path)
	// What stays: the headers, and pages that hold the ends of two
	// sections.
	if after > before/2 {
		t.Errorf("mapping's Rss %d KiB before EvictSection, %d KiB after: want most pages gone", before, after)
	}
	for _, s := range plain {
		d, _ := f.Data(s)
		if !bytes.Equal(d, raw[s.Offset:s.Offset+s.FileSize]) {
			t.Fatalf("%s: contents differ after EvictSection", s.Name)
		}
	}
	for _, s := range packed {
		d, err := f.Data(s)
		if err != nil || !bytes.Equal(d, inflated[s]) {
			t.Fatalf("%s: decompressed contents differ after EvictSection (%v)", s.Name, err)
		}
	}

	// A file in memory but not mapped: its bytes are the caller's.
	mem := slices.Clone(raw)
	g, err := elfx.NewBytes(path, mem)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Sections {
		g.EvictSection(s)
	}
	if !bytes.Equal(mem, raw) {
		t.Errorf("EvictSection changed the data of a file given to NewBytes")
	}
}
