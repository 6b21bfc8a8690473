package adapter

import (
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestCallerVariablesAsGDB stops at the first instruction of callees
// whose callers keep variables in callee-saved registers (inv's audit:
// total, i and to in rbp, rbx and r12 at -O2; main: got and cold) and
// compares the arguments and locals of every caller frame, up to main,
// value by value with gdb 13's "frame N" + "info args" + "info locals" at
// the same stops, and its callee-saved registers and PC with gdb's. At a callee's entry no callee-saved register has been
// saved yet: Delve's unwinder has no value for them in the caller
// ("register not available", or 0).
func TestCallerVariablesAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, tc := range []struct {
		bin     string
		args    []string
		callees []string // symbol prefixes: a stop at the entry of each
	}{
		{"gcc-inv", []string{"cold"}, []string{"value", "complain"}},
		{"clang22-inv", []string{"cold"}, []string{"value", "complain"}},
		{"vars", []string{"cold"}, []string{"sink", "note"}},
		{"demo", []string{"cold"}, []string{"warn", "scale"}},
	} {
		t.Run(tc.bin, func(t *testing.T) {
			s := startDelve(t, tc.bin, tc.args...)
			c := s.client
			entries := entrySymbols(t, s.bin, tc.callees)
			want := gdbCallerVariables(t, gdb, s.bin, entries, tc.args)
			img := executableRange(t, s.bin)
			for _, e := range entries {
				if _, err := c.CreateBreakpoint(&api.Breakpoint{Addr: e.Value + c.Resolver().ExecutableBias()}); err != nil {
					t.Fatal(err)
				}
			}
			compared := 0
			seen := map[int]bool{}
			stops := eachStop(t, c, want, func(stop int, g gdbStop) {
				frames, err := c.Stacktrace(-1, 10, 0, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, gf := range g.frames {
					if gf.n >= len(frames) || strings.TrimPrefix(frames[gf.n].Function.Name(), "C.") != gf.name {
						t.Errorf("stop %d: frame %d is not %s", stop+1, gf.n, gf.name)
						continue
					}
					scope := api.EvalScope{GoroutineID: -1, Frame: gf.n}
					args, err := c.ListFunctionArgs(scope, loadCfg)
					if err != nil {
						t.Fatalf("stop %d: frame %d args: %v", stop+1, gf.n, err)
					}
					locs, err := c.ListLocalVariables(scope, loadCfg)
					if err != nil {
						t.Fatalf("stop %d: frame %d locals: %v", stop+1, gf.n, err)
					}
					where := fmt.Sprintf("stop %d (%s), frame %d %s", stop+1, frames[0].Function.Name(), gf.n, gf.name)
					regs, err := c.ListScopeRegisters(scope, false)
					if err != nil {
						t.Fatalf("%s: registers: %v", where, err)
					}
					compared += compareRegisters(t, where, gf.regs, regs, g.bias, c.Resolver().ExecutableBias(), img)
					vs := append(args, locs...)
					gvars := slices.DeleteFunc(slices.Clone(gf.vars), func(v [2]string) bool {
						return knownDifference(tc.bin, gf.name, v[0], seen) != ""
					})
					vs = slices.DeleteFunc(vs, func(v api.Variable) bool { return knownDifference(tc.bin, gf.name, v.Name, seen) != "" })
					compared += compareVariables(t, where, gvars, vs, g.bias, c.Resolver().ExecutableBias(), img)
				}
			})
			if compared == 0 {
				t.Fatal("no variable compared")
			}
			for i, k := range callerDifferences {
				if (k.bin == "" || k.bin == tc.bin) && !seen[i] && slices.Contains(k.seenIn, tc.bin) {
					t.Errorf("%s: %s of %s no longer differs from gdb (%s): drop it from callerDifferences", tc.bin, k.name, k.fn, k.why)
				}
			}
			t.Logf("%d stops, %d values equal to gdb's", stops, compared)
		})
	}
}

// eachStop continues c until the program ends and calls f at each stop,
// numbered from 0, with gdb's stop of the same number; it returns the
// number of stops and fails unless gdb stopped as often.
func eachStop(t *testing.T, c *Client, want []gdbStop, f func(stop int, g gdbStop)) int {
	t.Helper()
	stop := 0
	for ; ; stop++ {
		st := <-c.Continue()
		if st.Exited {
			break
		}
		if st.Err != nil {
			t.Fatal(st.Err)
		}
		if stop >= len(want) {
			t.Fatalf("stop %d: gdb stopped only %d times", stop+1, len(want))
		}
		f(stop, want[stop])
	}
	if stop != len(want) {
		t.Errorf("%d stops, gdb %d", stop, len(want))
	}
	return stop
}

// callerDifferences are the variables that differ from gdb for reasons
// other than registers, not compared; each still differs in the binaries
// listed (the test fails when one no longer does, so the list stays true).
var callerDifferences = []struct {
	bin, fn, name string // bin "": every binary
	why           string
	seenIn        []string
}{
	{"", "main", "argc", "splitdbg reads main's DW_OP_entry_value parameters at libc's call site; gdb: <optimized out>",
		[]string{"gcc-inv", "clang22-inv", "vars", "demo"}},
	{"", "main", "argv", "the same", []string{"gcc-inv", "clang22-inv", "vars", "demo"}},
	{"", "main", "worth", "hidden on the line that declares it, as Delve hides it; gdb lists it", []string{"gcc-inv", "clang22-inv"}},
	{"", "main", "r", "the same", []string{"vars", "demo"}},
	{"", "main", "s", "the same", []string{"demo"}},
	{"", "audit", "v", "the same", []string{"gcc-inv", "clang22-inv"}},
	{"", "step", "extra", "the same", []string{"gcc-inl", "clang22-inl"}},
	{"clang22-inl", "kind_name", "k", "clang gives the inlined call no entry for k, only the abstract kind_name has one: gdb lists it <optimized out>, Delve (in hot code) and splitdbg omit it", []string{"clang22-inl"}},
	{"clang22-inl", "main", "prog", "DW_OP_piece with no location (an unknown part of a value) reads as 0; gdb: <optimized out>", []string{"clang22-inl"}},
	{"gcc-inl", "step", "flags", "GCC gives arrays no DW_AT_byte_size: Delve, in step's entry fragment, reads every element at the array's address", []string{"gcc-inl"}},
	{"clang22-inv", "main", "cold", "DW_OP_convert, which Delve's op package does not evaluate (issue 15, point 4)", []string{"clang22-inv"}},
	{"clang22-inv", "value", "calls", "a function static by DW_OP_addrx, which Delve's op package does not evaluate (issue 15, point 4)", []string{"clang22-inv"}},
}

// knownDifference returns why variable name of function fn in bin
// differs from gdb, "" when it does not, and marks the difference seen.
func knownDifference(bin, fn, name string, seen map[int]bool) string {
	for i, k := range callerDifferences {
		if (k.bin == "" || k.bin == bin) && k.fn == fn && k.name == name {
			seen[i] = true
			return k.why
		}
	}
	return ""
}

// entrySymbols returns the function symbols of bin named by one of the
// prefixes (complain matches GCC's complain.isra.0).
func entrySymbols(t *testing.T, bin string, prefixes []string) []elf.Symbol {
	t.Helper()
	syms, err := testbin.OpenELF(t, bin).Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var out []elf.Symbol
	for _, p := range prefixes {
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && (s.Name == p || strings.HasPrefix(s.Name, p+".") && !strings.Contains(s.Name, ".cold")) {
				out = append(out, s)
			}
		}
	}
	if len(out) != len(prefixes) {
		t.Fatalf("%s: entries %v for %v", bin, out, prefixes)
	}
	return out
}

