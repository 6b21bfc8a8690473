package mip

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

const sampleType = FunctionCoverage | BlockCoverage

// sampleMap is the seed's _Z3foov record (two non-entry blocks, CFG
// signature 0x70c9fa27) and a function without blocks, as if the map were
// at 0x10000, the raw section at 0x4000 and the code at 0x1000.
func sampleMap() *Map {
	const mapAddr, rawAddr = 0x10000, 0x4000
	rec := func(recOff, rawOff, fn int64) (int32, int32, int32) {
		ref := mapAddr + recOff
		return int32(rawAddr - ref), int32(rawAddr + rawOff - ref), int32(fn - ref)
	}
	m := &Map{Header: Header{FileType: MapFile, ProfileType: sampleType, ModuleHash: ModuleHash("sample")}}
	a, b, c := rec(0x18, 0x18, 0x1000)
	m.Funcs = append(m.Funcs, MapFunc{Name: "_Z3foov", RawSectionPC: a, RawDataPC: b, FuncPC: c, Size: 0x30,
		CFGSignature: 0x70c9fa27, BlockOffsets: []uint32{0x0c, 0x21}})
	a, b, c = rec(0x48, 0x1b, 0x1030)
	m.Funcs = append(m.Funcs, MapFunc{Name: "bar", RawSectionPC: a, RawDataPC: b, FuncPC: c, Size: 0x10, CFGSignature: 1})
	return m
}

func TestMapLayout(t *testing.T) {
	data := AppendMap(nil, sampleMap())
	le := binary.LittleEndian
	// The header, then _Z3foov's record at 0x18: 6 fields, 2 offsets, the
	// name length and 7 bytes of name = 43 bytes, padded to 48.
	if got := data[:8]; string(got) != "\xfbMIP\x08\x00\x02\x00" {
		t.Errorf("header starts % x", got)
	}
	if got := le.Uint32(data[0x14:]); got != HeaderSize {
		t.Errorf("offset to data %#x", got)
	}
	if got := le.Uint32(data[0x18+0x18:]); got != 0x0c {
		t.Errorf("block 0 offset %#x", got)
	}
	if got := le.Uint32(data[0x18+0x20:]); got != 7 {
		t.Errorf("name length %d", got)
	}
	if len(data) != 0x18+48+32 {
		t.Errorf("%d bytes, want %d", len(data), 0x18+48+32)
	}
	m, err := DecodeMap(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sampleMap(), m); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	foo := &m.Funcs[0]
	if foo.RawOffset() != 0x18 || foo.FuncOffset() != 0x1000-0x4000 {
		t.Errorf("raw offset %#x, function offset %d", foo.RawOffset(), foo.FuncOffset())
	}
	if got := BlockAddr(0x1000, foo.BlockOffsets[1]); got != 0x1021 {
		t.Errorf("block 2 at %#x", got)
	}
	if got := BlockAddr(0x1000, uint32(0xfffffff0)); got != 0xff0 {
		t.Errorf("a block 16 bytes before the entry at %#x", got)
	}
}

func TestRawRoundTrip(t *testing.T) {
	for _, pt := range []ProfileType{FunctionCoverage, sampleType, sampleType | FunctionTimestamp | FunctionCallCount, FunctionCallCount} {
		recs := []RawRecord{
			{Covered: true, CallCount: 3, Timestamp: 1, Blocks: []bool{true, false, true}},
			{},
			{Covered: false, Blocks: []bool{false}},
			{Covered: true, CallCount: 1, Timestamp: 7, Blocks: []bool{false, true, false, false, true}},
		}
		data := AppendRaw(nil, Header{ProfileType: pt, ModuleHash: 9}, recs)
		r, err := DecodeRaw(data)
		if err != nil {
			t.Fatal(err)
		}
		if r.FileType != RawFile || r.ProfileType != pt || r.ModuleHash != 9 {
			t.Errorf("%v: header %+v", pt, r.Header)
		}
		off := int64(HeaderSize)
		for i, want := range recs {
			got, err := r.Record(off, len(want.Blocks))
			if err != nil {
				t.Fatalf("%v: record %d: %v", pt, i, err)
			}
			// What the type stores.
			if pt.Counts() {
				want.Covered = want.CallCount != 0
				if !want.Covered {
					want.Timestamp = 0 // written as never called
				}
			} else {
				want.CallCount, want.Timestamp = 0, 0
			}
			if pt&BlockCoverage == 0 {
				want.Blocks = nil
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%v: record %d (-want +got):\n%s", pt, i, diff)
			}
			off += int64(RecordSize(pt, len(want.Blocks)))
		}
		if off != int64(len(data)) {
			t.Errorf("%v: records end at %d of %d bytes", pt, off, len(data))
		}
	}
}

