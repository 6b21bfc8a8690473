package mip

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// The test programs testdata/bin/mip/mip and mip-counts (testdata/src/mip,
// built by testdata/gen.sh): for each argument they call classify,
// sum_to and count_digits of instrumented.S and print the results.

// progModel is what the program does for its arguments: the output it
// prints, and which blocks of each function run, found by following each
// function's control flow in instrumented.S. Block 0 is the entry.
type progModel struct {
	out       string
	coverage  map[string][]bool
	calls     map[string]uint32
	firstCall map[string]uint32 // timestamps: order of first calls, from 1
}

// atoi is C's atoi for the test inputs: optional sign, then digits.
func atoi(s string) int {
	neg, i, v := false, 0, 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg, i = s[i] == '-', i+1
	}
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		v = v*10 + int(s[i]-'0')
	}
	if neg {
		return -v
	}
	return v
}

func model(args ...string) progModel {
	m := progModel{
		coverage: map[string][]bool{
			"classify": make([]bool, 4), "sum_to": make([]bool, 3), "count_digits": make([]bool, 5), "unused": make([]bool, 1),
		},
		calls: map[string]uint32{}, firstCall: map[string]uint32{},
	}
	clock := uint32(0)
	call := func(fn string) []bool {
		if m.calls[fn] == 0 {
			clock++
			m.firstCall[fn] = clock
		}
		m.calls[fn]++
		c := m.coverage[fn]
		c[0] = true
		return c
	}
	var out strings.Builder
	for _, a := range args {
		v := atoi(a)
		c := call("classify")
		cls := 0
		switch {
		case v > 0:
			c[1], cls = true, 1
		case v == 0:
			c[2] = true
		default:
			c[3], cls = true, -1 // classify.cold
		}
		c = call("sum_to")
		sum := 0
		if v > 0 {
			c[1] = true // the loop body
			for i := 1; i <= v; i++ {
				sum += i
			}
		}
		c[2] = true
		c = call("count_digits")
		digits := 0
		c[1], c[4] = true, true // the loop head and the exit always run
		for _, ch := range []byte(a) {
			c[2] = true
			if ch >= '0' && ch <= '9' {
				c[3] = true
				digits++
			}
		}
		fmt.Fprintf(&out, "%s: classify=%d sum_to=%d count_digits=%d\n", a, cls, sum, digits)
	}
	m.out = out.String()
	return m
}

