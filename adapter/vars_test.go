package adapter

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/adapter/locals"
	"github.com/splitdbg/splitdbg/internal/gdbtest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

var loadCfg = api.LoadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 64, MaxArrayValues: 64, MaxStructFields: -1}

// TestMovedFrameVariables stops on the cold line of every test binary and
// reads the arguments and locals of the moved frame through the Client,
// which plain Delve refuses ("unable to find function context"); gdb,
// which reads every DW_AT_ranges entry and resolves entry values from
// call sites, stopped at the same address, is the reference, value by
// value.
func TestMovedFrameVariables(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, tc := range coldCases {
		t.Run(tc.bin, func(t *testing.T) {
			s := startDelve(t, tc.bin, "cold")
			c := s.client
			file, line := coldLine(t, tc.src, tc.marker)
			if _, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
				t.Fatal(err)
			}
			st := <-c.Continue()
			if st.Err != nil || st.Exited || st.CurrentThread == nil {
				t.Fatalf("Continue: %+v", st)
			}
			pc := st.CurrentThread.PC

			ga, gl := gdbVariables(t, gdb, s.bin, pc-c.Resolver().ExecutableBias(), "cold")
			args, err := c.ListFunctionArgs(curScope, loadCfg)
			if ga == nil {
				// gdb has no variables here either (BOLT leaves GCC's
				// foo.cold out of foo's DWARF ranges).
				if err == nil || !strings.Contains(err.Error(), "DWARF describes no code") {
					t.Errorf("ListFunctionArgs = %v, %v; want an error: DWARF describes no code here (gdb: no symbol table info)", args, err)
				}
				return
			}
			if err != nil || len(args) == 0 {
				t.Fatalf("ListFunctionArgs = %v, %v", args, err)
			}
			locals, err := c.ListLocalVariables(curScope, loadCfg)
			if err != nil {
				t.Fatalf("ListLocalVariables: %v", err)
			}
			if !tc.delveFirst {
				_, perr := s.plain.ListFunctionArgs(curScope, loadCfg)
				if perr == nil || !strings.Contains(perr.Error(), "unable to find function context") {
					t.Errorf("plain ListFunctionArgs: %v; want Delve 1.27's \"unable to find function context\"", perr)
				}
			}

			for _, cmp := range []struct {
				what      string
				ours      []api.Variable
				reference map[string]string
			}{{"args", args, ga}, {"locals", locals, gl}} {
				ours, unreadable := make(map[string]string), make(map[string]string)
				for _, v := range cmp.ours {
					unreadable[v.Name] = v.Unreadable
					if v.Flags&api.VariableShadowed == 0 {
						ours[v.Name] = gdbText(v)
					}
				}
				for name, want := range cmp.reference {
					got, ok := ours[name]
					switch {
					case !ok && want == "<optimized out>":
					case !ok:
						t.Errorf("%s: gdb shows %s = %s; the Client has no %s", cmp.what, name, want, name)
					case got != want:
						t.Errorf("%s: %s = %s; gdb shows %s (%s)", cmp.what, name, got, want, unreadable[name])
					}
				}
				for name, got := range ours {
					if _, ok := cmp.reference[name]; !ok {
						t.Errorf("%s: the Client shows %s = %s; gdb shows no %s", cmp.what, name, got, name)
					}
				}
			}
		})
	}
}

