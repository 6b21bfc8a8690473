package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-delve/delve/service/api"
)

// runDebugDemo runs the embedded demo binary on its cold path under
// Delve, sets a breakpoint on a cold line through plain Delve and through
// splitdbg's client, continues, and prints both backtraces and both
// answers to args.
func runDebugDemo(c *cli) error {
	w := c.stdout
	fmt.Fprintln(w, "\nDebugging the demo binary with Delve, cold path (\"demo cold\"):")
	dir, err := os.MkdirTemp("", "splitdbg-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "demo")
	if err := os.WriteFile(bin, demoBinary, 0o755); err != nil {
		return err
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	client, stop, err := startDebugger(bin, []string{"cold"}, null)
	if err != nil {
		fmt.Fprintf(w, "  (skipped: %v)\n", err)
		return nil
	}
	defer stop()
	plain := client.Plain()

	const loc = "demo/demo.c:25" // COLD-LINE: scale, in scale.cold
	fmt.Fprintf(w, "\n  break %s\n", loc)
	bpPlain, errPlain := plain.CreateBreakpoint(&api.Breakpoint{File: loc[:len(loc)-3], Line: 25})
	switch {
	case errPlain != nil:
		fmt.Fprintf(w, "    plain Delve: %v\n", errPlain)
	default:
		fmt.Fprintf(w, "    plain Delve: breakpoint %d at %s\n", bpPlain.ID, addrList(bpPlain.Addrs))
		plain.ClearBreakpoint(bpPlain.ID)
	}
	bp, err := client.CreateBreakpoint(&api.Breakpoint{File: loc[:len(loc)-3], Line: 25})
	if err != nil {
		return fmt.Errorf("demo: splitdbg break %s: %w", loc, err)
	}
	fmt.Fprintf(w, "    splitdbg:    breakpoint %d at %s in %s\n", bp.ID, addrList(bp.Addrs), bp.FunctionName)

	state := <-client.Continue()
	if state.Err != nil {
		return fmt.Errorf("demo: continue: %w", state.Err)
	}
	if state.Exited || state.CurrentThread == nil {
		return errors.New("demo: the program exited before the breakpoint")
	}
	th := state.CurrentThread
	fmt.Fprintf(w, "\n  continue: stopped at %#x\n", th.PC)
	frames := func(name string, st []api.Stackframe, err error) {
		fmt.Fprintf(w, "    %s bt:\n", name)
		if err != nil {
			fmt.Fprintf(w, "      error: %v\n", err)
			return
		}
		for i, f := range st {
			if f.PC == 0 {
				break // past the bottom of the stack
			}
			fn := "???"
			if f.Function != nil {
				fn = f.Function.Name()
			}
			fmt.Fprintf(w, "      %d  %#x in %s at %s:%d\n", i, f.PC, fn, shortPath(f.File), f.Line)
		}
	}
	st, err := plain.Stacktrace(th.GoroutineID, 10, 0, 0, nil)
	frames("plain Delve", st, err)
	st, err = client.Stacktrace(th.GoroutineID, 10, 0, 0, nil)
	frames("splitdbg   ", st, err)

	fmt.Fprintf(w, "\n  args\n")
	scope := api.EvalScope{GoroutineID: th.GoroutineID}
	cfg := api.LoadConfig{MaxStringLen: 64, MaxArrayValues: 64, MaxStructFields: -1}
	args := func(name string, vs []api.Variable, err error) {
		if err != nil {
			fmt.Fprintf(w, "    %s: error: %v\n", name, err)
			return
		}
		fmt.Fprintf(w, "    %s:", name)
		for _, v := range vs {
			fmt.Fprintf(w, " %s = %s", v.Name, v.SinglelineString())
		}
		fmt.Fprintln(w)
	}
	vs, err := plain.ListFunctionArgs(scope, cfg)
	args("plain Delve", vs, err)
	vs, err = client.ListFunctionArgs(scope, cfg)
	args("splitdbg   ", vs, err)
	return nil
}

func addrList(addrs []uint64) string {
	if len(addrs) == 0 {
		return "no address"
	}
	s := ""
	for i, a := range addrs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%#x", a)
	}
	return s
}

func shortPath(p string) string {
	if p == "" {
		return "?"
	}
	return filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p)
}
