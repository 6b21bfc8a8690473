package bbaddrmap_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/internal/cursor"
	bam "github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

var (
	v2sec  = bam.Section{Name: "m", Type: bam.SHT_LLVM_BB_ADDR_MAP}
	v0sec  = bam.Section{Name: "m", Type: bam.SHT_LLVM_BB_ADDR_MAP_V0}
	sec32  = bam.Section{Name: "m", Type: bam.SHT_LLVM_BB_ADDR_MAP, Class: elf.ELFCLASS32}
	secBE  = bam.Section{Name: "m", Type: bam.SHT_LLVM_BB_ADDR_MAP, ByteOrder: binary.BigEndian}
	secRel = bam.Section{Name: "m", Type: bam.SHT_LLVM_BB_ADDR_MAP, Relocatable: true, Relocs: []bam.Reloc{
		{Offset: 0x12, Section: 3, Value: 0x40}, // out of order on purpose
		{Offset: 2, Section: 2, Value: 0x10},
		{Offset: 0x12, Section: 4, Value: 0x80}, // the last at an offset wins
		{Offset: 0x13, Section: 5, Value: 0x90},
	}}
	secREL = bam.Section{Name: "m", Type: bam.SHT_LLVM_BB_ADDR_MAP, Class: elf.ELFCLASS32, Relocatable: true, Relocs: []bam.Reloc{
		{Offset: 2, Section: 5, Value: 0xfffffff0, REL: true},
	}}
)