// runProg runs a test program with args and returns its raw profile.
func runProg(t *testing.T, bin string, args ...string) *Raw {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the test programs are linux/amd64 executables (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	rawFile := filepath.Join(t.TempDir(), "run.mipraw")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "MIP_RAW_FILE="+rawFile)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	if want := model(args...).out; string(out) != want {
		t.Fatalf("%s %v printed\n%s\nthe model expects\n%s", filepath.Base(bin), args, out, want)
	}
	data, err := os.ReadFile(rawFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeRaw(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func progCoverage(p *Profile) map[string][]bool {
	out := map[string][]bool{}
	for _, f := range p.Funcs {
		out[f.Name] = append([]bool{f.Covered()}, blocksCovered(f.Blocks)...)
	}
	return out
}

func blocksCovered(bs []Block) []bool {
	out := make([]bool, len(bs))
	for i, b := range bs {
		out[i] = b.Covered
	}
	return out
}

// TestProgramMap checks the map read from the ELF file against the symbol
// table and the code: every function is at its symbol with the symbol's
// size, and every block starts with the store that marks it covered.
func TestProgramMap(t *testing.T) {
	for _, name := range []string{"mip", "mip-counts"} {
		t.Run(name, func(t *testing.T) {
			f, err := elfx.Open(testbin.Path(t, "mip/"+name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b, err := FromELF(f)
			if err != nil {
				t.Fatal(err)
			}
			wantType, hash := FunctionCoverage|BlockCoverage, ModuleHash("mip")
			if name == "mip-counts" {
				wantType, hash = wantType|FunctionTimestamp|FunctionCallCount, ModuleHash("mip-counts")
			}
			if b.Map.Header != (Header{MapFile, wantType, hash}) || b.Raw.Header != (Header{RawFile, wantType, hash}) {
				t.Errorf("map header %+v, raw header %+v", b.Map.Header, b.Raw.Header)
			}
			syms, err := f.Symbols()
			if err != nil {
				t.Fatal(err)
			}
			bySym := map[string]elf.Symbol{}
			for _, s := range syms {
				bySym[s.Name] = s
			}
			var names []string
			for i := range b.Map.Funcs {
				fn := &b.Map.Funcs[i]
				names = append(names, fn.Name)
				addr := b.Addr(fn)
				s := bySym[fn.Name]
				if addr != s.Value || uint64(fn.Size) != s.Size {
					t.Errorf("%s: map [%#x, +%d), symbol [%#x, +%d)", fn.Name, addr, fn.Size, s.Value, s.Size)
				}
				raw := bySym[fn.Name+"$RAW"]
				if b.RawAddr+uint64(fn.RawOffset()) != raw.Value {
					t.Errorf("%s: raw data at %#x, symbol %s$RAW at %#x", fn.Name, b.RawAddr+uint64(fn.RawOffset()), fn.Name, raw.Value)
				}
				first := int64(1)
				if wantType.Counts() {
					first = 8
					// Never called, as the MIP patch's llc emits it.
					if got := b.Raw.Data[fn.RawOffset():][:8]; string(got) != "\xff\xff\xff\xff\xff\xff\xff\xff" {
						t.Errorf("%s: linked counters % x, want 0xffffffff twice", fn.Name, got)
					}
				}
				for k, off := range fn.BlockOffsets {
					blk := BlockAddr(addr, off)
					code, err := f.ReadVA(blk, 7)
					if err != nil {
						t.Fatal(err)
					}
					// movb $0, disp32(%rip): c6 05 disp32 00
					target := blk + 7 + uint64(int64(int32(binary.LittleEndian.Uint32(code[2:]))))
					want := raw.Value + uint64(first) + uint64(k)
					if code[0] != 0xc6 || code[1] != 0x05 || code[6] != 0 || target != want {
						t.Errorf("%s block %d at %#x: % x (store to %#x), want movb $0 to %#x", fn.Name, k+1, blk, code, target, want)
					}
				}
			}
			if diff := cmp.Diff([]string{"classify", "sum_to", "count_digits", "unused"}, names); diff != "" {
				t.Errorf("functions (-want +got):\n%s", diff)
			}
			// classify's third block is classify.cold, past classify's end.
			cls := &b.Map.Funcs[0]
			if got, cold := BlockAddr(b.Addr(cls), cls.BlockOffsets[2]), bySym["classify.cold"].Value; got != cold {
				t.Errorf("classify block 3 at %#x, classify.cold at %#x", got, cold)
			}
			// The raw section as linked: nothing covered yet.
			p, err := NewProfile(b.Map).MergeRaw(b.Raw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(model().coverage, progCoverage(p)); diff != "" {
				t.Errorf("initial raw data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProgramCoverage runs the instrumented program on different inputs
// and checks the merged coverage, call counts and timestamps against the
// blocks those inputs take.
func TestProgramCoverage(t *testing.T) {
	runs := [][]string{{"5"}, {"-3"}, {"x12"}, {}, {""}, {"0", "-0"}, {"7", "-1", "abc"}}
	for _, name := range []string{"mip", "mip-counts"} {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, "mip/"+name)
			b, err := Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			counts := b.Map.ProfileType.Counts()
			base := NewProfile(b.Map)
			merged := base
			var all []string
			for _, args := range runs {
				raw := runProg(t, bin, args...)
				one, err := base.MergeRaw(raw)
				if err != nil {
					t.Fatal(err)
				}
				want := model(args...)
				if diff := cmp.Diff(want.coverage, progCoverage(one)); diff != "" {
					t.Errorf("%q (-model +profile):\n%s", args, diff)
				}
				if counts {
					for _, f := range one.Funcs {
						if uint32(f.CallCount) != want.calls[f.Name] || uint32(f.TimestampSum) != want.firstCall[f.Name] {
							t.Errorf("%q: %s called %d times, first at %d; the model says %d, %d", args, f.Name,
								f.CallCount, f.TimestampSum, want.calls[f.Name], want.firstCall[f.Name])
						}
					}
				}
				if merged, err = merged.MergeRaw(raw); err != nil {
					t.Fatal(err)
				}
				all = append(all, args...)
			}
			// Merged runs cover what one run of all the inputs covers.
			if diff := cmp.Diff(model(all...).coverage, progCoverage(merged)); diff != "" {
				t.Errorf("merged (-model +profile):\n%s", diff)
			}
			// Round trip through the file.
			back, err := DecodeProfile(AppendProfile(nil, merged))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(merged, back); diff != "" {
				t.Errorf("profile round trip (-want +got):\n%s", diff)
			}
			for _, f := range merged.Funcs {
				ran := 0
				for _, args := range runs {
					if model(args...).coverage[f.Name][0] {
						ran++
					}
				}
				if int(f.MergeCount) != ran {
					t.Errorf("%s: merge count %d, ran in %d runs", f.Name, f.MergeCount, ran)
				}
				if counts && f.CallCount != uint64(model(all...).calls[f.Name]) {
					t.Errorf("%s: %d calls, want %d", f.Name, f.CallCount, model(all...).calls[f.Name])
				}
			}
		})
	}
}

// The raw profile of one program does not merge into the profile of the
// other: their module hashes differ.
func TestProgramMismatch(t *testing.T) {
	b, err := Open(testbin.Path(t, "mip/mip"))
	if err != nil {
		t.Fatal(err)
	}
	raw := runProg(t, testbin.Path(t, "mip/mip-counts"), "1")
	if _, err := NewProfile(b.Map).MergeRaw(raw); !errors.Is(err, ErrMismatch) {
		t.Errorf("mip-counts raw into the mip profile: %v", err)
	}
}

func TestFromELFRejects(t *testing.T) {
	if _, err := Open(testbin.Path(t, "demo")); !errors.Is(err, ErrNoMIP) {
		t.Errorf("demo: %v", err)
	}
	data, err := os.ReadFile(testbin.Path(t, "mip/mip"))
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(testbin.Path(t, "mip/mip"))
	if err != nil {
		t.Fatal(err)
	}
	mapOff := ef.Section(MapSection).Offset
	rawOff := ef.Section(RawSection).Offset
	mapData, err := ef.Section(MapSection).Data()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeMap(mapData)
	if err != nil {
		t.Fatal(err)
	}
	// The offset of the last record (unused) in the file.
	last := mapOff + uint64(len(AppendMap(nil, &Map{Header: m.Header, Funcs: m.Funcs[:len(m.Funcs)-1]})))
	tests := []struct {
		name   string
		mutate func([]byte)
		want   error
	}{
		{"raw header's module hash", func(b []byte) { b[rawOff+12]++ }, ErrMismatch},
		{"raw data outside the raw section", func(b []byte) {
			// unused's RawProfilePCOffset.
			binary.LittleEndian.PutUint32(b[last+4:], binary.LittleEndian.Uint32(b[last+4:])+0x100)
		}, ErrMismatch},
		{"function outside the code", func(b []byte) {
			binary.LittleEndian.PutUint32(b[last+8:], binary.LittleEndian.Uint32(b[last+8:])+0x100000)
		}, ErrMismatch},
	}
	for _, tt := range tests {
		b := append([]byte(nil), data...)
		tt.mutate(b)
		f, err := elfx.NewBytes(tt.name, b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := FromELF(f); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}
