package main

import (
	"flag"
	"fmt"
	"io"

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
			t, err := splitinfo.Open(args[0])
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
