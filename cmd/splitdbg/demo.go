package main

import (
	_ "embed"
	"flag"
	"fmt"
	"path"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// demoBinary is testdata/bin/demo, a small GCC -O2 binary with split
// functions, copied here by testdata/gen.sh.
//
//go:embed demodata/demo
var demoBinary []byte

var demoCmd = &command{
	name:    "demo",
	args:    "",
	summary: "show what splitdbg does, on a small split binary built in",
	help: `
Runs splitdbg on a small GCC -O2 binary embedded in the command: lists its
split functions with their fragments and branch sites, looks up a few
addresses in hot and cold fragments, and resolves breakpoints on source
lines whose code was moved to a cold fragment.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		return func(c *cli, args []string) error {
			if len(args) != 0 {
				return usagef("demo takes no arguments")
			}
			f, err := elfx.NewBytes("demo", demoBinary)
			if err != nil {
				return err
			}
			procs, err := splitinfo.FromELF(f)
			if err != nil {
				return err
			}
			lines, err := linetable.FromELF(f, procs)
			if err != nil {
				return err
			}
			return runDemo(c, lines)
		}
	},
}

func runDemo(c *cli, lt *linetable.Table) error {
	t := lt.Procs()
	w := c.stdout
	fmt.Fprintf(w, "The embedded demo binary (GCC 12, -O2 -g) has %d functions; these are split:\n\n", t.Len())
	if err := writeFuncs(w, t, false, false); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nAddress lookups: an address in a cold fragment belongs to its logical function,")
	fmt.Fprintln(w, "at an offset in the function's fragments laid end to end in logical order:")
	fmt.Fprintln(w)
	aw := &addrWriter{w: newFlushWriter(w), t: lt}
	n := 0
	for p := range t.Split() {
		if n == 2 {
			break
		}
		n++
		aw.write(p.Entry)
		for _, f := range p.Fragments[1:] {
			if f.BranchAddr != 0 {
				aw.write(f.BranchAddr)
			}
			aw.write(f.Start)
			aw.write(f.End - 1)
		}
	}
	aw.write(0x10)
	if err := aw.w.Flush(); err != nil {
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
		if err := writeBreakpoint(w, &b, false); err != nil {
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