// gdbVariables runs bin under gdb to the link-time address pc and returns
// "info args" and "info locals", each variable's value as gdb prints it
// with pointers into the stack or heap, which differ between runs,
// replaced by "0x…"; nil maps when gdb has no debugging information
// there.
func gdbVariables(t *testing.T, gdb, bin string, pc uint64, args ...string) (map[string]string, map[string]string) {
	t.Helper()
	// Where gdb loads a PIE depends on its segments' alignment: name the
	// address by its fragment's symbol.
	sym, off := gdbtest.SymbolOf(t, bin, pc)
	at := fmt.Sprintf("*('%s'+%#x)", sym, off)
	out, _ := testbin.RunCombined(t, gdb, append([]string{"-nx", "-batch",
		"-ex", "set debuginfod enabled off", "-ex", "set width 0", "-ex", "set print pretty off",
		"-ex", "handle SIGURG SIGPIPE nostop noprint", "-ex", "set language c", // gdb 13 asserts on C symbols of a cgo binary in Go mode
		"-ex", "break " + at, "-ex", "run",
		"-ex", "echo @@args\\n", "-ex", "info args", "-ex", "echo @@locals\\n", "-ex", "info locals", "-ex", "echo @@end\\n",
		"--args", bin}, args...)...)
	sections := map[string]map[string]string{"args": {}, "locals": {}}
	var cur map[string]string
	for _, ln := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(ln, "@@"):
			cur = sections[strings.TrimPrefix(ln, "@@")]
		case cur != nil:
			if name, val, ok := strings.Cut(ln, " = "); ok && !strings.Contains(name, " ") {
				cur[name] = gdbPointers.ReplaceAllString(val, "0x…")
			}
		}
	}
	if !strings.Contains(out, "@@end") {
		t.Fatalf("gdb did not stop at %s:\n%s", at, out)
	}
	if strings.Contains(out, "No symbol table info available.") {
		return nil, nil
	}
	return sections["args"], sections["locals"]
}

var gdbPointers = regexp.MustCompile(`0x[0-9a-f]+`)

// gdbText renders a variable as gdb prints it, pointers as "0x…" (null as
// "0x0"), for comparing with gdb.
func gdbText(v api.Variable) string {
	return gdbTextPtr(v, func(p uint64) string {
		if p == 0 {
			return "0x0"
		}
		return "0x…"
	})
}

// gdbTextPtr is gdbText with pointers rendered by ptr.
func gdbTextPtr(v api.Variable, ptr func(uint64) string) string {
	if v.Unreadable != "" {
		return "<optimized out>"
	}
	switch v.Kind {
	case reflect.Struct:
		fields := make([]string, len(v.Children))
		for i, c := range v.Children {
			fields[i] = c.Name + " = " + gdbTextPtr(c, ptr)
		}
		return "{" + strings.Join(fields, ", ") + "}"
	case reflect.Array:
		if t := v.Children; len(t) > 0 && len(t) == int(v.Len) && strings.HasSuffix(t[0].Type, "char") && !slices.ContainsFunc(t, func(c api.Variable) bool { return c.Unreadable != "" }) {
			// gdb prints a char array as a string, without one
			// trailing NUL (its repeats elision aside).
			b := make([]byte, len(t))
			for i, c := range t {
				n, _ := strconv.ParseInt(c.Value, 10, 64)
				b[i] = byte(n)
			}
			if b[len(b)-1] == 0 {
				b = b[:len(b)-1]
			}
			return "\"" + gdbEscape(string(b)) + "\""
		}
		elems := make([]string, len(v.Children))
		for i, c := range v.Children {
			elems[i] = gdbTextPtr(c, ptr)
		}
		return "{" + strings.Join(elems, ", ") + "}"
	case reflect.String:
		if v.Base == 0 {
			return "0x0"
		}
		if strings.IndexFunc(v.Value, func(r rune) bool { return r < ' ' || r > '~' || r == '"' || r == '\\' }) >= 0 {
			return ptr(v.Base) + " \"" + gdbEscape(v.Value) + "\""
		}
		return ptr(v.Base) + " \"" + v.Value + "\""
	case reflect.Ptr, reflect.UnsafePointer:
		p, _ := strconv.ParseUint(v.Value, 10, 64)
		return ptr(p)
	case reflect.Int, reflect.Uint:
		if name, _, ok := strings.Cut(v.Value, " ("); ok {
			return name // an enumerator
		}
		if strings.HasSuffix(v.Type, "char") {
			n, _ := strconv.ParseInt(v.Value, 10, 64)
			return v.Value + " " + gdbChar(byte(n))
		}
	}
	return v.Value
}

