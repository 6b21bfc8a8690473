package mip

import (
	"debug/elf"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// checkAlloc fails when decoding allocated more than a bound linear in
// the input's size.
func checkAlloc(t *testing.T, n int, decode func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	decode()
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10+uint64(n)*64 {
		t.Fatalf("allocated %d bytes for %d bytes of input", alloc, n)
	}
}

// sectionSeeds adds the sections of the test programs to the corpus.
func sectionSeeds(f *testing.F, name string) {
	for _, bin := range []string{"mip/mip", "mip/mip-counts"} {
		ef, err := elf.Open(testbin.Path(f, bin))
		if err != nil {
			f.Fatal(err)
		}
		data, err := ef.Section(name).Data()
		ef.Close()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzDecodeMap decodes mutated maps: no panics, allocation bounded by
// the input size, and a decoded map re-encodes to one that decodes the
// same.
func FuzzDecodeMap(f *testing.F) {
	sectionSeeds(f, MapSection)
	f.Add(AppendMap(nil, sampleMap()))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m *Map
		var err error
		checkAlloc(t, len(data), func() { m, err = DecodeMap(data) })
		if err != nil {
			return
		}
		back, err := DecodeMap(AppendMap(nil, m))
		if err != nil {
			t.Fatalf("re-encoded map does not decode: %v", err)
		}
		if diff := cmp.Diff(m, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("(-first +second):\n%s", diff)
		}
		// Every map makes a profile that round-trips (names with a NUL
		// cannot: the names table is NUL-separated).
		p := NewProfile(m)
		q, err := DecodeProfile(AppendProfile(nil, p))
		if err != nil {
			t.Fatalf("profile of the map does not decode: %v", err)
		}
		for i := range p.Funcs {
			if strings.IndexByte(p.Funcs[i].Name, 0) >= 0 {
				return
			}
		}
		if diff := cmp.Diff(p, q, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("profile (-want +got):\n%s", diff)
		}
	})
}

// FuzzDecodeRaw decodes mutated raw profiles and reads them with the
// test programs' maps and a synthetic one: no panics, bounded allocation.
func FuzzDecodeRaw(f *testing.F) {
	sectionSeeds(f, RawSection)
	f.Add(AppendRaw(nil, Header{ProfileType: sampleType}, []RawRecord{{Covered: true, Blocks: []bool{true, false}}, {}}))
	var maps []*Map
	for _, bin := range []string{"mip/mip", "mip/mip-counts"} {
		b, err := Open(testbin.Path(f, bin))
		if err != nil {
			f.Fatal(err)
		}
		maps = append(maps, b.Map)
	}
	maps = append(maps, sampleMap())
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAlloc(t, len(data), func() {
			r, err := DecodeRaw(data)
			if err != nil {
				return
			}
			for _, m := range maps {
				m := *m
				m.Header = r.Header
				m.FileType = MapFile
				p, err := NewProfile(&m).MergeRaw(r)
				if err != nil {
					continue
				}
				for _, fn := range p.Funcs {
					if fn.MergeCount > 1 {
						t.Fatalf("%s: merge count %d after one raw profile", fn.Name, fn.MergeCount)
					}
				}
			}
		})
	})
}

// FuzzDecodeProfile decodes mutated profiles: no panics, bounded
// allocation, and what decodes re-encodes to a profile that decodes the
// same.
func FuzzDecodeProfile(f *testing.F) {
	f.Add(AppendProfile(nil, sampleProfile()))
	for _, bin := range []string{"mip/mip", "mip/mip-counts"} {
		b, err := Open(testbin.Path(f, bin))
		if err != nil {
			f.Fatal(err)
		}
		p, err := NewProfile(b.Map).MergeRaw(b.Raw)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(AppendProfile(nil, p))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p *Profile
		var err error
		checkAlloc(t, len(data), func() { p, err = DecodeProfile(data) })
		if err != nil {
			return
		}
		back, err := DecodeProfile(AppendProfile(nil, p))
		if err != nil {
			t.Fatalf("re-encoded profile does not decode: %v", err)
		}
		// A name decodes only where its MD5 is a function's signature, so
		// it survives the round trip; unnamed functions stay unnamed.
		if diff := cmp.Diff(p, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("(-first +second):\n%s", diff)
		}
	})
}
