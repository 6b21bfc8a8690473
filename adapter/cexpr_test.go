package adapter

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/gdbtest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// movedExprs are C expressions a user prints at inv's cold lines: globals
// (stock, nstock, backorder), the file static failures, value's function
// static calls, and C's ->, *, &, indexes computed from locals and casts.
var movedExprs = map[string][]string{
	"withdraw": {
		"nstock", "backorder", "failures", "stock", "stock[0]", "stock[3].name",
		"idx", "n", "shortfall", "stock[idx]", "stock[idx].qty", "stock[n - shortfall]", "stock[idx+1].price",
		"it", "*it", "it->qty", "it->name", "it->name[1]", "(*it).price", "it[0].qty",
		"&stock[1]", "&it->price", "&nstock", "*&nstock", "&stock", "*stock[2].name",
		"(int)it->price", "(char)stock[0].qty", "(unsigned char)-1", "(long)nstock * 2", "(short)70000",
		"(double)shortfall / 2", "(int)2.75", "(unsigned)-shortfall", "~nstock", "(_Bool)shortfall",
		"(struct item *)it", "((struct item *)it)->name", "*(struct item *)&stock[2]", "(long)&stock[1] - (long)&stock[0]",
		"stock[idx].qty < n", "it->qty + shortfall == n", "nstock * (backorder + 1)",
		"stock[(int)1.9].name", "stock[nstock - 1].qty",
		"&shortfall", "&idx", "nosuch_global", "(struct nosuch *)it",
		"it + 1", "1 + it", "it - 1", "(it + 2)->name", "*(stock + 3)", "stock + idx", "&stock[3] - it", "it - stock",
		"it->name + 1", "(void *)it + 4", "(char *)it - (char *)stock", "(it + 1)->qty * 2", "it + 1 == &stock[2]",
		"sizeof(stock)", "sizeof stock", "sizeof(struct item)", "sizeof it->qty", "sizeof(stock) / sizeof(stock[0])",
		"sizeof(int) * 2", "sizeof(unsigned char)", "sizeof *it", "sizeof(long double)",
	},
	"value": {
		"calls", "idx", "it", "*it", "it->qty", "it->price", "it->qty * it->price", "stock[idx]", "stock[calls - 1]",
		"failures", "backorder", "&calls", "(long)calls", "(struct item *)it", "stock[calls % nstock].name",
	},
}

// TestMovedFrameExprAsGDB stops on inv's cold lines (code in withdraw.cold
// and value.cold, where Delve has no function) and prints each of
// movedExprs through the Client and through gdb 13 stopped at the same
// address in the same run of the program: the values are the same,
// value by value, and where gdb fails, the Client fails. Pointers are
// compared by what they point to when that is a symbol of the program
// (gdb's "<stock+16>"), else only for null-ness: the two runs load the
// program and its stack at different addresses. Where gdb reads past an
// array's end the Client, as Delve, says "out of bounds" (TestMovedFrameEval).
func TestMovedFrameExprAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		for _, fn := range []string{"withdraw", "value"} {
			t.Run(bin+"/"+fn, func(t *testing.T) {
				s := startDelve(t, bin, "cold")
				c := s.client
				file, line := coldLine(t, "inv/inv.c", fn)
				if _, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
					t.Fatal(err)
				}
				st := <-c.Continue()
				if st.Err != nil || st.Exited {
					t.Fatalf("Continue: %+v", st)
				}
				bias := c.Resolver().ExecutableBias()
				pc := st.CurrentThread.PC - bias
				if !c.MovedFrame(curScope) {
					t.Fatalf("the stop at %#x is not in moved code", pc)
				}
				// Plain Delve, for the README's table.
				for e, want := range map[string]string{
					"nstock":     "could not find symbol value for nstock",
					"stock[idx]": "could not find symbol value for stock",
					"it->qty":    "expected operand, found '>'",
					"(int)idx":   "expected 'EOF', found idx",
				} {
					if _, err := s.plain.EvalVariable(curScope, e, loadCfg); err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("plain Delve: print %s: %v; want %q", e, err, want)
					}
				}
				// info locals lists function statics (value's calls, DW_OP_addrx
				// in clang's DWARF 5) as gdb does.
				ga, gl := gdbVariables(t, gdb, s.bin, pc, "cold")
				for which, want := range map[string]map[string]string{"args": ga, "locals": gl} {
					list := c.ListFunctionArgs
					if which == "locals" {
						list = c.ListLocalVariables
					}
					vs, err := list(curScope, loadCfg)
					if err != nil {
						t.Fatalf("%s: %v", which, err)
					}
					got := make(map[string]string)
					for _, v := range vs {
						got[v.Name] = gdbText(v)
					}
					for name, v := range want {
						if p, sym, ok := strings.Cut(v, " <"); ok && p == "0x…" && !strings.Contains(sym, " ") {
							want[name] = p // the symbol gdb names a pointer by
						}
					}
					if !maps.Equal(got, want) {
						t.Errorf("%s: the Client shows %v; gdb %v", which, got, want)
					}
				}
				exprs := movedExprs[fn]
				want, gdbBias := gdbPrint(t, gdb, s.bin, pc, exprs, "cold")
				size := executableRange(t, s.bin)[1] // PIE: the image starts at 0
				for i, expr := range exprs {
					v, err := c.EvalVariable(curScope, expr, loadCfg)
					got := "<error>"
					if err == nil {
						got = linkPointers(cValue(*v), bias, size)
					}
					if w := linkPointers(want[i], gdbBias, size); got != w {
						t.Errorf("%s at %#x: print %s: the Client shows %s (%v); gdb %s", bin, pc, expr, got, err, w)
					}
				}
			})
		}
	}
}

