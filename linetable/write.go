package linetable

import (
	"encoding/json"
	"fmt"
	"io"
)

// The printed forms of a Breakpoint, as "splitdbg break" writes them; the
// JSON shape is the README's: {"location","function","functions","file",
// "line","addrs":[...],"locations":[{"addr","function","fragment",
// "kind","symbol","file","line","column","is_stmt"}]}.

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

// Write prints b to w: indented JSON, or a line for the location and one
// per address.
func (b *Breakpoint) Write(w io.Writer, asJSON bool) error {
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
			symbol := l.Symbol
			if symbol == "" {
				symbol = "(no symbol)"
			}
			fmt.Fprintf(w, " in %s (fragment %d %s %s)", l.Function, l.Fragment, l.Kind, symbol)
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
