package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"

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
split functions with their fragments and branch sites, then looks up a few
addresses in hot and cold fragments.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		return func(c *cli, args []string) error {
			if len(args) != 0 {
				return usagef("demo takes no arguments")
			}
			t, err := splitinfo.Read("demo", bytes.NewReader(demoBinary))
			if err != nil {
				return err
			}
			return runDemo(c, t)
		}
	},
}

func runDemo(c *cli, t *splitinfo.Table) error {
	w := c.stdout
	fmt.Fprintf(w, "The embedded demo binary (GCC 12, -O2 -g) has %d functions; these are split:\n\n", t.Len())
	if err := writeFuncs(w, t, false, false); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nAddress lookups: an address in a cold fragment belongs to its logical function,")
	fmt.Fprintln(w, "at an offset in the function's fragments laid end to end in logical order:")
	fmt.Fprintln(w)
	aw := &addrWriter{w: newFlushWriter(w), t: t}
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
	return aw.w.Flush()
}
