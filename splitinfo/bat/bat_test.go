package bat

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/elfx"
)

// initDesc is the note descriptor that BOLT 19 and 22 write for _init alone, cut from
// testdata/bin/bolt22 (hot table of 1 function, empty cold table).
var initDesc = []byte{
	0x01,                   // NumHot
	0x80, 0x80, 0x80, 0x02, // Address delta: 0x400000
	0xb7, 0xe6, 0x5d, 0x99, 0x63, 0x7c, 0x59, 0xa4, // FuncHash
	0x03, // NumBlocks
	0x00, // NumSecEntries
	0x05, // NumEntries
	0x02, // EqualElems
	0x02, // BranchEntries: entry 1
	// entry 0: out +0 (equal: in 0, block)
	0x00, 0x00, 0x00, 0x53, 0x49, 0x0a, 0x03, 0x00, 0xfb, 0x00,
	// entry 1: out +0xe (equal: in 0xe, branch)
	0x0e,
	// entry 2: out +2 = 0x10, in delta +7 → 0x24>>1 = 0x12, block 2
	0x02, 0x07, 0x12, 0x00, 0x82, 0xb7, 0x09, 0xe3, 0x27, 0x00, 0x02,
	// entry 3: out 0x14, in +9 → 0x2d: 0x16, branch
	0x04, 0x09,
	// entry 4: out 0x15, in -13 → 0x20: 0x10, block 2-1 = 1
	0x01, 0x73, 0x10, 0x00, 0xa3, 0xe8, 0xd6, 0xaa, 0xce, 0xd5,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
	0x00, // NumCold
}

func noteOf(desc []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 5)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
	b = binary.LittleEndian.AppendUint32(b, NoteType)
	b = append(b, "BOLT\x00\x00\x00\x00"...)
	return append(b, desc...)
}

var cmpFunc = cmp.Options{cmpopts.IgnoreUnexported(Func{}), cmpopts.EquateEmpty()}

func TestDecodeInit(t *testing.T) {
	tab, err := Decode(noteOf(initDesc))
	if err != nil {
		t.Fatal(err)
	}
	want := Func{
		Addr: 0x400000, Hash: 0xa4597c63995de6b7, NumBlocks: 3, EqualElems: 2,
		Entries: []Entry{
			{OutputOffset: 0, InputOffset: 0, BlockIndex: 0, BlockHash: 0xfb00030a49530000},
			{OutputOffset: 0xe, InputOffset: 0xe, Branch: true},
			{OutputOffset: 0x10, InputOffset: 0x12, BlockIndex: 2, BlockHash: 0x0027e309b7820012},
			{OutputOffset: 0x14, InputOffset: 0x16, Branch: true},
			{OutputOffset: 0x15, InputOffset: 0x10, BlockIndex: 1, BlockHash: 0xd5ceaad6e8a30010},
		},
	}
	if tab.NumHot() != 1 || tab.NumCold() != 0 {
		t.Fatalf("%d hot, %d cold; want 1, 0", tab.NumHot(), tab.NumCold())
	}
	f := tab.Func(0x400000)
	if f == nil {
		t.Fatal("no function at 0x400000")
	}
	if diff := cmp.Diff(want, *f, cmpFunc); diff != "" {
		t.Errorf("_init (-want +got):\n%s", diff)
	}
	if f.Parent() != f || len(f.Fragments()) != 1 || f.Fragments()[0] != f {
		t.Errorf("hot function: Parent %p, Fragments %v; want itself", f.Parent(), f.Fragments())
	}
}

