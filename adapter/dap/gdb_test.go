package dap

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-dap"

	"github.com/splitdbg/splitdbg/adapter"
	"github.com/splitdbg/splitdbg/internal/gdbtest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// gdbRun is a program run under the DAP server and under gdb 13 with
// breakpoints at the same addresses: source lines and functions as an
// editor sets them.
type gdbRun struct {
	bin, src string
	lines    []int
	funcs    []string
	exprs    []string // evaluated in frame 0 at every stop
}

var gdbRuns = []gdbRun{
	// withdraw's and value's cold lines (conditions, globals and C syntax
	// in a moved frame, the stop on the line set) and complain's entry
	// (its callers' variables in callee-saved registers).
	{"gcc-inv", "inv/inv.c", []int{42, 56}, []string{"complain"}, []string{"nstock", "backorder", "it->qty", "stock[idx].price", "shortfall", "calls", "n"}},
	{"clang22-inv", "inv/inv.c", []int{42, 56}, []string{"complain"}, []string{"nstock", "backorder", "it->qty", "stock[idx].price", "shortfall", "calls", "n"}},
	// Inlined frames in moved code.
	{"gcc-inl", "inl/inl.c", []int{35, 42}, nil, []string{"kinds[op->p5 - 1]", "op->p1", "at"}},
	{"clang22-inl", "inl/inl.c", []int{35, 42}, nil, []string{"kinds[op->p5 - 1]", "op->p1", "at"}},
}

// TestAsGDB runs each program through the DAP door and gdb 13 from the
// same breakpoints (gdbtest, the driver the terminal tests use) and
// compares, at every stop: the frames of stackTrace up to main, inlined
// ones included, with gdb's names and lines (frame 0 on the line the
// breakpoint was set on); every variable of every frame's scope whose
// value gdb prints as a number; and evaluate in frame 0. At the first
// stop in withdraw's moved frame it also sets a variable there.
func TestAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, run := range gdbRuns {
		t.Run(run.bin, func(t *testing.T) {
			bin := testbin.Path(t, run.bin)
			breaks := gdbBreaks(t, bin, run)
			want := gdbtest.Frames(t, gdb, bin, breaks, 0, run.exprs, []string{"cold"})
			path, err := filepath.Abs(filepath.Join(testbin.Dir(), "..", "src", run.src))
			if err != nil {
				t.Fatal(err)
			}
			c := dial(t, serve(t))
			launch(t, c, bin, "cold")
			var bps []map[string]any
			for _, l := range run.lines {
				bps = append(bps, map[string]any{"line": l})
			}
			call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{"source": map[string]any{"path": path}, "breakpoints": bps})
			var fbs []map[string]any
			for _, f := range run.funcs {
				fbs = append(fbs, map[string]any{"name": f})
			}
			call[*dap.SetFunctionBreakpointsResponse](c, "setFunctionBreakpoints", map[string]any{"breakpoints": fbs})
			call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
			seen := gdbtest.Seen{}
			compared := 0
			for stop := 0; ; stop++ {
				ev := c.waitStopOrEnd()
				if ev == nil {
					if stop != len(want) {
						t.Errorf("%d stops, gdb %d", stop, len(want))
					}
					break
				}
				if stop >= len(want) {
					t.Fatalf("stop %d: gdb stopped only %d times", stop+1, len(want))
				}
				g := want[stop]
				st := call[*dap.StackTraceResponse](c, "stackTrace", map[string]any{"threadId": ev.Body.ThreadId, "levels": 20})
				frames := st.Body.StackFrames
				var names, gnames []string
				for _, f := range frames[:min(len(frames), len(g.Frames))] {
					names = append(names, fmt.Sprintf("%s:%d", strings.TrimPrefix(f.Name, "C."), f.Line))
				}
				for _, gf := range g.Frames {
					gnames = append(gnames, fmt.Sprintf("%s:%d", gf.Name, gf.Line))
				}
				if d := delveLine(run.bin, names, gnames); d != "" {
					t.Logf("stop %d: %s", stop+1, d)
					names[0] = gnames[0]
				}
				if !slices.Equal(names, gnames) {
					t.Errorf("stop %d: stackTrace %v; gdb %v", stop+1, names, gnames)
				} else {
					for _, gf := range g.Frames {
						compared += compareScope(t, c, run.bin, stop, gf, frames[gf.N].Id, seen)
					}
				}
				for _, e := range run.exprs {
					w, ok := g.Frames[0].Prints[e]
					root := strings.FieldsFunc(e, func(r rune) bool { return r == '-' || r == '.' || r == '[' || r == ' ' })[0]
					if !ok || !isNumber(w) {
						continue
					}
					r := c.response(c.send("evaluate", map[string]any{"expression": e, "frameId": frames[0].Id, "context": "watch"}))
					switch got, ok := r.(*dap.EvaluateResponse); {
					case ok && got.Body.Result == w:
						compared++
						gdbtest.Agree(run.bin, g.Frames[0].Name, root, seen)
					case gdbtest.Known(run.bin, g.Frames[0].Name, root, seen) == "":
						t.Errorf("stop %d: evaluate %s: %s; gdb %s", stop+1, e, describe(r), w)
					}
				}
				if stop == 0 && run.src == "inv/inv.c" {
					compared += setInMovedFrame(t, c, frames[0].Id)
				}
				call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": ev.Body.ThreadId})
			}
			gdbtest.CheckSeen(t, run.bin, seen)
			if compared == 0 {
				t.Fatal("no value compared")
			}
			t.Logf("%d values equal to gdb's", compared)
			call[*dap.DisconnectResponse](c, "disconnect", map[string]any{})
		})
	}
}

