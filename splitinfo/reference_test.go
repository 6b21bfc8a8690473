package splitinfo_test

import (
	"bufio"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// The reference tests compare the Table of every test binary with what
// nm, llvm-dwarfdump and objdump say about the same file.

type nmSym struct {
	addr, size uint64
	name       string
}

func nmSyms(t *testing.T, nm, bin string) []nmSym {
	var out []nmSym
	sc := bufio.NewScanner(strings.NewReader(testbin.Run(t, nm, "-nS", "--defined-only", bin)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || (f[2] != "t" && f[2] != "T" && f[2] != "W") {
			continue
		}
		addr, _ := strconv.ParseUint(f[0], 16, 64)
		size, _ := strconv.ParseUint(f[1], 16, 64)
		out = append(out, nmSym{addr, size, f[3]})
	}
	return out
}

// fragmentSuffix matches the moved-code naming conventions, written here
// independently of the code under test.
var fragmentSuffix = regexp.MustCompile(`^(.+)\.(?:cold|warm)(?:\.[0-9]+)?$|^(.+)\.(?:__part|part)\.[0-9]+$`)

func hasConflictAt(p *splitinfo.Proc, addr uint64) bool {
	return slices.ContainsFunc(p.Conflicts, func(c splitinfo.Conflict) bool { return c.Addr == addr })
}

// TestAgainstNM: every X.cold*, X.warm*, X.part.N and X.__part.N symbol
// is a fragment of procedure X, with the symbol's exact range, and the
// procedure's entry is symbol X.
func TestAgainstNM(t *testing.T) {
	nm := testbin.Tool(t, "nm")
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			tab, err := splitinfo.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			syms := nmSyms(t, nm, bin)
			addrOf := map[string][]uint64{}
			for _, s := range syms {
				addrOf[s.name] = append(addrOf[s.name], s.addr)
			}
			root := func(name string) string {
				for {
					m := fragmentSuffix.FindStringSubmatch(name)
					if m == nil {
						return name
					}
					parent := m[1] + m[2]
					if addrOf[parent] == nil {
						return name
					}
					name = parent
				}
			}
			checked := 0
			for _, s := range syms {
				if !fragmentSuffix.MatchString(s.name) || s.size == 0 {
					continue
				}
				want := root(s.name)
				if want == s.name {
					continue // no parent symbol: not a fragment of anything
				}
				loc, ok := tab.Lookup(s.addr)
				if !ok {
					t.Errorf("%s at %#x: not found", s.name, s.addr)
					continue
				}
				p, f := loc.Proc, loc.Fragment()
				checked++
				if !p.HasName(want) {
					t.Errorf("%s at %#x: in procedure %s, want %s", s.name, s.addr, p.Name, want)
				}
				if !slices.Contains(addrOf[want], p.Entry) {
					t.Errorf("%s: procedure entry %#x is not symbol %s at %#x", s.name, p.Entry, want, addrOf[want])
				}
				if loc.Frag == 0 {
					t.Errorf("%s: is the entry fragment of %s", s.name, p.Name)
				}
				if f.Start != s.addr || f.Symbol != s.name {
					t.Errorf("%s: fragment starts at %#x with symbol %q", s.name, f.Start, f.Symbol)
				}
				if f.End != s.addr+s.size && !hasConflictAt(p, s.addr) {
					t.Errorf("%s: fragment ends at %#x, nm says %#x, and no conflict is recorded", s.name, f.End, s.addr+s.size)
				}
			}
			if checked == 0 && name != "bolt-input" {
				t.Error("no fragment symbols checked: is the binary split?")
			}
			t.Logf("%d fragment symbols checked", checked)
		})
	}
}

type dwarfSub struct {
	name   string
	ranges []splitinfo.Range
}

var (
	dieRe   = regexp.MustCompile(`^0x[0-9a-f]+:\s+(DW_TAG_\w+)`)
	rangeRe = regexp.MustCompile(`\[0x([0-9a-f]+), 0x([0-9a-f]+)\)`)
	attrRe  = regexp.MustCompile(`^\s+(DW_AT_\w+)\s+\((.*)$`)
	quoteRe = regexp.MustCompile(`"([^"]*)"`)
)

