package bbaddrmap_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/testbin"
	bam "github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

// fuzzSection turns the fuzzer's layout byte into a Section: bit 0 the
// V0 type, bit 1 ELF32, bit 2 big-endian, bit 3 relocatable with
// relocations at offsets 2, 3 and 4.
func fuzzSection(layout uint8) bam.Section {
	sec := bam.Section{Name: "fuzz", Type: bam.SHT_LLVM_BB_ADDR_MAP}
	if layout&1 != 0 {
		sec.Type = bam.SHT_LLVM_BB_ADDR_MAP_V0
	}
	if layout&2 != 0 {
		sec.Class = elf.ELFCLASS32
	}
	if layout&4 != 0 {
		sec.ByteOrder = binary.BigEndian
	}
	if layout&8 != 0 {
		sec.Relocatable = true
		sec.Relocs = []bam.Reloc{{Offset: 2, Section: 1, Value: 0x10}, {Offset: 3, Section: 2, Value: 0x20, REL: true}, {Offset: 4, Value: 1}}
	}
	return sec
}

// mapSection returns the raw contents of bin's first map section.
func mapSection(tb testing.TB, bin string) []byte {
	f, err := elf.Open(testbin.Path(tb, bin))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	s := bam.Sections(f)
	if len(s) == 0 {
		tb.Fatalf("%s has no map", bin)
	}
	d, err := s[0].Data()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// FuzzDecode decodes mutated sections: no panics, no hangs, allocation
// bounded by the section's size, errors that are *cursor.DecodeError
// inside the section, and the streaming decoder (with a tiny window)
// agreeing exactly with the slice decoder.
func FuzzDecode(f *testing.F) {
	for _, tt := range rejections {
		f.Add(hexBytes(tt.data), uint8(0))
	}
	f.Add(hexBytes(addr1000+"03 | 00 0a 08 | 0a 16 08 | 30 03 01"), uint8(1))
	f.Add(hexBytes("02 08 02 00100000 01 00 00 04 08 f0ffffff 01 01 00 04 01"), uint8(2))
	f.Add(hexBytes("05 0048 01 0000000000001000 01 00 00 04 01 0123456789abcdef"), uint8(4))
	f.Add(hexBytes("02 00 0000000000000000 01 00 00 04 01"), uint8(8))
	for _, bin := range []string{"bbaddrmap-v5.o", "bbaddrmap-v2.o", "bbaddrmap/clang22-pgo", "bbaddrmap/clang19-pgo"} {
		if _, err := os.Stat(testbin.Dir() + "/" + bin); err == nil {
			f.Add(mapSection(f, bin), uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, layout uint8) {
		sec := fuzzSection(layout)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		funcs, err := bam.Decode(sec, data)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20+uint64(len(data))*128 {
			t.Fatalf("allocated %d bytes for a %d-byte section", alloc, len(data))
		}
		if err != nil {
			var de *cursor.DecodeError
			if !errors.As(err, &de) || de.Section != "fuzz" || de.Offset < 0 || de.Offset > int64(len(data)) {
				t.Fatalf("error %v (%T) is not a DecodeError inside the section", err, err)
			}
		}
		sfuncs, serr := bam.NewStreamDecoderWindow(sec, iotestOneByte(data), int64(len(data)), 3).ReadAll(nil)
		if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() {
			t.Fatalf("slice decoder: %v; stream decoder: %v", err, serr)
		}
		if diff := cmp.Diff(funcs, sfuncs); diff != "" {
			t.Fatalf("stream decoder differs (-slice +stream):\n%s", diff)
		}
		x := bam.NewIndex(funcs)
		for i := range funcs {
			for _, r := range funcs[i].Ranges {
				for _, b := range r.Blocks {
					x.LookupSection(r.Section, r.Addr+uint64(b.Offset))
				}
			}
		}
	})
}

// FuzzRead reads mutated ELF files with maps: no panics, no hangs, and
// every decoding error a *cursor.DecodeError.
func FuzzRead(f *testing.F) {
	for _, bin := range []string{"bbaddrmap-rel64.o", "bbaddrmap-rel32.o", "bbaddrmap-v5-zlib.o", "bbaddrmap-elf32-zstd.o", "bbaddrmap/clang22-pgo-crel.o"} {
		data, err := os.ReadFile(testbin.Path(f, bin))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, s := range bam.Sections(ef) {
			d, err := bam.NewSectionDecoder(ef, s)
			if err != nil {
				checkDecodeError(t, err)
				continue
			}
			var fn bam.Func
			for err = d.Next(&fn); err == nil; err = d.Next(&fn) {
			}
			if err != io.EOF {
				checkDecodeError(t, err)
			}
		}
	})
}

func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	var de *cursor.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *cursor.DecodeError", err, err)
	}
}
