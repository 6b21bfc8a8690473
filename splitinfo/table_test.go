package splitinfo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFragmentName(t *testing.T) {
	tests := []struct {
		name, parent string
		kind         Kind
		ok           bool
	}{
		{"foo.cold", "foo", Cold, true},
		{"foo.cold.3", "foo", Cold, true},
		{"foo.cold.cold.0", "foo.cold", Cold, true},
		{"foo.warm", "foo", Warm, true},
		{"foo.part.0", "foo", Part, true},
		{"foo.part.0.cold", "foo.part.0", Cold, true},
		{"foo.__part.12", "foo", Part, true},
		{"foo.constprop.0.cold", "foo.constprop.0", Cold, true},
		{"foo", "", 0, false},
		{"foo.constprop.0", "", 0, false},
		{"foo.isra.1", "", 0, false},
		{"foo.part", "", 0, false},
		{"foo.part.x", "", 0, false},
		{".cold", "", 0, false},
		{"cold", "", 0, false},
		{"main.main.func1", "", 0, false},
		{"x_cgo_munmap.cold", "x_cgo_munmap", Cold, true},
	}
	for _, tt := range tests {
		parent, kind, ok := fragmentName(tt.name)
		if parent != tt.parent || kind != tt.kind || ok != tt.ok {
			t.Errorf("fragmentName(%q) = %q, %v, %v; want %q, %v, %v", tt.name, parent, kind, ok, tt.parent, tt.kind, tt.ok)
		}
	}
}

// testProcs is foo (hot at 0x1000, cold below the entry at 0x100, a part
// above at 0x9000) and bar (one fragment), and a static helper twice.
func testProcs() []Proc {
	return []Proc{
		{Name: "foo", Entry: 0x1000, Fragments: []Fragment{
			{Range: Range{0x1000, 0x1040}, Symbol: "foo", Kind: Hot},
			{Range: Range{0x100, 0x110}, Symbol: "foo.cold", Kind: Cold, BranchAddr: 0x1010, BranchSites: []uint64{0x1010}},
			{Range: Range{0x9000, 0x9008}, Kind: Part},
		}},
		{Name: "bar", Entry: 0x1040, Fragments: []Fragment{{Range: Range{0x1040, 0x1080}, Symbol: "bar"}}},
		{Name: "helper", CompUnit: "a.c", Local: true, Entry: 0x2000, Fragments: []Fragment{{Range: Range{0x2000, 0x2010}, Symbol: "helper"}}},
		{Name: "helper", CompUnit: "b.c", Local: true, Entry: 0x3000, Fragments: []Fragment{{Range: Range{0x3000, 0x3010}, Symbol: "helper"}}},
	}
}

