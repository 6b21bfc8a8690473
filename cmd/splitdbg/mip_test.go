package main

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo/mip"
)

// mipRun runs an instrumented test program (testdata/bin/mip/NAME) with
// args and returns the path of the raw profile it wrote at exit.
func mipRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the MIP test programs are linux/amd64 executables (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	raw := filepath.Join(t.TempDir(), name+".mipraw")
	cmd := exec.Command(testbin.Path(t, "mip/"+name), args...)
	cmd.Env = append(os.Environ(), "MIP_RAW_FILE="+raw)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return raw
}

func mipOK(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := run(t, "", args...)
	if code != 0 {
		t.Fatalf("%q: exit %d: %s", args, code, stderr)
	}
	return out
}

// blockLines returns, for each function of instrumented.S, the lines of
// its entry instrumentation ("mip_entry FN") and of each block's
// ("mip_block FN, K"): where the DWARF line program puts the function and
// its blocks.
func blockLines(t *testing.T) map[string][]int {
	t.Helper()
	f, err := os.Open(filepath.Join(testbin.Dir(), "..", "src", "mip", "instrumented.S"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(strings.ReplaceAll(sc.Text(), ",", " "))
		if len(fields) == 2 && fields[0] == "mip_entry" {
			out[fields[1]] = append([]int{n}, out[fields[1]]...)
		}
		if len(fields) == 3 && fields[0] == "mip_block" {
			var k int
			fmt.Sscan(fields[2], &k)
			for len(out[fields[1]]) <= k {
				out[fields[1]] = append(out[fields[1]], 0)
			}
			out[fields[1]][k] = n
		}
	}
	return out
}

type mipShowOut struct {
	ModuleHash  uint32 `json:"module_hash"`
	ProfileType uint32 `json:"profile_type"`
	Functions   []struct {
		Name         string  `json:"name"`
		Covered      bool    `json:"covered"`
		MergeCount   uint32  `json:"merge_count"`
		CallCount    uint64  `json:"call_count"`
		TimestampSum uint64  `json:"timestamp_sum"`
		Size         uint32  `json:"size"`
		RawOffset    uint32  `json:"raw_offset"`
		FuncOffset   int32   `json:"func_offset"`
		Addr         *uint64 `json:"addr"`
		File         string  `json:"file"`
		Line         int     `json:"line"`
		Blocks       []struct {
			Index   int     `json:"index"`
			Offset  uint32  `json:"offset"`
			Covered bool    `json:"covered"`
			Addr    *uint64 `json:"addr"`
			File    string  `json:"file"`
			Line    int     `json:"line"`
		} `json:"blocks"`
	} `json:"functions"`
}

func (s *mipShowOut) coverage() map[string][]bool {
	out := map[string][]bool{}
	for _, f := range s.Functions {
		c := []bool{f.Covered}
		for _, b := range f.Blocks {
			c = append(c, b.Covered)
		}
		out[f.Name] = c
	}
	return out
}

// TestMIPWorkflow: create, run the program on two inputs, merge both raw
// profiles, show; the coverage is what the inputs ran, at the symbols'
// addresses and the instrumentation's source lines.
func TestMIPWorkflow(t *testing.T) {
	bin := testbin.Path(t, "mip/mip")
	dir := t.TempDir()
	base, out := filepath.Join(dir, "base.mip"), filepath.Join(dir, "out.mip")
	if got := mipOK(t, "mip", "create", bin, "-o", base); !strings.Contains(got, "empty profile of 4 functions") {
		t.Errorf("create: %q", got)
	}
	// "5": classify's positive block, sum_to's loop, a digit.
	// "x": classify's zero block, no loop, a character that is no digit.
	r1, r2 := mipRun(t, "mip", "5"), mipRun(t, "mip", "x")
	got := mipOK(t, "mip", "merge", base, r1, r2, "-o", out)
	if !strings.Contains(got, "merged 2 raw profiles and 0 profiles: 3 of 4 functions and 8 of 9 non-entry blocks covered") {
		t.Errorf("merge: %q", got)
	}
	show := decode[mipShowOut](t, mipOK(t, "mip", "show", "-json", out, bin))
	want := map[string][]bool{
		"classify":     {true, true, true, false}, // classify.cold (negative) did not run
		"sum_to":       {true, true, true},
		"count_digits": {true, true, true, true, true},
		"unused":       {false},
	}
	if diff := cmp.Diff(want, show.coverage()); diff != "" {
		t.Errorf("coverage (-want +got):\n%s", diff)
	}
	syms := symbolAddrs(t, bin)
	lines := blockLines(t)
	for _, f := range show.Functions {
		if f.Addr == nil || *f.Addr != syms[f.Name].Value || uint64(f.Size) != syms[f.Name].Size {
			t.Errorf("%s at %v, size %d; symbol at %#x, size %d", f.Name, f.Addr, f.Size, syms[f.Name].Value, syms[f.Name].Size)
		}
		if f.File != "mip/instrumented.S" || f.Line != lines[f.Name][0] {
			t.Errorf("%s at %s:%d, want mip/instrumented.S:%d", f.Name, f.File, f.Line, lines[f.Name][0])
		}
		if f.MergeCount != map[bool]uint32{true: 2, false: 0}[f.Covered] { // both runs call every function but unused
			t.Errorf("%s: merge count %d", f.Name, f.MergeCount)
		}
		for _, b := range f.Blocks {
			if b.Addr == nil || *b.Addr != *f.Addr+uint64(b.Offset) || b.Line != lines[f.Name][b.Index] {
				t.Errorf("%s block %d: at %v line %d, want %#x line %d", f.Name, b.Index, b.Addr, b.Line, *f.Addr+uint64(b.Offset), lines[f.Name][b.Index])
			}
		}
	}
	if cold := show.Functions[0].Blocks[2]; *cold.Addr != syms["classify.cold"].Value {
		t.Errorf("classify block 3 at %#x, classify.cold at %#x", *cold.Addr, syms["classify.cold"].Value)
	}

	// -covered lists only what ran; without BIN there are no addresses.
	show = decode[mipShowOut](t, mipOK(t, "mip", "show", "-json", "-covered", out))
	if len(show.Functions) != 3 || len(show.Functions[0].Blocks) != 2 || show.Functions[0].Addr != nil || show.Functions[0].File != "" {
		t.Errorf("show -covered without BIN: %+v", show)
	}
	text := mipOK(t, "mip", "show", out, bin)
	for _, w := range []string{"3 of 4 functions covered", fmt.Sprintf("classify  %#x  size 40  covered  merges 2  mip/instrumented.S:%d", syms["classify"].Value, lines["classify"][0]),
		fmt.Sprintf("  block 3  %#x  not covered  mip/instrumented.S:%d", syms["classify.cold"].Value, lines["classify"][3]), "unused"} {
		if !strings.Contains(text, w) {
			t.Errorf("show lacks %q:\n%s", w, text)
		}
	}

	// A profile merges into another of the same binary.
	twice := filepath.Join(dir, "twice.mip")
	mipOK(t, "mip", "merge", out, out, "-o", twice)
	show = decode[mipShowOut](t, mipOK(t, "mip", "show", "-json", twice))
	if show.Functions[1].MergeCount != 4 {
		t.Errorf("sum_to merged %d times, want 4", show.Functions[1].MergeCount)
	}
}

// TestMIPCounts: the timestamp and call count build sums its runs' counts.
func TestMIPCounts(t *testing.T) {
	bin := testbin.Path(t, "mip/mip-counts")
	dir := t.TempDir()
	base, out := filepath.Join(dir, "base.mip"), filepath.Join(dir, "out.mip")
	mipOK(t, "mip", "create", bin, "-o", base)
	r1, r2 := mipRun(t, "mip-counts", "1", "2", "-4"), mipRun(t, "mip-counts", "0")
	mipOK(t, "mip", "merge", base, r1, r2, "-o", out)
	show := decode[mipShowOut](t, mipOK(t, "mip", "show", "-json", out, bin))
	type counts struct {
		Calls, Timestamps uint64
		Merges            uint32
	}
	got := map[string]counts{}
	for _, f := range show.Functions {
		got[f.Name] = counts{f.CallCount, f.TimestampSum, f.MergeCount}
	}
	// Each run calls classify first (timestamp 1), then sum_to (2), then
	// count_digits (3), once per argument.
	want := map[string]counts{"classify": {4, 2, 2}, "sum_to": {4, 4, 2}, "count_digits": {4, 6, 2}, "unused": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if text := mipOK(t, "mip", "show", out); !strings.Contains(text, "merges 2  calls 4  timestamps 4") {
		t.Errorf("show:\n%s", text)
	}
}

// TestMIPExtractedMap: the map extracted from the binary makes the same
// profile, and show still finds the functions in the binary without it.
func TestMIPExtractedMap(t *testing.T) {
	bin := testbin.Path(t, "mip/mip")
	dir := t.TempDir()
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	data, err := ef.Section(mip.MapSection).Data()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	mapFile := filepath.Join(dir, "mip.mipmap")
	os.WriteFile(mapFile, data, 0o644)
	fromBin, fromMap := filepath.Join(dir, "a.mip"), filepath.Join(dir, "b.mip")
	mipOK(t, "mip", "create", bin, "-o", fromBin)
	mipOK(t, "mip", "create", mapFile, "-o", fromMap)
	a, _ := os.ReadFile(fromBin)
	b, _ := os.ReadFile(fromMap)
	if string(a) != string(b) {
		t.Error("the profiles of the binary and of its extracted map differ")
	}
	objcopy := testbin.Tool(t, "objcopy", "llvm-objcopy")
	shipped := filepath.Join(dir, "shipped")
	if out, err := exec.Command(objcopy, "--remove-section="+mip.MapSection, bin, shipped).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	show := decode[mipShowOut](t, mipOK(t, "mip", "show", "-json", fromMap, shipped))
	syms := symbolAddrs(t, bin)
	for _, f := range show.Functions {
		if f.Addr == nil || *f.Addr != syms[f.Name].Value || f.File == "" {
			t.Errorf("%s at %v %s:%d without the map", f.Name, f.Addr, f.File, f.Line)
		}
	}
	_, stderr, code := run(t, "", "mip", "create", shipped, "-o", filepath.Join(dir, "c.mip"))
	if code != 1 || !strings.Contains(stderr, "no __llvm_mipmap section") {
		t.Errorf("create from the shipped binary: exit %d, %q", code, stderr)
	}
}

// TestMIPErrors: data of another build, malformed files and bad command
// lines.
func TestMIPErrors(t *testing.T) {
	bin := testbin.Path(t, "mip/mip")
	dir := t.TempDir()
	base := filepath.Join(dir, "base.mip")
	mipOK(t, "mip", "create", bin, "-o", base)
	raw := mipRun(t, "mip", "3")
	otherRaw := mipRun(t, "mip-counts", "3")

	// A raw profile whose coverage byte is neither 0 nor 0xff.
	data, _ := os.ReadFile(raw)
	data[mip.HeaderSize] = 0x7f
	badRaw := filepath.Join(dir, "bad.mipraw")
	os.WriteFile(badRaw, data, 0o644)
	// A profile whose sum_to changed its CFG signature.
	prof, _ := os.ReadFile(base)
	p, err := mip.DecodeProfile(prof)
	if err != nil {
		t.Fatal(err)
	}
	p.Funcs[1].CFGSignature++
	changed := filepath.Join(dir, "changed.mip")
	os.WriteFile(changed, mip.AppendProfile(nil, p), 0o644)
	// A truncated profile; a profile whose count is too large.
	short := filepath.Join(dir, "short.mip")
	os.WriteFile(short, prof[:len(prof)-40], 0o644)
	huge := filepath.Join(dir, "huge.mip")
	h := append([]byte(nil), prof...)
	binary.LittleEndian.PutUint64(h[mip.HeaderSize:], 1<<40)
	os.WriteFile(huge, h, 0o644)
	out := filepath.Join(dir, "out.mip")

	tests := []struct {
		args    []string
		code    int
		wantErr []string
	}{
		{[]string{"mip", "merge", base, otherRaw, "-o", out}, 1, []string{otherRaw, "another build", "module hash 0xe702c606"}},
		{[]string{"mip", "merge", base, badRaw, "-o", out}, 1, []string{badRaw, "classify", "__llvm_mipraw+0x18", "corrupt"}},
		{[]string{"mip", "merge", base, changed, "-o", out}, 1, []string{changed, "sum_to", "CFG signature"}},
		{[]string{"mip", "merge", changed, raw, base, "-o", out}, 1, []string{base, "CFG signature"}},
		{[]string{"mip", "show", changed, bin}, 1, []string{bin, "not of this binary", "sum_to", "CFG signature"}},
		{[]string{"mip", "merge", base, base + ".missing", "-o", out}, 1, []string{"no such file"}},
		{[]string{"mip", "merge", base, bin, "-o", out}, 1, []string{bin, "__llvm_mipraw+0x0", "magic"}},
		{[]string{"mip", "show", short}, 1, []string{short, ".mip+0x", "truncated"}},
		{[]string{"mip", "show", huge}, 1, []string{huge, ".mip+0x18", "count"}},
		{[]string{"mip", "show", base, testbin.Path(t, "demo")}, 1, []string{"demo", "not an instrumented binary"}},
		{[]string{"mip", "create", testbin.Path(t, "demo"), "-o", out}, 1, []string{"demo", "no __llvm_mipmap or __llvm_mipraw"}},
		{[]string{"mip", "create", raw, "-o", out}, 1, []string{raw, "__llvm_mipmap+0x6", "file type 1 (raw), want 2 (map)"}},
		{[]string{"mip"}, 2, []string{"want a subcommand"}},
		{[]string{"mip", "bogus"}, 2, []string{"unknown subcommand"}},
		{[]string{"mip", "create", bin}, 2, []string{"-o OUT"}},
		{[]string{"mip", "merge", base, "-o", out}, 2, []string{"at least one"}},
		{[]string{"mip", "show", "-o", out, base}, 2, []string{"-o is for"}},
		{[]string{"mip", "create", "-json", bin, "-o", out}, 2, []string{"-json and -covered are for show"}},
		{[]string{"mip", "show", base, bin, bin}, 2, []string{"optional BIN"}},
	}
	for _, tt := range tests {
		_, stderr, code := run(t, "", tt.args...)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", tt.args[1:], code, tt.code, stderr)
		}
		if tt.code == 1 && strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: error is not one line: %q", tt.args[1:], stderr)
		}
		for _, w := range tt.wantErr {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr %q lacks %q", tt.args[1:], stderr, w)
			}
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed merge wrote its output")
	}
}