func sampleProfile() *Profile {
	p := NewProfile(sampleMap())
	p.Funcs[0].MergeCount, p.Funcs[0].CallCount, p.Funcs[0].TimestampSum = 2, 40, 3
	p.Funcs[0].Blocks[1].Covered = true
	return p
}

func TestProfileRoundTrip(t *testing.T) {
	p := sampleProfile()
	data := AppendProfile(nil, p)
	got, err := DecodeProfile(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// The names: their byte length, then "_Z3foov\0bar\0" sorted.
	tail := data[len(data)-8-12:]
	if n := binary.LittleEndian.Uint64(tail); n != 12 || string(tail[8:]) != "_Z3foov\x00bar\x00" {
		t.Errorf("names % x", tail)
	}
}

// MIPWriter, the MIP patch's own writer, stores the number of names where
// the format says their length: both decode.
func TestProfileNameCount(t *testing.T) {
	p := sampleProfile()
	data := AppendProfile(nil, p)
	names := len(data) - 12 - 8
	binary.LittleEndian.PutUint64(data[names:], 2)
	got, err := DecodeProfile(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		m := &Map{Header: Header{FileType: MapFile, ProfileType: ProfileType(r.Uint32N(0x10)), ModuleHash: r.Uint32()}}
		p := &Profile{Header: Header{FileType: ProfileFile, ProfileType: ProfileType(r.Uint32N(0x20)), ModuleHash: r.Uint32()}}
		for i := range r.IntN(10) {
			sec := int32(r.Uint32())
			f := MapFunc{Name: string(rune('a'+r.IntN(26))) + string(rune('a'+i)), RawSectionPC: sec,
				RawDataPC: sec + HeaderSize + int32(r.IntN(1000)), FuncPC: int32(r.Uint32()), Size: r.Uint32(), CFGSignature: r.Uint32()}
			pf := Func{Name: f.Name, Signature: FunctionSignature(f.Name), RawOffset: r.Uint32(), FuncOffset: r.Uint32(), Size: r.Uint32(),
				CFGSignature: r.Uint32(), MergeCount: r.Uint32(), CallCount: r.Uint64(), TimestampSum: r.Uint64()}
			for range r.IntN(6) {
				f.BlockOffsets = append(f.BlockOffsets, r.Uint32())
				pf.Blocks = append(pf.Blocks, Block{Offset: r.Uint32(), Covered: r.IntN(2) == 0})
			}
			m.Funcs = append(m.Funcs, f)
			p.Funcs = append(p.Funcs, pf)
		}
		gm, err := DecodeMap(AppendMap(nil, m))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(m, gm, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("map (-want +got):\n%s", diff)
		}
		gp, err := DecodeProfile(AppendProfile(nil, p))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p, gp, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("profile (-want +got):\n%s", diff)
		}
	}
}

type reject struct {
	name   string
	mutate func([]byte) []byte
	want   error
	off    int64
}

func put32(off int, v uint32) func([]byte) []byte {
	return func(b []byte) []byte { binary.LittleEndian.PutUint32(b[off:], v); return b }
}

