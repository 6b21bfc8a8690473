package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendFuncJSON: the hand-written writer formats exactly as
// json.MarshalIndent does, escapes included.
func TestAppendFuncJSON(t *testing.T) {
	odd := "a<b>&c\"d\\e\n\t\x01\u2028\u2029\xffé"
	funcs := []jsonFunc{
		{Name: "f", Entry: 1, Size: 2, Fragments: []jsonFragment{{Start: 1, End: 3, Kind: "hot", BranchAddrs: []uint64{}, Sources: []string{"symbols"}}}, Sources: []string{"symbols"}},
		{Name: odd, SourceName: odd, Aliases: []string{"x", odd}, Entry: 1 << 63, Size: 9, CompUnit: odd, File: odd, Line: 7,
			Fragments: []jsonFragment{
				{Start: 5, End: 9, Symbol: odd, Kind: "cold", BranchAddr: 4, BranchAddrs: []uint64{4, 1<<64 - 1}, Sources: []string{"symbols", "dwarf"}},
				{Start: 9, End: 10, Kind: "part", BranchAddrs: []uint64{}},
			},
			Sources: nil, Conflicts: []jsonConflict{{Addr: 3, Detail: odd}, {Addr: 4, Detail: ""}}},
	}
	want, err := json.MarshalIndent(funcs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := []byte("[")
	for i, f := range funcs {
		if i > 0 {
			got = append(got, ',')
		}
		got = appendFuncJSON(got, f)
	}
	got = append(got, "\n]"...)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("(-encoding/json +ours):\n%s", diff)
	}
}
