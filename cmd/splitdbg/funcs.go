package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strconv"

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
		// One function at a time, formatted as json.MarshalIndent formats
		// the whole array, without building it.
		bw := bufio.NewWriterSize(w, 256<<10)
		var buf []byte
		n := 0
		bw.WriteString("[")
		for p := range procs {
			if n > 0 {
				bw.WriteString(",")
			}
			buf = appendFuncJSON(buf[:0], toJSONFunc(p))
			bw.Write(buf)
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

// appendFuncJSON appends f as an element of the funcs -json array,
// byte for byte as json.MarshalIndent(out, "", "  ") writes it.
func appendFuncJSON(b []byte, f jsonFunc) []byte {
	const in1, in2, in3, in4 = "\n  ", "\n    ", "\n      ", "\n        "
	field := func(b []byte, indent, name string) []byte {
		b = append(b, indent...)
		b = append(b, '"')
		b = append(b, name...)
		return append(b, "\": "...)
	}
	strs := func(b []byte, indent, inner string, ss []string) []byte {
		switch {
		case ss == nil:
			return append(b, "null"...)
		case len(ss) == 0:
			return append(b, "[]"...)
		}
		b = append(b, '[')
		for i, s := range ss {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, inner...)
			b = appendJSONString(b, s)
		}
		b = append(b, indent...)
		return append(b, ']')
	}
	b = append(b, in1...)
	b = append(b, '{')
	b = appendJSONString(field(b, in2, "name"), f.Name)
	b = append(b, ',')
	if f.SourceName != "" {
		b = appendJSONString(field(b, in2, "source_name"), f.SourceName)
		b = append(b, ',')
	}
	if len(f.Aliases) > 0 {
		b = strs(field(b, in2, "aliases"), in2, in3, f.Aliases)
		b = append(b, ',')
	}
	b = strconv.AppendUint(field(b, in2, "entry"), f.Entry, 10)
	b = append(b, ',')
	b = strconv.AppendUint(field(b, in2, "size"), f.Size, 10)
	b = append(b, ',')
	if f.CompUnit != "" {
		b = appendJSONString(field(b, in2, "compile_unit"), f.CompUnit)
		b = append(b, ',')
	}
	if f.File != "" {
		b = appendJSONString(field(b, in2, "file"), f.File)
		b = append(b, ',')
	}
	if f.Line != 0 {
		b = strconv.AppendInt(field(b, in2, "line"), int64(f.Line), 10)
		b = append(b, ',')
	}
	b = field(b, in2, "fragments")
	switch {
	case f.Fragments == nil:
		b = append(b, "null"...)
	case len(f.Fragments) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, '[')
		for i, fr := range f.Fragments {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, in3...)
			b = append(b, '{')
			b = strconv.AppendUint(field(b, in4, "start"), fr.Start, 10)
			b = append(b, ',')
			b = strconv.AppendUint(field(b, in4, "end"), fr.End, 10)
			b = append(b, ',')
			b = appendJSONString(field(b, in4, "symbol"), fr.Symbol)
			b = append(b, ',')
			b = appendJSONString(field(b, in4, "kind"), fr.Kind)
			b = append(b, ',')
			b = strconv.AppendUint(field(b, in4, "branch_addr"), fr.BranchAddr, 10)
			b = append(b, ',')
			b = field(b, in4, "branch_addrs")
			switch {
			case fr.BranchAddrs == nil:
				b = append(b, "null"...)
			case len(fr.BranchAddrs) == 0:
				b = append(b, "[]"...)
			default:
				b = append(b, '[')
				for k, a := range fr.BranchAddrs {
					if k > 0 {
						b = append(b, ',')
					}
					b = append(b, in4...)
					b = append(b, "  "...)
					b = strconv.AppendUint(b, a, 10)
				}
				b = append(b, in4...)
				b = append(b, ']')
			}
			b = append(b, ',')
			b = strs(field(b, in4, "sources"), in4, in4+"  ", fr.Sources)
			b = append(b, in3...)
			b = append(b, '}')
		}
		b = append(b, in2...)
		b = append(b, ']')
	}
	b = append(b, ',')
	b = strs(field(b, in2, "sources"), in2, in3, f.Sources)
	if len(f.Conflicts) > 0 {
		b = append(b, ',')
		b = field(b, in2, "conflicts")
		b = append(b, '[')
		for i, c := range f.Conflicts {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, in3...)
			b = append(b, '{')
			b = strconv.AppendUint(field(b, in4, "addr"), c.Addr, 10)
			b = append(b, ',')
			b = appendJSONString(field(b, in4, "detail"), c.Detail)
			b = append(b, in3...)
			b = append(b, '}')
		}
		b = append(b, in2...)
		b = append(b, ']')
	}
	b = append(b, in1...)
	return append(b, '}')
}
