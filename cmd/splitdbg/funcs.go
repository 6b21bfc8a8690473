package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
)

var funcsCmd = &command{
	name:    "funcs",
	args:    "[-all] [-json] BIN",
	summary: "list the split functions of BIN with all their fragments",
	help: `
Lists the logical functions of the ELF file BIN that are split into several
fragments (all functions with -all). Fragments are in logical order, the
entry fragment first; for each moved fragment, branch_addrs lists every
direct branch in the other fragments that reaches it, and branch_addr the
one through which the flow first reaches it (the split record's
branch_addr). "sources" says which evidence placed the function
(symbols, dwarf, ...) and "conflicts" where the sources disagree.

Addresses are link-time virtual addresses, JSON numbers.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		all := fs.Bool("all", false, "list every function, not only split ones")
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) != 1 {
				return usagef("want one BIN, got %d arguments", len(args))
			}
			// One open for the bound and the table: opening may ask
			// debuginfod servers for the debug file.
			t, err := elfx.OpenWith(args[0], func(f *elfx.File) (*splitinfo.Table, error) {
				boundHeap(f)
				return splitinfo.FromOwnELF(f)
			})
			if err != nil {
				return err
			}
			if err := t.Write(c.stdout, *all, *asJSON); err != nil {
				return err
			}
			noteEmpty(c.stderr, args[0], t, *all)
			return nil
		}
	},
}

// boundHeap bounds the Go heap of the whole-file build of f by
// splitinfo.HeapLimit (a soft limit: a file whose tables need more gets
// it, at the cost of more collections).
func boundHeap(f *elfx.File) { debug.SetMemoryLimit(splitinfo.HeapLimit(f)) }

// noteEmpty says on w why funcs listed nothing: the file has no functions
// splitdbg can see, or none of them is split.
func noteEmpty(w io.Writer, name string, t *splitinfo.Table, all bool) {
	switch {
	case t.Len() == 0:
		fmt.Fprintf(w, "splitdbg funcs: %s: no functions found: no defined function symbols (.symtab, .dynsym) and no DWARF, in it or in a separate debug file\n", name)
	case !all:
		for range t.Split() {
			return
		}
		fmt.Fprintf(w, "splitdbg funcs: %s: none of its %d functions is split (-all lists them)\n", name, t.Len())
	}
}

func orNone(s string) string {
	if s == "" {
		return "(no symbol)"
	}
	return s
}
