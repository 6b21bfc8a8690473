package main

import (
	"flag"

	"github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

var bbaddrmapCmd = &command{
	name:    "bbaddrmap",
	args:    "[-json] BIN",
	summary: "print the LLVM basic-block address map of BIN",
	help: `
Prints the basic-block address map (SHT_LLVM_BB_ADDR_MAP, from clang
-fbasic-block-address-map) of the ELF file BIN, one function at a time as
it is decoded: each function's ranges (more than one when it is split),
their blocks with ID, offset from the range's base address, size,
metadata, callsite end offsets and hash, and the PGO analysis (function
entry count, block frequencies, successors with branch probabilities).
Every map version, 0 to 5, is read.

The fields mean what llvm-readobj --bb-addr-map prints; "name" is the
function symbol at the function's address, "" if there is none. In a
relocatable object (.o) addresses are offsets in the section named by
"section".`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON, one function per line")
		return func(c *cli, args []string) error {
			if len(args) != 1 {
				return usagef("want one BIN, got %d arguments", len(args))
			}
			return bbaddrmap.PrintFile(c.stdout, args[0], *asJSON)
		}
	},
}
