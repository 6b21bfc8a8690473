package main

import (
	"flag"

	"github.com/splitdbg/splitdbg/internal/demo"
)

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
			return demo.Run(c.stdout)
		}
	},
}
