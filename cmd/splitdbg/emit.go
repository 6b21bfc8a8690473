package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/splitdbg/splitdbg/esl"
	"github.com/splitdbg/splitdbg/internal/objcopy"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo/native"
)

var emitCmd = &command{
	name:    "emit",
	args:    "-o OUT BIN",
	summary: "write split procedure records and an ESL line program into a copy of BIN",
	help: `
Writes OUT: BIN plus two sections (docs/FORMAT.md) that describe its split
functions with no other debug information present:

  .splitdbg.split   split procedure records: for each split function its
                    entry and, per moved fragment, split_info{branch_addr,
                    vaddr, size}, with names and declarations
  .splitdbg.esl     an Extended Source Location line program of every
                    function, converted from DWARF .debug_line

The sections are added with llvm-objcopy (GNU objcopy breaks BOLT
outputs). OUT still runs; after "strip --strip-debug" (or "splitdbg strip")
splitdbg reads the same functions and lines from these sections alone.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		out := fs.String("o", "", "output file")
		return func(c *cli, args []string) error {
			if len(args) != 1 || *out == "" {
				return usagef("want -o OUT and one BIN")
			}
			sections, err := linetable.EmitSections(args[0])
			if err != nil {
				return err
			}
			if err := objcopy.AddSections(args[0], *out, sections); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "%s: %s (%d bytes), %s (%d bytes)\n", *out,
				native.SectionName, len(sections[native.SectionName]), esl.SectionName, len(sections[esl.SectionName]))
			return nil
		}
	},
}

var stripCmd = &command{
	name:    "strip",
	args:    "-keep=LEVEL -o OUT BIN",
	summary: "strip BIN, keeping splitdbg's sections as LEVEL says",
	help: `
Writes OUT: BIN stripped with llvm-objcopy at one of the split procedure
proposal's ostrip levels:

  all       keep everything (a copy)
  split     drop DWARF (.debug_*); keep the symbol table, the split
            procedure records and the ESL line program (the default)
  records   drop DWARF and ESL; keep the symbol table and the records
  symbols   drop DWARF and every splitdbg section; keep the symbol table
  none      strip everything that is not needed to run

Run "splitdbg emit" first to add the sections.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		keep := fs.String("keep", "split", "what to keep: all, split, records, symbols, none")
		out := fs.String("o", "", "output file")
		return func(c *cli, args []string) error {
			if len(args) != 1 || *out == "" {
				return usagef("want -o OUT and one BIN")
			}
			rmESL, rmRecords := "--remove-section="+esl.SectionName, "--remove-section="+native.SectionName
			opts, ok := map[string][]string{"all": nil, "split": {"--strip-debug"}, "records": {"--strip-debug", rmESL},
				"symbols": {"--strip-debug", rmESL, rmRecords}, "none": {"--strip-all", rmESL, rmRecords}}[*keep]
			if !ok {
				return usagef("unknown -keep level %q", *keep)
			}
			if len(opts) == 0 {
				data, err := os.ReadFile(args[0])
				if err != nil {
					return err
				}
				return os.WriteFile(*out, data, 0o755)
			}
			if err := objcopy.Run(args[0], *out, opts...); err != nil {
				return fmt.Errorf("%s: %w", filepath.Base(args[0]), err)
			}
			return nil
		}
	},
}
