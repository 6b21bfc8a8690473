package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/splitdbg/splitdbg/splitinfo"
)

var funcsCmd = &command{
	name:    "funcs",
	args:    "[-all] [-json] BIN",
	summary: "list the split functions of BIN with all their fragments",
	help: `
Lists the logical functions of the ELF file BIN that are split into several
fragments (all functions with -all). Fragments are in logical order, the
entry fragment first; for each moved fragment, branch_addrs lists every
direct branch in the other fragments that reaches it, and branch_addr the
one through which the flow first reaches it (the split record's
branch_addr). "sources" says which evidence placed the function
(symbols, dwarf, ...) and "conflicts" where the sources disagree.

Addresses are link-time virtual addresses, JSON numbers.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		all := fs.Bool("all", false, "list every function, not only split ones")
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) != 1 {
				return usagef("want one BIN, got %d arguments", len(args))
			}
			t, err := splitinfo.Open(args[0])
			if err != nil {
				return err
			}
			return writeFuncs(c.stdout, t, *all, *asJSON)
		}
	},
}

type jsonFunc struct {
	Name       string         `json:"name"`
	SourceName string         `json:"source_name,omitempty"`
	Aliases    []string       `json:"aliases,omitempty"`
	Entry      uint64         `json:"entry"`
	Size       uint64         `json:"size"`
	CompUnit   string         `json:"compile_unit,omitempty"`
	File       string         `json:"file,omitempty"`
	Line       int            `json:"line,omitempty"`
	Fragments  []jsonFragment `json:"fragments"`
	Sources    []string       `json:"sources"`
	Conflicts  []jsonConflict `json:"conflicts,omitempty"`
}

type jsonFragment struct {
	Start       uint64   `json:"start"`
	End         uint64   `json:"end"`
	Symbol      string   `json:"symbol"`
	Kind        string   `json:"kind"`
	BranchAddr  uint64   `json:"branch_addr"`
	BranchAddrs []uint64 `json:"branch_addrs"`
	Sources     []string `json:"sources"`
}

type jsonConflict struct {
	Addr   uint64 `json:"addr"`
	Detail string `json:"detail"`
}

func toJSONFunc(p *splitinfo.Proc) jsonFunc {
	j := jsonFunc{
		Name: p.Name, SourceName: p.SourceName, Aliases: p.Aliases, Entry: p.Entry, Size: p.Size(),
		CompUnit: p.CompUnit, File: p.File, Line: p.Line, Sources: p.Sources.Names(),
		Fragments: make([]jsonFragment, 0, len(p.Fragments)),
	}
	for i := range p.Fragments {
		f := &p.Fragments[i]
		sites := f.BranchSites
		if sites == nil {
			sites = []uint64{}
		}
		j.Fragments = append(j.Fragments, jsonFragment{
			Start: f.Start, End: f.End, Symbol: f.Symbol, Kind: f.Kind.String(),
			BranchAddr: f.BranchAddr, BranchAddrs: sites, Sources: f.Sources.Names(),
		})
	}
	for _, c := range p.Conflicts {
		j.Conflicts = append(j.Conflicts, jsonConflict{c.Addr, c.Detail})
	}
	return j
}

func writeFuncs(w io.Writer, t *splitinfo.Table, all, asJSON bool) error {
	procs := t.Split()
	if all {
		procs = t.All()
	}
	if asJSON {
		// One function at a time, indented as json.MarshalIndent would
		// indent the whole array, without building it.
		bw := bufio.NewWriterSize(w, 256<<10)
		bw.WriteString("[")
		var buf, ind bytes.Buffer
		n := 0
		for p := range procs {
			b, err := json.Marshal(toJSONFunc(p))
			if err != nil {
				return err
			}
			ind.Reset()
			buf.Reset()
			buf.Write(b)
			if err := json.Indent(&ind, buf.Bytes(), "  ", "  "); err != nil {
				return err
			}
			if n > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n  ")
			bw.Write(ind.Bytes())
			n++
		}
		if n > 0 {
			bw.WriteString("\n")
		}
		bw.WriteString("]\n")
		return bw.Flush()
	}
	for p := range procs {
		fmt.Fprintf(w, "%s  entry %#x  size %d  [%s]", p.Name, p.Entry, p.Size(), p.Sources)
		if p.CompUnit != "" {
			fmt.Fprintf(w, "  %s", p.CompUnit)
		}
		fmt.Fprintln(w)
		for i := range p.Fragments {
			f := &p.Fragments[i]
			fmt.Fprintf(w, "  %-4s %#x-%#x  %s", f.Kind, f.Start, f.End, orNone(f.Symbol))
			if len(f.BranchSites) > 0 {
				fmt.Fprintf(w, "  from %#x", f.BranchAddr)
				if len(f.BranchSites) > 1 {
					fmt.Fprintf(w, " (branches at")
					for _, s := range f.BranchSites {
						fmt.Fprintf(w, " %#x", s)
					}
					fmt.Fprint(w, ")")
				}
			}
			fmt.Fprintln(w)
		}
		for _, c := range p.Conflicts {
			fmt.Fprintf(w, "  ! %#x: %s\n", c.Addr, c.Detail)
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(no symbol)"
	}
	return s
}