const addr1000 = "0010000000000000" // 0x1000, 8 bytes little-endian

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		sec  bam.Section
		data string
		want []bam.Func
	}{
		{"empty", v2sec, "", nil},
		{"v0 type: absolute offsets, implicit IDs", v0sec,
			addr1000 + "03 | 00 0a 08 | 0a 16 08 | 30 03 01",
			[]bam.Func{{Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 3, Blocks: []bam.Block{
				{ID: 0, Offset: 0, Size: 0xa, Metadata: bam.CanFallThrough},
				{ID: 1, Offset: 0xa, Size: 0x16, Metadata: bam.CanFallThrough},
				{ID: 2, Offset: 0x30, Size: 3, Metadata: bam.HasReturn},
			}}}}}},
		{"v0 in the versioned type", v2sec,
			"00 00" + addr1000 + "02 | 00 04 00 | 10 01 1f",
			[]bam.Func{{Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 2, Blocks: []bam.Block{
				{ID: 0, Offset: 0, Size: 4},
				{ID: 1, Offset: 0x10, Size: 1, Metadata: 0x1f},
			}}}}}},
		{"v1: offsets from the previous block's end", v2sec,
			"01 00" + addr1000 + "03 | 00 04 00 | 02 04 00 | 00 01 01",
			[]bam.Func{{Version: 1, Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 3, Blocks: []bam.Block{
				{ID: 0, Offset: 0, Size: 4},
				{ID: 1, Offset: 6, Size: 4},
				{ID: 2, Offset: 10, Size: 1, Metadata: bam.HasReturn},
			}}}}}},
		{"v2: IDs, two functions", v2sec,
			"02 00" + addr1000 + "02 | 00 00 04 08 | 05 01 02 01" +
				"02 00" + "0020000000000000" + "01 | 07 00 09 02",
			[]bam.Func{
				{Version: 2, Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 2, Blocks: []bam.Block{
					{ID: 0, Offset: 0, Size: 4, Metadata: bam.CanFallThrough},
					{ID: 5, Offset: 5, Size: 2, Metadata: bam.HasReturn},
				}}}},
				{Offset: 0x13, Version: 2, Ranges: []bam.Range{{Addr: 0x2000, NumBlocks: 1, Blocks: []bam.Block{
					{ID: 7, Offset: 0, Size: 9, Metadata: bam.HasTailCall},
				}}}},
			}},
		{"v2 multi-range: offsets restart in each range", v2sec,
			"02 08 02" + addr1000 + "01 | 00 02 04 08" + "0090000000000000" + "02 | 01 00 03 00 | 02 01 01 01",
			[]bam.Func{{Version: 2, Features: bam.MultiBBRange, Ranges: []bam.Range{
				{Addr: 0x1000, NumBlocks: 1, Blocks: []bam.Block{{ID: 0, Offset: 2, Size: 4, Metadata: bam.CanFallThrough}}},
				{Addr: 0x9000, NumBlocks: 2, Blocks: []bam.Block{
					{ID: 1, Offset: 0, Size: 3},
					{ID: 2, Offset: 4, Size: 1, Metadata: bam.HasReturn},
				}},
			}}}},
		{"v2 PGO over both ranges", v2sec,
			"02 0f 02" + addr1000 + "01 | 00 00 04 08" + "0090000000000000" + "01 | 01 00 03 01" +
				"e8 07 | 10 02 01 80808080 08 02 00 | 08 00",
			[]bam.Func{{Version: 2, Features: bam.FuncEntryCount | bam.BBFreq | bam.BrProb | bam.MultiBBRange,
				Ranges: []bam.Range{
					{Addr: 0x1000, NumBlocks: 1, Blocks: []bam.Block{{ID: 0, Offset: 0, Size: 4, Metadata: bam.CanFallThrough}}},
					{Addr: 0x9000, NumBlocks: 1, Blocks: []bam.Block{{ID: 1, Offset: 0, Size: 3, Metadata: bam.HasReturn}}},
				},
				FuncEntryCount: 1000,
				PGO:            []bam.PGOBlock{{Freq: 16, NumSuccs: 2}, {Freq: 8}},
				Successors:     []bam.Successor{{ID: 1, Prob: 0x80000000}, {ID: 2, Prob: 0}},
			}}},
		{"v3 callsites: deltas, and the size from the last call's end", v2sec,
			"03 20" + addr1000 + "02 | 00 00 03 05 09 05 04 08 | 01 00 00 02 01",
			[]bam.Func{{Version: 3, Features: bam.CallsiteEndOffsets, Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 2, Blocks: []bam.Block{
				{ID: 0, Offset: 0, Size: 23, Metadata: bam.CanFallThrough, NumCalls: 3},
				{ID: 1, Offset: 23, Size: 2, Metadata: bam.HasReturn},
			}}}, Callsites: []uint32{5, 14, 19}}}},
		{"v3 callsites in later blocks", v2sec,
			"03 20" + addr1000 + "03 | 00 00 00 04 08 | 01 00 01 02 02 01 | 02 00 02 01 01 00 00",
			[]bam.Func{{Version: 3, Features: bam.CallsiteEndOffsets, Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 3, Blocks: []bam.Block{
				{ID: 0, Offset: 0, Size: 4, Metadata: bam.CanFallThrough},
				{ID: 1, Offset: 4, Size: 4, Metadata: bam.HasReturn, NumCalls: 1},
				{ID: 2, Offset: 8, Size: 2, FirstCall: 1, NumCalls: 2},
			}}}, Callsites: []uint32{2, 1, 2}}}},
		{"v4 hash", v2sec,
			"04 40" + addr1000 + "01 | 00 00 04 01 efcdab8967452301",
			[]bam.Func{{Version: 4, Features: bam.BBHash, Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 1, Blocks: []bam.Block{
				{ID: 0, Offset: 0, Size: 4, Metadata: bam.HasReturn, Hash: 0x0123456789abcdef},
			}}}}}},
		{"v5 16-bit features, post-link counts", v2sec,
			"05 86 00" + addr1000 + "02 | 00 00 04 08 | 01 00 04 01" +
				"05 04 01 01 80808080 08 03 | 06 02 00",
			[]bam.Func{{Version: 5, Features: bam.BBFreq | bam.BrProb | bam.PostLinkCfg,
				Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 2, Blocks: []bam.Block{
					{ID: 0, Offset: 0, Size: 4, Metadata: bam.CanFallThrough},
					{ID: 1, Offset: 4, Size: 4, Metadata: bam.HasReturn},
				}}},
				PGO:        []bam.PGOBlock{{Freq: 5, PostLinkFreq: 4, NumSuccs: 1}, {Freq: 6, PostLinkFreq: 2}},
				Successors: []bam.Successor{{ID: 1, Prob: 0x80000000, PostLinkFreq: 3}},
			}}},
		{"PostLinkCfg without BBFreq still has block counts", v2sec,
			"05 84 00" + addr1000 + "01 | 00 00 04 01 | 07 00",
			[]bam.Func{{Version: 5, Features: bam.BrProb | bam.PostLinkCfg,
				Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 1, Blocks: []bam.Block{{Size: 4, Metadata: bam.HasReturn}}}},
				PGO:    []bam.PGOBlock{{PostLinkFreq: 7}}}}},
		{"OmitBBEntries: counts, no blocks, no per-block PGO", v2sec,
			"02 13" + addr1000 + "07 | 2a" + "02 00" + addr1000 + "01 00 00 01 01",
			[]bam.Func{
				{Version: 2, Features: bam.OmitBBEntries | bam.FuncEntryCount | bam.BBFreq,
					Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 7}}, FuncEntryCount: 42},
				{Offset: 12, Version: 2, Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 1, Blocks: []bam.Block{{Size: 1, Metadata: bam.HasReturn}}}}},
			}},
		{"ELF32: 4-byte addresses", sec32,
			"02 08 02 00100000 01 00 00 04 08 f0ffffff 01 01 00 04 01",
			[]bam.Func{{Version: 2, Features: bam.MultiBBRange, Ranges: []bam.Range{
				{Addr: 0x1000, NumBlocks: 1, Blocks: []bam.Block{{Size: 4, Metadata: bam.CanFallThrough}}},
				{Addr: 0xfffffff0, NumBlocks: 1, Blocks: []bam.Block{{ID: 1, Size: 4, Metadata: bam.HasReturn}}},
			}}}},
		{"big-endian", secBE,
			"05 0048 01 0000000000001000 01 00 00 04 01 0123456789abcdef",
			[]bam.Func{{Version: 5, Features: bam.BBHash | bam.MultiBBRange, Ranges: []bam.Range{
				{Addr: 0x1000, NumBlocks: 1, Blocks: []bam.Block{{Size: 4, Metadata: bam.HasReturn, Hash: 0x0123456789abcdef}}},
			}}}},
		{"relocatable: symbol value plus addend, per section", secRel,
			"02 00 0000000000000000 01 00 00 04 01" + "02 08 01 0000000000000000 01 00 00 02 01",
			[]bam.Func{
				{Version: 2, Ranges: []bam.Range{{Addr: 0x10, Section: 2, NumBlocks: 1, Blocks: []bam.Block{{Size: 4, Metadata: bam.HasReturn}}}}},
				{Offset: 0xf, Version: 2, Features: bam.MultiBBRange, Ranges: []bam.Range{{Addr: 0x80, Section: 4, NumBlocks: 1, Blocks: []bam.Block{{Size: 2, Metadata: bam.HasReturn}}}}},
			}},
		{"relocatable REL: implicit addend, 32-bit wrap", secREL,
			"02 00 20000000 01 00 00 04 01",
			[]bam.Func{{Version: 2, Ranges: []bam.Range{{Addr: 0x10, Section: 5, NumBlocks: 1, Blocks: []bam.Block{{Size: 4, Metadata: bam.HasReturn}}}}}}},
		{"padded LEB128", v2sec,
			"02 00" + addr1000 + "81 80 00 | 80 00 82 80 80 80 00 84 00 81 00",
			[]bam.Func{{Version: 2, Ranges: []bam.Range{{Addr: 0x1000, NumBlocks: 1, Blocks: []bam.Block{{ID: 0, Offset: 2, Size: 4, Metadata: bam.HasReturn}}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := hexBytes(tt.data)
			got, err := bam.Decode(tt.sec, data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
			// The streaming decoder agrees, whatever the window.
			for _, w := range []int{1, 2, 3, 5, 8, 13, 1 << 20} {
				for _, r := range []io.Reader{bytes.NewReader(data), iotestOneByte(data)} {
					got, err := bam.NewStreamDecoderWindow(tt.sec, r, int64(len(data)), w).ReadAll(nil)
					if err != nil {
						t.Fatalf("window %d: %v", w, err)
					}
					if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("stream, window %d (-want +got):\n%s", w, diff)
					}
				}
			}
		})
	}
}

// iotestOneByte returns a reader that returns one byte per Read.
func iotestOneByte(b []byte) io.Reader { return &oneByte{b} }

type oneByte struct{ b []byte }

func (r *oneByte) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

// llvm says what llvm-readobj-22 does with a rejection case.
type llvm int

const (
	llvmRejects llvm = iota
	llvmAccepts      // we are stricter: LLVM wraps the value silently
	llvmSkips        // llvm-readobj-22 does not read the section type
	llvmHangs        // llvm-readobj-22 loops over a huge count without bytes
)

// rejections are malformed maps with the error and offset expected.
var rejections = []struct {
	name string
	sec  bam.Section
	data string
	err  error
	off  int64
	llvm llvm
}{
	{"version 6", v2sec, "06 00" + addr1000 + "01 00 00 04 01", cursor.ErrUnsupportedVersion, 0, llvmRejects},
	{"version 255 after a good function", v2sec, "02 00" + addr1000 + "01 00 00 04 01 | ff 00", cursor.ErrUnsupportedVersion, 15, llvmRejects},
	{"unknown feature bit (v5)", v2sec, "05 00 01" + addr1000 + "01 00 00 00 04 01", cursor.ErrCorrupt, 1, llvmRejects},
	{"unknown feature bit 15 (v5)", v2sec, "05 00 80" + addr1000 + "01 00 00 00 04 01", cursor.ErrCorrupt, 1, llvmRejects},
	{"features in v0", v2sec, "00 08 01" + addr1000 + "01 00 04 01", cursor.ErrCorrupt, 1, llvmRejects},
	{"features in v1", v2sec, "01 01" + addr1000 + "01 00 04 01 00", cursor.ErrCorrupt, 1, llvmRejects},
	{"callsite offsets in v2", v2sec, "02 20" + addr1000 + "01 00 00 00 04 01", cursor.ErrCorrupt, 1, llvmRejects},
	{"hash in v3", v2sec, "03 40" + addr1000 + "01 00 00 04 01 0000000000000000", cursor.ErrCorrupt, 1, llvmRejects},
	{"post-link CFG in v4", v2sec, "04 82" + addr1000 + "01 00 00 04 01 01 01", cursor.ErrCorrupt, 1, llvmRejects},
	{"zero ranges", v2sec, "02 08 00", cursor.ErrCorrupt, 2, llvmRejects},
	{"range count over 32 bits", v2sec, "02 08 8080808010" + addr1000 + "01 00 00 04 01", cursor.ErrCorrupt, 2, llvmRejects},
	{"range count over the section", v2sec, "02 08 03" + addr1000 + "01 00 00 04 01", cursor.ErrCorrupt, 2, llvmRejects},
	{"block count over 32 bits", v2sec, "02 00" + addr1000 + "8080808010 00 00 04 01", cursor.ErrCorrupt, 10, llvmRejects},
	{"block count over the section", v2sec, "02 00" + addr1000 + "64 00 00 04 01", cursor.ErrCorrupt, 10, llvmRejects},
	{"block ID over 32 bits", v2sec, "02 00" + addr1000 + "01 8080808010 00 04 01", cursor.ErrCorrupt, 11, llvmRejects},
	{"block offset over 32 bits", v2sec, "02 00" + addr1000 + "01 00 8080808010 04 01", cursor.ErrCorrupt, 12, llvmRejects},
	{"block size over 32 bits", v2sec, "02 00" + addr1000 + "01 00 00 8080808010 01", cursor.ErrCorrupt, 13, llvmRejects},
	{"metadata over 32 bits", v2sec, "02 00" + addr1000 + "01 00 00 04 8080808010", cursor.ErrCorrupt, 14, llvmRejects},
	{"unknown metadata bit", v2sec, "02 00" + addr1000 + "01 00 00 04 20", cursor.ErrCorrupt, 14, llvmRejects},
	{"unknown metadata bit (v0 type)", v0sec, addr1000 + "01 00 04 40", cursor.ErrCorrupt, 11, llvmSkips},
	{"callsite count over 32 bits", v2sec, "03 20" + addr1000 + "01 00 00 8080808010 04 01", cursor.ErrCorrupt, 13, llvmRejects},
	{"callsite count over the section", v2sec, "03 20" + addr1000 + "01 00 00 09 01 04 01", cursor.ErrCorrupt, 13, llvmRejects},
	{"callsite offset over 32 bits", v2sec, "03 20" + addr1000 + "01 00 00 01 8080808010 04 01", cursor.ErrCorrupt, 14, llvmRejects},
	{"post-link block count over 32 bits", v2sec, "05 82 00" + addr1000 + "01 00 00 04 01 | 01 8080808010", cursor.ErrCorrupt, 17, llvmRejects},
	{"successor ID over 32 bits", v2sec, "02 04" + addr1000 + "01 00 00 04 01 | 01 8080808010 01", cursor.ErrCorrupt, 16, llvmRejects},
	{"branch probability over 32 bits", v2sec, "02 04" + addr1000 + "01 00 00 04 01 | 01 01 8080808010", cursor.ErrCorrupt, 17, llvmRejects},
	{"post-link edge count over 32 bits", v2sec, "05 84 00" + addr1000 + "01 00 00 04 01 | 01 01 01 8080808010", cursor.ErrCorrupt, 19, llvmRejects},
	{"successor count over the section", v2sec, "02 04" + addr1000 + "01 00 00 04 01 | 8080808080808001 01 01", cursor.ErrCorrupt, 15, llvmHangs},
	{"entry count over 64 bits", v2sec, "02 01" + addr1000 + "01 00 00 04 01 | ffffffffffffffffff7f", cursor.ErrOverflow, 15, llvmRejects},
	{"block frequency over 64 bits", v2sec, "02 02" + addr1000 + "01 00 00 04 01 | 8080808080808080808002", cursor.ErrOverflow, 15, llvmRejects},
	{"truncated after the version", v2sec, "02", cursor.ErrTruncated, 1, llvmRejects},
	{"truncated 16-bit features", v2sec, "05 00", cursor.ErrTruncated, 1, llvmRejects},
	{"truncated address", v2sec, "02 00 0010", cursor.ErrTruncated, 2, llvmRejects},
	{"unterminated block count", v2sec, "02 00" + addr1000 + "80", cursor.ErrTruncated, 10, llvmRejects},
	{"truncated hash", v2sec, "04 40" + addr1000 + "01 808080808000 00 04 01 112233", cursor.ErrTruncated, 20, llvmRejects},
	{"hash cut by the block count check", v2sec, "04 40" + addr1000 + "01 00 00 04 01 112233", cursor.ErrCorrupt, 10, llvmRejects},
	{"truncated PGO analysis", v2sec, "02 02" + addr1000 + "01 00 00 04 01", cursor.ErrTruncated, 15, llvmRejects},
	{"truncated second block (v0 type)", v0sec, addr1000 + "02 808000 04 01 00", cursor.ErrTruncated, 15, llvmSkips},
	{"block end over 32 bits", v2sec, "02 00" + addr1000 + "01 00 ffffffff0f 01 01", cursor.ErrCorrupt, 12, llvmAccepts},
	{"next block's offset over 32 bits", v2sec, "02 00" + addr1000 + "02 00 00 feffffff0f 08 01 01 01 01", cursor.ErrCorrupt, 20, llvmAccepts},
	{"callsite end offsets over 32 bits", v2sec, "03 20" + addr1000 + "01 00 00 02 ffffffff0f 01 00 01", cursor.ErrCorrupt, 19, llvmAccepts},
	{"size after the last call over 32 bits", v2sec, "03 20" + addr1000 + "01 00 00 01 ffffffff0f 01 01", cursor.ErrCorrupt, 19, llvmAccepts},
}

// TestRejections checks the error, its sentinel and its offset for every
// malformed map, for the slice and the streaming decoder.
func TestRejections(t *testing.T) {
	for _, tt := range rejections {
		t.Run(tt.name, func(t *testing.T) {
			data := hexBytes(tt.data)
			check := func(how string, err error) {
				t.Helper()
				var de *cursor.DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("%s: error %v (%T), want a *cursor.DecodeError", how, err, err)
				}
				if !errors.Is(err, tt.err) || de.Offset != tt.off || de.Section != "m" {
					t.Errorf("%s: %v; want %v at m+%#x", how, err, tt.err, tt.off)
				}
			}
			_, err := bam.Decode(tt.sec, data)
			check("Decode", err)
			for _, w := range []int{1, 4, 1 << 20} {
				_, err = bam.NewStreamDecoderWindow(tt.sec, iotestOneByte(data), int64(len(data)), w).ReadAll(nil)
				check("stream", err)
			}
			// Next keeps returning the error.
			d := bam.NewDecoder(tt.sec, data)
			var f bam.Func
			for err = d.Next(&f); err == nil; err = d.Next(&f) {
			}
			if err2 := d.Next(&f); err2 != err {
				t.Errorf("Next after the error: %v, then %v", err, err2)
			}
		})
	}
}