// synthetic is foo (hot, with an emptied block and deleted blocks at its
// end, size 0x40), bar (hot, secondary entry points) and foo.cold.0.
func synthetic() (hot, cold []testFunc) {
	hot = []testFunc{
		{addr: 0x1000, hash: 0x1111, numBlocks: 7, entries: []Entry{
			{OutputOffset: 0, InputOffset: 0, BlockIndex: 0, BlockHash: blockHash(0)},
			{OutputOffset: 2, InputOffset: 2, Branch: true},
			{OutputOffset: 8, InputOffset: 0x10, BlockIndex: 2, BlockHash: blockHash(0x10)},
			{OutputOffset: 0x10, InputOffset: 0x20, BlockIndex: 3, BlockHash: blockHash(0x20)}, // emptied
			{OutputOffset: 0x10, InputOffset: 0x24, BlockIndex: 4, BlockHash: blockHash(0x24)}, // its successor
			{OutputOffset: 0x18, InputOffset: 0x2c, Branch: true},
			{OutputOffset: 0x40, InputOffset: 0x30, BlockIndex: 5, BlockHash: blockHash(0x30)}, // deleted
			{OutputOffset: 0x40, InputOffset: 0x34, BlockIndex: 6, BlockHash: blockHash(0x34)}, // deleted
		}},
		{addr: 0x1040, hash: 0x2222, numBlocks: 1, sec: []uint32{4, 0x20}, entries: []Entry{
			{OutputOffset: 0, InputOffset: 0, BlockHash: blockHash(0)},
			{OutputOffset: 0x1f, InputOffset: 0x1f, Branch: true},
		}},
	}
	cold = []testFunc{
		{addr: 0x800, parent: 0, entries: []Entry{ // below its parent
			{OutputOffset: 0, InputOffset: 4, BlockIndex: 1, BlockHash: blockHash(4)},
			{OutputOffset: 6, InputOffset: 10, Branch: true},
			{OutputOffset: 8, InputOffset: 0x38, BlockIndex: 7, BlockHash: blockHash(0x38)},
		}},
	}
	return hot, cold
}

func TestDecodeSynthetic(t *testing.T) {
	hot, cold := synthetic()
	tab, err := Decode(appendNote(nil, hot, cold))
	if err != nil {
		t.Fatal(err)
	}
	var got []Func
	for f := range tab.All() {
		got = append(got, *f)
	}
	want := []Func{
		{Addr: 0x1000, Hash: 0x1111, NumBlocks: 7, EqualElems: 2, Entries: hot[0].entries},
		{Addr: 0x1040, Hash: 0x2222, NumBlocks: 1, EqualElems: 2, Index: 1, Entries: hot[1].entries, SecondaryEntries: []uint32{4, 0x20}},
		{Addr: 0x800, Cold: true, InputSkew: 4, EqualElems: 2, Entries: cold[0].entries},
	}
	if diff := cmp.Diff(want, got, cmpFunc); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	foo, c := tab.Func(0x1000), tab.Func(0x800)
	if c.Parent() != foo {
		t.Errorf("cold parent = %v, want foo", c.Parent())
	}
	if fr := foo.Fragments(); len(fr) != 2 || fr[0] != foo || fr[1] != c {
		t.Errorf("foo.Fragments() = %v, want [foo foo.cold.0]", fr)
	}
	if fr := c.Fragments(); len(fr) != 2 || fr[0] != foo {
		t.Errorf("cold.Fragments() = %v, want foo's", fr)
	}
	if tab.Func(0x1001) != nil {
		t.Error("Func(0x1001) != nil")
	}
}

