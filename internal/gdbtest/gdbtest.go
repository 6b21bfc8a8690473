// Package gdbtest runs gdb 13 on a test binary and reads what it shows
// at each stop — the frames, inlined ones included, their arguments,
// locals, registers and printed expressions — for the differential tests
// of every door (the adapter's terminal, the proxy, DAP); and lists where
// splitdbg knowingly differs from gdb.
package gdbtest

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// Stop is where gdb stopped: its load bias of the executable and the
// frames it shows.
type Stop struct {
	Bias   uint64
	Frames []Frame
}

// Frame is one frame gdb shows at a stop.
type Frame struct {
	N      int
	Name   string
	Line   int
	Vars   [][2]string       // arguments, then locals: name, value as gdb prints it
	Regs   []Reg             // the callee-saved registers and the PC
	Prints map[string]string // expression → value as gdb prints it
}

// Reg is a register's value in a frame.
type Reg struct {
	Name string
	V    uint64
}

// Frames runs bin under gdb with a breakpoint at each of breaks (gdb
// locations) and returns, at each stop, every frame from frame from to
// main, inlined frames included: its name and line, the arguments and
// locals gdb shows, its callee-saved registers, and what gdb prints for
// each of exprs there (absent where gdb cannot print it).
func Frames(t testing.TB, gdb, bin string, breaks []string, from int, exprs []string, args []string) []Stop {
	t.Helper()
	var setup strings.Builder
	for _, b := range breaks {
		fmt.Fprintf(&setup, "gdb.execute(%q)\n", "break "+b)
	}
	fmt.Fprintf(&setup, "exprs = [")
	for _, e := range exprs {
		fmt.Fprintf(&setup, "%q, ", e)
	}
	fmt.Fprintf(&setup, "]\n")
	script := `import gdb
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set print symbol off")
gdb.execute("set print pretty off")
gdb.execute("set width 0")
` + setup.String() + `gdb.execute("run ` + strings.Join(args, " ") + `")
print("@@BIAS %x" % (int(gdb.parse_and_eval("(long)&main")) - ` + strconv.FormatUint(SymbolValue(t, bin, "main"), 10) + `))
while gdb.selected_inferior().pid != 0:
    print("@@STOP")
    n, fr = ` + strconv.Itoa(from) + `, gdb.newest_frame()
    for _ in range(n):
        fr = fr.older()
    while fr is not None and fr.name() is not None:
        gdb.execute("frame %d" % n, to_string=True)
        print("@@FRAME %d %s %d" % (n, fr.name(), fr.find_sal().line))
        print(gdb.execute("info args", to_string=True))
        print(gdb.execute("info locals", to_string=True))
        for r in ("rbx", "rbp", "r12", "r13", "r14", "r15", "rip"):
            print("@@REG %s %x" % (r, int(fr.read_register(r)) & 0xffffffffffffffff))
        for i, e in enumerate(exprs):
            try:
                print("@@PRINT %d %s" % (i, gdb.execute("output " + e, to_string=True)))
            except gdb.error:
                pass
        if fr.name() == "main":
            break
        n, fr = n + 1, fr.older()
    gdb.execute("continue")
`
	path := filepath.Join(t.TempDir(), "frames.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := testbin.RunCombined(t, gdb, "-batch", "-nx", "-iex", "set debuginfod enabled off", "-x", path, bin)
	if !strings.Contains(out, "@@BIAS") {
		t.Skipf("gdb ran no Python script (%v): %s", err, out)
	}
	var stops []Stop
	var bias uint64
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "@@BIAS "):
			bias, _ = strconv.ParseUint(line[7:], 16, 64)
		case line == "@@STOP":
			stops = append(stops, Stop{Bias: bias})
		case strings.HasPrefix(line, "@@REG ") && len(stops) > 0 && len(stops[len(stops)-1].Frames) > 0:
			var name string
			var v uint64
			fmt.Sscanf(line, "@@REG %s %x", &name, &v)
			fs := stops[len(stops)-1].Frames
			fs[len(fs)-1].Regs = append(fs[len(fs)-1].Regs, Reg{name, v})
		case strings.HasPrefix(line, "@@PRINT ") && len(stops) > 0 && len(stops[len(stops)-1].Frames) > 0:
			i, val, _ := strings.Cut(line[len("@@PRINT "):], " ")
			k, _ := strconv.Atoi(i)
			f := &stops[len(stops)-1].Frames[len(stops[len(stops)-1].Frames)-1]
			if f.Prints == nil {
				f.Prints = map[string]string{}
			}
			f.Prints[exprs[k]] = val
		case strings.HasPrefix(line, "@@FRAME ") && len(stops) > 0:
			var f Frame
			fmt.Sscanf(line, "@@FRAME %d %s %d", &f.N, &f.Name, &f.Line)
			st := &stops[len(stops)-1]
			st.Frames = append(st.Frames, f)
		default:
			name, val, ok := strings.Cut(line, " = ")
			if !ok || len(stops) == 0 || len(stops[len(stops)-1].Frames) == 0 || strings.ContainsAny(name, " \t") {
				continue
			}
			fs := stops[len(stops)-1].Frames
			fs[len(fs)-1].Vars = append(fs[len(fs)-1].Vars, [2]string{name, val})
		}
	}
	if len(stops) == 0 {
		t.Fatalf("gdb did not stop:\n%s", out)
	}
	return stops
}

