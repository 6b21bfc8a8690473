package main

import (
	"flag"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
	"github.com/splitdbg/splitdbg/symbolize"
)

var addrCmd = &command{
	name:    "addr",
	args:    "[-json] BIN ADDR... | -",
	summary: "map addresses to logical functions, in any fragment",
	help: `
Maps each address to the logical function whose fragments hold it:
"function" is the logical name even for an address in foo.cold, "fragment"
the fragment's index in logical order, "symbol" the fragment's own symbol,
and "offset" the offset within the logical function (its fragments
concatenated in logical order); "file", "line" and "column" are the
source position from the line table, in any fragment. In a file with an
LLVM basic-block address map (clang -fbasic-block-address-map), "bb_id" is
the ID of the basic block holding the address (IDs follow the function's
layout before splitting) and "bb_metadata" how the block ends, as
"splitdbg bbaddrmap" prints them.

ADDR is hexadecimal with a 0x prefix, or decimal. Addresses on the command
line are answered from the debug information of the compile units that
hold them only, so one answer is quick however large BIN is. With "-",
addresses are read from standard input, one per line, after the whole
file is indexed once, and answered as they arrive; a
line that is no address gets an answer of its own in its place,
{"line","input","error"} in JSON, and the command goes on (exit status 1
at the end).`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) < 2 {
				return usagef("want BIN and at least one ADDR or -")
			}
			stream := len(args) == 2 && args[1] == "-"
			var addrs []uint64
			if !stream {
				for _, a := range args[1:] {
					v, err := linetable.ParseAddr(a)
					if err != nil {
						return usagef("%v", err)
					}
					addrs = append(addrs, v)
				}
			}
			// Addresses on the command line: decode only the compile units
			// that hold them.
			t, err := linetable.OpenIn(args[0], func(f *elfx.File) (*splitinfo.Scope, error) {
				return splitinfo.ScopeOfAddrs(f, addrs)
			})
			if err != nil {
				return err
			}
			w := symbolize.NewAddrWriter(c.stdout, t, *asJSON)
			if stream {
				err = w.Stream(c.stdin)
			} else {
				for _, a := range addrs {
					w.Write(a)
				}
			}
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			return err
		}
	},
}