func TestTranslate(t *testing.T) {
	hot, cold := synthetic()
	tab, err := Decode(appendNote(nil, hot, cold))
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		Frag, Func uint64
		Off        uint64
		Entry      int
		Branch     bool
	}
	tests := []struct {
		addr   uint64
		branch bool
		want   res
		ok     bool
	}{
		{0x1000, false, res{0x1000, 0x1000, 0, 0, false}, true},
		{0x1001, false, res{0x1000, 0x1000, 1, 0, false}, true},
		{0x1001, true, res{0x1000, 0x1000, 0, 0, false}, true}, // branch source: the entry's offset
		{0x1002, true, res{0x1000, 0x1000, 2, 1, true}, true},
		{0x1005, false, res{0x1000, 0x1000, 5, 1, true}, true},
		{0x1005, true, res{0x1000, 0x1000, 2, 1, true}, true},
		{0x100a, false, res{0x1000, 0x1000, 0x12, 2, false}, true},
		{0x1010, false, res{0x1000, 0x1000, 0x24, 4, false}, true}, // last of equal offsets wins
		{0x1013, true, res{0x1000, 0x1000, 0x24, 4, false}, true},
		{0x1018, true, res{0x1000, 0x1000, 0x2c, 5, true}, true},
		{0x1030, false, res{0x1000, 0x1000, 0x44, 5, true}, true},
		// Without symbols, sizes are unknown: foo extends to bar.
		{0x103f, false, res{0x1000, 0x1000, 0x53, 5, true}, true},
		{0x1040, false, res{0x1040, 0x1040, 0, 0, false}, true},
		{0x1060, true, res{0x1040, 0x1040, 0x1f, 1, true}, true},
		{0x800, false, res{0x800, 0x1000, 4, 0, false}, true},
		{0x807, false, res{0x800, 0x1000, 11, 1, true}, true},
		{0x807, true, res{0x800, 0x1000, 10, 1, true}, true},
		{0x900, false, res{0x800, 0x1000, 0x130, 2, false}, true},
		{0x7ff, false, res{}, false},
	}
	for _, tt := range tests {
		loc, ok := tab.Translate(tt.addr, tt.branch)
		var got res
		if ok {
			got = res{loc.Fragment.Addr, loc.Function.Addr, loc.InputOffset, loc.Entry, loc.Branch}
		}
		if ok != tt.ok || got != tt.want {
			t.Errorf("Translate(%#x, %v) = %+v, %v; want %+v, %v", tt.addr, tt.branch, got, ok, tt.want, tt.ok)
		}
	}

	// With sizes (as FromELF sets them), foo ends at 0x1040 and its
	// entries at 0x40 are deleted blocks.
	tab.attachSymbols([]elfx.Symbol{
		{Name: "bar", Value: 0x1040, Size: 0x20, Type: elf.STT_FUNC},
		{Name: "foo", Value: 0x1000, Size: 0x40, Type: elf.STT_FUNC},
		{Name: "foo.cold.0", Value: 0x800, Size: 0x10, Type: elf.STT_FUNC},
		{Name: "foo_alias", Value: 0x1000, Size: 0x40, Type: elf.STT_NOTYPE},
	})
	if n := tab.Func(0x1000).Name; n != "foo" {
		t.Errorf("name of foo = %q", n)
	}
	if _, ok := tab.Translate(0x1060, false); ok {
		t.Error("Translate(0x1060) past bar's end: ok")
	}
	if _, ok := tab.Translate(0x810, false); ok {
		t.Error("Translate(0x810) past foo.cold.0's end: ok")
	}
	var deleted []uint32
	for _, e := range tab.Func(0x1000).Entries {
		if e.Deleted {
			deleted = append(deleted, e.InputOffset)
		}
	}
	if diff := cmp.Diff([]uint32{0x30, 0x34}, deleted); diff != "" {
		t.Errorf("deleted blocks (-want +got):\n%s", diff)
	}

	// A fragment whose first entry is not at offset 0: BOLT returns the
	// offset unchanged.
	e := Entry{OutputOffset: 4, InputOffset: 8}
	f := &Func{Entries: []Entry{e}, keys: []uint64{packKey(&e)}}
	if off, i := f.Translate(2, false); off != 2 || i != -1 {
		t.Errorf("Translate before the first entry = %#x, %d; want 2, -1", off, i)
	}
}