func TestLookup(t *testing.T) {
	tab, err := NewTable(testProcs())
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Found  bool
		Name   string
		Frag   int
		Offset uint64
	}
	tests := []struct {
		addr uint64
		want result
	}{
		{0xff, result{}},
		{0x100, result{true, "foo", 1, 0x40}},
		{0x10f, result{true, "foo", 1, 0x4f}},
		{0x110, result{}},
		{0x1000, result{true, "foo", 0, 0}},
		{0x103f, result{true, "foo", 0, 0x3f}},
		{0x1040, result{true, "bar", 0, 0}},
		{0x107f, result{true, "bar", 0, 0x3f}},
		{0x1080, result{}},
		{0x9004, result{true, "foo", 2, 0x54}},
		{0x3008, result{true, "helper", 0, 8}},
		{^uint64(0), result{}},
	}
	for _, tt := range tests {
		loc, ok := tab.Lookup(tt.addr)
		got := result{Found: ok}
		if ok {
			got = result{true, loc.Proc.Name, loc.Frag, loc.Offset}
			if off, ok := loc.Proc.LogicalOffset(tt.addr); !ok || off != loc.Offset {
				t.Errorf("LogicalOffset(%#x) = %#x, %v; Lookup says %#x", tt.addr, off, ok, loc.Offset)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Lookup(%#x) (-want +got):\n%s", tt.addr, diff)
		}
	}
	foo := tab.ByName("foo")
	if len(foo) != 1 || foo[0].Size() != 0x40+0x10+0x8 {
		t.Fatalf("ByName(foo) = %v", foo)
	}
	if got, want := slices.Collect(foo[0].Ranges()), []Range{{0x1000, 0x1040}, {0x100, 0x110}, {0x9000, 0x9008}}; !slices.Equal(got, want) {
		t.Errorf("Ranges = %x, want %x", got, want)
	}
	if got := foo[0].Fragments[1].Record(); got != (SplitRecord{BranchAddr: 0x1010, VAddr: 0x100, Size: 0x10}) {
		t.Errorf("Record = %+v", got)
	}
	var units []string
	for _, p := range tab.ByName("helper") {
		units = append(units, p.CompUnit)
	}
	if !slices.Equal(units, []string{"a.c", "b.c"}) {
		t.Errorf("ByName(helper) units = %q, want both a.c and b.c", units)
	}
	if got := tab.ByName("C.bar"); len(got) != 1 || got[0].Name != "bar" {
		t.Errorf(`ByName("C.bar") = %v`, got)
	}
	if got := tab.ByName("nope"); len(got) != 0 {
		t.Errorf(`ByName("nope") = %v`, got)
	}
}

func TestNewTableOverlap(t *testing.T) {
	procs := []Proc{
		{Name: "a", Entry: 0x10, Fragments: []Fragment{{Range: Range{0x10, 0x30}}}},
		{Name: "b", Entry: 0x20, Fragments: []Fragment{{Range: Range{0x20, 0x40}}}},
		{Name: "c", Entry: 0x50, Fragments: []Fragment{{Range: Range{0x50, 0x60}}, {Range: Range{0x12, 0x14}}}},
	}
	tab, err := NewTable(procs)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[uint64]string{0x10: "a", 0x13: "a", 0x2f: "a", 0x30: "b", 0x3f: "b", 0x55: "c"} {
		loc, ok := tab.Lookup(addr)
		if !ok || loc.Proc.Name != want {
			t.Errorf("Lookup(%#x) = %v, want %s", addr, loc.Proc, want)
		}
	}
	if loc, _ := tab.Lookup(0x30); loc.Offset != 0x10 {
		t.Errorf("clipped span offset = %#x, want 0x10", loc.Offset)
	}
	for _, name := range []string{"a", "b", "c"} {
		if p := tab.ByName(name)[0]; len(p.Conflicts) == 0 {
			t.Errorf("%s: overlap not recorded as a conflict", name)
		}
	}
}

func TestNewTableRejects(t *testing.T) {
	for _, procs := range [][]Proc{
		{{Name: "nofrag", Entry: 1}},
		{{Name: "entry outside", Entry: 5, Fragments: []Fragment{{Range: Range{0x10, 0x20}}}}},
		{{Name: "empty", Entry: 0x10, Fragments: []Fragment{{Range: Range{0x10, 0x20}}, {Range: Range{0x30, 0x30}}}}},
	} {
		if _, err := NewTable(procs); err == nil {
			t.Errorf("NewTable(%s) succeeded", procs[0].Name)
		}
	}
}

// syntheticTable has n fragments: procedures of 1 to 3 fragments, moved
// fragments far below the hot ones, as GCC lays them out.
func syntheticTable(tb testing.TB, n int) *Table {
	r := rand.New(rand.NewPCG(1, 2))
	var procs []Proc
	hot, cold := uint64(0x10_000_000), uint64(0x1000)
	for frags := 0; frags < n; {
		k := 1 + r.IntN(3)
		if frags+k > n {
			k = n - frags
		}
		size := 16 + uint64(r.IntN(500))
		p := Proc{Name: fmt.Sprintf("f%d", len(procs)), Entry: hot}
		p.Fragments = append(p.Fragments, Fragment{Range: Range{hot, hot + size}})
		hot += size + uint64(r.IntN(16))
		for j := 1; j < k; j++ {
			cs := 8 + uint64(r.IntN(100))
			p.Fragments = append(p.Fragments, Fragment{Range: Range{cold, cold + cs}, Kind: Cold})
			cold += cs
		}
		frags += k
		procs = append(procs, p)
	}
	if cold >= 0x10_000_000 {
		tb.Fatal("synthetic cold area overflowed into hot area")
	}
	t, err := NewTable(procs)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func TestSyntheticLookupAgreesWithScan(t *testing.T) {
	tab := syntheticTable(t, 5000)
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		p := tab.Proc(r.IntN(tab.Len()))
		f := &p.Fragments[r.IntN(len(p.Fragments))]
		addr := f.Start + uint64(r.Int64N(int64(f.Len())))
		loc, ok := tab.Lookup(addr)
		if !ok || loc.Proc != p || &loc.Proc.Fragments[loc.Frag] != f {
			t.Fatalf("Lookup(%#x) = %v %v, want %s", addr, loc, ok, p.Name)
		}
	}
}

// BenchmarkLookup1MFragments looks up random addresses in a table of a
// million fragments: every lookup misses the caches.
func BenchmarkLookup1MFragments(b *testing.B) { benchmarkLookup(b, false) }

// BenchmarkLookup1MFragmentsSorted looks up the same addresses in
// ascending order, as a profiler aggregating samples by address does.
func BenchmarkLookup1MFragmentsSorted(b *testing.B) { benchmarkLookup(b, true) }

func benchmarkLookup(b *testing.B, sorted bool) {
	tab := syntheticTable(b, 1_000_000)
	r := rand.New(rand.NewPCG(5, 6))
	addrs := make([]uint64, 1<<16)
	for i := range addrs {
		p := tab.Proc(r.IntN(tab.Len()))
		f := &p.Fragments[r.IntN(len(p.Fragments))]
		addrs[i] = f.Start + uint64(r.Int64N(int64(f.Len())))
	}
	if sorted {
		slices.Sort(addrs)
	}
	b.ReportAllocs()
	b.ResetTimer()
	found := 0
	for i := 0; b.Loop(); i++ {
		if _, ok := tab.Lookup(addrs[i&(len(addrs)-1)]); ok {
			found++
		}
	}
	if found != b.N {
		b.Fatalf("found %d of %d", found, b.N)
	}
}