// dwarfdumpSubprograms parses llvm-dwarfdump --debug-info output.
func dwarfdumpSubprograms(t *testing.T, out string) []dwarfSub {
	var subs []dwarfSub
	var cur *dwarfSub
	var lo, hi uint64
	inRanges := false
	flush := func() {
		if cur != nil {
			if lo != 0 && hi > lo && len(cur.ranges) == 0 {
				cur.ranges = append(cur.ranges, splitinfo.Range{Start: lo, End: hi})
			}
			if len(cur.ranges) > 0 {
				subs = append(subs, *cur)
			}
		}
		cur, lo, hi, inRanges = nil, 0, 0, false
	}
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		if m := dieRe.FindStringSubmatch(line); m != nil {
			flush()
			if m[1] == "DW_TAG_subprogram" {
				cur = &dwarfSub{}
			}
			continue
		}
		if cur == nil {
			continue
		}
		if m := attrRe.FindStringSubmatch(line); m != nil {
			inRanges = m[1] == "DW_AT_ranges"
			switch m[1] {
			case "DW_AT_name", "DW_AT_abstract_origin", "DW_AT_specification":
				if q := quoteRe.FindStringSubmatch(m[2]); q != nil && cur.name == "" {
					cur.name = q[1]
				}
			case "DW_AT_low_pc":
				lo, _ = strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(m[2], "0x"), ")"), 16, 64)
			case "DW_AT_high_pc":
				hi, _ = strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(m[2], "0x"), ")"), 16, 64)
			}
		}
		if inRanges {
			for _, r := range rangeRe.FindAllStringSubmatch(line, -1) {
				s, _ := strconv.ParseUint(r[1], 16, 64)
				e, _ := strconv.ParseUint(r[2], 16, 64)
				if s != 0 && s < e {
					cur.ranges = append(cur.ranges, splitinfo.Range{Start: s, End: e})
				}
			}
		}
	}
	flush()
	return subs
}

// TestAgainstDwarfdump: every range of every DWARF subprogram with code is
// exactly a fragment, all ranges of one subprogram are in one procedure,
// and a multi-range subprogram's procedure has its entry at its symbol,
// whichever range DWARF lists first.
func TestAgainstDwarfdump(t *testing.T) {
	dd := testbin.Tool(t, "llvm-dwarfdump-22", "llvm-dwarfdump-19", "llvm-dwarfdump")
	nm := testbin.Tool(t, "nm")
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			tab, err := splitinfo.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			symAt := map[uint64]bool{}
			for _, s := range nmSyms(t, nm, bin) {
				symAt[s.addr] = true
			}
			subs := dwarfdumpSubprograms(t, testbin.Run(t, dd, "--debug-info", bin))
			multi := 0
			for _, sub := range subs {
				var owner *splitinfo.Proc
				for _, r := range sub.ranges {
					loc, ok := tab.Lookup(r.Start)
					if !ok {
						t.Errorf("%s: range %#x not found", sub.name, r)
						continue
					}
					f := loc.Fragment()
					if f.Range != r && !hasConflictAt(loc.Proc, r.Start) {
						t.Errorf("%s: DWARF range %#x, fragment %#x (%s)", sub.name, r, f.Range, loc.Proc.Name)
					}
					if owner == nil {
						owner = loc.Proc
					} else if owner != loc.Proc && !hasConflictAt(owner, r.Start) {
						t.Errorf("%s: range %#x in %s, other ranges in %s", sub.name, r, loc.Proc.Name, owner.Name)
					}
				}
				if owner == nil || len(sub.ranges) < 2 {
					continue
				}
				multi++
				if !symAt[owner.Entry] {
					t.Errorf("%s: entry %#x of %s is not a symbol", sub.name, owner.Entry, owner.Name)
				}
				if owner.SourceName != sub.name {
					t.Errorf("%s: procedure %s has DWARF name %q", sub.name, owner.Name, owner.SourceName)
				}
			}
			if len(subs) == 0 {
				t.Fatal("llvm-dwarfdump output parsed to no subprograms")
			}
			t.Logf("%d subprograms, %d with several ranges", len(subs), multi)
		})
	}
}

