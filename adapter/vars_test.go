package adapter

import (
	"debug/elf"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"

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
	sym, off := symbolOf(t, bin, pc)
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

// symbolOf returns the code symbol of bin nearest below the link-time
// address pc (clang's fragment symbols have no size), and pc's offset
// from it.
func symbolOf(t *testing.T, bin string, pc uint64) (string, uint64) {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
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

var gdbPointers = regexp.MustCompile(`0x[0-9a-f]+`)

// gdbText renders a variable as gdb prints it, pointers as "0x…" (null as
// "0x0"), for comparing with gdb.
func gdbText(v api.Variable) string {
	if v.Unreadable != "" {
		return "<optimized out>"
	}
	ptr := func(p uint64) string {
		if p == 0 {
			return "0x0"
		}
		return "0x…"
	}
	switch v.Kind {
	case reflect.Struct:
		fields := make([]string, len(v.Children))
		for i, c := range v.Children {
			fields[i] = c.Name + " = " + gdbText(c)
		}
		return "{" + strings.Join(fields, ", ") + "}"
	case reflect.Array:
		elems := make([]string, len(v.Children))
		for i, c := range v.Children {
			elems[i] = gdbText(c)
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