// executableRange returns the link-time addresses the executable's
// loadable segments cover.
func executableRange(t *testing.T, bin string) [2]uint64 {
	r := [2]uint64{^uint64(0), 0}
	for _, p := range testbin.OpenELF(t, bin).Progs {
		if p.Type == elf.PT_LOAD {
			r[0], r[1] = min(r[0], p.Vaddr), max(r[1], p.Vaddr+p.Memsz)
		}
	}
	return r
}

type gdbStop struct {
	bias   uint64 // gdb's load bias of the executable
	frames []gdbFrame
}

type gdbFrame struct {
	n      int
	name   string
	line   int
	vars   [][2]string       // name, value as gdb prints it
	regs   []gdbReg          // the callee-saved registers and the PC
	prints map[string]string // expression → value as gdb prints it
}

type gdbReg struct {
	name string
	v    uint64
}

// gdbCallerVariables runs bin under gdb with a breakpoint at each entry
// and returns, at each stop, the arguments and locals gdb shows in every
// frame from 1 to main.
func gdbCallerVariables(t *testing.T, gdb, bin string, entries []elf.Symbol, args []string) []gdbStop {
	t.Helper()
	var breaks []string
	for _, e := range entries {
		breaks = append(breaks, fmt.Sprintf("*'%s'", e.Name))
	}
	return gdbFrames(t, gdb, bin, breaks, 1, nil, args)
}

