package splitinfo

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/splitdbg/splitdbg/internal/jsonw"
)

// Write writes t's split procedures (every one with all) to w as
// `splitdbg funcs` prints them: with asJSON an array of one procedure
// (AppendJSON) per line, else AppendText's lines.
func (t *Table) Write(w io.Writer, all, asJSON bool) error {
	procs := t.Split()
	if all {
		procs = t.All()
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var buf []byte
	var arr jsonw.Array
	for p := range procs {
		if asJSON {
			buf = p.AppendJSON(arr.Elem(buf[:0]))
		} else {
			buf = p.AppendText(buf[:0])
		}
		bw.Write(buf)
	}
	if asJSON {
		bw.Write(append(arr.End(buf[:0]), '\n'))
	}
	return bw.Flush()
}

// AppendJSON appends p as one element of the indented array that
// `splitdbg funcs -json` prints, byte for byte as json.MarshalIndent(procs,
// "", "  ") writes it:
//
//	{"name","source_name","aliases","entry","size","compile_unit","file","line",
//	 "fragments":[{"start","end","symbol","kind","branch_addr","branch_addrs","sources"}],
//	 "sources","conflicts":[{"addr","detail"}]}
//
// source_name, aliases, compile_unit, file, line and conflicts are left
// out when empty. The caller writes the array's brackets and commas.
func (p *Proc) AppendJSON(b []byte) []byte {
	const in1, in2, in3, in4 = "\n  ", "\n    ", "\n      ", "\n        "
	b = jsonw.Str(append(b, in1+"{"...), in2+`"name": `, p.Name)
	if p.SourceName != "" {
		b = jsonw.Str(b, ","+in2+`"source_name": `, p.SourceName)
	}
	if len(p.Aliases) > 0 {
		b = appendIndentedStrings(append(b, ","+in2+`"aliases": `...), in2, p.Aliases)
	}
	b = jsonw.Uint(b, ","+in2+`"entry": `, p.Entry)
	b = jsonw.Uint(b, ","+in2+`"size": `, p.Size())
	if p.CompUnit != "" {
		b = jsonw.Str(b, ","+in2+`"compile_unit": `, p.CompUnit)
	}
	if p.File != "" {
		b = jsonw.Str(b, ","+in2+`"file": `, p.File)
	}
	if p.Line != 0 {
		b = jsonw.Int(b, ","+in2+`"line": `, int64(p.Line))
	}
	b = append(b, ","+in2+`"fragments": `...)
	if len(p.Fragments) == 0 {
		b = append(b, "[]"...)
	} else {
		for i := range p.Fragments {
			f := &p.Fragments[i]
			b = append(b, "[,"[min(i, 1)])
			b = jsonw.Uint(b, in3+"{"+in4+`"start": `, f.Start)
			b = jsonw.Uint(b, ","+in4+`"end": `, f.End)
			b = jsonw.Str(b, ","+in4+`"symbol": `, f.Symbol)
			b = jsonw.Str(b, ","+in4+`"kind": `, f.Kind.String())
			b = jsonw.Uint(b, ","+in4+`"branch_addr": `, f.BranchAddr)
			b = append(b, ","+in4+`"branch_addrs": `...)
			if len(f.BranchSites) == 0 {
				b = append(b, "[]"...)
			} else {
				for k, a := range f.BranchSites {
					b = jsonw.Uint(b, [2]string{"[", ","}[min(k, 1)]+in4+"  ", a)
				}
				b = append(b, in4+"]"...)
			}
			b = appendSources(append(b, ","+in4+`"sources": `...), in4, f.Sources)
			b = append(b, in3+"}"...)
		}
		b = append(b, in2+"]"...)
	}
	b = appendSources(append(b, ","+in2+`"sources": `...), in2, p.Sources)
	for i, c := range p.Conflicts {
		b = append(b, [2]string{"," + in2 + `"conflicts": [`, ","}[min(i, 1)]...)
		b = jsonw.Uint(b, in3+"{"+in4+`"addr": `, c.Addr)
		b = jsonw.Str(b, ","+in4+`"detail": `, c.Detail)
		b = append(b, in3+"}"...)
		if i == len(p.Conflicts)-1 {
			b = append(b, in2+"]"...)
		}
	}
	return append(b, in1+"}"...)
}

// appendIndentedStrings appends ss as an indented array whose closing
// bracket is at indent: null for nil, as encoding/json writes it.
func appendIndentedStrings(b []byte, indent string, ss []string) []byte {
	switch {
	case ss == nil:
		return append(b, "null"...)
	case len(ss) == 0:
		return append(b, "[]"...)
	}
	for i, s := range ss {
		b = jsonw.Str(b, [2]string{"[", ","}[min(i, 1)]+indent+"  ", s)
	}
	b = append(b, indent...)
	return append(b, ']')
}

// appendSources appends s.Names() as appendIndentedStrings does, without
// making the list: it runs once per fragment of every procedure.
func appendSources(b []byte, indent string, s Source) []byte {
	if s == 0 {
		return append(b, "null"...)
	}
	i := 0
	for bit := Source(1); bit != 0 && bit <= s; bit <<= 1 {
		if s&bit != 0 {
			b = jsonw.Str(b, [2]string{"[", ","}[min(i, 1)]+indent+"  ", bit.name())
			i++
		}
	}
	return append(append(b, indent...), ']')
}

// AppendText appends p as `splitdbg funcs` lists it: a line for the
// procedure, one per fragment in logical order with its branch sites, and
// one per conflict.
func (p *Proc) AppendText(b []byte) []byte {
	b = fmt.Appendf(b, "%s  entry %#x  size %d  [%s]", p.Name, p.Entry, p.Size(), p.Sources)
	if p.CompUnit != "" {
		b = append(append(b, "  "...), p.CompUnit...)
	}
	b = append(b, '\n')
	for i := range p.Fragments {
		f := &p.Fragments[i]
		sym := f.Symbol
		if sym == "" {
			sym = "(no symbol)"
		}
		b = fmt.Appendf(b, "  %-4s %#x-%#x  %s", f.Kind, f.Start, f.End, sym)
		if len(f.BranchSites) > 0 {
			b = fmt.Appendf(b, "  from %#x", f.BranchAddr)
			if len(f.BranchSites) > 1 {
				b = append(b, " (branches at"...)
				for _, s := range f.BranchSites {
					b = strconv.AppendUint(append(b, " 0x"...), s, 16)
				}
				b = append(b, ')')
			}
		}
		b = append(b, '\n')
	}
	for _, c := range p.Conflicts {
		b = fmt.Appendf(b, "  ! %#x: %s\n", c.Addr, c.Detail)
	}
	return b
}