type objInst struct {
	mnemonic string
	target   uint64 // direct branch target, 0 if none
	indirect bool
}

var objLineRe = regexp.MustCompile(`^\s*([0-9a-f]+):\s+(\S+)(?:\s+(\S+))?`)

func objdumpInsts(t *testing.T, objdump, bin string) map[uint64]objInst {
	out := testbin.Run(t, objdump, "-d", "--no-show-raw-insn", bin)
	insts := map[uint64]objInst{}
	for line := range strings.Lines(out) {
		m := objLineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		addr, err := strconv.ParseUint(m[1], 16, 64)
		if err != nil {
			continue
		}
		mn := m[2]
		if mn == "bnd" || mn == "notrack" || mn == "rep" || mn == "repz" {
			f := strings.Fields(line[strings.Index(line, mn)+len(mn):])
			if len(f) > 0 {
				mn, m[3] = f[0], ""
				if len(f) > 1 {
					m[3] = f[1]
				}
			}
		}
		inst := objInst{mnemonic: mn}
		if strings.HasPrefix(mn, "j") || strings.HasPrefix(mn, "call") || strings.HasPrefix(mn, "loop") {
			if strings.HasPrefix(m[3], "*") {
				inst.indirect = true
			} else if v, err := strconv.ParseUint(m[3], 16, 64); err == nil {
				inst.target = v
			}
		}
		insts[addr] = inst
	}
	return insts
}

// TestBranchSitesAgainstObjdump: every recorded branch site is, in
// objdump's disassembly, a direct branch into the fragment or an indirect
// jump; every direct branch objdump shows from another fragment into a
// moved fragment is recorded.
func TestBranchSitesAgainstObjdump(t *testing.T) {
	objdump := testbin.Tool(t, "objdump")
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			tab, err := splitinfo.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			insts := objdumpInsts(t, objdump, bin)
			sites := 0
			for p := range tab.Split() {
				for i := range p.Fragments[1:] {
					f := &p.Fragments[i+1]
					for _, s := range f.BranchSites {
						sites++
						in, ok := insts[s]
						switch {
						case !ok:
							t.Errorf("%s: site %#x is not an instruction boundary in objdump", f.Symbol, s)
						case in.indirect:
						case !f.Contains(in.target):
							t.Errorf("%s: site %#x is %s to %#x, outside [%#x,%#x)", f.Symbol, s, in.mnemonic, in.target, f.Start, f.End)
						}
					}
					if f.BranchAddr != 0 && !slices.Contains(f.BranchSites, f.BranchAddr) {
						t.Errorf("%s: branch_addr %#x is not among the sites", f.Symbol, f.BranchAddr)
					}
				}
				// Completeness: objdump's direct branches between fragments.
				for j := range p.Fragments {
					src := &p.Fragments[j]
					for addr, in := range insts {
						if !src.Contains(addr) || in.target == 0 {
							continue
						}
						k := p.Fragment(in.target)
						if k <= 0 || k == j {
							continue
						}
						if !slices.Contains(p.Fragments[k].BranchSites, addr) {
							t.Errorf("%s: objdump shows %s %#x → %#x, not recorded", p.Name, in.mnemonic, addr, in.target)
						}
					}
				}
			}
			t.Logf("%d branch sites verified", sites)
		})
	}
}

// fragmentSymbols summarizes a procedure: its fragments' symbols in
// logical order.
func fragmentSymbols(p *splitinfo.Proc) []string {
	var out []string
	for _, f := range p.Fragments {
		out = append(out, f.Symbol+":"+f.Kind.String())
	}
	return out
}

