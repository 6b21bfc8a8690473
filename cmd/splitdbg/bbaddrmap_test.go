package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/internal/demo"
	"github.com/splitdbg/splitdbg/internal/readobjtest"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

// bbFunc is one function of "bbaddrmap -json".
type bbFunc struct {
	Address uint64    `json:"address"`
	Section *string   `json:"section"`
	Name    *string   `json:"name"`
	Version *uint8    `json:"version"`
	Feature *uint16   `json:"feature"`
	Ranges  []bbRange `json:"ranges"`
	PGO     *bbPGO    `json:"pgo"`
}

type bbRange struct {
	BaseAddress uint64    `json:"base_address"`
	Section     *string   `json:"section"`
	NumBlocks   uint32    `json:"num_blocks"`
	Entries     []bbEntry `json:"entries"`
}

type bbEntry struct {
	ID        uint32          `json:"id"`
	Offset    uint32          `json:"offset"`
	Size      uint32          `json:"size"`
	Metadata  map[string]bool `json:"metadata"`
	Callsites []uint32        `json:"callsite_end_offsets"`
	Hash      *uint64         `json:"hash"`
}

type bbPGO struct {
	FuncEntryCount *uint64      `json:"func_entry_count"`
	Entries        []bbPGOEntry `json:"entries"`
}

type bbPGOEntry struct {
	ID           *uint32  `json:"id"`
	Frequency    *uint64  `json:"frequency"`
	PostLinkFreq *uint32  `json:"post_link_frequency"`
	Successors   []bbSucc `json:"successors"`
}

type bbSucc struct {
	ID           uint32  `json:"id"`
	Probability  uint32  `json:"probability"`
	PostLinkFreq *uint32 `json:"post_link_frequency"`
}

func runBBAddrMap(t *testing.T, bin string) []bbFunc {
	t.Helper()
	out, stderr, code := run(t, "", "bbaddrmap", "-json", bin)
	if code != 0 {
		t.Fatalf("bbaddrmap -json %s: exit %d: %s", bin, code, stderr)
	}
	return decode[[]bbFunc](t, out)
}

// TestBBAddrMapContract checks the fields the CLI contract promises on a
// clang-22 map with every optional part clang writes: PGO analysis, block
// hashes, callsite end offsets, a split function.
func TestBBAddrMapContract(t *testing.T) {
	bin := testbin.Path(t, "bbaddrmap/clang22-pgo")
	out, stderr, code := run(t, "", "bbaddrmap", "-json", bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	funcs := decode[[]map[string]any](t, out)
	if len(funcs) == 0 {
		t.Fatal("no functions")
	}
	has := func(what string, m map[string]any, keys ...string) {
		t.Helper()
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s lacks %q: %v", what, k, m)
			}
		}
	}
	split := false
	for _, f := range funcs {
		name := fmt.Sprint(f["name"])
		has(name, f, "address", "name", "version", "feature", "ranges", "pgo")
		ranges := f["ranges"].([]any)
		split = split || len(ranges) > 1
		for _, r := range ranges {
			rm := r.(map[string]any)
			has(name+" range", rm, "base_address", "entries")
			for _, e := range rm["entries"].([]any) {
				em := e.(map[string]any)
				has(name+" entry", em, "id", "offset", "size", "metadata", "callsite_end_offsets", "hash")
				has(name+" metadata", em["metadata"].(map[string]any), "has_return", "has_tail_call", "is_eh_pad", "can_fall_through", "has_indirect_branch")
			}
		}
		pgo := f["pgo"].(map[string]any)
		has(name+" pgo", pgo, "func_entry_count", "entries")
		for _, e := range pgo["entries"].([]any) {
			em := e.(map[string]any)
			has(name+" pgo entry", em, "id", "frequency", "successors")
			for _, s := range em["successors"].([]any) {
				has(name+" successor", s.(map[string]any), "id", "probability")
			}
		}
	}
	if !split {
		t.Error("no function with several ranges")
	}
}

