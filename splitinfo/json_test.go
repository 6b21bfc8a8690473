package splitinfo

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The shape of `splitdbg funcs -json` as encoding/json would write it:
// the reference AppendJSON is checked against.
type jsonFunc struct {
	Name       string         `json:"name"`
	SourceName string         `json:"source_name,omitempty"`
	Aliases    []string       `json:"aliases,omitempty"`
	Entry      uint64         `json:"entry"`
	Size       uint64         `json:"size"`
	CompUnit   string         `json:"compile_unit,omitempty"`
	File       string         `json:"file,omitempty"`
	Line       int            `json:"line,omitempty"`
	Fragments  []jsonFragment `json:"fragments"`
	Sources    []string       `json:"sources"`
	Conflicts  []jsonConflict `json:"conflicts,omitempty"`
}

type jsonFragment struct {
	Start       uint64   `json:"start"`
	End         uint64   `json:"end"`
	Symbol      string   `json:"symbol"`
	Kind        string   `json:"kind"`
	BranchAddr  uint64   `json:"branch_addr"`
	BranchAddrs []uint64 `json:"branch_addrs"`
	Sources     []string `json:"sources"`
}

type jsonConflict struct {
	Addr   uint64 `json:"addr"`
	Detail string `json:"detail"`
}

func toJSONFunc(p *Proc) jsonFunc {
	j := jsonFunc{Name: p.Name, SourceName: p.SourceName, Aliases: p.Aliases, Entry: p.Entry, Size: p.Size(),
		CompUnit: p.CompUnit, File: p.File, Line: p.Line, Sources: p.Sources.Names(),
		Fragments: []jsonFragment{}}
	for _, f := range p.Fragments {
		sites := f.BranchSites
		if sites == nil {
			sites = []uint64{}
		}
		j.Fragments = append(j.Fragments, jsonFragment{f.Start, f.End, f.Symbol, f.Kind.String(), f.BranchAddr, sites, f.Sources.Names()})
	}
	for _, c := range p.Conflicts {
		j.Conflicts = append(j.Conflicts, jsonConflict(c))
	}
	return j
}

// TestAppendJSON: the hand-written writer formats exactly as
// json.MarshalIndent does, escapes included.
func TestAppendJSON(t *testing.T) {
	odd := "a<b>&c\"d\\e\n\t\b\f\x01\u2028\u2029\xffé"
	procs := []Proc{
		{Name: "f", Entry: 1, Fragments: []Fragment{{Range: Range{1, 3}, Kind: Hot, Sources: FromSymbols}}, Sources: FromSymbols},
		{Name: odd, SourceName: odd, Aliases: []string{"x", odd}, Entry: 1 << 62, CompUnit: odd, File: odd, Line: 7,
			Fragments: []Fragment{
				{Range: Range{1 << 62, 1<<62 + 4}, Symbol: odd, Kind: Hot, Sources: FromSymbols | FromDWARF | FromBAT},
				{Range: Range{5, 9}, Symbol: odd, Kind: Cold, BranchAddr: 4, BranchSites: []uint64{4, 1<<64 - 1}, Sources: FromSymbols | FromMIP | FromNative},
				{Range: Range{9, 10}, Kind: Part},
			},
			Conflicts: []Conflict{{Addr: 3, Detail: odd}, {Addr: 4, Detail: ""}}},
		{Name: "g", Entry: 2, Fragments: []Fragment{{Range: Range{2, 3}, Kind: Hot, BranchSites: []uint64{}}}, Sources: FromBBAddrMap,
			Conflicts: []Conflict{{Addr: 2, Detail: "one"}}},
	}
	var funcs []jsonFunc
	got := []byte("[")
	for i := range procs {
		funcs = append(funcs, toJSONFunc(&procs[i]))
		if i > 0 {
			got = append(got, ',')
		}
		got = procs[i].AppendJSON(got)
	}
	got = append(got, "\n]"...)
	want, err := json.MarshalIndent(funcs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("(-encoding/json +ours):\n%s", diff)
	}
}