// TestKnownLayouts checks the layouts each producer is known to give, as
// recorded in testdata/README.md.
func TestKnownLayouts(t *testing.T) {
	tests := []struct {
		bin, proc, unit string
		want            []string
		conflicts       int
	}{
		// Static functions with one name in two units stay apart.
		{"gcc-cold", "helper", "gcccold/a.c", []string{"helper:hot", "helper.cold:cold"}, 0},
		{"gcc-cold", "helper", "gcccold/b.c", []string{"helper:hot", "helper.cold:cold"}, 0},
		{"gcc-cold-nopie", "validate", "", []string{"validate:hot", "validate.cold:cold"}, 0},
		{"gcc-pgo", "checksum", "", []string{"checksum:hot", "checksum.cold:cold"}, 0},
		// clang-19 lists the cold range first in DW_AT_ranges.
		{"clang19-mfs", "report", "", []string{"report:hot", "report.cold:cold"}, 0},
		{"clang22-mfs", "main", "", []string{"main:hot", "main.cold:cold"}, 0},
		// Logical order from the BB address map's block IDs: the part
		// holding line 53's blocks precedes the cold part holding line
		// 57's, although the entry branches to the cold part first.
		{"clang19-bbsections", "dispatch", "", []string{"dispatch:hot", "dispatch.__part.1:part", "dispatch.cold:cold"}, 0},
		{"clang22-bbsections", "scan", "", []string{"scan:hot", "scan.__part.1:part", "scan.cold:cold"}, 0},
		{"bolt19", "tally", "", []string{"tally:hot", "tally.cold.0:cold"}, 0},
		{"bolt22", "lookup", "", []string{"lookup:hot", "lookup.cold.0:cold"}, 0},
		// BOLT over a GCC-split input: three fragments, GCC's in no DWARF range.
		{"bolt22-over-gcc", "tally", "", []string{"tally:hot", "tally.cold.0:cold", "tally.cold:cold"}, 1},
		{"bolt19-over-gcc", "tally", "", []string{"tally:hot", "tally.cold.0:cold", "tally.cold:cold"}, 1},
		// cgo: the C function, and runtime/cgo's own split function.
		{"cgo", "C.c_classify", "", []string{"c_classify:hot", "c_classify.cold:cold"}, 0},
		{"cgo", "x_cgo_munmap", "", []string{"x_cgo_munmap:hot", "x_cgo_munmap.cold:cold"}, 0},
	}
	for _, tt := range tests {
		bin := testbin.Path(t, tt.bin)
		tab, err := splitinfo.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		procs := tab.ByName(tt.proc)
		if tt.unit != "" {
			procs = slices.DeleteFunc(procs, func(p *splitinfo.Proc) bool { return p.CompUnit != tt.unit })
		}
		if len(procs) != 1 {
			t.Errorf("%s: %d procedures named %s in %q", tt.bin, len(procs), tt.proc, tt.unit)
			continue
		}
		p := procs[0]
		if diff := cmp.Diff(tt.want, fragmentSymbols(p)); diff != "" {
			t.Errorf("%s: %s fragments (-want +got):\n%s", tt.bin, tt.proc, diff)
		}
		if len(p.Conflicts) != tt.conflicts {
			t.Errorf("%s: %s has conflicts %v, want %d", tt.bin, tt.proc, p.Conflicts, tt.conflicts)
		}
		if p.Sources&splitinfo.FromDWARF == 0 || p.Sources&splitinfo.FromSymbols == 0 {
			t.Errorf("%s: %s sources %v, want symbols and DWARF", tt.bin, tt.proc, p.Sources)
		}
		for _, f := range p.Fragments[1:] {
			if f.Kind != splitinfo.Part && f.BranchAddr == 0 {
				t.Errorf("%s: %s has no branch site", tt.bin, f.Symbol)
			}
		}
	}
}

// TestDebugFormatsAgree: DWARF 4, DWARF 5 and compressed DWARF of the same
// program give the same procedures, but for the subprograms' offsets,
// which every fragment has.
func TestDebugFormatsAgree(t *testing.T) {
	want, err := splitinfo.Open(testbin.Path(t, "gcc-cold"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gcc-cold-dwarf4", "gcc-cold-zlib", "gcc-cold-zstd"} {
		got, err := splitinfo.Open(testbin.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(slices.Collect(want.Split()), slices.Collect(got.Split()), cmpopts.IgnoreFields(splitinfo.Fragment{}, "Subprogram")); diff != "" {
			t.Errorf("%s differs from gcc-cold (-gcc-cold +%s):\n%s", name, name, diff)
		}
		for p := range got.Split() {
			for _, f := range p.Fragments {
				if f.Subprogram == 0 {
					t.Errorf("%s: fragment %s of %s has no subprogram", name, f.Symbol, p.Name)
				}
			}
		}
	}
}
