package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/splitdbg/splitdbg/linetable"
)

var breakCmd = &command{
	name:    "break",
	args:    "[-json] BIN LOC",
	summary: "resolve a breakpoint location in every fragment",
	help: `
Resolves a breakpoint location the way a debugger should for split
functions. LOC is one of:

  FUNC        the address after the prologue, always in the entry fragment;
              one in each function when several static functions share
              the name (as gdb), and a moved fragment's own symbol
              (foo.cold) names the fragment's start
  FILE:LINE   one address per block of the line's rows, in every fragment
              that holds the line: cold fragments included; a line
              without code moves to the next line with code (as gdb)
  FILE:FUNC   FUNC in FILE, to pick one of several functions of a name
  *ADDR       the address itself

FILE matches by base name, path suffix or absolute path. A name that
matches several files is an error listing the candidates.
"addrs" are the addresses; "locations" says for each its function,
fragment, source position and whether it is a statement start ("is_stmt"
false: BOLT dropped the flag and the block's first row is used).`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) != 2 {
				return usagef("want BIN and LOC")
			}
			t, err := linetable.Open(args[0])
			if err != nil {
				return err
			}
			b, err := t.Resolve(args[1])
			var amb *linetable.AmbiguousError
			if errors.As(err, &amb) {
				return fmt.Errorf("%s is ambiguous; say which: %s", amb.Spec, strings.Join(amb.Candidates, ", "))
			}
			if err != nil {
				return err
			}
			return writeBreakpoint(c.stdout, &b, *asJSON)
		}
	},
}

type jsonLocation struct {
	Addr     uint64 `json:"addr"`
	Function string `json:"function"`
	Fragment int    `json:"fragment"`
	Kind     string `json:"kind"`
	Symbol   string `json:"symbol"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	IsStmt   bool   `json:"is_stmt"`
}

type jsonBreakpoint struct {
	Location  string         `json:"location"`
	Function  string         `json:"function"`
	Functions []string       `json:"functions"`
	File      string         `json:"file,omitempty"`
	Line      int            `json:"line,omitempty"`
	Addrs     []uint64       `json:"addrs"`
	Locations []jsonLocation `json:"locations"`
}

func writeBreakpoint(w io.Writer, b *linetable.Breakpoint, asJSON bool) error {
	j := jsonBreakpoint{Location: b.Spec, File: b.File, Line: b.Line, Addrs: []uint64{}, Functions: []string{}, Locations: []jsonLocation{}}
	for _, p := range b.Procs() {
		j.Functions = append(j.Functions, p.Name)
	}
	if len(j.Functions) > 0 {
		j.Function = j.Functions[0]
	}
	for _, l := range b.Locs {
		jl := jsonLocation{Addr: l.Addr, File: l.File, Line: l.Line, Column: l.Column, IsStmt: !l.NoStmt}
		if f := l.Fragment(); f != nil {
			jl.Function, jl.Fragment, jl.Kind, jl.Symbol = l.Proc.Name, l.Frag, f.Kind.String(), f.Symbol
		}
		j.Addrs = append(j.Addrs, l.Addr)
		j.Locations = append(j.Locations, jl)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(j)
	}
	fmt.Fprintf(w, "%s: %d address(es)\n", b.Spec, len(b.Locs))
	for _, l := range j.Locations {
		fmt.Fprintf(w, "  %#x", l.Addr)
		if l.Function != "" {
			fmt.Fprintf(w, " in %s (fragment %d %s %s)", l.Function, l.Fragment, l.Kind, orNone(l.Symbol))
		}
		if l.File != "" {
			fmt.Fprintf(w, " at %s:%d", l.File, l.Line)
		}
		if !l.IsStmt {
			fmt.Fprint(w, " [no is_stmt row: first row of the block]")
		}
		fmt.Fprintln(w)
	}
	return nil
}
