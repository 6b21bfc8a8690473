package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo/mip"
)

var mipCmd = &command{
	name:    "mip",
	args:    "create BIN|MAPFILE -o OUT | merge PROFILE INPUT... -o OUT | show [-json] [-covered] PROFILE [BIN]",
	summary: "Machine IR Profile: make a profile from a binary's map, merge runs, show coverage",
	help: `
Works with Machine IR Profiles (MIP, seed 002) the way llvm-mipdata does.
An instrumented binary has two sections: __llvm_mipmap, the map (per
function its address, size, CFG signature, non-entry block offsets and
name), and __llvm_mipraw, the raw profile data that the instrumented code
writes as it runs and its runtime dumps to a file (a .mipraw).

  create BIN -o OUT       writes OUT, the empty profile (.mip) of BIN's
                          map; BIN may also be a map extracted from the
                          binary (a .mipmap file)
  merge PROFILE INPUT... -o OUT
                          writes OUT, PROFILE with every INPUT merged in:
                          raw profiles of runs, or profiles of the same
                          binary. Call counts and timestamps are summed,
                          coverage is or-ed, and a function's merge count
                          counts the runs in which it ran. An INPUT of
                          another build (module hash, profile type, CFG
                          signature, blocks) is an error, never merged.
  show PROFILE [BIN]      lists every function and non-entry block with
                          its coverage; with BIN (the instrumented binary),
                          with their addresses and, when BIN has DWARF,
                          file:line. BIN's map must match the profile.

Without BIN, show gives a function's place as its offset from the raw
section (which is all a profile records) and a block's as its offset in
its function. JSON: {"module_hash","profile_type","functions":[{"name",
"covered","merge_count","call_count","timestamp_sum","size",
"cfg_signature","signature","raw_offset","func_offset","addr","file",
"line","blocks":[{"index","offset","covered","addr","file","line"}]}]};
"addr", "file" and "line" only when known.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		out := fs.String("o", "", "create, merge: output `file`")
		asJSON := fs.Bool("json", false, "show: print JSON")
		coveredOnly := fs.Bool("covered", false, "show: list only covered functions and blocks")
		return func(c *cli, args []string) error {
			if len(args) == 0 {
				return usagef("want a subcommand: create, merge or show")
			}
			sub, args := args[0], args[1:]
			switch sub {
			case "create", "merge":
				if *asJSON || *coveredOnly {
					return usagef("-json and -covered are for show")
				}
				if *out == "" {
					return usagef("%s wants -o OUT", sub)
				}
				if sub == "create" {
					if len(args) != 1 {
						return usagef("create wants one BIN or map file, got %d arguments", len(args))
					}
					return mipCreate(c.stdout, args[0], *out)
				}
				if len(args) < 2 {
					return usagef("merge wants a PROFILE and at least one raw profile or profile to merge")
				}
				return mipMerge(c.stdout, args[0], args[1:], *out)
			case "show":
				if *out != "" {
					return usagef("show prints to standard output: -o is for create and merge")
				}
				if len(args) < 1 || len(args) > 2 {
					return usagef("show wants a PROFILE and an optional BIN")
				}
				return mipShow(c.stdout, args[0], args[1:], *asJSON, *coveredOnly)
			}
			return usagef("unknown subcommand %q: want create, merge or show", sub)
		}
	},
}

func mipCreate(w io.Writer, path, out string) error {
	m, err := mip.ReadMap(path)
	if err != nil {
		return err
	}
	p := mip.NewProfile(m)
	if err := os.WriteFile(out, mip.AppendProfile(nil, p), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: empty profile of %d functions (module hash %#08x, profile type %#x %v)\n",
		out, len(p.Funcs), p.ModuleHash, uint32(p.ProfileType), p.ProfileType)
	return nil
}

func mipMerge(w io.Writer, base string, inputs []string, out string) error {
	p, err := mip.ReadProfile(base)
	if err != nil {
		return err
	}
	p, raws, profiles, err := p.MergeFiles(inputs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, mip.AppendProfile(nil, p), 0o644); err != nil {
		return err
	}
	covered, blocks, coveredBlocks := p.Tally()
	fmt.Fprintf(w, "%s: merged %d raw profiles and %d profiles: %d of %d functions and %d of %d non-entry blocks covered\n",
		out, raws, profiles, covered, len(p.Funcs), coveredBlocks, blocks)
	return nil
}

// mipShow prints the coverage of the profile at path, with the places of
// the instrumented binary bin when there is one.
func mipShow(w io.Writer, path string, bin []string, asJSON, coveredOnly bool) error {
	p, err := mip.ReadProfile(path)
	if err != nil {
		return err
	}
	var r *mip.Report
	if len(bin) == 0 {
		r = p.Report(coveredOnly, 0, nil)
	} else {
		b, err := mip.OpenFor(bin[0], p)
		if err != nil {
			return err
		}
		lines, err := linetable.Open(bin[0])
		if err != nil {
			return err
		}
		r = p.Report(coveredOnly, b.RawAddr, func(addr uint64) (string, int, bool) {
			pos, ok := lines.PC(addr)
			return pos.File, pos.Line, ok
		})
	}
	if !asJSON {
		return r.WriteText(w)
	}
	return writeJSON(w, r)
}
