package bat

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendJSON: every fragment of a real table, and a translation, in
// the bytes encoding/json writes for the same shape.
func TestAppendJSON(t *testing.T) {
	type jsonEntry struct {
		OutputOffset uint32  `json:"output_offset"`
		InputOffset  uint32  `json:"input_offset"`
		Branch       bool    `json:"is_branch"`
		Deleted      *bool   `json:"deleted,omitempty"`
		BlockIndex   *uint32 `json:"block_index,omitempty"`
		BlockHash    *uint64 `json:"block_hash,omitempty"`
	}
	type jsonFunc struct {
		Addr             uint64      `json:"addr"`
		Name             string      `json:"name"`
		Size             uint64      `json:"size"`
		Cold             bool        `json:"cold"`
		Index            int         `json:"index"`
		Parent           string      `json:"parent"`
		ParentAddr       uint64      `json:"parent_addr"`
		Hash             uint64      `json:"hash"`
		NumBlocks        uint32      `json:"num_blocks"`
		InputSkew        uint32      `json:"input_skew"`
		EqualElems       uint32      `json:"equal_elems"`
		Entries          []jsonEntry `json:"entries"`
		SecondaryEntries []uint32    `json:"secondary_entries"`
	}
	tab, err := Open("../../testdata/bin/bolt22-over-gcc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for f := range tab.All() {
		j := jsonFunc{f.Addr, f.Name, f.Size, f.Cold, int(f.Index), f.Parent().Name, f.Parent().Addr, f.Hash,
			uint32(f.NumBlocks), uint32(f.InputSkew), uint32(f.EqualElems), []jsonEntry{}, f.SecondaryEntries}
		if j.SecondaryEntries == nil {
			j.SecondaryEntries = []uint32{}
		}
		for _, e := range f.Entries {
			je := jsonEntry{OutputOffset: uint32(e.OutputOffset), InputOffset: uint32(e.InputOffset), Branch: e.Branch}
			if !e.Branch {
				d, i, h := e.Deleted, uint32(e.BlockIndex), e.BlockHash
				je.Deleted, je.BlockIndex, je.BlockHash = &d, &i, &h
			}
			j.Entries = append(j.Entries, je)
		}
		want, _ := json.Marshal(j)
		if diff := cmp.Diff(string(want), string(f.AppendJSON(nil))); diff != "" {
			t.Errorf("%s (-encoding/json +ours):\n%s", f.Name, diff)
		}
		n++
		if f.Cold {
			addr := f.Addr + f.Size/2
			loc, _ := tab.Translate(addr, false)
			want, _ := json.Marshal(map[string]any{"addr": addr, "found": true, "function": loc.Fragment.Name,
				"parent": loc.Function.Name, "input_offset": loc.InputOffset, "is_branch": loc.Branch})
			var got map[string]any
			if err := json.Unmarshal(tab.AppendTranslation(nil, addr, false, true), &got); err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(got)
			if string(gotJSON) != string(want) {
				t.Errorf("translation of %#x: %s, want %s", addr, gotJSON, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no fragments")
	}
}
