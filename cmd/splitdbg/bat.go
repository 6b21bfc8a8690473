package main

import (
	"flag"
	"io"

	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo/bat"
)

var batCmd = &command{
	name:    "bat",
	args:    "[-json] [-translate ADDR|- ...] [-branch] BIN",
	summary: "print BOLT address translation, or map BOLTed addresses to the input binary",
	help: `
Prints the BOLT address translation tables (.note.bolt_bat, written by
llvm-bolt -enable-bat) of the BOLT-optimized ELF file BIN: the hot table,
one entry per input function, and the cold table, one per cold fragment
(foo.cold.N), each with its address, symbol name and size, and its
translation entries: output offset in the fragment, input offset in the
input function, and whether the entry is a branch or call source
(BRANCHENTRY) or a block start (with the input block's index and hash;
"deleted" marks blocks BOLT removed). A hot function has its input hash,
block count and secondary entry points; a cold fragment its parent (the
hot fragment of its input function) and the skew of its input offsets.

With -translate ADDR (repeatable; "-" reads addresses from standard input,
one per line, answering each as it arrives), maps output addresses back to
the input binary as perf2bolt does: "function" is the output fragment
holding ADDR (foo or foo.cold.0), "parent" the input function, the hot
fragment's name, and "input_offset" the offset in the input function;
"is_branch" says the entry used is a branch source. With -branch, ADDRs are
branch sources: they map to their entry's input offset instead of keeping
their distance from it. ADDR is hexadecimal with 0x, or decimal.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		branch := fs.Bool("branch", false, "with -translate: translate ADDRs as branch sources")
		var addrs []string
		fs.Func("translate", "translate output address `ADDR` (repeatable; - reads standard input)", func(s string) error {
			addrs = append(addrs, s)
			return nil
		})
		return func(c *cli, args []string) error {
			if len(args) != 1 {
				return usagef("want one BIN, got %d arguments", len(args))
			}
			var in io.Reader // "-": standard input
			var vals []uint64
			for _, a := range addrs {
				if a == "-" {
					in = c.stdin
					continue
				}
				v, err := linetable.ParseAddr(a)
				if err != nil {
					return usagef("%v", err)
				}
				vals = append(vals, v)
			}
			if in != nil && len(vals) > 0 {
				return usagef("-translate - reads every address from standard input: give no other ADDR")
			}
			if *branch && len(addrs) == 0 {
				return usagef("-branch needs -translate")
			}
			t, err := bat.Open(args[0])
			if err != nil {
				return err
			}
			if len(addrs) == 0 {
				return t.Print(c.stdout, *asJSON)
			}
			return t.WriteTranslations(c.stdout, vals, in, *branch, *asJSON)
		}
	},
}
