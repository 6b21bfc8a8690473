package bbaddrmap_test

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/testbin"
	bam "github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

// sym is a symbol for symtabSections.
type sym struct {
	name    string
	info    byte
	shndx   elf.SectionIndex
	value   uint64
	defined bool
}

// symtabSections returns .symtab and .strtab, to be placed at indexes
// symIdx and symIdx+1.
func symtabSections(symIdx uint32, syms ...sym) (elfSection, elfSection) {
	le := binary.LittleEndian
	str := []byte{0}
	tab := make([]byte, 24) // null symbol
	for _, s := range syms {
		var e [24]byte
		le.PutUint32(e[0:], uint32(len(str)))
		str = append(append(str, s.name...), 0)
		e[4] = s.info
		le.PutUint16(e[6:], uint16(s.shndx))
		le.PutUint64(e[8:], s.value)
		tab = append(tab, e[:]...)
	}
	return elfSection{name: ".symtab", typ: elf.SHT_SYMTAB, link: symIdx + 1, info: 1, entsize: 24, data: tab},
		elfSection{name: ".strtab", typ: elf.SHT_STRTAB, data: str}
}

func rela(off, symIdx, typ uint64, addend int64) []byte {
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], off)
	binary.LittleEndian.PutUint64(b[8:], symIdx<<32|typ)
	binary.LittleEndian.PutUint64(b[16:], uint64(addend))
	return b[:]
}

// relObject is a relocatable object: 1 .text, 2 the map, 3 the
// relocations rel (type relType), 4 .symtab (symbol 1 "f" at .text+0x30,
// symbol 2 "ext" undefined), 5 .strtab.
func relObject(relType elf.SectionType, rel []byte) []byte {
	tab, str := symtabSections(4,
		sym{name: "f", info: byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC), shndx: 1, value: 0x30},
		sym{name: "ext", info: byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC), shndx: elf.SHN_UNDEF},
	)
	secs := []elfSection{
		{name: ".text", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, data: make([]byte, 0x40)},
		{name: ".llvm_bb_addr_map", typ: bam.SHT_LLVM_BB_ADDR_MAP, link: 1, data: hexBytes("02 00 0000000000000000 01 00 00 04 01")},
	}
	if rel != nil {
		secs = append(secs, elfSection{name: ".rela.llvm_bb_addr_map", typ: relType, link: 4, info: 2, entsize: 24, data: rel})
	} else {
		secs = append(secs, elfSection{name: ".note", typ: elf.SHT_NOTE})
	}
	return buildELF(elf.ET_REL, append(secs, tab, str)...)
}

