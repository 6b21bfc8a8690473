package splitinfo

import (
	"debug/elf"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/objcopy"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestHeapLimitChecksClaims checks HeapLimit on a file with
// compressed debug sections: the decompressed sizes their headers claim
// count, but a claim past deflate's largest ratio, or a section whose
// contents are not in the file, cannot make the limit huge or overflow
// it.
func TestHeapLimitChecksClaims(t *testing.T) {
	if _, err := objcopy.Tool(); err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "gcc-cold")
	if err := objcopy.Run(testbin.Path(t, "gcc-cold"), path, "--compress-debug-sections=zlib"); err != nil {
		t.Fatal(err)
	}
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, inflated := passBytes(f)
	var want, compressed int64
	var chdrs []uint64 // offsets of the compressed sections' headers
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			want += int64(max(s.Size, 2*s.FileSize))
			compressed += int64(s.FileSize)
			chdrs = append(chdrs, s.Offset)
		}
	}
	f.Close()
	if len(chdrs) < 2 || inflated != want {
		t.Fatalf("%d compressed sections; counted %d bytes decompressed, want %d", len(chdrs), inflated, want)
	}

	// Each compressed section claims (nearly) 2^64 bytes, and .symtab
	// claims 2^62 bytes of contents.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if elf.Class(b[elf.EI_CLASS]) != elf.ELFCLASS64 || elf.Data(b[elf.EI_DATA]) != elf.ELFDATA2LSB {
		t.Skip("the patch below is for ELF64 little-endian")
	}
	for _, off := range chdrs {
		binary.LittleEndian.PutUint64(b[off+8:], math.MaxUint64-1) // Elf64_Chdr.ch_size
	}
	f, err = elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	symtab := -1
	for i, s := range f.Sections {
		if s.Type == elf.SHT_SYMTAB {
			symtab = i
		}
	}
	f.Close()
	if symtab < 0 {
		t.Fatal("no .symtab")
	}
	shoff, shentsize := binary.LittleEndian.Uint64(b[0x28:]), uint64(binary.LittleEndian.Uint16(b[0x3a:]))
	binary.LittleEndian.PutUint64(b[shoff+uint64(symtab)*shentsize+32:], 1<<62) // Elf64_Shdr.sh_size
	patched := filepath.Join(t.TempDir(), "claims")
	if err := os.WriteFile(patched, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := elfx.Open(patched)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	limit := HeapLimit(g)
	if most := minHeap + int64(len(b))/2*3 + maxInflate*compressed; limit <= 0 || limit > most {
		t.Errorf("heap limit %d with claims past the file, want in (0, %d]", limit, most)
	}
}
