package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/splitdbg/splitdbg/linetable"
)

var breakCmd = &command{
	name:    "break",
	args:    "[-json] BIN LOC",
	summary: "resolve a breakpoint location in every fragment",
	help: `
Resolves a breakpoint location the way a debugger should for split
functions. LOC is one of:

  FUNC        the address after the prologue, always in the entry fragment;
              one in each function when several static functions share
              the name (as gdb), and a moved fragment's own symbol
              (foo.cold) names the fragment's start
  FILE:LINE   one address per block of the line's rows, in every fragment
              that holds the line: cold fragments included; a line
              without code moves to the next line with code (as gdb)
  FILE:FUNC   FUNC in FILE, to pick one of several functions of a name
  *ADDR       the address itself

FILE matches by base name, path suffix or absolute path. A name that
matches several files is an error listing the candidates.
"addrs" are the addresses; "locations" says for each its function,
fragment, source position and whether it is a statement start ("is_stmt"
false: BOLT dropped the flag and the block's first row is used).`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) != 2 {
				return usagef("want BIN and LOC")
			}
			b, err := linetable.ResolveFile(args[0], args[1])
			var amb *linetable.AmbiguousError
			if errors.As(err, &amb) {
				return fmt.Errorf("%s is ambiguous; say which: %s", amb.Spec, strings.Join(amb.Candidates, ", "))
			}
			if err != nil {
				return err
			}
			return b.Write(c.stdout, *asJSON)
		}
	},
}
