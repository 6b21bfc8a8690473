package mip

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestReport: a profile of the test program merged from a raw profile
// file, its tally, and its report with and without the binary.
func TestReport(t *testing.T) {
	b, err := Open(testbin.Path(t, "mip/mip"))
	if err != nil {
		t.Fatal(err)
	}
	p := NewProfile(b.Map)
	if err := b.CheckProfile(p); err != nil {
		t.Fatal(err)
	}
	other := NewProfile(b.Map)
	other.ModuleHash++
	if _, err := OpenFor(testbin.Path(t, "mip/mip"), other); !errors.Is(err, ErrMismatch) {
		t.Errorf("OpenFor with a profile of another build: %v", err)
	}
	// A run that covered the first function and its first block.
	recs := make([]RawRecord, len(b.Map.Funcs))
	for i, f := range b.Map.Funcs {
		recs[i].Blocks = make([]bool, len(f.BlockOffsets))
	}
	recs[0].Covered = true
	if len(recs[0].Blocks) > 0 {
		recs[0].Blocks[0] = true
	}
	raw := filepath.Join(t.TempDir(), "run.mipraw")
	if err := os.WriteFile(raw, AppendRaw(nil, b.Map.Header, recs), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(t.TempDir(), "p.mip")
	if err := os.WriteFile(prof, AppendProfile(nil, p), 0o644); err != nil {
		t.Fatal(err)
	}
	merged, raws, profiles, err := p.MergeFiles([]string{raw, prof})
	if err != nil || raws != 1 || profiles != 1 {
		t.Fatalf("MergeFiles: %d raw, %d profiles, %v", raws, profiles, err)
	}
	funcs, blocks, coveredBlocks := merged.Tally()
	wantBlocks := 0
	for _, f := range b.Map.Funcs {
		wantBlocks += len(f.BlockOffsets)
	}
	if funcs != 1 || blocks != wantBlocks || coveredBlocks != min(1, len(recs[0].Blocks)) {
		t.Errorf("Tally = %d, %d, %d; want 1, %d, %d", funcs, blocks, coveredBlocks, wantBlocks, min(1, len(recs[0].Blocks)))
	}
	if _, _, _, err := p.MergeFiles([]string{filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("MergeFiles of a missing file: no error")
	}

	r := merged.Report(false, b.RawAddr, func(addr uint64) (string, int, bool) { return "m.c", int(addr % 100), true })
	if len(r.Functions) != len(merged.Funcs) {
		t.Fatalf("%d functions reported, %d in the profile", len(r.Functions), len(merged.Funcs))
	}
	for i, f := range r.Functions {
		entry := b.Addr(&b.Map.Funcs[i])
		if f.Addr == nil || *f.Addr != entry || f.File != "m.c" || f.Line != int(entry%100) || len(f.Blocks) != len(b.Map.Funcs[i].BlockOffsets) {
			t.Errorf("%s: %+v, entry %#x", f.Name, f, entry)
		}
		for k, bl := range f.Blocks {
			if want := BlockAddr(entry, bl.Offset); bl.Index != k+1 || bl.Addr == nil || *bl.Addr != want {
				t.Errorf("%s block %d: %+v, want address %#x", f.Name, k, bl, want)
			}
		}
	}
	bare := merged.Report(true, 0, nil)
	if len(bare.Functions) != 1 || bare.Functions[0].Addr != nil || !bare.Functions[0].Covered {
		t.Errorf("covered only, without the binary: %+v", bare.Functions)
	}
	var text strings.Builder
	if err := bare.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(text.String(), "\n"); !strings.HasSuffix(first, "1 of "+strconv.Itoa(len(merged.Funcs))+" functions covered") {
		t.Errorf("summary line %q", first)
	}
}