func TestFallthroughs(t *testing.T) {
	hot, cold := synthetic()
	tab, err := Decode(appendNote(nil, hot, cold))
	if err != nil {
		t.Fatal(err)
	}
	foo := tab.Func(0x1000)
	tests := []struct {
		from, to uint64
		want     [][2]int
	}{
		{0x1003, 0x1012, [][2]int{{0, 2}, {2, 3}, {3, 4}}},
		{0x1008, 0x100a, nil},
		{0x1008, 0x1010, [][2]int{{2, 3}, {3, 4}}},
		{0x1000, 0x1039, [][2]int{{0, 2}, {2, 3}, {3, 4}}}, // ends after a branch entry
		{0x0fff, 0x1010, nil},
		{0x1012, 0x1008, nil},
		{0x1000, 0x1000, nil},
		{0x1000, 0x1001, nil},
	}
	for _, tt := range tests {
		var got [][2]int
		for a, b := range foo.Fallthroughs(tt.from, tt.to) {
			got = append(got, [2]int{a, b})
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Fallthroughs(%#x, %#x) (-want +got):\n%s", tt.from, tt.to, diff)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	hot, cold := synthetic()
	good := appendNote(nil, hot, cold)
	if _, err := Decode(good); err != nil {
		t.Fatal(err)
	}
	header := func(namesz, descsz, typ uint32, name string) []byte {
		b := binary.LittleEndian.AppendUint32(nil, namesz)
		b = binary.LittleEndian.AppendUint32(b, descsz)
		b = binary.LittleEndian.AppendUint32(b, typ)
		return append(b, name...)
	}
	desc := func(b ...byte) []byte { return noteOf(b) }
	tests := []struct {
		name string
		in   []byte
		want error
		off  int64
	}{
		{"empty", nil, cursor.ErrTruncated, 0},
		{"short header", good[:10], cursor.ErrTruncated, 8},
		{"wrong type", header(5, 0, 3, "BOLT\x00\x00\x00\x00"), cursor.ErrCorrupt, 8},
		{"wrong owner", header(5, 2, 1, "GNU\x00\x00\x00\x00\x00\x00\x00"), cursor.ErrCorrupt, 12},
		{"huge name", header(0xffffffff, 0, 1, "BOLT"), cursor.ErrTruncated, 12},
		{"desc past end", header(5, 100, 1, "BOLT\x00\x00\x00\x00\x00\x00"), cursor.ErrTruncated, 20},
		{"truncated desc", noteOf(initDesc[:len(initDesc)-3]), cursor.ErrTruncated, 20 + int64(len(initDesc)) - 11},
		{"trailing bytes", noteOf(append(append([]byte{}, initDesc...), 0)), cursor.ErrCorrupt, 20 + int64(len(initDesc))},
		{"hot count too large", desc(0xff, 0xff, 0x03), cursor.ErrCorrupt, 20},
		{"entry count too large", desc(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0), cursor.ErrCorrupt, 32},
		{"equal > entries", desc(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), cursor.ErrCorrupt, 33},
		{"hot index out of range", desc(0, 1, 0, 0, 0, 0, 0), cursor.ErrCorrupt, 23},
		{"hot addresses not increasing", desc(2, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), cursor.ErrCorrupt, 34},
		{"hot and cold at one address", desc(1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0), cursor.ErrCorrupt, 35},
		{"output offset over 4 GiB", desc(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0), cursor.ErrCorrupt, 35},
		{"input offset negative", desc(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x7e, 0), cursor.ErrCorrupt, 34},
		{"LEB overflow", desc(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), cursor.ErrOverflow, 20},
	}
	for _, tt := range tests {
		_, err := Decode(tt.in)
		var de *cursor.DecodeError
		if !errors.Is(err, tt.want) || !errors.As(err, &de) || de.Offset != tt.off || de.Section != SectionName {
			t.Errorf("%s: Decode error %v; want %v at %s+%#x", tt.name, err, tt.want, SectionName, tt.off)
		}
	}
	// Every truncation of a good note fails cleanly.
	for n := range len(good) {
		if _, err := Decode(good[:n]); err == nil {
			t.Errorf("Decode(good[:%d]) succeeded", n)
		}
	}
}