// gdbEscape escapes a C string as gdb prints it: octal for bytes outside
// printable ASCII, gdb's repeat elision aside.
func gdbEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= ' ' && c <= '~':
			b.WriteByte(c)
		default:
			if e, ok := cEscapes[c]; ok {
				b.WriteString(e)
			} else {
				fmt.Fprintf(&b, "\\%03o", c)
			}
		}
	}
	return b.String()
}

var cEscapes = map[byte]string{'\a': `\a`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\v': `\v`, 0x1b: `\033`}

func gdbChar(c byte) string {
	if c == '\'' || c == '\\' {
		return `'\` + string(c) + `'`
	}
	if c >= ' ' && c <= '~' {
		return "'" + string(c) + "'"
	}
	if e, ok := cEscapes[c]; ok {
		return "'" + e + "'"
	}
	return fmt.Sprintf(`'\%03o'`, c)
}

// TestVariablesAsDelve stops where Delve can read variables — the entry of
// each split function and a hot line of vars — and checks that package
// locals, run on the same frame, builds the api.Variable values Delve
// sends, field by field (LocationExpr aside: Delve prints runtime PCs).
// Where Delve is wrong the difference is listed and checked:
//   - DW_OP_entry_value: Delve fails ("invalid instruction 0xa3"); locals
//     reads the value from the caller's call site;
//   - DW_FORM_loclistx (clang's DWARF 5): Delve fails ("could not
//     interpret location attribute Location");
//   - enumerations: Delve says "unknown type: *godwarf.EnumType";
//   - unsigned char: Delve reads it as signed (200 is -56);
//   - arrays without DW_AT_byte_size (GCC's): Delve reads every element
//     at the array's address.
func TestVariablesAsDelve(t *testing.T) {
	type stop struct{ bin, loc string }
	var stops []stop
	for _, tc := range coldCases {
		if !tc.delveFirst { // else Delve knows no function at the entry
			stops = append(stops, stop{tc.bin, tc.fn})
		}
	}
	stops = append(stops, stop{"vars", "vars.c:" + itoa(lineOf(t, "vars/vars.c", "return local.x + arr[2]"))})
	for _, st := range stops {
		t.Run(st.bin+"/"+st.loc, func(t *testing.T) {
			s := startDelve(t, st.bin)
			c := s.client
			locs, _, err := c.FindLocation(curScope, st.loc, true, nil)
			if err != nil || len(locs) != 1 {
				t.Fatalf("FindLocation(%s) = %v, %v", st.loc, locs, err)
			}
			if _, err := c.CreateBreakpoint(&api.Breakpoint{Addrs: locs[0].PCs}); err != nil {
				t.Fatal(err)
			}
			if state := <-c.Continue(); state.Err != nil || state.Exited {
				t.Fatalf("Continue: %+v", state)
			}
			regs, err := c.topRegisters(-1)
			if err != nil {
				t.Fatal(err)
			}
			u := &unwinder{res: c.res, mem: &memory{read: c.readMemory}}
			rd, fr, err := c.localsFrame(u, &regs, true, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Which locals are visible depends on the line (a local is
			// from the line after its declaration): take Delve's.
			ps, err := s.plain.GetState()
			if err != nil {
				t.Fatal(err)
			}
			fr.Line = ps.CurrentThread.Line
			for _, w := range []struct {
				which         locals.Which
				delve, client func(api.EvalScope, api.LoadConfig) ([]api.Variable, error)
			}{{locals.Args, s.plain.ListFunctionArgs, c.ListFunctionArgs}, {locals.Locals, s.plain.ListLocalVariables, c.ListLocalVariables}} {
				want, err := w.delve(curScope, loadCfg)
				if err != nil {
					t.Fatal(err)
				}
				got, err := rd.Variables(fr, w.which, loadCfg)
				if err != nil {
					t.Fatal(err)
				}
				// The Client gives Delve's variables but for those Delve
				// gives up on, which it reads.
				repaired := slices.Clone(want)
				for i, v := range repaired {
					if j := slices.IndexFunc(got, func(g api.Variable) bool { return g.Name == v.Name }); DelveGaveUp(v.Unreadable) && j >= 0 {
						repaired[i] = got[j]
					}
				}
				fromClient, err := w.client(curScope, loadCfg)
				if diff := cmp.Diff(repaired, fromClient, cmpopts.EquateEmpty()); err != nil || diff != "" {
					t.Errorf("Client variables (%v): %v (-Delve repaired +Client):\n%s", w.which, err, diff)
				}
				for i := range want {
					forgiveDelve(t, &want[i], got)
				}
				// Delve numbers the fake addresses of values in registers.
				fake := cmp.FilterPath(func(p cmp.Path) bool {
					sf, ok := p.Last().(cmp.StructField)
					if !ok || sf.Name() != "Addr" {
						return false
					}
					x, y := p.Index(-2).Values()
					return x.Interface().(api.Variable).Flags&api.VariableFakeAddress != 0 &&
						y.Interface().(api.Variable).Flags&api.VariableFakeAddress != 0
				}, cmp.Ignore())
				opts := []cmp.Option{cmpopts.IgnoreFields(api.Variable{}, "LocationExpr"), cmpopts.EquateEmpty(), fake}
				if diff := cmp.Diff(want, got, opts...); diff != "" {
					t.Errorf("variables (%v) (-Delve +locals):\n%s", w.which, diff)
				}
			}
		})
	}
}

// forgiveDelve replaces a variable Delve gets wrong in a documented way
// by locals' reading of it, after checking that the two differ as
// documented.
func forgiveDelve(t *testing.T, want *api.Variable, got []api.Variable) {
	i := slices.IndexFunc(got, func(v api.Variable) bool { return v.Name == want.Name })
	if i < 0 {
		return
	}
	g := &got[i]
	switch {
	case DelveGaveUp(want.Unreadable):
		if g.Unreadable == "" {
			*want = *g
		}
	case want.Unreadable == "unknown type: *godwarf.EnumType":
		if _, _, ok := strings.Cut(g.Value, " ("); ok && g.Kind == reflect.Int {
			*want = *g
		}
	case want.Kind == reflect.Int && want.Type == "unsigned char":
		n, _ := strconv.ParseInt(want.Value, 10, 64)
		if g.Kind == reflect.Uint && g.Value == strconv.FormatUint(uint64(uint8(n)), 10) {
			*want = *g
		}
	case want.Kind == reflect.Array && len(want.Children) > 1 && want.Children[1].Addr == want.Addr:
		if len(g.Children) == len(want.Children) && g.Children[1].Addr != g.Addr {
			*want = *g
		}
	}
	for j := range want.Children {
		forgiveDelve(t, &want.Children[j], g.Children)
	}
}

// lineOf returns the line of the test source file that contains text.
func lineOf(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testbin.Dir(), "..", "src", file))
	if err != nil {
		t.Fatal(err)
	}
	for n, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			return n + 1
		}
	}
	t.Fatalf("%s has no line with %q", file, text)
	return 0
}

