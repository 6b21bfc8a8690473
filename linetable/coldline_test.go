package linetable_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// coldLines finds the /* COLD-LINE: name */ markers of testdata/src:
// marker name → "dir/file.c:LINE".
func coldLines(t *testing.T) map[string]string {
	src := filepath.Join(testbin.Dir(), "..", "src")
	re := regexp.MustCompile(`/\* COLD-LINE: (\S+) \*/`)
	out := map[string]string{}
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".c") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				rel, _ := filepath.Rel(src, p)
				out[m[1]] = filepath.ToSlash(rel) + ":" + strconv.Itoa(n)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestColdLines: a breakpoint on each marked cold line has an address in
// the fragment that holds the line's code (testdata/README.md, "Where
// each COLD-LINE lands"), for every producer: GCC, GCC PGO, clang-19,
// clang-22, machine function splitting, BOLT 19/22, BOLT over GCC, cgo.
func TestColdLines(t *testing.T) {
	lines := coldLines(t)
	want, noStmt := coldLineExpectations()
	for bin, markers := range want {
		tab, err := linetable.Open(testbin.Path(t, bin))
		if err != nil {
			t.Fatal(err)
		}
		for marker, frag := range markers {
			loc, ok := lines[marker]
			if !ok {
				t.Fatalf("no COLD-LINE marker %q in testdata/src", marker)
			}
			// Resolve by base name and line, as a user types it; the
			// helper markers need the directory to pick a.c or b.c.
			spec := loc[strings.LastIndexByte(loc, '/')+1:]
			b, err := tab.Resolve(spec)
			if err != nil {
				t.Errorf("%s: break %s (%s): %v", bin, spec, marker, err)
				continue
			}
			found := false
			for _, l := range b.Locs {
				f := l.Fragment()
				if f == nil || f.Symbol != frag {
					continue
				}
				found = true
				if f.Kind == splitinfo.Hot {
					t.Errorf("%s: %s resolved to the entry fragment", bin, spec)
				}
				if l.NoStmt != noStmt[bin+"/"+marker] {
					t.Errorf("%s: %s at %#x: NoStmt = %v", bin, spec, l.Addr, l.NoStmt)
				}
				if !f.Contains(l.Addr) {
					t.Errorf("%s: %s: %#x not in %s", bin, spec, l.Addr, f.Symbol)
				}
			}
			if !found {
				var got []string
				for _, l := range b.Locs {
					if f := l.Fragment(); f != nil {
						got = append(got, f.Symbol)
					}
				}
				t.Errorf("%s: break %s (%s): addresses in %v, want one in %s", bin, spec, marker, got, frag)
			}
		}
	}
}

// coldLineExpectations is testdata/README.md's "Where each COLD-LINE
// lands": binary → COLD-LINE marker → the fragment symbol holding the
// line's code; and the binary/marker pairs whose fragment keeps no
// is_stmt row for the line (BOLT drops them).
func coldLineExpectations() (want map[string]map[string]string, noStmt map[string]bool) {
	gccCold := map[string]string{"process": "process.cold", "validate-x": "validate.cold", "validate-y": "validate.cold",
		"a-helper": "helper.cold", "b-helper": "helper.cold"}
	bbsections := map[string]string{"scan": "scan.cold", "dispatch-div": "dispatch.__part.1", "dispatch-default": "dispatch.cold"}
	bolt := map[string]string{"tally-attr": "tally.cold.0", "tally-plain": "tally.cold.0", "lookup-attr": "lookup.cold.0", "lookup-plain": "lookup.cold.0"}
	overGCC := map[string]string{"tally-attr": "tally.cold", "tally-plain": "tally.cold.0", "lookup-attr": "lookup.cold"}
	want = map[string]map[string]string{
		"demo":               {"scale": "scale.cold", "sum": "sum.cold"},
		"gcc-cold":           gccCold,
		"gcc-cold-nopie":     gccCold,
		"gcc-cold-dwarf4":    gccCold,
		"gcc-cold-zlib":      gccCold,
		"gcc-cold-zstd":      gccCold,
		"gcc-pgo":            {"checksum": "checksum.cold", "classify": "classify.cold"},
		"clang19-bbsections": bbsections,
		"clang22-bbsections": bbsections,
		"clang19-mfs":        {"report": "report.cold"},
		"clang22-mfs":        {"scan": "scan.cold", "dispatch-div": "dispatch.cold", "dispatch-default": "dispatch.cold"},
		"bolt19":             bolt,
		"bolt22":             bolt,
		"bolt-gcc-input":     {"tally-attr": "tally.cold", "lookup-attr": "lookup.cold"},
		"bolt19-over-gcc":    overGCC,
		"bolt22-over-gcc":    overGCC,
		"cgo":                {"c_classify": "c_classify.cold", "c_accumulate": "c_accumulate.cold"},
	}
	noStmt = map[string]bool{"bolt19-over-gcc/tally-plain": true, "bolt22-over-gcc/tally-plain": true}
	return want, noStmt
}