// gdbFrames runs bin under gdb with a breakpoint at each of breaks (gdb
// locations) and returns, at each stop, every frame from frame from to
// main, inlined frames included: its name and line, the arguments and
// locals gdb shows, its callee-saved registers, and what gdb prints for
// each of exprs there (absent where gdb cannot print it).
func gdbFrames(t *testing.T, gdb, bin string, breaks []string, from int, exprs []string, args []string) []gdbStop {
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
print("@@BIAS %x" % (int(gdb.parse_and_eval("(long)&main")) - ` + strconv.FormatUint(symbolValue(t, bin, "main"), 10) + `))
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
	var stops []gdbStop
	var bias uint64
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "@@BIAS "):
			bias, _ = strconv.ParseUint(line[7:], 16, 64)
		case line == "@@STOP":
			stops = append(stops, gdbStop{bias: bias})
		case strings.HasPrefix(line, "@@REG ") && len(stops) > 0 && len(stops[len(stops)-1].frames) > 0:
			var name string
			var v uint64
			fmt.Sscanf(line, "@@REG %s %x", &name, &v)
			fs := stops[len(stops)-1].frames
			fs[len(fs)-1].regs = append(fs[len(fs)-1].regs, gdbReg{name, v})
		case strings.HasPrefix(line, "@@PRINT ") && len(stops) > 0 && len(stops[len(stops)-1].frames) > 0:
			i, val, _ := strings.Cut(line[len("@@PRINT "):], " ")
			k, _ := strconv.Atoi(i)
			f := &stops[len(stops)-1].frames[len(stops[len(stops)-1].frames)-1]
			if f.prints == nil {
				f.prints = map[string]string{}
			}
			f.prints[exprs[k]] = val
		case strings.HasPrefix(line, "@@FRAME ") && len(stops) > 0:
			var f gdbFrame
			fmt.Sscanf(line, "@@FRAME %d %s %d", &f.n, &f.name, &f.line)
			st := &stops[len(stops)-1]
			st.frames = append(st.frames, f)
		default:
			name, val, ok := strings.Cut(line, " = ")
			if !ok || len(stops) == 0 || len(stops[len(stops)-1].frames) == 0 || strings.ContainsAny(name, " \t") {
				continue
			}
			fs := stops[len(stops)-1].frames
			fs[len(fs)-1].vars = append(fs[len(fs)-1].vars, [2]string{name, val})
		}
	}
	if len(stops) == 0 {
		t.Fatalf("gdb did not stop:\n%s", out)
	}
	return stops
}

func symbolValue(t *testing.T, bin, name string) uint64 {
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

// compareVariables compares gdb's variables of a frame with the Client's
// and returns how many values it compared: as gdb prints them (gdbText,
// pointers as "0x…"), and pointers into the executable also by link-time
// address (each debugger runs the program at its own load address).
func compareVariables(t *testing.T, where string, want [][2]string, got []api.Variable, gdbBias, ourBias uint64, img [2]uint64) int {
	t.Helper()
	n := 0
	for _, w := range want {
		i := slices.IndexFunc(got, func(v api.Variable) bool { return v.Name == w[0] })
		if i < 0 {
			t.Errorf("%s: %s = %s in gdb, missing", where, w[0], w[1])
			continue
		}
		g := got[i]
		got = slices.Delete(got, i, i+1)
		n++
		if ours, theirs := gdbText(g), gdbPointers.ReplaceAllString(w[1], "0x…"); ours != theirs {
			t.Errorf("%s: %s = %s %s, gdb %s", where, w[0], ours, g.Unreadable, w[1])
			continue
		}
		if g.Kind != reflect.Pointer || g.Unreadable != "" {
			continue
		}
		ga, err1 := strconv.ParseUint(strings.Fields(w[1])[0], 0, 64)
		oa, err2 := strconv.ParseUint(g.Value, 10, 64)
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %s = %q, gdb %s", where, w[0], g.Value, w[1])
		} else if gl := ga - gdbBias; gl >= img[0] && gl < img[1] && gl != oa-ourBias {
			t.Errorf("%s: %s = %#x (link address %#x), gdb %s (%#x)", where, w[0], oa, oa-ourBias, w[1], gl)
		}
	}
	for _, g := range got {
		t.Errorf("%s: %s = %s, not in gdb", where, g.Name, gdbText(g))
	}
	return n
}