func TestRelocations(t *testing.T) {
	const rX86_64_64 = 1
	tests := []struct {
		name   string
		elf    []byte
		want   []bam.Range // of the one function
		err    error
		errSec string
		errOff int64
	}{
		{"function symbol plus addend", relObject(elf.SHT_RELA, rela(2, 1, rX86_64_64, 4)),
			[]bam.Range{{Addr: 0x34, Section: 1, NumBlocks: 1, Blocks: []bam.Block{{Size: 4, Metadata: bam.HasReturn}}}}, nil, "", 0},
		{"no symbol: the addend is absolute", relObject(elf.SHT_RELA, rela(2, 0, rX86_64_64, 0x1234)),
			[]bam.Range{{Addr: 0x1234, NumBlocks: 1, Blocks: []bam.Block{{Size: 4, Metadata: bam.HasReturn}}}}, nil, "", 0},
		{"R_X86_64_NONE is ignored", relObject(elf.SHT_RELA, append(rela(2, 1, rX86_64_64, 0), rela(2, 1, 0, 8)...)),
			[]bam.Range{{Addr: 0x30, Section: 1, NumBlocks: 1, Blocks: []bam.Block{{Size: 4, Metadata: bam.HasReturn}}}}, nil, "", 0},
		{"no relocation section", relObject(0, nil), nil, cursor.ErrCorrupt, ".llvm_bb_addr_map", 0},
		{"no relocation at the address", relObject(elf.SHT_RELA, rela(3, 1, rX86_64_64, 0)), nil, cursor.ErrCorrupt, ".llvm_bb_addr_map", 2},
		{"undefined symbol", relObject(elf.SHT_RELA, rela(2, 2, rX86_64_64, 0)), nil, cursor.ErrCorrupt, ".rela.llvm_bb_addr_map", 0},
		{"symbol index out of range", relObject(elf.SHT_RELA, append(rela(0, 1, rX86_64_64, 0), rela(2, 9, rX86_64_64, 0)...)), nil, cursor.ErrCorrupt, ".rela.llvm_bb_addr_map", 24},
		{"partial entry", relObject(elf.SHT_RELA, rela(2, 1, rX86_64_64, 0)[:20]), nil, cursor.ErrTruncated, ".rela.llvm_bb_addr_map", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := elf.NewFile(bytes.NewReader(tt.elf))
			if err != nil {
				t.Fatal(err)
			}
			funcs, err := bam.Read(f)
			if tt.err != nil {
				var de *cursor.DecodeError
				if !errors.Is(err, tt.err) || !errors.As(err, &de) || de.Section != tt.errSec || de.Offset != tt.errOff {
					t.Fatalf("error %v; want %v at %s+%#x", err, tt.err, tt.errSec, tt.errOff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(funcs) != 1 {
				t.Fatalf("%d functions", len(funcs))
			}
			if diff := cmp.Diff(tt.want, funcs[0].Ranges); diff != "" {
				t.Errorf("ranges (-want +got):\n%s", diff)
			}
		})
	}
}

// zlibSection returns data as an ELF64 SHF_COMPRESSED section body.
func zlibSection(data []byte) []byte {
	var buf bytes.Buffer
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(elf.COMPRESS_ZLIB))
	binary.LittleEndian.PutUint64(h[8:], uint64(len(data)))
	binary.LittleEndian.PutUint64(h[16:], 1)
	buf.Write(h[:])
	w := zlib.NewWriter(&buf)
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// manyFuncs returns a map of n version-5 functions with three blocks each.
func manyFuncs(n int) []byte {
	var out []byte
	for i := range n {
		out = append(out, 5, 0x20, 0)
		out = binary.LittleEndian.AppendUint64(out, 0x400000+uint64(i)*0x40)
		out = append(out, 3, 0, 0, 0, 4, 8, 1, 0, 2, 0x10, 0x17, 8, 0, 2, 1, 0, 2, 1)
	}
	return out
}

// TestStreaming decodes a 4.6 MB map, compressed and not, from a file,
// one function at a time: the decoder must not allocate anything like the
// section's size.
func TestStreaming(t *testing.T) {
	const n = 200_000
	raw := manyFuncs(n)
	dir := t.TempDir()
	for _, tt := range []struct {
		name  string
		flags elf.SectionFlag
		data  []byte
	}{
		{"plain", 0, raw},
		{"zlib", elf.SHF_COMPRESSED, zlibSection(raw)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			bin := buildELF(elf.ET_EXEC, elfSection{name: ".llvm_bb_addr_map", typ: bam.SHT_LLVM_BB_ADDR_MAP, flags: tt.flags, data: tt.data})
			if err := os.WriteFile(path, bin, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			d, err := bam.NewSectionDecoder(f, bam.Sections(f)[0])
			if err != nil {
				t.Fatal(err)
			}
			var fn bam.Func
			count, blocks := 0, 0
			for err = d.Next(&fn); err == nil; err = d.Next(&fn) {
				if want := 0x400000 + uint64(count)*0x40; fn.Addr() != want {
					t.Fatalf("function %d at %#x, want %#x", count, fn.Addr(), want)
				}
				count++
				blocks += fn.NumBlocks()
			}
			runtime.ReadMemStats(&after)
			if err != io.EOF {
				t.Fatal(err)
			}
			if count != n || blocks != 3*n {
				t.Errorf("%d functions, %d blocks; want %d, %d", count, blocks, n, 3*n)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("streaming a %d-byte section allocated %d bytes", len(raw), alloc)
			}
		})
	}
}

// TestShortSection: a section whose header claims more bytes than the
// file or the compressed stream holds is truncated at the real end.
func TestShortSection(t *testing.T) {
	good := hexBytes("02 00" + addr1000 + "01 00 00 04 01")
	// Claim 100 decompressed bytes for 15.
	z := zlibSection(good)
	binary.LittleEndian.PutUint64(z[8:], 100)
	f, err := elf.NewFile(bytes.NewReader(buildELF(elf.ET_EXEC,
		elfSection{name: ".llvm_bb_addr_map", typ: bam.SHT_LLVM_BB_ADDR_MAP, flags: elf.SHF_COMPRESSED, data: z})))
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := bam.Read(f)
	var de *cursor.DecodeError
	if !errors.Is(err, cursor.ErrTruncated) || !errors.As(err, &de) || de.Offset != 15 || len(funcs) != 1 {
		t.Errorf("Read: %d functions, error %v; want 1 and truncated at +0xf", len(funcs), err)
	}
	// Corrupt compressed data.
	z = zlibSection(good)
	z[len(z)-1] ^= 0xff // the Adler-32 checksum
	f, err = elf.NewFile(bytes.NewReader(buildELF(elf.ET_EXEC,
		elfSection{name: ".llvm_bb_addr_map", typ: bam.SHT_LLVM_BB_ADDR_MAP, flags: elf.SHF_COMPRESSED, data: z})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bam.Read(f); !errors.Is(err, cursor.ErrCorrupt) || !errors.Is(err, zlib.ErrChecksum) {
		t.Errorf("Read of a corrupt zlib stream: %v", err)
	}
}

// TestCompressedTestdata: the compressed copies decode exactly as their
// originals.
func TestCompressedTestdata(t *testing.T) {
	for _, p := range [][2]string{
		{"bbaddrmap-v5.o", "bbaddrmap-v5-zlib.o"},
		{"bbaddrmap-elf32.o", "bbaddrmap-elf32-zstd.o"},
		{"bbaddrmap/clang22-pgo", "bbaddrmap/clang22-pgo-zlib"},
		{"bbaddrmap/clang19-pgo", "bbaddrmap/clang19-pgo-zstd"},
	} {
		a, err := bam.ReadFile(testbin.Path(t, p[0]))
		if err != nil {
			t.Fatal(err)
		}
		b, err := bam.ReadFile(testbin.Path(t, p[1]))
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.Open(testbin.Path(t, p[1]))
		if err != nil {
			t.Fatal(err)
		}
		if s := bam.Sections(f); len(s) != 1 || s[0].Flags&elf.SHF_COMPRESSED == 0 {
			t.Errorf("%s: map not compressed", p[1])
		}
		f.Close()
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%s vs %s (-plain +compressed):\n%s", p[0], p[1], diff)
		}
	}
}

// TestKnownMaps checks what the clang builds are known to contain.
func TestKnownMaps(t *testing.T) {
	tests := []struct {
		bin      string
		version  uint8
		features bam.Features // of the first function
		split    int          // functions with more than one range
		pgo      bool
	}{
		{"bbaddrmap/clang19-bbaddrmap", 2, 0, 0, false},
		{"bbaddrmap/clang22-bbaddrmap", 5, bam.CallsiteEndOffsets, 0, false},
		{"bbaddrmap/clang22-bbaddrmap.so", 5, bam.CallsiteEndOffsets, 0, false},
		{"bbaddrmap/clang19-pgo", 2, bam.FuncEntryCount | bam.BBFreq | bam.BrProb, 2, true},
		{"bbaddrmap/clang22-pgo", 5, bam.FuncEntryCount | bam.BBFreq | bam.BrProb | bam.CallsiteEndOffsets | bam.BBHash, 3, true},
		{"bbaddrmap/clang22-omit.o", 5, bam.FuncEntryCount | bam.OmitBBEntries | bam.CallsiteEndOffsets, 0, true},
		{"clang19-mfs", 2, 0, 2, false},
		{"clang22-mfs", 5, bam.CallsiteEndOffsets, 3, false},
	}
	for _, tt := range tests {
		funcs, err := bam.ReadFile(testbin.Path(t, tt.bin))
		if err != nil {
			t.Fatal(err)
		}
		split := 0
		for _, f := range funcs {
			if f.Version != tt.version {
				t.Errorf("%s: function at %#x has version %d, want %d", tt.bin, f.Addr(), f.Version, tt.version)
			}
			if len(f.Ranges) > 1 {
				split++
				if f.Features&bam.MultiBBRange == 0 {
					t.Errorf("%s: function at %#x has %d ranges without MultiBBRange", tt.bin, f.Addr(), len(f.Ranges))
				}
			}
			if (f.FuncEntryCount > 0) != tt.pgo && f.Features&bam.FuncEntryCount != 0 {
				t.Errorf("%s: function at %#x: entry count %d", tt.bin, f.Addr(), f.FuncEntryCount)
			}
		}
		if got := funcs[0].Features &^ bam.MultiBBRange; got != tt.features {
			t.Errorf("%s: first function's features %v, want %v", tt.bin, got, tt.features)
		}
		if split != tt.split {
			t.Errorf("%s: %d split functions, want %d", tt.bin, split, tt.split)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{bam.Features(0).String(), "0"},
		{(bam.FuncEntryCount | bam.MultiBBRange | bam.PostLinkCfg).String(), "FuncEntryCount|MultiBBRange|PostLinkCfg"},
		{bam.Features(0x8080).String(), "PostLinkCfg|0x8000"},
		{(bam.HasReturn | bam.HasIndirectBranch).String(), "HasReturn|HasIndirectBranch"},
		{bam.Metadata(0x40).String(), "0x40"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