// TestWalkFollowsRecordedOrder: with BAT the walk follows the input
// offsets (keys never decrease), and with a BB address map the block IDs;
// BOLT over a GCC-split input mixes two input functions in tally, so its
// walk falls back to branch sites and still visits every row once.
func TestWalkFollowsRecordedOrder(t *testing.T) {
	for _, tc := range []struct{ bin, fn string }{{"bolt22", "tally"}, {"bolt19", "lookup"}, {"clang22-mfs", "main"}, {"clang19-bbsections", "dispatch"}} {
		tab, err := linetable.Open(testbin.Path(t, tc.bin))
		if err != nil {
			t.Fatal(err)
		}
		p := tab.Procs().ByName(tc.fn)[0]
		var last uint64
		rows, keyed := 0, 0
		for pos := range tab.Walk(p) {
			// Rows in padding between blocks have no key: they keep the
			// key of the row before them.
			if _, key, ok := tab.Procs().LogicalKey(pos.Addr); ok {
				if key < last {
					t.Errorf("%s %s: row %#x key %#x after %#x", tc.bin, tc.fn, pos.Addr, key, last)
				}
				last = key
				keyed++
			}
			rows++
		}
		if rows == 0 || keyed*2 < rows {
			t.Errorf("%s %s: %d rows, %d with a logical key: the recorded order is not in use", tc.bin, tc.fn, rows, keyed)
		}
	}
	tab, err := linetable.Open(testbin.Path(t, "bolt22-over-gcc"))
	if err != nil {
		t.Fatal(err)
	}
	p := tab.Procs().ByName("tally")[0]
	seen := map[uint64]int{}
	for pos := range tab.Walk(p) {
		seen[pos.Addr]++
	}
	want := 0
	for r := range tab.Rows() {
		if !r.EndSequence && p.Fragment(r.Addr) >= 0 {
			want++
		}
	}
	got := 0
	for _, n := range seen {
		got += n
	}
	if got != want {
		t.Errorf("bolt22-over-gcc tally: walk yields %d rows, the fragments hold %d", got, want)
	}
}

// TestStopPC: at the start of GCC's c_classify.cold the statement row of
// the cold line (split.c:25) is followed by a non-statement row of the
// function's opening line at the same address: PC reports the last row,
// StopPC the statement, as a debugger shows the stop.
func TestStopPC(t *testing.T) {
	tab, err := linetable.Open(testbin.Path(t, "cgo"))
	if err != nil {
		t.Fatal(err)
	}
	p := tab.Procs().ByName("c_classify")[0]
	cold := p.Fragments[1].Start
	pc, ok1 := tab.PC(cold)
	stop, ok2 := tab.StopPC(cold)
	if !ok1 || !ok2 || pc.Line == stop.Line || stop.Line != 25 || !stop.IsStmt || pc.IsStmt {
		t.Errorf("at %#x: PC %s:%d stmt %v, StopPC %s:%d stmt %v; want StopPC at the statement of line 25",
			cold, pc.File, pc.Line, pc.IsStmt, stop.File, stop.Line, stop.IsStmt)
	}
	// Where the last row at an address is a statement, both agree.
	entry, _ := tab.PC(p.Entry)
	if s, _ := tab.StopPC(p.Entry); entry.IsStmt && s.Line != entry.Line {
		t.Errorf("at the entry: PC line %d, StopPC line %d", entry.Line, s.Line)
	}
}