func put64(off int, v uint64) func([]byte) []byte {
	return func(b []byte) []byte { binary.LittleEndian.PutUint64(b[off:], v); return b }
}

// headerRejects apply to every file type.
func headerRejects(ft FileType) []reject {
	other := RawFile
	if ft == RawFile {
		other = MapFile
	}
	return []reject{
		{"empty", func([]byte) []byte { return nil }, cursor.ErrTruncated, 0},
		{"short header", func(b []byte) []byte { return b[:20] }, cursor.ErrTruncated, 0x14},
		{"magic", func(b []byte) []byte { b[1] = 'm'; return b }, cursor.ErrCorrupt, 0},
		{"version", func(b []byte) []byte { b[4] = 9; return b }, cursor.ErrUnsupportedVersion, 4},
		{"file type", func(b []byte) []byte { b[6] = byte(other); return b }, cursor.ErrCorrupt, 6},
		{"profile type", put32(8, 0x23), cursor.ErrUnsupported, 8},
		{"offset to data inside the header", put32(0x14, 0x10), cursor.ErrCorrupt, 0x14},
		{"offset to data past the end", put32(0x14, 0x10000), cursor.ErrCorrupt, 0x14},
	}
}

func checkRejects(t *testing.T, section string, good []byte, tests []reject, decode func([]byte) error) {
	t.Helper()
	for _, tt := range tests {
		b := tt.mutate(append([]byte(nil), good...))
		err := decode(b)
		var de *cursor.DecodeError
		if !errors.Is(err, tt.want) || !errors.As(err, &de) || de.Offset != tt.off || de.Section != section {
			t.Errorf("%s: %v, want %v at %s+%#x", tt.name, err, tt.want, section, tt.off)
		}
	}
}

func TestMapRejects(t *testing.T) {
	good := AppendMap(nil, sampleMap())
	const rec = HeaderSize // _Z3foov's record
	tests := append(headerRejects(MapFile),
		reject{"short record", func(b []byte) []byte { return b[:rec+20] }, cursor.ErrTruncated, rec},
		reject{"block count", put32(rec+20, 1<<30), cursor.ErrCorrupt, rec + 20},
		reject{"name length", put32(rec+32, 100), cursor.ErrCorrupt, rec + 32},
		reject{"truncated name", func(b []byte) []byte { return b[:rec+38] }, cursor.ErrCorrupt, rec + 32},
		reject{"raw data inside the raw header", put32(rec+4, binary.LittleEndian.Uint32(good[rec:])+8), cursor.ErrCorrupt, rec + 4},
		reject{"raw data before the raw section", put32(rec+4, binary.LittleEndian.Uint32(good[rec:])-1), cursor.ErrCorrupt, rec + 4},
		reject{"trailing bytes", func(b []byte) []byte { return append(b, 1, 2, 3) }, cursor.ErrTruncated, int64(len(good))},
	)
	checkRejects(t, MapSection, good, tests, func(b []byte) error { _, err := DecodeMap(b); return err })
}