// TestBBAddrMapAllFiles checks, on every test map (every version and
// section type, relocatable and compressed ones included), that the
// command prints every function the decoder reads, with its version,
// features, addresses and block counts, and in relocatable objects the
// section of each address.
func TestBBAddrMapAllFiles(t *testing.T) {
	for _, bin := range testbin.BBAddrMapFiles(t) {
		name, _ := filepath.Rel(testbin.Dir(), bin)
		t.Run(name, func(t *testing.T) {
			want, err := bbaddrmap.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			ef := testbin.OpenELF(t, bin)
			rel := ef.Type == elf.ET_REL
			got := runBBAddrMap(t, bin)
			if len(got) != len(want) {
				t.Fatalf("%d functions, the decoder reads %d", len(got), len(want))
			}
			for i := range want {
				w, g := &want[i], &got[i]
				if g.Version == nil || *g.Version != w.Version || g.Feature == nil || *g.Feature != uint16(w.Features) || g.Address != w.Addr() || g.Name == nil {
					t.Errorf("function %d: version %v feature %v address %#x name %v, want %d %d %#x", i, g.Version, g.Feature, g.Address, g.Name, w.Version, w.Features, w.Addr())
				}
				if len(g.Ranges) != len(w.Ranges) {
					t.Errorf("function %d: %d ranges, want %d", i, len(g.Ranges), len(w.Ranges))
					continue
				}
				for j := range w.Ranges {
					wr, gr := &w.Ranges[j], &g.Ranges[j]
					if gr.BaseAddress != wr.Addr || gr.NumBlocks != wr.NumBlocks || len(gr.Entries) != len(wr.Blocks) {
						t.Errorf("function %d range %d: %#x, %d blocks (%d entries); want %#x, %d (%d)", i, j, gr.BaseAddress, gr.NumBlocks, len(gr.Entries), wr.Addr, wr.NumBlocks, len(wr.Blocks))
					}
					if !rel {
						if gr.Section != nil {
							t.Errorf("function %d range %d: section %q in a linked file", i, j, *gr.Section)
						}
						continue
					}
					wantSec := ""
					if wr.Section > 0 && int(wr.Section) < len(ef.Sections) {
						wantSec = ef.Sections[wr.Section].Name
					}
					if gr.Section == nil || *gr.Section != wantSec {
						t.Errorf("function %d range %d: section %v, want %q", i, j, gr.Section, wantSec)
					}
				}
				if rel && (g.Section == nil || len(g.Ranges) > 0 && g.Ranges[0].Section != nil && *g.Section != *g.Ranges[0].Section) {
					t.Errorf("function %d: section %v, want its first range's", i, g.Section)
				}
			}
		})
	}
}

// readobjFuncs runs llvm-readobj --bb-addr-map --elf-output-style=JSON on
// bin and returns the functions of all its maps, failing the test if it
// warns about anything but unnamed functions.
func readobjFuncs(t *testing.T, tool, bin string) []readobjtest.Func {
	t.Helper()
	funcs, warnings := readobjtest.BBAddrMap(t, tool, bin)
	if warnings != "" {
		t.Fatalf("%s %s warns: %s", tool, bin, warnings)
	}
	return funcs
}

// asReadobj renders a function of ours as llvm-readobj prints it.
func asReadobj(f *bbFunc) readobjtest.Func {
	r := readobjtest.Func{At: f.Address, Name: "<?>"}
	if f.Name != nil && *f.Name != "" {
		r.Name = *f.Name
	}
	for _, rg := range f.Ranges {
		rr := readobjtest.Range{Base: rg.BaseAddress}
		for _, e := range rg.Entries {
			rr.Entries = append(rr.Entries, readobjtest.Entry{
				ID: e.ID, Offset: e.Offset, Size: e.Size, Callsites: e.Callsites, Hash: e.Hash,
				HasReturn:         e.Metadata["has_return"],
				HasTailCall:       e.Metadata["has_tail_call"],
				IsEHPad:           e.Metadata["is_eh_pad"],
				CanFallThrough:    e.Metadata["can_fall_through"],
				HasIndirectBranch: e.Metadata["has_indirect_branch"],
			})
		}
		r.Ranges = append(r.Ranges, rr)
	}
	if f.PGO != nil {
		r.PGO = &readobjtest.PGO{FuncEntryCount: f.PGO.FuncEntryCount}
		for _, e := range f.PGO.Entries {
			b := readobjtest.PGOBlock{Freq: e.Frequency, PostLinkFreq: e.PostLinkFreq}
			for _, s := range e.Successors {
				b.Successors = append(b.Successors, readobjtest.Succ{ID: s.ID, Prob: s.Probability, PostLinkFreq: s.PostLinkFreq})
			}
			r.PGO.Blocks = append(r.PGO.Blocks, b)
		}
	}
	return r
}