// TestRejectionsAgainstReadobj checks that llvm-readobj-22 rejects the
// same maps (except where we are deliberately stricter) and never hangs
// where we reject at once.
func TestRejectionsAgainstReadobj(t *testing.T) {
	ro := llvmTool("llvm-readobj", 22)
	if ro == "" {
		t.Skip("llvm-readobj-22 not installed")
	}
	dir := t.TempDir()
	for _, tt := range rejections {
		if tt.llvm == llvmSkips {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if err := os.WriteFile(bin, mapELF(tt.sec.Type, hexBytes(tt.data)), 0o644); err != nil {
				t.Fatal(err)
			}
			timeout := 20 * time.Second
			if tt.llvm == llvmHangs {
				timeout = 2 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			out, err := exec.CommandContext(ctx, ro, "--bb-addr-map", bin).CombinedOutput()
			if ctx.Err() != nil {
				if tt.llvm != llvmHangs {
					t.Fatalf("llvm-readobj-22 hangs on it (killed after %v)", timeout)
				}
				return
			}
			if tt.llvm == llvmHangs {
				t.Errorf("llvm-readobj-22 no longer hangs on it: update the case (error %v)\n%s", err, out)
			}
			if err != nil {
				t.Fatalf("llvm-readobj-22: %v\n%s", err, out)
			}
			rejected := strings.Contains(string(out), "unable to dump SHT_LLVM_BB_ADDR_MAP")
			switch {
			case tt.llvm == llvmRejects && !rejected:
				t.Errorf("llvm-readobj-22 accepts it:\n%s", out)
			case tt.llvm == llvmAccepts && rejected:
				t.Errorf("llvm-readobj-22 now rejects it too: update the case\n%s", out)
			}
		})
	}
}

// TestNextReusesClone: Next reuses its slices from one record to the
// next; Clone and ReadAll copies do not change.
func TestNextReusesClone(t *testing.T) {
	data := mapSection(t, "bbaddrmap-v5.o")
	sec := bam.Section{Name: "m", Type: bam.SHT_LLVM_BB_ADDR_MAP}
	all, err := bam.Decode(sec, data)
	if err != nil {
		t.Fatal(err)
	}
	d := bam.NewDecoder(sec, data)
	var f bam.Func
	var clones []bam.Func
	for err = d.Next(&f); err == nil; err = d.Next(&f) {
		clones = append(clones, f.Clone())
	}
	if err != io.EOF {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, clones); diff != "" {
		t.Errorf("Clone vs ReadAll (-ReadAll +Clone):\n%s", diff)
	}
	if len(all) < 3 || len(all[2].PGO) == 0 || all[2].CallsiteEndOffsets(&all[2].Ranges[0].Blocks[0]) == nil {
		t.Fatal("bbaddrmap-v5.o's third function should have PGO data and callsites")
	}
}