// SymbolValue returns the link-time value of bin's symbol name.
func SymbolValue(t testing.TB, bin, name string) uint64 {
	t.Helper()
	syms, err := testbin.OpenELF(t, bin).Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", bin, name)
	return 0
}

// SymbolOf returns the code symbol of bin nearest below the link-time
// address pc (clang's fragment symbols have no size), and pc's offset
// from it.
func SymbolOf(t testing.TB, bin string, pc uint64) (string, uint64) {
	t.Helper()
	syms, err := testbin.OpenELF(t, bin).Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var best *elf.Symbol
	for i, s := range syms {
		typ := elf.ST_TYPE(s.Info)
		if (typ == elf.STT_FUNC || typ == elf.STT_NOTYPE) && s.Name != "" && s.Section != elf.SHN_UNDEF &&
			s.Value <= pc && (best == nil || s.Value > best.Value) {
			best = &syms[i]
		}
	}
	if best == nil {
		t.Fatalf("%s: no code symbol below %#x", bin, pc)
	}
	return best.Name, pc - best.Value
}

// Differences are the variables that differ from gdb for reasons
// other than registers: a test does not fail on them, and fails when one
// no longer differs (Seen), so the list stays true.
var Differences = []struct {
	Bin, Fn, Name string // Bin "": every binary
	Why           string
	// SomeStops is set for a difference that shows at some lines of
	// the function only: a test that stops elsewhere sees it agree.
	SomeStops bool
}{
	{"", "main", "argc", "splitdbg reads main's DW_OP_entry_value parameters at libc's call site; gdb: <optimized out>", false},
	{"", "main", "argv", "the same", false},
	{"", "main", "worth", "hidden on the line that declares it, as Delve hides it; gdb lists it", true},
	{"", "main", "r", "the same", true},
	{"", "main", "s", "the same", true},
	{"", "audit", "v", "the same", true},
	{"", "step", "extra", "the same", true},
	{"clang22-inl", "kind_name", "k", "clang gives the inlined call no entry for k, only the abstract kind_name has one: gdb lists it <optimized out>, Delve (in hot code) and splitdbg omit it", false},
	{"gcc-inl", "step", "flags", "GCC gives arrays no DW_AT_byte_size: Delve, in step's entry fragment, reads every element at the array's address", false},
}

// Seen records, per entry of Differences, what the comparisons of one
// test found: the value differed from gdb's, or agreed with it.
type Seen map[int]uint8

const (
	differed = 1 << iota
	agreed
)

// Known returns why variable name of function fn in bin differs from
// gdb, "" when the difference is not listed. Ask it about a value that
// differs from gdb's (or is missing on one side): it records that the
// listed difference was seen.
func Known(bin, fn, name string, seen Seen) string {
	if i := find(bin, fn, name); i >= 0 {
		seen[i] |= differed
		return Differences[i].Why
	}
	return ""
}

// Agree records that variable name of function fn in bin has gdb's
// value, for CheckSeen.
func Agree(bin, fn, name string, seen Seen) {
	if i := find(bin, fn, name); i >= 0 {
		seen[i] |= agreed
	}
}

func find(bin, fn, name string) int {
	for i, k := range Differences {
		if (k.Bin == "" || k.Bin == bin) && k.Fn == fn && k.Name == name {
			return i
		}
	}
	return -1
}

// CheckSeen fails t for each difference Differences lists for bin that
// the test compared and found equal to gdb's every time: it no longer
// differs (for one that shows at some stops only, the test cannot say).
func CheckSeen(t testing.TB, bin string, seen Seen) {
	t.Helper()
	for i, k := range Differences {
		if seen[i] == agreed && !k.SomeStops {
			t.Errorf("%s: %s of %s no longer differs from gdb (%s): drop it from gdbtest.Differences", bin, k.Name, k.Fn, k.Why)
		}
	}
}