// TestBBAddrMapAgainstReadobj compares "bbaddrmap -json" with
// llvm-readobj-22's JSON, field by field, on every test map that
// llvm-readobj-22 reads as we do.
func TestBBAddrMapAgainstReadobj(t *testing.T) {
	tool := testbin.LLVMTool(t, "llvm-readobj", 22)
	compared := 0
	for _, bin := range testbin.BBAddrMapFiles(t) {
		name, _ := filepath.Rel(testbin.Dir(), bin)
		t.Run(name, func(t *testing.T) {
			if reason := readobjDiffers(t, bin); reason != "" {
				t.Skip(reason)
			}
			want := readobjFuncs(t, tool, bin)
			if len(want) == 0 {
				t.Fatal("llvm-readobj-22 printed no function")
			}
			var got []readobjtest.Func
			for _, f := range runBBAddrMap(t, bin) {
				got = append(got, asReadobj(&f))
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("bbaddrmap -json disagrees with llvm-readobj-22 (-readobj +ours):\n%s", diff)
			}
			compared++
		})
	}
	if compared == 0 {
		t.Error("no file compared")
	}
}

// readobjDiffers says why llvm-readobj-22 cannot be compared on bin, or "".
func readobjDiffers(t *testing.T, bin string) string {
	ef := testbin.OpenELF(t, bin)
	if filepath.Base(bin) == "bbaddrmap-rel-sym.o" {
		return "llvm-readobj takes a relocation's addend without its symbol's value (splitinfo/bbaddrmap TestReadobjAddend)"
	}
	for _, s := range ef.Sections {
		switch {
		case s.Type == bbaddrmap.SHT_LLVM_BB_ADDR_MAP_V0:
			return "SHT_LLVM_BB_ADDR_MAP_V0: llvm-readobj-22 skips it"
		case s.Type == elf.SHT_REL && int(s.Info) < len(ef.Sections) && ef.Sections[s.Info].Type == bbaddrmap.SHT_LLVM_BB_ADDR_MAP:
			return "SHT_REL relocations: llvm-readobj cannot read them"
		}
	}
	funcs, err := bbaddrmap.Read(ef)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(funcs, func(f bbaddrmap.Func) bool { return f.Version < 2 }) {
		return "map versions 0 and 1: llvm-readobj-22 rejects them"
	}
	return ""
}

