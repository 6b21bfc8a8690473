package main

import (
	"flag"
	"fmt"

	"github.com/splitdbg/splitdbg/esl"
	"github.com/splitdbg/splitdbg/linetable"
)

var eslCmd = &command{
	name:    "esl",
	args:    "[-json] BIN [ENTRY]",
	summary: "dump the Extended Source Location rows of BIN",
	help: `
Decodes the .splitdbg.esl section that "splitdbg emit" writes and prints
every procedure's rows as its program gives them (fragments in logical
order, each ended by an end_sequence row), or only the procedure whose
entry address is ENTRY (found through the section's index, without a
scan).`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("want BIN and an optional ENTRY")
			}
			t, err := esl.Open(args[0])
			if err != nil {
				return err
			}
			var l esl.Listing
			if len(args) == 2 {
				entry, err := linetable.ParseAddr(args[1])
				if err != nil {
					return usagef("%v", err)
				}
				var ok bool
				if l, ok, err = t.ListEntry(entry); err == nil && !ok {
					return fmt.Errorf("%s: no procedure at %#x in %s", args[0], entry, esl.SectionName)
				}
			} else {
				l, err = t.List()
			}
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if !*asJSON {
				return l.WriteText(c.stdout)
			}
			return writeJSON(c.stdout, l)
		}
	},
}