// TestCallerVariablesInStack checks that a stack loaded with variables
// (bt -full) carries the same variables of a caller frame as
// ListLocalVariables in that frame: audit's total, i and to at value's
// first instruction, which Delve reads without the callee-saved
// registers.
func TestCallerVariablesInStack(t *testing.T) {
	s := startDelve(t, "gcc-inv", "cold")
	c := s.client
	e := entrySymbols(t, s.bin, []string{"value"})[0]
	if _, err := c.CreateBreakpoint(&api.Breakpoint{Addr: e.Value + c.Resolver().ExecutableBias()}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second call: total 27, i 1
		if st := <-c.Continue(); st.Err != nil || st.Exited {
			t.Fatalf("continue: %+v", st)
		}
	}
	frames, err := c.Stacktrace(-1, 5, 0, 0, &loadCfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) < 2 || frames[1].Function.Name() != "C.audit" {
		t.Fatalf("frame 1 is not audit: %+v", frames)
	}
	locs, err := c.ListLocalVariables(api.EvalScope{GoroutineID: -1, Frame: 1}, loadCfg)
	if err != nil {
		t.Fatal(err)
	}
	got, want := map[string]string{}, map[string]string{}
	for _, v := range frames[1].Locals {
		got[v.Name] = gdbText(v)
	}
	for _, v := range locs {
		want[v.Name] = gdbText(v)
	}
	if !maps.Equal(got, want) || got["total"] != "27" || got["i"] != "1" {
		t.Errorf("frame 1 locals in the stack %v; ListLocalVariables %v; want total 27, i 1", got, want)
	}
}

// compareRegisters compares the registers gdb unwound for a frame with
// the Client's, values that are not addresses as they are, addresses in
// the executable as link-time addresses; stack and library addresses
// differ between two runs and are not compared.
func compareRegisters(t *testing.T, where string, want []gdbReg, got api.Registers, gdbBias, ourBias uint64, img [2]uint64) int {
	t.Helper()
	n := 0
	for _, w := range want {
		i := slices.IndexFunc(got, func(r api.Register) bool { return strings.EqualFold(r.Name, w.name) })
		if i < 0 {
			t.Errorf("%s: no register %s; gdb %#x", where, w.name, w.v)
			continue
		}
		v, err := strconv.ParseUint(strings.Fields(got[i].Value)[0], 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		switch gl := w.v - gdbBias; {
		case gl >= img[0] && gl < img[1]:
			if v-ourBias != gl {
				t.Errorf("%s: %s = %#x (link address %#x); gdb %#x (%#x)", where, w.name, v, v-ourBias, w.v, gl)
			}
		case w.v >= 1<<32 && w.v-gdbBias >= 1<<32:
			continue // a stack or library address
		case v != w.v:
			t.Errorf("%s: %s = %#x; gdb %#x", where, w.name, v, w.v)
		}
		n++
	}
	return n
}

// TestTerminalCallerLocals runs "frame 1 locals" and "frame 1 args" in
// Delve's terminal over the Client (splitdbg debug) at the second stop at
// value's first instruction, and compares each variable it prints with
// gdb's at the same stop: audit's total, i and to live in rbp, rbx and
// r12 there.
func TestTerminalCallerLocals(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(bin, func(t *testing.T) {
			s := startDelve(t, bin, "cold")
			e := entrySymbols(t, s.bin, []string{"value"})
			want := gdbCallerVariables(t, gdb, s.bin, e, []string{"cold"})
			if len(want) < 2 || len(want[1].frames) == 0 || want[1].frames[0].name != "audit" {
				t.Fatalf("gdb's second stop is not in a callee of audit: %+v", want)
			}
			at := fmt.Sprintf("*%#x", e[0].Value+s.client.Resolver().ExecutableBias())
			out := runTerminal(t, s.client, "break "+at, "continue", "continue", "frame 1 args", "frame 1 locals")
			printed := map[string]string{}
			for _, o := range out[3:] {
				for line := range strings.Lines(o) {
					if name, val, ok := strings.Cut(strings.TrimSpace(line), " = "); ok {
						printed[name] = val
					}
				}
			}
			n := 0
			for _, v := range want[1].frames[0].vars {
				if knownDifference(bin, "audit", v[0], map[int]bool{}) != "" || v[1] == "<optimized out>" {
					continue
				}
				n++
				if printed[v[0]] != v[1] {
					t.Errorf("frame 1: %s = %q; gdb %s\n%s%s", v[0], printed[v[0]], v[1], out[3], out[4])
				}
			}
			if n < 3 {
				t.Errorf("only %d of audit's variables compared", n)
			}
		})
	}
}
