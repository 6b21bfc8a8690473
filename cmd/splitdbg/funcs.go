package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

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
			boundHeap(args[0])
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

// boundHeap sets a soft limit on the Go heap for a command that builds
// the whole file's tables: 64 MiB and 1.5 times the file's size. The
// tables' live heap is 0.9x to 1.3x the file's size on the scale corpus
// (GODEBUG=gctrace=1); under main's GOGC of 400 the builders' garbage
// piled up to 3x the bytes read before a collection. The limit has the
// collector run before that: peak RSS 14 % to 36 % lower on that corpus,
// CPU within -17 % and +7 % (BENCHMARKS.md). A file that needs more than
// the limit still gets it: the limit is soft.
func boundHeap(path string) {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		debug.SetMemoryLimit(64<<20 + st.Size()/2*3)
	}
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