// delveLine says why frame 0's line differs from gdb's, "" when it does
// not or for another reason: a stop at a breakpoint on a function Delve
// has in its table, where GCC puts the rows of the opening line and the
// first statements at the entry, is on Delve's line, the opening one
// (gdb: the statement's; README, "step").
func delveLine(bin string, ours, gdbs []string) string {
	if len(ours) == 0 || len(gdbs) == 0 || ours[0] == gdbs[0] || bin != "gcc-inv" || !strings.HasPrefix(ours[0], "complain:") {
		return ""
	}
	return fmt.Sprintf("frame 0 at %s, gdb %s: Delve's line at complain's entry", ours[0], gdbs[0])
}

// setInMovedFrame sets it->qty in withdraw's moved frame (frame) through
// setVariable on the struct it points to, reads it back with evaluate,
// and sets it back, so that the run goes on as gdb's; it returns the
// values it compared.
func setInMovedFrame(t *testing.T, c *client, frame int) int {
	t.Helper()
	sc := call[*dap.ScopesResponse](c, "scopes", map[string]any{"frameId": frame})
	vars := call[*dap.VariablesResponse](c, "variables", map[string]any{"variablesReference": sc.Body.Scopes[0].VariablesReference})
	i := slices.IndexFunc(vars.Body.Variables, func(v dap.Variable) bool { return v.Name == "it" })
	if i < 0 || vars.Body.Variables[i].VariablesReference == 0 {
		t.Fatalf("withdraw's moved frame has no it to expand: %s", describe(vars))
	}
	ref := vars.Body.Variables[i].VariablesReference
	// A pointer's child is what it points to; a struct's, its fields.
	for range 2 {
		kids := call[*dap.VariablesResponse](c, "variables", map[string]any{"variablesReference": ref})
		if slices.ContainsFunc(kids.Body.Variables, func(v dap.Variable) bool { return v.Name == "qty" }) {
			break
		}
		if len(kids.Body.Variables) != 1 {
			t.Fatalf("*it: %s", describe(kids))
		}
		ref = kids.Body.Variables[0].VariablesReference
	}
	before := evaluate(t, c, frame, "it->qty")
	for _, v := range []string{"42", before} {
		r := c.response(c.send("setVariable", map[string]any{"variablesReference": ref, "name": "qty", "value": v}))
		if _, ok := r.(*dap.SetVariableResponse); !ok {
			t.Fatalf("setVariable qty = %s in a moved frame: %s", v, describe(r))
		}
		if got := evaluate(t, c, frame, "it->qty"); got != v {
			t.Errorf("after setVariable qty = %s, it->qty is %s", v, got)
		}
	}
	return 2
}