// gdbPrint runs bin with args under gdb to the link-time address pc and
// prints each of exprs there: the values as gdb shows them, a pointer's
// type left out, "<error>" where gdb fails; and the load bias gdb ran the
// program at.
func gdbPrint(t *testing.T, gdb, bin string, pc uint64, exprs []string, args ...string) ([]string, uint64) {
	t.Helper()
	sym, off := gdbtest.SymbolOf(t, bin, pc)
	stop := gdbtest.Frames(t, gdb, bin, []string{fmt.Sprintf("*('%s'+%#x)", sym, off)}, 0, exprs, args)[0]
	if len(stop.Frames) == 0 {
		t.Fatalf("gdb shows no frame at %s+%#x", sym, off)
	}
	vals := make([]string, len(exprs))
	for i, e := range exprs {
		val, ok := stop.Frames[0].Prints[e]
		if !ok {
			val = "<error>"
		} else if typ, rest, ok := strings.Cut(val, ") 0x"); ok && strings.HasPrefix(typ, "(") {
			val = "0x" + rest // a pointer, after its type
		}
		vals[i] = val
	}
	return vals, stop.Bias
}

// cValue renders v as gdb prints it, pointers in hexadecimal; C's
// comparisons give an int in gdb, a bool in Delve's dialect (as plain
// Delve shows them in hot code).
func cValue(v api.Variable) string {
	if v.Kind == reflect.Bool && v.Type == "" && v.Unreadable == "" { // computed, not a _Bool
		return map[string]string{"true": "1", "false": "0"}[v.Value]
	}
	return gdbTextPtr(v, func(p uint64) string { return fmt.Sprintf("%#x", p) })
}

// hexPointer matches a pointer as gdb prints it, with the symbol gdb
// names it by.
var hexPointer = regexp.MustCompile(`0x[0-9a-f]+( <[^<>]+>)?`)

// linkPointers rewrites the pointers in s, a value of a program loaded at
// bias whose image spans size bytes: a pointer into the image becomes
// its link-time address ("@0x4050"), others (stack, heap, libraries:
// not comparable between two runs) "0x…", null stays "0x0".
func linkPointers(s string, bias, size uint64) string {
	return hexPointer.ReplaceAllStringFunc(s, func(m string) string {
		h, _, _ := strings.Cut(m, " ")
		p, err := strconv.ParseUint(strings.TrimPrefix(h, "0x"), 16, 64)
		switch {
		case err != nil:
			return m
		case p == 0:
			return "0x0"
		case p >= bias && p-bias < size:
			return fmt.Sprintf("@%#x", p-bias)
		}
		return "0x…"
	})
}

// TestMovedFramePrintTerminal prints C expressions at withdraw's cold line
// in Delve's terminal over the Client (splitdbg debug): the first stop is
// withdraw(1, 4), "nut" with 1 left, short by 3.
func TestMovedFramePrintTerminal(t *testing.T) {
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(bin, func(t *testing.T) {
			s := startDelve(t, bin, "cold")
			file, line := coldLine(t, "inv/inv.c", "withdraw")
			out := runTerminal(t, s.client, "break "+spec(file, line), "continue", "print nstock", "print it->qty",
				"print stock[idx].qty + shortfall", "print (struct item *)it == &stock[idx]", "print *(it + 1)", "print (unsigned char)-shortfall")
			for i, want := range []string{`^4\n$`, `^1\n$`, `^4\n$`, `^true\n$`, `^item \{name: "gear", qty: 0, price: 40\}\n$`, `^253\n$`} {
				match(t, "print", out[2+i], want)
			}
		})
	}
}
