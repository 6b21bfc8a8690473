package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
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
				bin := ""
				if len(args) == 2 {
					bin = args[1]
				}
				return mipShow(c.stdout, args[0], bin, *asJSON, *coveredOnly)
			}
			return usagef("unknown subcommand %q: want create, merge or show", sub)
		}
	},
}

// mipFileType returns the file type of a MIP file, 0 if data does not
// start with the MIP magic.
func mipFileType(data []byte) mip.FileType {
	if len(data) < 8 || !bytes.Equal(data[:4], mip.Magic[:]) {
		return 0
	}
	return mip.FileType(uint16(data[6]) | uint16(data[7])<<8)
}

// readMap reads the map of an instrumented ELF file or a .mipmap file.
func readMap(path string) (*mip.Map, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if ft := mipFileType(data); ft != 0 {
		m, err := mip.DecodeMap(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return m, nil
	}
	b, err := mip.Open(path)
	if err != nil {
		return nil, err
	}
	if b.Map == nil {
		return nil, fmt.Errorf("%s: no %s section (give the map extracted from it)", path, mip.MapSection)
	}
	return b.Map, nil
}

func readProfile(path string) (*mip.Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := mip.DecodeProfile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func writeProfile(path string, p *mip.Profile) error {
	return os.WriteFile(path, mip.AppendProfile(nil, p), 0o644)
}

func mipCreate(w io.Writer, path, out string) error {
	m, err := readMap(path)
	if err != nil {
		return err
	}
	p := mip.NewProfile(m)
	if err := writeProfile(out, p); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: empty profile of %d functions (module hash %#08x, profile type %#x %v)\n",
		out, len(p.Funcs), p.ModuleHash, uint32(p.ProfileType), p.ProfileType)
	return nil
}

func mipMerge(w io.Writer, base string, inputs []string, out string) error {
	p, err := readProfile(base)
	if err != nil {
		return err
	}
	raws, profiles := 0, 0
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		if mipFileType(data) == mip.ProfileFile {
			o, err := mip.DecodeProfile(data)
			if err == nil {
				p, err = p.Merge(o)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			profiles++
			continue
		}
		r, err := mip.DecodeRaw(data)
		if err == nil {
			p, err = p.MergeRaw(r)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		raws++
	}
	if err := writeProfile(out, p); err != nil {
		return err
	}
	covered, blocks, coveredBlocks := 0, 0, 0
	for i := range p.Funcs {
		f := &p.Funcs[i]
		if f.Covered() {
			covered++
		}
		for _, b := range f.Blocks {
			blocks++
			if b.Covered {
				coveredBlocks++
			}
		}
	}
	fmt.Fprintf(w, "%s: merged %d raw profiles and %d profiles: %d of %d functions and %d of %d non-entry blocks covered\n",
		out, raws, profiles, covered, len(p.Funcs), coveredBlocks, blocks)
	return nil
}

type mipShowJSON struct {
	ModuleHash  uint32        `json:"module_hash"`
	ProfileType uint32        `json:"profile_type"`
	Functions   []mipFuncJSON `json:"functions"`
}

type mipFuncJSON struct {
	Name         string         `json:"name"`
	Covered      bool           `json:"covered"`
	MergeCount   uint32         `json:"merge_count"`
	CallCount    uint64         `json:"call_count"`
	TimestampSum uint64         `json:"timestamp_sum"`
	Size         uint32         `json:"size"`
	CFGSignature uint32         `json:"cfg_signature"`
	Signature    uint64         `json:"signature"`
	RawOffset    uint32         `json:"raw_offset"`
	FuncOffset   int32          `json:"func_offset"`
	Addr         *uint64        `json:"addr,omitempty"`
	File         string         `json:"file,omitempty"`
	Line         int            `json:"line,omitempty"`
	Blocks       []mipBlockJSON `json:"blocks"`
}

type mipBlockJSON struct {
	Index   int     `json:"index"`
	Offset  uint32  `json:"offset"`
	Covered bool    `json:"covered"`
	Addr    *uint64 `json:"addr,omitempty"`
	File    string  `json:"file,omitempty"`
	Line    int     `json:"line,omitempty"`
}

// mipBinary is what show learns from the instrumented binary.
type mipBinary struct {
	rawAddr uint64
	lines   *linetable.Table
}

// openMIPBinary checks that the instrumented binary at path is the one p
// was made for, and builds its line table, from one mapping of the file.
func openMIPBinary(path string, p *mip.Profile) (*mipBinary, error) {
	return elfx.OpenWith(path, func(f *elfx.File) (*mipBinary, error) {
		b, err := mip.FromELF(f)
		if errors.Is(err, mip.ErrNoMIP) {
			return nil, fmt.Errorf("%s: no %s section: not an instrumented binary", path, mip.RawSection)
		}
		if err != nil {
			return nil, err
		}
		if !b.HasRaw {
			return nil, fmt.Errorf("%s: no %s section: no function addresses", path, mip.RawSection)
		}
		if b.Map != nil {
			if err := p.CheckMap(b.Map); err != nil {
				return nil, fmt.Errorf("%s: the profile is not of this binary: %w", path, err)
			}
		} else if b.Raw != nil && (b.Raw.ModuleHash != p.ModuleHash || b.Raw.ProfileType != p.ProfileType) {
			return nil, fmt.Errorf("%s: the profile is not of this binary: %w: module hash %#08x and profile type %#x, the profile %#08x and %#x",
				path, mip.ErrMismatch, b.Raw.ModuleHash, uint32(b.Raw.ProfileType), p.ModuleHash, uint32(p.ProfileType))
		}
		procs, err := splitinfo.FromELF(f)
		if err != nil {
			return nil, err
		}
		lt, err := linetable.FromELF(f, procs)
		if err != nil {
			return nil, err
		}
		return &mipBinary{rawAddr: b.RawAddr, lines: lt}, nil
	})
}

func mipShow(w io.Writer, path, binPath string, asJSON, coveredOnly bool) error {
	p, err := readProfile(path)
	if err != nil {
		return err
	}
	var bin *mipBinary
	if binPath != "" {
		if bin, err = openMIPBinary(binPath, p); err != nil {
			return err
		}
	}
	at := func(addr uint64) (*uint64, string, int) {
		if bin == nil {
			return nil, "", 0
		}
		if pos, ok := bin.lines.PC(addr); ok {
			return &addr, pos.File, pos.Line
		}
		return &addr, "", 0
	}
	doc := mipShowJSON{ModuleHash: p.ModuleHash, ProfileType: uint32(p.ProfileType), Functions: []mipFuncJSON{}}
	for i := range p.Funcs {
		f := &p.Funcs[i]
		if coveredOnly && !f.Covered() {
			continue
		}
		jf := mipFuncJSON{Name: f.Name, Covered: f.Covered(), MergeCount: f.MergeCount, CallCount: f.CallCount,
			TimestampSum: f.TimestampSum, Size: f.Size, CFGSignature: f.CFGSignature, Signature: f.Signature,
			RawOffset: f.RawOffset, FuncOffset: int32(f.FuncOffset), Blocks: []mipBlockJSON{}}
		var entry uint64
		if bin != nil {
			entry = f.Addr(bin.rawAddr)
			jf.Addr, jf.File, jf.Line = at(entry)
		}
		for k, b := range f.Blocks {
			if coveredOnly && !b.Covered {
				continue
			}
			jb := mipBlockJSON{Index: k + 1, Offset: b.Offset, Covered: b.Covered}
			if bin != nil {
				jb.Addr, jb.File, jb.Line = at(mip.BlockAddr(entry, b.Offset))
			}
			jf.Blocks = append(jf.Blocks, jb)
		}
		doc.Functions = append(doc.Functions, jf)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	return writeMIPText(w, p, doc)
}

func writeMIPText(w io.Writer, p *mip.Profile, doc mipShowJSON) error {
	bw := bufio.NewWriter(w)
	covered := 0
	for i := range p.Funcs {
		if p.Funcs[i].Covered() {
			covered++
		}
	}
	fmt.Fprintf(bw, "module hash %#08x, profile type %#x (%v): %d of %d functions covered\n",
		p.ModuleHash, uint32(p.ProfileType), p.ProfileType, covered, len(p.Funcs))
	counts := p.ProfileType.Counts()
	state := func(c bool) string {
		if c {
			return "covered"
		}
		return "not covered"
	}
	where := func(addr *uint64, rel string) string {
		if addr != nil {
			return fmt.Sprintf("%#x", *addr)
		}
		return rel
	}
	source := func(file string, line int) string {
		if file == "" {
			return ""
		}
		return fmt.Sprintf("  %s:%d", file, line)
	}
	for _, f := range doc.Functions {
		fmt.Fprintf(bw, "%s  %s  size %d  %s  merges %d", orNone(f.Name),
			where(f.Addr, fmt.Sprintf("%s%+#x", mip.RawSection, f.FuncOffset)), f.Size, state(f.Covered), f.MergeCount)
		if counts {
			fmt.Fprintf(bw, "  calls %d  timestamps %d", f.CallCount, f.TimestampSum)
		}
		fmt.Fprintf(bw, "%s\n", source(f.File, f.Line))
		for _, b := range f.Blocks {
			fmt.Fprintf(bw, "  block %d  %s  %s%s\n", b.Index, where(b.Addr, fmt.Sprintf("+%#x", b.Offset)), state(b.Covered), source(b.File, b.Line))
		}
	}
	return bw.Flush()
}
