package bbaddrmap_test

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/testbin"
	bam "github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

// funcSectionsObject is a relocatable object as clang -ffunction-sections
// -fbasic-block-address-map writes it: for each of n functions a text
// section, a map section linked to it and that map's relocations, against
// the function's symbol; then .symtab (symbol i+1 is function i, at
// 0x10*i in its section) and .strtab.
func funcSectionsObject(n int) []byte {
	const rX86_64_64 = 1
	symIdx := uint32(3*n + 1)
	var secs []elfSection
	var syms []sym
	for i := range n {
		text := uint32(1 + 3*i)
		secs = append(secs,
			elfSection{name: fmt.Sprintf(".text.f%d", i), typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, data: make([]byte, 0x10*i+4)},
			elfSection{name: ".llvm_bb_addr_map", typ: bam.SHT_LLVM_BB_ADDR_MAP, flags: elf.SHF_LINK_ORDER, link: text, data: hexBytes("02 00 0000000000000000 01 00 00 04 01")},
			elfSection{name: ".rela.llvm_bb_addr_map", typ: elf.SHT_RELA, link: symIdx, info: text + 1, entsize: 24, data: rela(2, uint64(i+1), rX86_64_64, 0)},
		)
		syms = append(syms, sym{name: fmt.Sprintf("f%d", i), info: byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC), shndx: elf.SectionIndex(text), value: 0x10 * uint64(i)})
	}
	tab, str := symtabSections(symIdx, syms...)
	return buildELF(elf.ET_REL, append(secs, tab, str)...)
}

// decodeAll decodes every function of d.
func decodeAll(t *testing.T, d *bam.Decoder) []bam.Func {
	t.Helper()
	var funcs []bam.Func
	for {
		var fn bam.Func
		err := d.Next(&fn)
		if err == io.EOF {
			return funcs
		}
		if err != nil {
			t.Fatal(err)
		}
		funcs = append(funcs, fn.Clone())
	}
}

// TestFile checks that a File shared by all of a file's map sections
// describes and decodes each as NewSectionDecoder and SectionOf do, on
// objects with one map section per function and on the test binaries.
func TestFile(t *testing.T) {
	obj, err := elf.NewFile(bytes.NewReader(funcSectionsObject(5)))
	if err != nil {
		t.Fatal(err)
	}
	names, files := []string{"function-sections"}, []*elf.File{obj}
	for _, p := range testbin.BBAddrMapFiles(t) {
		names = append(names, filepath.Base(p))
		files = append(files, testbin.OpenELF(t, p))
	}
	for i, f := range files {
		t.Run(names[i], func(t *testing.T) {
			bf := bam.NewFile(f)
			secs := bam.Sections(f)
			if !slices.Equal(secs, bf.Sections()) {
				t.Fatalf("sections %v, want %v", bf.Sections(), secs)
			}
			for _, s := range secs {
				want, werr := bam.SectionOf(f, s)
				got, gerr := bf.SectionOf(s)
				if fmt.Sprint(werr) != fmt.Sprint(gerr) {
					t.Fatalf("section %s: error %v, want %v", s.Name, gerr, werr)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("section %s (-want +got):\n%s", s.Name, diff)
				}
				if werr != nil {
					continue
				}
				wd, err := bam.NewSectionDecoder(f, s)
				if err != nil {
					t.Fatal(err)
				}
				gd, err := bf.Decoder(s)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(decodeAll(t, wd), decodeAll(t, gd)); diff != "" {
					t.Fatalf("section %s: functions (-want +got):\n%s", want.Name, diff)
				}
			}
		})
	}
	// Function i of the object is at 0x10*i in its own text section.
	bf := bam.NewFile(obj)
	for i, s := range bf.Sections() {
		d, err := bf.Decoder(s)
		if err != nil {
			t.Fatal(err)
		}
		funcs := decodeAll(t, d)
		if len(funcs) != 1 || funcs[0].Ranges[0].Section != elf.SectionIndex(1+3*i) || funcs[0].Addr() != 0x10*uint64(i) {
			t.Errorf("map section %d: %+v", i, funcs)
		}
	}
}

// BenchmarkFuncSections decodes an object with one map section per
// function (1,000), with a Decoder from NewSectionDecoder for each section
// (the symbol table parsed per section) and from one shared File.
func BenchmarkFuncSections(b *testing.B) {
	f, err := elf.NewFile(bytes.NewReader(funcSectionsObject(1000)))
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, decoder func(*elf.Section) (*bam.Decoder, error)) {
		var fn bam.Func
		for _, s := range bam.Sections(f) {
			d, err := decoder(s)
			if err != nil {
				b.Fatal(err)
			}
			for err = d.Next(&fn); err == nil; err = d.Next(&fn) {
			}
			if err != io.EOF {
				b.Fatal(err)
			}
		}
	}
	b.Run("NewSectionDecoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			run(b, func(s *elf.Section) (*bam.Decoder, error) { return bam.NewSectionDecoder(f, s) })
		}
	})
	b.Run("File", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			run(b, bam.NewFile(f).Decoder)
		}
	})
}
