package main

import (
	"flag"

	"github.com/splitdbg/splitdbg/linetable"
)

var linesCmd = &command{
	name:    "lines",
	args:    "[-json] BIN FUNC",
	summary: "a function's line rows in logical order",
	help: `
Prints the line-table rows of a function in logical order: the order its
code would have if it were not split. The walk follows the entry fragment
and switches to a moved fragment's rows at the branch that reaches it,
returning after it (seed 003, "Line Numbers"). "fragment" is the index of
the fragment in logical order (0 is the entry fragment). FUNC may be
FILE:FUNC to pick one of several static functions.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) != 2 {
				return usagef("want BIN and FUNC")
			}
			t, err := linetable.Open(args[0])
			if err != nil {
				return err
			}
			p, err := t.LookupFunc(args[1])
			if err != nil {
				return err
			}
			rows := t.WalkRows(p)
			if *asJSON {
				return writeJSON(c.stdout, rows)
			}
			var b []byte
			for _, r := range rows {
				b = r.AppendText(b)
			}
			_, err = c.stdout.Write(b)
			return err
		}
	},
}
