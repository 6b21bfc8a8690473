// Package demo is the tour "splitdbg demo" prints: splitdbg's answers
// on two small split binaries built into it, beside plain Delve's.
package demo

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/adapter/session"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
	"github.com/splitdbg/splitdbg/symbolize"
)

// Binary is testdata/bin/demo, a small GCC -O2 binary with split
// functions, copied here by testdata/gen.sh.
//
//go:embed data/demo
var Binary []byte

// Clang is testdata/bin/clang22-mfs, a clang 22 -O2 binary split by
// machine function splitting, with a BB address map, copied here by
// testdata/gen.sh.
//
//go:embed data/clang
var Clang []byte

// Run writes the tour to w: the GCC binary's split functions, address
// lookups and cold-line breakpoints; the clang binary's basic blocks;
// and, where the kernel lets this process trace (ptrace), a stop at a
// cold line under Delve, plain and through splitdbg's client.
func Run(w io.Writer) error {
	lines, err := linetable.OpenBytes("demo", Binary)
	if err != nil {
		return err
	}
	if err := splits(w, lines); err != nil {
		return err
	}
	if lines, err = linetable.OpenBytes("clang", Clang); err != nil {
		return err
	}
	if err := blocks(w, lines); err != nil {
		return err
	}
	return debug(w)
}

// splits shows lt's split functions, looks up addresses in their
// fragments and resolves breakpoints on lines moved to cold fragments.
func splits(w io.Writer, lt *linetable.Table) error {
	t := lt.Procs()
	fmt.Fprintf(w, "The embedded demo binary (GCC 12, -O2 -g) has %d functions; these are split:\n\n", t.Len())
	if err := t.Write(w, false, false); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nAddress lookups: an address in a cold fragment belongs to its logical function,")
	fmt.Fprintln(w, "at an offset in the function's fragments laid end to end in logical order:")
	fmt.Fprintln(w)
	aw := symbolize.NewAddrWriter(w, lt, false)
	n := 0
	for p := range t.Split() {
		if n == 2 {
			break
		}
		n++
		aw.Write(p.Entry)
		for _, f := range p.Fragments[1:] {
			if f.BranchAddr != 0 {
				aw.Write(f.BranchAddr)
			}
			aw.Write(f.Start)
			aw.Write(f.End - 1)
		}
	}
	aw.Write(0x10)
	if err := aw.Close(); err != nil {
		return err
	}

	// A breakpoint on a line whose code the compiler moved: gdb puts it at
	// the function's entry, Delve creates it with no address.
	fmt.Fprintln(w, "\nBreakpoints on cold lines resolve inside the cold fragment:")
	fmt.Fprintln(w)
	n = 0
	for p := range t.Split() {
		if n == 2 {
			break
		}
		spec, ok := coldLine(lt, p)
		if !ok {
			continue
		}
		n++
		b, err := lt.Resolve(spec)
		if err != nil {
			return err
		}
		if err := b.Write(w, false); err != nil {
			return err
		}
	}
	return nil
}

// coldLine returns FILE:LINE of the first statement in p's first moved
// fragment whose line is not also in the entry fragment.
func coldLine(lt *linetable.Table, p *splitinfo.Proc) (string, bool) {
	for pos := range lt.Walk(p) {
		if pos.Frag == 0 || !pos.IsStmt {
			continue
		}
		spec := fmt.Sprintf("%s:%d", path.Base(pos.File), pos.Line)
		if b, err := lt.Resolve(spec); err == nil && len(b.Locs) > 0 && b.Locs[0].Frag != 0 {
			return spec, true
		}
	}
	return "", false
}

// blocks shows, for the first split function of lt's binary whose
// blocks lie in several fragments, each fragment's block IDs, and looks
// up an address in each fragment.
func blocks(w io.Writer, lt *linetable.Table) error {
	t := lt.Procs()
	if t.BBAddrMap() == nil {
		return fmt.Errorf("demo: the embedded clang binary has no BB address map")
	}
	fmt.Fprintln(w, "\nBasic blocks: a clang 22 -O2 binary (machine function splitting,")
	fmt.Fprintln(w, "-fbasic-block-address-map) records every basic block. Block IDs follow the")
	fmt.Fprintln(w, "function's layout before splitting, so they say where moved blocks belong:")
	fmt.Fprintln(w)
	for p := range t.Split() {
		bbs := t.Blocks(p)
		if bbs == nil || slices.ContainsFunc(bbs, func(s []splitinfo.Block) bool { return len(s) == 0 }) {
			continue
		}
		fmt.Fprintf(w, "%s  entry %#x\n", p.Name, p.Entry)
		for k := range p.Fragments {
			f := &p.Fragments[k]
			fmt.Fprintf(w, "  fragment %d %-4s %#x-%#x  %-10s blocks", k, f.Kind, f.Start, f.End, symbolOrNone(f.Symbol))
			for _, b := range bbs[k] {
				fmt.Fprintf(w, " %d", b.ID)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "\nAddress lookups name the block (\"bb_id\" in addr -json):")
		fmt.Fprintln(w)
		aw := symbolize.NewAddrWriter(w, lt, false)
		for k := range p.Fragments {
			// In every fragment, an address inside its first block (after
			// the entry block) that has a source line.
			s := bbs[k]
			if k == 0 && len(s) > 1 {
				s = s[1:]
			}
			a := s[0].Addr + 4
			for _, b := range s {
				if pos, ok := lt.PC(b.Addr + 4); ok && pos.Line != 0 {
					a = b.Addr + 4
					break
				}
			}
			aw.Write(a)
		}
		return aw.Close()
	}
	return nil
}

// debug runs the embedded demo binary on its cold path under
// Delve, sets a breakpoint on a cold line through plain Delve and through
// splitdbg's client, continues, and prints both backtraces and both
// answers to args.
func debug(w io.Writer) error {
	fmt.Fprintln(w, "\nDebugging the demo binary with Delve, cold path (\"demo cold\"):")
	dir, err := os.MkdirTemp("", "splitdbg-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "demo")
	if err := os.WriteFile(bin, Binary, 0o755); err != nil {
		return err
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	s, err := session.Start(session.Config{Program: bin, Args: []string{"cold"}, Stdout: null, Stderr: null})
	if err != nil {
		fmt.Fprintf(w, "  (skipped: %v)\n", err)
		return nil
	}
	defer s.Stop(true)
	client := s.Client
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

func symbolOrNone(s string) string {
	if s == "" {
		return "(no symbol)"
	}
	return s
}
