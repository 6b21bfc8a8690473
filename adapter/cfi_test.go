package adapter

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/frame"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// TestCFIAgainstReadelf compares, row by row, the CFA and register rules
// splitdbg unwinds with (cfiRowAt over the entries Delve's
// pkg/dwarf/frame locates in .eh_frame) with readelf
// --debug-dump=frames-interp, for every row of every FDE; rows in moved
// fragments are counted apart, they must be among them.
func TestCFIAgainstReadelf(t *testing.T) {
	readelf := testbin.Tool(t, "readelf")
	for _, bin := range []string{"demo", "gcc-cold", "gcc-cold-nopie", "gcc-pgo", "bolt22", "bolt22-over-gcc", "clang22-bbsections", "clang22-inv", "cgo"} {
		t.Run(bin, func(t *testing.T) {
			r := newResolver(t, bin)
			tab, _ := r.exe.load()
			fdes, err := tab.frames()
			if err != nil {
				t.Fatal(err)
			}
			rows := readelfRows(t, testbin.Run(t, readelf, "--debug-dump=frames-interp", testbin.Path(t, bin)))
			var moved []splitinfo.Range
			for p := range tab.procs.Split() {
				for _, f := range p.Fragments[1:] {
					moved = append(moved, f.Range)
				}
			}
			checked, inMoved := 0, 0
			for _, row := range rows {
				checked++
				if slices.ContainsFunc(moved, func(m splitinfo.Range) bool { return m.Contains(row.loc) }) {
					inMoved++
				}
				fde, err := fdes.FDEForPC(row.loc)
				if err != nil {
					t.Errorf("no FDE at %#x", row.loc)
					continue
				}
				got, err := cfiRowAt(fde, row.loc)
				if err != nil {
					t.Errorf("%#x: %v", row.loc, err)
					continue
				}
				if c := cfaString(got.cfa); c != row.cfa {
					t.Errorf("%#x: CFA %s; readelf %s", row.loc, c, row.cfa)
				}
				for reg, want := range row.regs {
					rule, ok := got.rule(reg)
					if !ok {
						rule.Rule = frame.RuleUndefined // readelf: "u" for either
					}
					if g := ruleString(rule); g != want {
						t.Errorf("%#x: register %d %s; readelf %s", row.loc, reg, g, want)
					}
				}
			}
			if inMoved == 0 {
				t.Fatal("no CFI row in any moved fragment")
			}
			t.Logf("%d rows agree with readelf, %d of them in moved fragments", checked, inMoved)
		})
	}
}

type readelfRow struct {
	loc  uint64
	cfa  string
	regs map[uint64]string
}

// readelfRows parses the .eh_frame tables of readelf -wF.
func readelfRows(t *testing.T, out string) []readelfRow {
	regnum := map[string]uint64{"rax": 0, "rdx": 1, "rcx": 2, "rbx": 3, "rsi": 4, "rdi": 5, "rbp": 6, "rsp": 7,
		"r8": 8, "r9": 9, "r10": 10, "r11": 11, "r12": 12, "r13": 13, "r14": 14, "r15": 15, "ra": 16}
	var rows []readelfRow
	var cols []string
	inCIE := false
	var end uint64 // of the FDE: BOLT's tables end with a row there
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if strings.HasPrefix(sc.Text(), "Contents of the .debug_frame") {
			break
		}
		if slices.Contains(f, "FDE") || slices.Contains(f, "CIE") || slices.Contains(f, "ZERO") {
			// An entry's header (its table follows; a CIE's is the
			// initial row), or the end.
			cols, inCIE = nil, slices.Contains(f, "CIE")
			if _, pcs, ok := strings.Cut(sc.Text(), " pc="); ok {
				_, hi, _ := strings.Cut(pcs, "..")
				end, _ = strconv.ParseUint(hi, 16, 64)
			}
			continue
		}
		if inCIE {
			continue
		}
		if len(f) >= 2 && f[0] == "LOC" {
			cols = f[1:]
			continue
		}
		if len(f) != len(cols)+1 || len(cols) == 0 {
			continue
		}
		loc, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil || loc >= end {
			continue
		}
		row := readelfRow{loc: loc, cfa: f[1], regs: map[uint64]string{}}
		for i, c := range cols[1:] {
			if n, ok := regnum[c]; ok {
				row.regs[n] = f[i+2]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func cfaString(r frame.DWRule) string {
	if r.Rule != frame.RuleCFA {
		return "exp"
	}
	names := map[uint64]string{6: "rbp", 7: "rsp"}
	return fmt.Sprintf("%s+%d", names[r.Reg], r.Offset)
}

func ruleString(r frame.DWRule) string {
	switch r.Rule {
	case frame.RuleOffset:
		return fmt.Sprintf("c%+d", r.Offset)
	case frame.RuleUndefined, frame.RuleSameVal:
		return "u"
	}
	return fmt.Sprintf("rule%d", r.Rule)
}

// TestUnwindStep unwinds the first instruction of demo's scale.cold with
// registers and memory made up for it: the CFA is rsp+16, rbx is saved at
// CFA-16 and the return address at CFA-8 (readelf -wF).
func TestUnwindStep(t *testing.T) {
	r := newResolver(t, "demo")
	res, err := r.Resolve("demo.c:25")
	if err != nil {
		t.Fatal(err)
	}
	pc := res.Locs[0].PC
	const sp = 0x7ffc0000
	mem := map[uint64]uint64{sp: 0x1111, sp + 8: 0x10fa}
	u := unwinder{res: r, mem: &memory{read: func(addr uint64, n int) ([]byte, error) {
		b := make([]byte, n)
		for i := 0; i+8 <= n; i += 8 {
			v := mem[addr+uint64(i)]
			for k := range 8 {
				b[i+k] = byte(v >> (8 * k))
			}
		}
		return b, nil
	}}}
	var regs regSet
	regs.set(regRIP, pc)
	regs.set(regRSP, sp)
	regs.set(3, 7) // rbx in the callee
	caller, cfa, err := u.step(&regs, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cfa != sp+16 || caller.pc() != 0x10fa || caller.v[regRSP] != sp+16 || caller.v[3] != 0x1111 {
		t.Errorf("step: cfa %#x pc %#x rsp %#x rbx %#x; want %#x 0x10fa %#x 0x1111", cfa, caller.pc(), caller.v[regRSP], caller.v[3], sp+16, sp+16)
	}
	if _, _, err := u.step(&caller, false, 0); err == nil {
		t.Logf("main's frame unwinds too")
	}
}