// TestBBAddrMapText checks the readable listing, linked and relocatable.
func TestBBAddrMapText(t *testing.T) {
	out, stderr, code := run(t, "", "bbaddrmap", testbin.Path(t, "clang22-mfs"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"scan  0x10e0  version 5  features MultiBBRange|CallsiteEndOffsets\n",
		"  range 0x147c (scan.cold)  2 blocks\n", "    bb 4    0x147c-0x14a8  -  calls end at +0x1e\n", "HasIndirectBranch"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	out, _, code = run(t, "", "bbaddrmap", testbin.Path(t, "bbaddrmap/clang22-pgo.o"))
	for _, want := range []string{"scan  .text.hot.scan+0x0  version 5", "  pgo  entry count ", " -> bb ", "%)", "hash 0x"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("relocatable listing (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}

// TestBBAddrMapErrors: no map, a corrupt map.
func TestBBAddrMapErrors(t *testing.T) {
	demo := testbin.Path(t, "demo")
	_, stderr, code := run(t, "", "bbaddrmap", demo)
	if code != 1 || !strings.Contains(stderr, demo) || !strings.Contains(stderr, "no basic-block address map") {
		t.Errorf("bbaddrmap on a file without a map: exit %d, %q", code, stderr)
	}
	_, stderr, code = run(t, "", "bbaddrmap")
	if code != 2 || !strings.Contains(stderr, "usage: splitdbg bbaddrmap") {
		t.Errorf("bbaddrmap without BIN: exit %d, %q", code, stderr)
	}
	// The first function's version byte made 9.
	data, err := os.ReadFile(testbin.Path(t, "clang22-mfs"))
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sec := bbaddrmap.Sections(ef)[0]
	data[sec.Offset] = 9
	bad := filepath.Join(t.TempDir(), "badmap")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, "", "bbaddrmap", "-json", bad)
	if code != 1 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("corrupt map: exit %d, %q", code, stderr)
	}
	for _, w := range []string{bad, sec.Name, "+0x0", "version"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("corrupt map: error %q lacks %q", stderr, w)
		}
	}
}

// TestAddrBlocks checks addr's "bb_id" and "bb_metadata" against the block
// offsets llvm-readobj-22 prints: the first and last byte of every block
// of the clang test binaries map to that block.
func TestAddrBlocks(t *testing.T) {
	tool := testbin.LLVMTool(t, "llvm-readobj", 22)
	type result struct {
		Addr       uint64          `json:"addr"`
		Found      bool            `json:"found"`
		BBID       *uint32         `json:"bb_id"`
		BBMetadata map[string]bool `json:"bb_metadata"`
	}
	for _, name := range []string{"clang22-mfs", "clang19-mfs", "clang22-bbsections", "clang19-bbsections", "bbaddrmap/clang22-pgo"} {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			var addrs []string
			type block struct {
				id   uint32
				meta map[string]bool
			}
			var want []block
			for _, f := range readobjFuncs(t, tool, bin) {
				for _, r := range f.Ranges {
					for _, e := range r.Entries {
						if e.Size == 0 {
							continue
						}
						meta := map[string]bool{"has_return": e.HasReturn, "has_tail_call": e.HasTailCall, "is_eh_pad": e.IsEHPad,
							"can_fall_through": e.CanFallThrough, "has_indirect_branch": e.HasIndirectBranch}
						start := r.Base + uint64(e.Offset)
						addrs = append(addrs, hex(start), hex(start+uint64(e.Size)-1))
						want = append(want, block{e.ID, meta}, block{e.ID, meta})
					}
				}
			}
			out, stderr, code := run(t, strings.Join(addrs, "\n"), "addr", "-json", bin, "-")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := decode[[]result](t, out)
			if len(got) != len(want) {
				t.Fatalf("%d answers for %d addresses", len(got), len(want))
			}
			for i, g := range got {
				if !g.Found || g.BBID == nil || *g.BBID != want[i].id || !cmp.Equal(g.BBMetadata, want[i].meta) {
					t.Errorf("%s: found %v bb_id %v %v, want block %d %v", addrs[i], g.Found, g.BBID, g.BBMetadata, want[i].id, want[i].meta)
				}
			}
		})
	}
	// No map, no bb_id.
	out, _, _ := run(t, "", "addr", "-json", testbin.Path(t, "demo"), "0x1250")
	if strings.Contains(out, "bb_id") {
		t.Errorf("bb_id without a map: %s", out)
	}
}

func TestDemoBlocks(t *testing.T) {
	out := demoOutput(t)
	_, blocks, ok := strings.Cut(out, "Basic blocks:")
	if !ok {
		t.Fatalf("demo shows no blocks:\n%s", out)
	}
	wantAll(t, "demo blocks", blocks, "fragment 0 hot ", "fragment 1 cold", "scan.cold", " blocks 4 7\n", "(fragment 1 cold scan.cold) bb 4 at ")
	sameAsTestbin(t, demo.Clang, "clang22-mfs", "internal/demo/data/clang differs from testdata/bin/clang22-mfs: rerun testdata/gen.sh clang22-mfs")
}

func TestNewHelpTexts(t *testing.T) {
	for _, tt := range []struct {
		cmd  string
		want []string
	}{
		{"bbaddrmap", []string{"usage: splitdbg bbaddrmap [-json] BIN", "llvm-readobj", "-json"}},
		{"bat", []string{"usage: splitdbg bat", "-translate", "-branch", "parent", "input_offset"}},
		{"addr", []string{"bb_id", "bb_metadata"}},
		{"demo", []string{"basic-block address map"}},
	} {
		out, _, code := run(t, "", "help", tt.cmd)
		for _, w := range tt.want {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("help %s (exit %d) lacks %q:\n%s", tt.cmd, code, w, out)
			}
		}
	}
}
