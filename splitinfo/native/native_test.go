package native

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

func sample() []Record {
	return []Record{
		{Entry: 0x12f0, EntrySize: 0x79, Name: "process", SourceName: "process", CompUnit: "gcccold/main.c", File: "gcccold/main.c", Line: 33,
			Moved: []Split{{BranchAddr: 0x131a, VAddr: 0x1079, Size: 0x15, Kind: Cold, Symbol: "process.cold", Sites: []uint64{0x131a}}}},
		// A fragment above the entry, another with no branch, a part.
		{Entry: 0x6300, EntrySize: 0x3b, Name: "tally",
			Moved: []Split{
				{BranchAddr: 0x6302, VAddr: 0x6440, Size: 0x39, Kind: Cold, Symbol: "tally.cold.0", Sites: []uint64{0x6302, 0x6308, 0x6316}},
				{VAddr: 0x6480, Size: 0x1b, Kind: Part},
			}},
	}
}

func TestRoundTrip(t *testing.T) {
	data, err := Append(nil, sample())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample(), got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// Offsets from the entry make the records small: two records, four
	// fragments, nine names and sites in well under 128 bytes.
	if len(data) > 128 {
		t.Errorf("%d bytes", len(data))
	}
}

func TestRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var recs []Record
		entry := r.Uint64N(1 << 40)
		for range r.IntN(20) {
			entry += 1 + r.Uint64N(1<<20)
			rec := Record{Entry: entry, EntrySize: r.Uint64N(1 << 16), Name: string(rune('a' + r.IntN(26))), Line: r.IntN(1000)}
			for range r.IntN(4) {
				s := Split{VAddr: entry - 1<<30 + r.Uint64N(1<<31), Size: r.Uint64N(1 << 12), Kind: Kind(1 + r.IntN(3))}
				if r.IntN(2) == 0 {
					s.BranchAddr = entry + r.Uint64N(rec.EntrySize+1) + 1
					s.Sites = []uint64{s.BranchAddr}
				}
				rec.Moved = append(rec.Moved, s)
			}
			recs = append(recs, rec)
		}
		data, err := Append(nil, recs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(recs, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	}
}

func TestUnknownTagsAreSkipped(t *testing.T) {
	data, _ := Append(nil, sample()[:1])
	// Insert a record of tag 9 before the terminal byte, and count it.
	extra := []byte{9, 3, 0xaa, 0xbb, 0xcc}
	data = append(data[:len(data)-1], append(extra, 0)...)
	n := uint32(data[4]) + uint32(len(extra))
	data[4] = byte(n)
	got, err := Decode(data)
	if err != nil || len(got) != 1 || got[0].Name != "process" {
		t.Errorf("Decode = %v, %v", got, err)
	}
}

func TestRejects(t *testing.T) {
	good, _ := Append(nil, sample())
	tests := []struct {
		name   string
		mutate func([]byte) []byte
		want   error
		off    int64
	}{
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, cursor.ErrCorrupt, 0},
		{"version", func(b []byte) []byte { b[3] = 2; return b }, cursor.ErrUnsupportedVersion, 3},
		{"length", func(b []byte) []byte { b[4] = 0xff; b[5] = 0xff; return b }, cursor.ErrTruncated, 8},
		{"truncated", func(b []byte) []byte { return b[:6] }, cursor.ErrTruncated, 4},
		{"empty", func(b []byte) []byte { return nil }, cursor.ErrTruncated, 0},
	}
	for _, tt := range tests {
		b := tt.mutate(append([]byte(nil), good...))
		_, err := Decode(b)
		var de *cursor.DecodeError
		if !errors.Is(err, tt.want) || !errors.As(err, &de) || de.Offset != tt.off || de.Section != SectionName {
			t.Errorf("%s: %v, want %v at %d", tt.name, err, tt.want, tt.off)
		}
	}
}

func FuzzDecode(f *testing.F) {
	data, _ := Append(nil, sample())
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := Decode(data)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes the same.
		again, err := Append(nil, recs)
		if err != nil {
			return
		}
		back, err := Decode(again)
		if err != nil {
			t.Fatalf("re-encoded records do not decode: %v", err)
		}
		if len(back) != len(recs) {
			t.Fatalf("%d records, then %d", len(recs), len(back))
		}
	})
}
