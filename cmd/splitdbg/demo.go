package main

import (
	_ "embed"
	"flag"
	"fmt"
	"path"
	"slices"

	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
	"github.com/splitdbg/splitdbg/symbolize"
)

// demoBinary is testdata/bin/demo, a small GCC -O2 binary with split
// functions, copied here by testdata/gen.sh.
//
//go:embed demodata/demo
var demoBinary []byte

// demoClang is testdata/bin/clang22-mfs, a clang 22 -O2 binary split by
// machine function splitting, with a BB address map, copied here by
// testdata/gen.sh.
//
//go:embed demodata/clang
var demoClang []byte

var demoCmd = &command{
	name:    "demo",
	args:    "",
	summary: "show what splitdbg does, on a small split binary built in",
	help: `
Runs splitdbg on a small GCC -O2 binary embedded in the command: lists its
split functions with their fragments and branch sites, looks up a few
addresses in hot and cold fragments, and resolves breakpoints on source
lines whose code was moved to a cold fragment, and debugs it with Delve
through splitdbg's client beside plain Delve (when the kernel lets it
trace: ptrace): the backtrace and the arguments at a cold line. Then, on a small clang
binary with a basic-block address map, also embedded, shows a split
function's fragments with the IDs of their basic blocks and maps a few
addresses to blocks.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		return func(c *cli, args []string) error {
			if len(args) != 0 {
				return usagef("demo takes no arguments")
			}
			lines, err := linetable.OpenBytes("demo", demoBinary)
			if err != nil {
				return err
			}
			if err := runDemo(c, lines); err != nil {
				return err
			}
			if lines, err = linetable.OpenBytes("clang", demoClang); err != nil {
				return err
			}
			if err := runBlocksDemo(c, lines); err != nil {
				return err
			}
			return runDebugDemo(c)
		}
	},
}

func runDemo(c *cli, lt *linetable.Table) error {
	t := lt.Procs()
	w := c.stdout
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

// runBlocksDemo shows, for the first split function of lt's binary whose
// blocks lie in several fragments, each fragment's block IDs, and looks
// up an address in each fragment.
func runBlocksDemo(c *cli, lt *linetable.Table) error {
	t := lt.Procs()
	w := c.stdout
	if t.BBAddrMap() == nil {
		return fmt.Errorf("demo: the embedded clang binary has no BB address map")
	}
	fmt.Fprintln(w, "\nBasic blocks: a clang 22 -O2 binary (machine function splitting,")
	fmt.Fprintln(w, "-fbasic-block-address-map) records every basic block. Block IDs follow the")
	fmt.Fprintln(w, "function's layout before splitting, so they say where moved blocks belong:")
	fmt.Fprintln(w)
	for p := range t.Split() {
		blocks := t.Blocks(p)
		if blocks == nil || slices.ContainsFunc(blocks, func(s []splitinfo.Block) bool { return len(s) == 0 }) {
			continue
		}
		fmt.Fprintf(w, "%s  entry %#x\n", p.Name, p.Entry)
		for k := range p.Fragments {
			f := &p.Fragments[k]
			fmt.Fprintf(w, "  fragment %d %-4s %#x-%#x  %-10s blocks", k, f.Kind, f.Start, f.End, orNone(f.Symbol))
			for _, b := range blocks[k] {
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
			s := blocks[k]
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