// gdbBreaks returns gdb locations for the addresses the server's
// breakpoints of run get: each as its symbol and offset (gdb loads a PIE
// elsewhere).
func gdbBreaks(t *testing.T, bin string, run gdbRun) []string {
	r, err := adapter.NewResolver(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	specs := slices.Clone(run.funcs)
	for _, l := range run.lines {
		specs = append(specs, filepath.Base(run.src)+":"+strconv.Itoa(l))
	}
	var breaks []string
	for _, s := range specs {
		res, err := r.Resolve(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		for _, l := range res.Locs {
			sym, off := gdbtest.SymbolOf(t, bin, l.PC)
			breaks = append(breaks, fmt.Sprintf("*('%s'+%#x)", sym, off))
		}
	}
	return breaks
}

// compareScope compares the variables of a frame's scope with gdb's
// numbers in that frame and returns how many it compared.
func compareScope(t *testing.T, c *client, bin string, stop int, gf gdbtest.Frame, id int, seen gdbtest.Seen) int {
	t.Helper()
	sc := call[*dap.ScopesResponse](c, "scopes", map[string]any{"frameId": id})
	vars := call[*dap.VariablesResponse](c, "variables", map[string]any{"variablesReference": sc.Body.Scopes[0].VariablesReference})
	got := map[string]string{}
	for _, v := range vars.Body.Variables {
		got[v.Name] = v.Value
	}
	n := 0
	for _, v := range gf.Vars {
		if !isNumber(v[1]) {
			continue
		}
		switch {
		case got[v[0]] == v[1]:
			n++
			gdbtest.Agree(bin, gf.Name, v[0], seen)
		case gdbtest.Known(bin, gf.Name, v[0], seen) == "":
			t.Errorf("stop %d, frame %d %s: %s = %q; gdb %s", stop+1, gf.N, gf.Name, v[0], got[v[0]], v[1])
		}
	}
	return n
}

// isNumber reports whether gdb printed an integer.
func isNumber(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// waitStopOrEnd returns the next stopped event, nil when the program
// ends first.
func (c *client) waitStopOrEnd() *dap.StoppedEvent {
	c.tb.Helper()
	for {
		for i, m := range c.events {
			switch m := m.(type) {
			case *dap.StoppedEvent:
				c.events = append(c.events[:i], c.events[i+1:]...)
				return m
			case *dap.TerminatedEvent, *dap.ExitedEvent:
				return nil
			}
		}
		if m := c.read(); m != nil {
			if _, ok := m.(dap.EventMessage); ok {
				c.events = append(c.events, m)
			}
		}
	}
}

// TestStackBottomAsGDB compares the frames below main at a stop in
// withdraw's moved code, through the DAP door's stackTrace, with gdb 13's
// backtrace past main at the same address, with glibc's debug file
// (Debian's libc6-dbg): __libc_start_call_main at its line, then
// __libc_start_main_impl.
func TestStackBottomAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	frame := regexp.MustCompile(`(?m)^#\d+\s+(?:0x[0-9a-f]+ in )?(\w+) \(.*\) at (\S+):(\d+)$`)
	for _, name := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			breaks := gdbBreaks(t, bin, gdbRun{src: "inv/inv.c", lines: []int{42}})
			out, _ := testbin.RunCombined(t, gdb, "-batch", "-nx", "-iex", "set debuginfod enabled off",
				"-ex", "set backtrace past-main on", "-ex", "break "+breaks[0], "-ex", "run cold", "-ex", "bt", bin)
			var want []string
			for _, m := range frame.FindAllStringSubmatch(out, -1) {
				want = append(want, fmt.Sprintf("%s %s:%s", m[1], filepath.Base(m[2]), m[3]))
			}
			if !slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, "__libc_start_call_main ") }) {
				t.Skipf("gdb names no frame below main (glibc's debug file missing?):\n%s", out)
			}
			path, err := filepath.Abs(filepath.Join(testbin.Dir(), "..", "src", "inv/inv.c"))
			if err != nil {
				t.Fatal(err)
			}
			c := dial(t, serve(t))
			launch(t, c, bin, "cold")
			call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{"source": map[string]any{"path": path}, "breakpoints": []map[string]any{{"line": 42}}})
			call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
			ev, frames := stopped(t, c, "breakpoint")
			var got []string
			for _, f := range frames {
				file := ""
				if f.Source != nil {
					file = filepath.Base(f.Source.Path)
				}
				got = append(got, fmt.Sprintf("%s %s:%d", strings.TrimPrefix(f.Name, "C."), file, f.Line))
			}
			if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Errorf("stackTrace %q; gdb %q", got, want)
			}
			call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": ev.Body.ThreadId})
			call[*dap.DisconnectResponse](c, "disconnect", map[string]any{})
		})
	}
}