func TestRawRejects(t *testing.T) {
	recs := []RawRecord{{Covered: true, Blocks: []bool{true, false}}, {}}
	good := AppendRaw(nil, Header{ProfileType: sampleType}, recs)
	checkRejects(t, RawSection, good, headerRejects(RawFile), func(b []byte) error { _, err := DecodeRaw(b); return err })
	// Records are read at the offsets the map gives.
	record := func(off int64, blocks int, mutate func([]byte) []byte) error {
		r, err := DecodeRaw(mutate(append([]byte(nil), good...)))
		if err != nil {
			return err
		}
		_, err = r.Record(off, blocks)
		return err
	}
	same := func(b []byte) []byte { return b }
	tests := []struct {
		name        string
		off         int64
		blocks      int
		mutate      func([]byte) []byte
		want        error
		wantAt      int64
		wantSection string
	}{
		{"past the end", 0x1b, 2, same, cursor.ErrTruncated, 0x1b, RawSection},
		{"in the header", 4, 0, same, cursor.ErrTruncated, 4, RawSection},
		{"beyond the file", 1 << 40, 0, same, cursor.ErrTruncated, 1 << 40, RawSection},
		{"coverage byte", 0x18, 2, func(b []byte) []byte { b[0x19] = 0x7f; return b }, cursor.ErrCorrupt, 0x19, RawSection},
		{"function byte", 0x18, 2, func(b []byte) []byte { b[0x18] = 1; return b }, cursor.ErrCorrupt, 0x18, RawSection},
		{"return addresses", 0x18, 2, put32(8, uint32(sampleType|ReturnAddress)), cursor.ErrUnsupported, 8, RawSection},
	}
	for _, tt := range tests {
		err := record(tt.off, tt.blocks, tt.mutate)
		var de *cursor.DecodeError
		if !errors.Is(err, tt.want) || !errors.As(err, &de) || de.Offset != tt.wantAt || de.Section != tt.wantSection {
			t.Errorf("%s: %v, want %v at %#x", tt.name, err, tt.want, tt.wantAt)
		}
	}
}

func TestProfileRejects(t *testing.T) {
	good := AppendProfile(nil, sampleProfile())
	const fn = HeaderSize + 8 // _Z3foov's profile
	const blocks = fn + 8 + 4*6 + 16
	names := int64(len(good) - 12 - 8)
	tests := append(headerRejects(ProfileFile),
		reject{"profile count", put64(HeaderSize, 1<<40), cursor.ErrCorrupt, HeaderSize},
		reject{"block count", put32(fn+24, 1<<28), cursor.ErrCorrupt, fn + 24},
		reject{"IsCovered", func(b []byte) []byte { b[blocks+4] = 2; return b }, cursor.ErrCorrupt, blocks + 4},
		reject{"call edges", put32(blocks+10, 1), cursor.ErrUnsupported, blocks + 10},
		reject{"names length", put64(int(names), 11), cursor.ErrCorrupt, names},
		reject{"names truncated", func(b []byte) []byte { return b[:len(b)-1] }, cursor.ErrCorrupt, names},
		reject{"no names length", func(b []byte) []byte { return b[:names+4] }, cursor.ErrTruncated, names},
		reject{"truncated function", func(b []byte) []byte { return b[:fn+60] }, cursor.ErrCorrupt, HeaderSize},
	)
	checkRejects(t, ProfileSection, good, tests, func(b []byte) error { _, err := DecodeProfile(b); return err })
}

func TestNames(t *testing.T) {
	// llvm::MD5Hash("_Z3foov") and the module hash of the test program,
	// as instrumented.S has it.
	if got := FunctionSignature(""); got != 0x04b2008fd98c1dd4 {
		t.Errorf("MD5Hash(\"\") = %#x", got)
	}
	if got := ModuleHash("mip"); got != 0xd9201219 {
		t.Errorf("ModuleHash(mip) = %#x", got)
	}
	if s := (FunctionCoverage | BlockCoverage | 0x40).String(); s != "function-coverage|block-coverage|0x40" {
		t.Errorf("ProfileType.String = %q", s)
	}
	if ProfileFile.String() != "profile" || FileType(7).String() != "FileType(7)" {
		t.Error("FileType.String")
	}
	// DecodeHeader takes any file type.
	for _, data := range [][]byte{AppendMap(nil, sampleMap()), AppendProfile(nil, sampleProfile()), AppendRaw(nil, Header{ProfileType: 1}, nil)} {
		h, err := DecodeHeader("x", data)
		if err != nil || h.FileType != FileType(data[6]) {
			t.Errorf("DecodeHeader: %+v, %v", h, err)
		}
	}
	if _, err := DecodeHeader("x", []byte("\x7fELF\x02\x01\x01\x00")); !errors.Is(err, cursor.ErrCorrupt) {
		t.Errorf("DecodeHeader of an ELF file: %v", err)
	}
}
