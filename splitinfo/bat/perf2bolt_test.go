package bat_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"golang.org/x/arch/x86/x86asm"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo/bat"
)

// branchKey is one aggregated branch of an fdata profile: input function
// names and offsets of its source and target.
type branchKey struct {
	From    string
	FromOff uint64
	To      string
	ToOff   uint64
}

type branchCount struct{ Mispreds, Count uint64 }

// perf2bolt runs BOLT's profile aggregator of LLVM version v on a
// pre-aggregated profile of the BOLTed binary bin and returns the branches
// of the fdata it writes. perf2bolt reads the binary's BAT note and
// writes offsets in the input binary ("boltedcollection").
func perf2bolt(t *testing.T, v, bin, profile string) map[branchKey]branchCount {
	t.Helper()
	tool := filepath.Join("/usr/lib/llvm-"+v+"/bin", "perf2bolt")
	if _, err := os.Stat(tool); err != nil {
		t.Skipf("perf2bolt %s is not installed (.ci/run installs bolt-%s): %v", v, v, err)
	}
	dir := t.TempDir()
	pa := filepath.Join(dir, "profile.txt")
	if err := os.WriteFile(pa, []byte(profile), 0o666); err != nil {
		t.Fatal(err)
	}
	fdata := filepath.Join(dir, "out.fdata")
	cmd := exec.Command(tool, "--pa", "-p", pa, "-o", fdata, bin)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	f, err := os.Open(fdata)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[branchKey]branchCount{}
	sc := bufio.NewScanner(f)
	bolted := false
	for sc.Scan() {
		line := sc.Text()
		if line == "boltedcollection" {
			bolted = true
			continue
		}
		// 1 FROM OFF 1 TO OFF MISPREDS COUNT (offsets in hex)
		fl := strings.Fields(line)
		if len(fl) != 8 || fl[0] != "1" || fl[3] != "1" {
			t.Errorf("fdata: unexpected line %q", line)
			continue
		}
		num := func(s string, base int) uint64 {
			n, err := strconv.ParseUint(s, base, 64)
			if err != nil {
				t.Errorf("fdata: line %q: %v", line, err)
			}
			return n
		}
		k := branchKey{baseName(fl[1]), num(fl[2], 16), baseName(fl[4]), num(fl[5], 16)}
		c := got[k]
		c.Mispreds += num(fl[6], 10)
		c.Count += num(fl[7], 10)
		got[k] = c
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !bolted {
		t.Fatalf("%s did not use BAT: no boltedcollection line", tool)
	}
	return got
}

// baseName strips BOLT's "/file/N" suffix of local function names.
func baseName(s string) string {
	name, _, _ := strings.Cut(s, "/")
	return name
}

// TestPerf2bolt feeds perf2bolt a branch from (and to) every byte of every
// BAT fragment of the BOLT outputs and checks that Translate maps each
// address to the same input function and offset as perf2bolt does.
func TestPerf2bolt(t *testing.T) {
	for _, tt := range bolted {
		for _, v := range []string{"19", "22"} {
			t.Run(tt.name+"/perf2bolt-"+v, func(t *testing.T) {
				bin := testbin.Path(t, tt.name)
				tab, err := bat.Open(bin)
				if err != nil {
					t.Fatal(err)
				}
				// perf2bolt ignores a branch whose source decodes as a
				// return instruction in the output binary: take note of
				// those sources (any byte can be one, e.g. the c3 of
				// "add %eax,%ebx" = 01 c3; LLVM counts far returns and iret).
				ef, err := elfx.Open(bin)
				if err != nil {
					t.Fatal(err)
				}
				defer ef.Close()
				var addrs []uint64
				isRet := map[uint64]bool{}
				for f := range tab.All() {
					code, err := ef.ReadVA(f.Addr, f.Size)
					if err != nil {
						t.Fatal(err)
					}
					for a := f.Addr; a < f.Addr+f.Size; a++ {
						addrs = append(addrs, a)
						inst, err := x86asm.Decode(code[a-f.Addr:], 64)
						isRet[a] = err == nil && isReturn(inst.Op)
					}
				}
				if len(addrs) < 1000 {
					t.Fatalf("only %d addresses in BAT fragments", len(addrs))
				}
				// Branch i goes from address i to a scattered address,
				// inside the function or across functions and fragments.
				// Each address is the source of one branch and the target
				// of one (the stride is coprime with the count).
				n := len(addrs)
				stride := 7919
				for gcd(stride, n) != 1 {
					stride++
				}
				var sb strings.Builder
				returns := 0
				want := map[branchKey]branchCount{}
				for i, from := range addrs {
					to := addrs[(i*stride+11)%n]
					count, mis := uint64(1+i%5), uint64(i%2)
					fmt.Fprintf(&sb, "B %x %x %d %d\n", from, to, count, mis)
					if isRet[from] {
						returns++
						continue
					}
					lf, ok1 := tab.Translate(from, true)
					lt, ok2 := tab.Translate(to, false)
					if !ok1 || !ok2 {
						t.Fatalf("Translate(%#x) %v, Translate(%#x) %v", from, ok1, to, ok2)
					}
					k := branchKey{lf.Function.Name, lf.InputOffset, lt.Function.Name, lt.InputOffset}
					c := want[k]
					c.Count += count
					c.Mispreds += mis
					want[k] = c
				}
				got := perf2bolt(t, v, bin, sb.String())
				if diff := gocmp.Diff(want, got); diff != "" {
					t.Errorf("%d branches: Translate vs perf2bolt %s fdata (-ours +perf2bolt):\n%s", n, v, diff)
				}
				t.Logf("%d branches (%d from returns, ignored), %d aggregated records agree", n, returns, len(want))
			})
		}
	}
}

// TestPerf2boltTraces feeds perf2bolt fall-through traces ("F START END
// COUNT": code ran straight from START to END) inside every BAT fragment
// and checks the fall-throughs that perf2bolt records against
// Func.Fallthroughs (see there for how perf2bolt 19 and 22 differ).
func TestPerf2boltTraces(t *testing.T) {
	for _, tt := range bolted {
		for _, v := range []string{"19", "22"} {
			t.Run(tt.name+"/perf2bolt-"+v, func(t *testing.T) {
				bin := testbin.Path(t, tt.name)
				tab, err := bat.Open(bin)
				if err != nil {
					t.Fatal(err)
				}
				var sb strings.Builder
				want := map[branchKey]branchCount{}
				n := 0
				for f := range tab.All() {
					p := f.Parent()
					for a := f.Addr; a < f.Addr+f.Size; a++ {
						// Traces of varying lengths, some to the last byte.
						end := min(a+uint64(1+n%97), f.Addr+f.Size-1)
						count := uint64(1 + n%3)
						n++
						fmt.Fprintf(&sb, "F %x %x %d\n", a, end, count)
						for i, j := range f.Fallthroughs(a, end) {
							in1, in2 := uint64(f.Entries[i].InputOffset), uint64(f.Entries[j].InputOffset)
							if v == "19" {
								in1, _ = f.Translate(uint64(f.Entries[i].OutputOffset), true)
								in2, _ = f.Translate(uint64(f.Entries[j].OutputOffset), false)
							}
							k := branchKey{p.Name, in1, p.Name, in2}
							c := want[k]
							c.Count += count
							want[k] = c
						}
					}
				}
				got := perf2bolt(t, v, bin, sb.String())
				if diff := gocmp.Diff(want, got); diff != "" {
					t.Errorf("%d traces: Fallthroughs vs perf2bolt %s fdata (-ours +perf2bolt):\n%s", n, v, diff)
				}
				t.Logf("%d traces, %d aggregated fall-throughs agree", n, len(want))
			})
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// isReturn is LLVM's MCInstrDesc::isReturn on x86: near and far returns
// and interrupt returns.
func isReturn(op x86asm.Op) bool {
	switch op {
	case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ:
		return true
	}
	return false
}
