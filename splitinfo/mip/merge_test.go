package mip

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// rawOf builds the raw profile of sampleMap's functions.
func rawOf(t *testing.T, h Header, recs ...RawRecord) *Raw {
	t.Helper()
	r, err := DecodeRaw(AppendRaw(nil, h, recs))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func coverage(p *Profile) map[string][]bool {
	out := map[string][]bool{}
	for _, f := range p.Funcs {
		c := []bool{f.Covered()}
		for _, b := range f.Blocks {
			c = append(c, b.Covered)
		}
		out[f.Name] = c
	}
	return out
}

func TestMergeRaw(t *testing.T) {
	m := sampleMap()
	base := NewProfile(m)
	h := m.Header
	run1 := rawOf(t, h, RawRecord{Covered: true, Blocks: []bool{true, false}}, RawRecord{})
	run2 := rawOf(t, h, RawRecord{Covered: true, Blocks: []bool{false, true}}, RawRecord{Covered: false})
	p, err := base.MergeRaw(run1)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = p.MergeRaw(run2); err != nil {
		t.Fatal(err)
	}
	want := map[string][]bool{"_Z3foov": {true, true, true}, "bar": {false}}
	if diff := cmp.Diff(want, coverage(p)); diff != "" {
		t.Errorf("coverage (-want +got):\n%s", diff)
	}
	if p.Funcs[0].MergeCount != 2 || p.Funcs[1].MergeCount != 0 || p.Funcs[0].CallCount != 0 {
		t.Errorf("merge counts %d %d, call count %d", p.Funcs[0].MergeCount, p.Funcs[1].MergeCount, p.Funcs[0].CallCount)
	}
	// base is untouched.
	if diff := cmp.Diff(NewProfile(m), base); diff != "" {
		t.Errorf("MergeRaw changed its receiver:\n%s", diff)
	}
}

func TestMergeRawCounts(t *testing.T) {
	m := sampleMap()
	m.ProfileType |= FunctionCallCount | FunctionTimestamp
	// With counts, records are 8 bytes + blocks, padded to 4: _Z3foov at
	// 0x18 (12 bytes), bar at 0x24.
	m.Funcs[1].RawDataPC = m.Funcs[1].RawSectionPC + 0x24
	base := NewProfile(m)
	h := m.Header
	p := base
	for _, r := range []*Raw{
		rawOf(t, h, RawRecord{CallCount: 5, Timestamp: 2, Blocks: []bool{false, true}}, RawRecord{CallCount: 1, Timestamp: 1}),
		rawOf(t, h, RawRecord{CallCount: 2, Timestamp: 1, Blocks: []bool{true, false}}, RawRecord{Timestamp: 9}),
	} {
		var err error
		if p, err = p.MergeRaw(r); err != nil {
			t.Fatal(err)
		}
	}
	foo, bar := p.Funcs[0], p.Funcs[1]
	if foo.CallCount != 7 || foo.TimestampSum != 3 || foo.MergeCount != 2 {
		t.Errorf("_Z3foov: calls %d, timestamps %d, merges %d", foo.CallCount, foo.TimestampSum, foo.MergeCount)
	}
	// bar did not run in the second run: its timestamp is not counted.
	// Its counters were 0xffffffff there (AppendRawRecord writes a
	// never-called function as the instrumented code leaves it).
	if bar.CallCount != 1 || bar.TimestampSum != 1 || bar.MergeCount != 1 {
		t.Errorf("bar: calls %d, timestamps %d, merges %d", bar.CallCount, bar.TimestampSum, bar.MergeCount)
	}
	if !foo.Blocks[0].Covered || !foo.Blocks[1].Covered {
		t.Errorf("blocks %v", foo.Blocks)
	}
}

func TestMergeRawRejects(t *testing.T) {
	m := sampleMap()
	base := NewProfile(m)
	good := []RawRecord{{Covered: true, Blocks: []bool{true, false}}, {}}
	tests := []struct {
		name string
		raw  func() *Raw
		want error
	}{
		{"module hash", func() *Raw { h := m.Header; h.ModuleHash++; return rawOf(t, h, good...) }, ErrMismatch},
		{"profile type", func() *Raw { h := m.Header; h.ProfileType = FunctionCoverage; return rawOf(t, h, good...) }, ErrMismatch},
		{"too short", func() *Raw { return rawOf(t, m.Header, good[0]) }, cursor.ErrTruncated},
		{"functions the profile lacks", func() *Raw {
			return rawOf(t, m.Header, append(good, RawRecord{Blocks: make([]bool, 8)}, RawRecord{})...)
		}, ErrMismatch},
		{"not coverage bytes", func() *Raw {
			r := rawOf(t, m.Header, good...)
			r.Data[HeaderSize+1] = 3
			return r
		}, cursor.ErrCorrupt},
	}
	for _, tt := range tests {
		p, err := base.MergeRaw(tt.raw())
		if !errors.Is(err, tt.want) || p != nil {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestMergeProfiles(t *testing.T) {
	m := sampleMap()
	a, err := NewProfile(m).MergeRaw(rawOf(t, m.Header, RawRecord{Covered: true, Blocks: []bool{true, false}}, RawRecord{}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewProfile(m).MergeRaw(rawOf(t, m.Header, RawRecord{Covered: true, Blocks: []bool{false, false}}, RawRecord{Covered: true}))
	if err != nil {
		t.Fatal(err)
	}
	// b in the other order: functions are matched by raw data offset.
	b.Funcs[0], b.Funcs[1] = b.Funcs[1], b.Funcs[0]
	p, err := a.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]bool{"_Z3foov": {true, true, false}, "bar": {true}}
	if diff := cmp.Diff(want, coverage(p)); diff != "" {
		t.Errorf("coverage (-want +got):\n%s", diff)
	}
	if p.Funcs[0].MergeCount != 2 || p.Funcs[1].MergeCount != 1 {
		t.Errorf("merge counts %d %d", p.Funcs[0].MergeCount, p.Funcs[1].MergeCount)
	}

	changed := []struct {
		name   string
		mutate func(*Profile)
	}{
		{"CFG signature", func(q *Profile) { q.Funcs[0].CFGSignature ^= 1 }},
		{"module hash", func(q *Profile) { q.ModuleHash ^= 1 }},
		{"profile type", func(q *Profile) { q.ProfileType |= FunctionCallCount }},
		{"name", func(q *Profile) { q.Funcs[1].Signature = FunctionSignature("baz") }},
		{"address", func(q *Profile) { q.Funcs[1].FuncOffset += 16 }},
		{"size", func(q *Profile) { q.Funcs[1].Size++ }},
		{"block offset", func(q *Profile) { q.Funcs[0].Blocks[1].Offset++ }},
		{"block count", func(q *Profile) { q.Funcs[0].Blocks = q.Funcs[0].Blocks[:1] }},
		{"raw data offset", func(q *Profile) { q.Funcs[1].RawOffset++ }},
		{"function count", func(q *Profile) { q.Funcs = q.Funcs[:1] }},
	}
	for _, tt := range changed {
		q := a.Clone()
		tt.mutate(q)
		if _, err := a.Merge(q); !errors.Is(err, ErrMismatch) {
			t.Errorf("Merge, %s changed: %v", tt.name, err)
		}
		if err := q.CheckMap(m); !errors.Is(err, ErrMismatch) {
			t.Errorf("CheckMap, %s changed: %v", tt.name, err)
		}
	}
	if err := a.CheckMap(m); err != nil {
		t.Errorf("CheckMap of the map's own profile: %v", err)
	}
}

// TestMergeRawNeverCalled merges raw data as the MIP runtime leaves it,
// written byte by byte: a function never called keeps CallCount and
// Timestamp at 0xffffffff, is not covered and adds nothing; one counter
// alone at 0xffffffff is corrupt.
func TestMergeRawNeverCalled(t *testing.T) {
	m := sampleMap()
	m.ProfileType |= FunctionCallCount | FunctionTimestamp
	m.Funcs[1].RawDataPC = m.Funcs[1].RawSectionPC + 0x24
	base := NewProfile(m)
	raw := func(fooCalls, fooStamp, barCalls, barStamp uint32) *Raw {
		le := binary.LittleEndian
		b := appendHeader(nil, Header{FileType: RawFile, ProfileType: m.ProfileType, ModuleHash: m.ModuleHash})
		b = le.AppendUint32(le.AppendUint32(b, fooCalls), fooStamp)
		b = append(b, 0xff, 0xff, 0xff, 0xff) // _Z3foov's two blocks, padding
		b = le.AppendUint32(le.AppendUint32(b, barCalls), barStamp)
		r, err := DecodeRaw(b)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	const never = 0xffffffff
	p := base
	for _, r := range []*Raw{raw(never, never, 3, 1), raw(never, never, never, never), raw(2, 1, never, never)} {
		var err error
		if p, err = p.MergeRaw(r); err != nil {
			t.Fatal(err)
		}
	}
	foo, bar := p.Funcs[0], p.Funcs[1]
	if foo.CallCount != 2 || foo.TimestampSum != 1 || foo.MergeCount != 1 {
		t.Errorf("_Z3foov: calls %d, timestamps %d, merges %d; want 2, 1, 1", foo.CallCount, foo.TimestampSum, foo.MergeCount)
	}
	if bar.CallCount != 3 || bar.TimestampSum != 1 || bar.MergeCount != 1 {
		t.Errorf("bar: calls %d, timestamps %d, merges %d; want 3, 1, 1", bar.CallCount, bar.TimestampSum, bar.MergeCount)
	}
	// Twice never called: not covered, nothing added.
	q, err := base.MergeRaw(raw(never, never, never, never))
	if err == nil {
		q, err = q.MergeRaw(raw(never, never, never, never))
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range q.Funcs {
		if f.Covered() || f.CallCount != 0 || f.TimestampSum != 0 || f.MergeCount != 0 {
			t.Errorf("%s never called: covered %v, calls %d, timestamps %d, merges %d", f.Name, f.Covered(), f.CallCount, f.TimestampSum, f.MergeCount)
		}
	}
	for _, r := range []*Raw{raw(never, 4, never, never), raw(never, never, 5, never)} {
		_, err := base.MergeRaw(r)
		var de *cursor.DecodeError
		if !errors.Is(err, cursor.ErrCorrupt) || !errors.As(err, &de) {
			t.Errorf("one counter at 0xffffffff: %v, want a corrupt-data DecodeError", err)
		}
	}
}
