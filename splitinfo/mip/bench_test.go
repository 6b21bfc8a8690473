package mip

import (
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// benchMap is a map of n functions with 8 blocks each, and its raw data.
func benchMap(n int) (*Map, *Raw) {
	m := &Map{Header: Header{FileType: MapFile, ProfileType: sampleType, ModuleHash: 1}}
	var recs []RawRecord
	raw := int32(HeaderSize)
	for i := range n {
		f := MapFunc{Name: "function_" + string(rune('a'+i%26)), RawSectionPC: -int32(i) * 64, FuncPC: int32(i) * 256, Size: 200,
			BlockOffsets: []uint32{10, 20, 30, 40, 50, 60, 70, 80}}
		f.RawDataPC = f.RawSectionPC + raw
		raw += int32(RecordSize(sampleType, 8))
		m.Funcs = append(m.Funcs, f)
		recs = append(recs, RawRecord{Covered: i%2 == 0, Blocks: []bool{true, false, true, false, true, false, true, i%3 == 0}})
	}
	r, err := DecodeRaw(AppendRaw(nil, m.Header, recs))
	if err != nil {
		panic(err)
	}
	return m, r
}

func BenchmarkDecodeMap(b *testing.B) {
	m, _ := benchMap(10000)
	data := AppendMap(nil, m)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMap(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMergeRaw(b *testing.B) {
	m, r := benchMap(10000)
	p := NewProfile(m)
	b.SetBytes(int64(len(r.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.MergeRaw(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeProfile(b *testing.B) {
	m, r := benchMap(10000)
	p, err := NewProfile(m).MergeRaw(r)
	if err != nil {
		b.Fatal(err)
	}
	data := AppendProfile(nil, p)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeProfile(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	path := testbin.Path(b, "mip/mip")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Open(path); err != nil {
			b.Fatal(err)
		}
	}
}