// TestMovedFrameEval evaluates expressions on the locals of a moved frame
// (vars' cold line), and reads the arguments of a moved frame that is not
// the innermost: inspect's, from the cold function note it calls.
func TestMovedFrameEval(t *testing.T) {
	s := startDelve(t, "vars", "cold")
	c := s.client
	file, line := coldLine(t, "vars/vars.c", "inspect")
	if _, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
		t.Fatal(err)
	}
	if st := <-c.Continue(); st.Err != nil || st.Exited {
		t.Fatalf("Continue: %+v", st)
	}
	for expr, want := range map[string]string{
		"n":             "123",
		"name":          "first",
		"local.label":   "origin",
		"(local).tag":   "200",
		"arr[3]":        "126",
		"pt.x":          "3",
		"(*pt).color":   "GREEN (5)",
		"pt.label":      "origin",
		"col":           "BLUE (6)",
		"big":           "1099511627776",
		"ratio":         "30.75",
		"*msg":          "109", // 'm'
		"local.weight":  "2.5",
		"arr[1]":        "124",
		"(pt).weight":   "2.5",
		"local.color":   "GREEN (5)",
		"msg":           "moved",
		"local.y":       "-4",
		"pt.tag":        "200",
		"(*(pt)).label": "origin",
		// A typedef in a cast.
		"((point_t *)pt)->x":           "3",
		"(*(const point_t *)pt).label": "origin",
		// Arithmetic on locals, as C would compute it.
		"n*2 + 1":          "247",
		"local.x + arr[3]": "129", // what note prints
		"ratio / 2":        "15.375",
		"n > 100":          "true",
		"-local.y":         "4",
		"arr[3] / 4":       "31",
		"-arr[3] / 4":      "-31",
		"n % 7":            "4",
		"col == 6":         "true",
		"!(n > 100)":       "false",
		"big >> 40":        "1",
	} {
		v, err := c.EvalVariable(curScope, expr, loadCfg)
		if err != nil || v.Value != want || v.Name != expr {
			t.Errorf("EvalVariable(%s) = %+v, %v; want %s", expr, v, err, want)
		}
	}
	for expr, want := range map[string]string{
		"arr[4]":    "out of bounds",
		"n.x":       "not a struct",
		"*n":        "not a pointer",
		"nosuch":    "nosuch", // not a local: Delve answers
		"local[0]":  "cannot be indexed",
		"n / 0":     "division by zero",
		"local + 1": "not a number",
		"!n":        "operator !",
	} {
		if v, err := c.EvalVariable(curScope, expr, loadCfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("EvalVariable(%s) = %+v, %v; want an error with %q", expr, v, err, want)
		}
	}

	// Up one frame: note's caller is inspect, in moved code.
	if _, err := c.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.note"}); err != nil {
		t.Fatal(err)
	}
	if st := <-c.Continue(); st.Err != nil || st.Exited {
		t.Fatalf("Continue: %+v", st)
	}
	up := api.EvalScope{GoroutineID: -1, Frame: 1}
	frames, err := c.Stacktrace(-1, 2, 0, 0, nil)
	if err != nil || len(frames) < 2 || frames[1].Function.Name() != "C.inspect" {
		t.Fatalf("Stacktrace = %v, %v; want frame 1 in C.inspect", frames, err)
	}
	args, err := c.ListFunctionArgs(up, loadCfg)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]string)
	for _, v := range args {
		got[v.Name] = gdbText(v)
	}
	// As gdb: n was in rax, which the call to note clobbered.
	if want := map[string]string{"n": "<optimized out>", "name": `0x… "first"`, "pt": "0x…"}; !maps.Equal(got, want) {
		t.Errorf("frame 1 args = %v; want %v", got, want)
	}
	if v, err := c.EvalVariable(up, "arr[2]", loadCfg); err != nil || v.Value != "125" {
		t.Errorf("frame 1 arr[2] = %+v, %v; want 125", v, err)
	}
	// Frame 0 is an ordinary function: Delve's answer.
	args, err = c.ListFunctionArgs(curScope, loadCfg)
	plain, perr := s.plain.ListFunctionArgs(curScope, loadCfg)
	if err != nil || perr != nil || !cmp.Equal(args, plain) {
		t.Errorf("frame 0 args = %v, %v; plain Delve %v, %v", args, err, plain, perr)
	}
}
