// Package readobjtest runs llvm-readobj --bb-addr-map
// --elf-output-style=JSON for the differential tests of the
// SHT_LLVM_BB_ADDR_MAP decoder and of the CLI, and decodes what it prints
// into Go structs. The JSON keys are those llvm-readobj 19 and 22 print
// for SHT_LLVM_BB_ADDR_MAP sections (llvm/tools/llvm-readobj/ELFDumper.cpp).
package readobjtest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// Func is one function of llvm-readobj's --bb-addr-map JSON output.
type Func struct {
	At     uint64  `json:"At"`
	Name   string  `json:"Name"`
	Ranges []Range `json:"BB Ranges"`
	PGO    *PGO    `json:"PGO analyses"`
}

// Range is one address range of a function.
type Range struct {
	Base    uint64  `json:"Base Address"`
	Entries []Entry `json:"BB Entries"`
}

// Entry is one basic block of a range.
type Entry struct {
	ID                uint32   `json:"ID"`
	Offset            uint32   `json:"Offset"`
	Callsites         []uint32 `json:"Callsite End Offsets"`
	Hash              *uint64  `json:"Hash"`
	Size              uint32   `json:"Size"`
	HasReturn         bool     `json:"HasReturn"`
	HasTailCall       bool     `json:"HasTailCall"`
	IsEHPad           bool     `json:"IsEHPad"`
	CanFallThrough    bool     `json:"CanFallThrough"`
	HasIndirectBranch bool     `json:"HasIndirectBranch"`
}

// PGO is a function's PGO analysis.
type PGO struct {
	FuncEntryCount *uint64    `json:"FuncEntryCount"`
	Blocks         []PGOBlock `json:"PGO BB entries"`
}

// PGOBlock is the PGO analysis of one block.
type PGOBlock struct {
	Freq         *uint64 `json:"Frequency"`
	PostLinkFreq *uint32 `json:"PostLink Frequency"`
	Successors   []Succ  `json:"Successors"`
}

// Succ is one outgoing edge of a block.
type Succ struct {
	ID   uint32 `json:"ID"`
	Prob uint32 `json:"Probability"`
	// llvm-readobj calls the edge's post-link count a probability.
	PostLinkFreq *uint32 `json:"PostLink Probability"`
}

// BBAddrMapRaw runs llvm-readobj tool with --bb-addr-map
// --elf-output-style=JSON on bin and returns the JSON object of every
// function of every map it printed, in order, and its warnings: its
// standard error less the lines about functions it cannot name. It fails
// the test if the tool fails or its output is not JSON.
func BBAddrMapRaw(tb testing.TB, tool, bin string) (funcs []json.RawMessage, warnings string) {
	tb.Helper()
	out, stderr := testbin.RunStderr(tb, tool, "--bb-addr-map", "--elf-output-style=JSON", bin)
	for line := range strings.Lines(stderr) {
		if !strings.Contains(line, "could not identify function symbol") {
			warnings += line
		}
	}
	// llvm-readobj repeats the "BBAddrMap" key once per map section, and
	// version 14 nests the file's object under its name: walk the tokens.
	var collect func(raw []byte)
	collect = func(raw []byte) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		tok, err := dec.Token()
		if err != nil {
			tb.Fatalf("%s: %v", bin, err)
		}
		switch tok {
		case json.Delim('['):
			for dec.More() {
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					tb.Fatalf("%s: %v", bin, err)
				}
				collect(v)
			}
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					tb.Fatalf("%s: %v", bin, err)
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					tb.Fatalf("%s: %v", bin, err)
				}
				if k == "BBAddrMap" {
					var fs []struct{ Function json.RawMessage }
					if err := json.Unmarshal(v, &fs); err != nil {
						tb.Fatalf("%s: %v", bin, err)
					}
					for _, f := range fs {
						funcs = append(funcs, f.Function)
					}
				} else if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
					collect(v)
				}
			}
		}
	}
	collect([]byte(out))
	return funcs, warnings
}

// BBAddrMap is BBAddrMapRaw with every function decoded.
func BBAddrMap(tb testing.TB, tool, bin string) (funcs []Func, warnings string) {
	tb.Helper()
	raw, warnings := BBAddrMapRaw(tb, tool, bin)
	for _, r := range raw {
		var f Func
		if err := json.Unmarshal(r, &f); err != nil {
			tb.Fatalf("%s: %v", bin, err)
		}
		funcs = append(funcs, f)
	}
	return funcs, warnings
}
