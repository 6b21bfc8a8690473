package main

import (
	"encoding/json"
	"flag"
	"fmt"

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
			type jsonRow struct {
				Addr     uint64 `json:"addr"`
				File     string `json:"file"`
				Line     int    `json:"line"`
				Column   int    `json:"column"`
				IsStmt   bool   `json:"is_stmt"`
				Fragment int    `json:"fragment"`
			}
			rows := []jsonRow{}
			for pos := range t.Walk(p) {
				rows = append(rows, jsonRow{pos.Addr, pos.File, pos.Line, pos.Column, pos.IsStmt, pos.Frag})
			}
			if *asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			for _, r := range rows {
				stmt := ""
				if r.IsStmt {
					stmt = " stmt"
				}
				fmt.Fprintf(c.stdout, "%#x  %s:%d:%d  fragment %d%s\n", r.Addr, r.File, r.Line, r.Column, r.Fragment, stmt)
			}
			return nil
		}
	},
}
