package bat

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/splitdbg/splitdbg/internal/addrlines"
	"github.com/splitdbg/splitdbg/internal/jsonw"
)

// AppendTranslation translates addr as Translate does and appends the
// answer as `splitdbg bat -translate` prints it: with asJSON an object
// {"addr","found","function","parent","input_offset","is_branch"} (the
// last four when found), else a line "ADDR FRAGMENT+OFF -> PARENT+INPUT".
func (t *Table) AppendTranslation(b []byte, addr uint64, branchSrc, asJSON bool) []byte {
	loc, ok := t.Translate(addr, branchSrc)
	if asJSON {
		b = jsonw.Uint(b, `{"addr":`, addr)
		b = jsonw.Bool(b, `,"found":`, ok)
		if ok {
			b = jsonw.Str(b, `,"function":`, loc.Fragment.Name)
			b = jsonw.Str(b, `,"parent":`, loc.Function.Name)
			b = jsonw.Uint(b, `,"input_offset":`, loc.InputOffset)
			b = jsonw.Bool(b, `,"is_branch":`, loc.Branch)
		}
		return append(b, '}')
	}
	b = strconv.AppendUint(append(b, "0x"...), addr, 16)
	if !ok {
		return append(b, " ??\n"...)
	}
	b = append(append(b, ' '), orNone(loc.Fragment.Name)...)
	b = strconv.AppendUint(append(b, "+0x"...), addr-loc.Fragment.Addr, 16)
	b = append(append(b, " -> "...), orNone(loc.Function.Name)...)
	b = strconv.AppendUint(append(b, "+0x"...), loc.InputOffset, 16)
	if loc.Branch {
		b = append(b, " (branch)"...)
	}
	return append(b, '\n')
}

// WriteTranslations writes to w the translations (AppendTranslation) of
// addrs and, if in is not nil, first of the addresses read from in, one
// per line, flushing whenever in has nothing more buffered so that a peer
// gets each answer as it asks: a line each, or with asJSON one array of
// an object per line. A line of in that is no address is an error.
func (t *Table) WriteTranslations(w io.Writer, addrs []uint64, in io.Reader, branchSrc, asJSON bool) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var arr jsonw.Array
	var buf []byte
	translate := func(addr uint64) {
		if buf = buf[:0]; asJSON {
			buf = append(arr.Elem(buf), '\n')
		}
		bw.Write(t.AppendTranslation(buf, addr, branchSrc, asJSON))
	}
	var err error
	if in != nil {
		err = addrlines.Read(in, 1<<10, func(lines []addrlines.Line) error {
			for _, l := range lines {
				if l.Bad != "" {
					return fmt.Errorf("stdin line %d: %s %q", l.LineNo, l.Bad, l.Input)
				}
				translate(l.Addr)
			}
			return nil
		}, bw.Flush)
	}
	for _, v := range addrs {
		translate(v)
	}
	if asJSON {
		bw.Write(append(arr.End(buf[:0]), '\n'))
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// Print writes both tables of t as `splitdbg bat` prints them: with
// asJSON {"hot":[FUNC...],"cold":[FUNC...]}, one FUNC (see
// Func.AppendJSON) per line; else a readable listing.
func (t *Table) Print(w io.Writer, asJSON bool) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var b []byte
	for i, table := range [2]func(func(*Func) bool){t.Hot(), t.Cold()} {
		var arr jsonw.Array
		switch {
		case asJSON:
			bw.WriteString([]string{`{"hot":`, `,"cold":`}[i])
		case i == 0:
			fmt.Fprintf(bw, "hot table: %d functions\n", t.NumHot())
		default:
			fmt.Fprintf(bw, "cold table: %d fragments\n", t.NumCold())
		}
		for f := range table {
			if asJSON {
				b = f.AppendJSON(append(arr.Elem(b[:0]), '\n'))
			} else {
				b = f.AppendText(b[:0])
			}
			bw.Write(b)
		}
		if asJSON {
			bw.Write(arr.End(b[:0]))
		}
	}
	if asJSON {
		bw.WriteString("}\n")
	}
	return bw.Flush()
}

// AppendJSON appends f as one object of `splitdbg bat -json`:
// {"addr","name","size","cold","index","parent","parent_addr","hash",
// "num_blocks","input_skew","equal_elems","entries":[{"output_offset",
// "input_offset","is_branch","deleted","block_index","block_hash"}],
// "secondary_entries"}, an entry's last three only for block starts.
func (f *Func) AppendJSON(b []byte) []byte {
	parent := f.Parent()
	b = jsonw.Uint(b, `{"addr":`, f.Addr)
	b = jsonw.Str(b, `,"name":`, f.Name)
	b = jsonw.Uint(b, `,"size":`, f.Size)
	b = jsonw.Bool(b, `,"cold":`, f.Cold)
	b = jsonw.Int(b, `,"index":`, int64(f.Index))
	b = jsonw.Str(b, `,"parent":`, parent.Name)
	b = jsonw.Uint(b, `,"parent_addr":`, parent.Addr)
	b = jsonw.Uint(b, `,"hash":`, f.Hash)
	b = jsonw.Uint(b, `,"num_blocks":`, uint64(f.NumBlocks))
	b = jsonw.Uint(b, `,"input_skew":`, uint64(f.InputSkew))
	b = jsonw.Uint(b, `,"equal_elems":`, uint64(f.EqualElems))
	b = append(b, `,"entries":[`...)
	for i := range f.Entries {
		e := &f.Entries[i]
		b = jsonw.Uint(b, [2]string{`{"output_offset":`, `,{"output_offset":`}[min(i, 1)], uint64(e.OutputOffset))
		b = jsonw.Uint(b, `,"input_offset":`, uint64(e.InputOffset))
		b = jsonw.Bool(b, `,"is_branch":`, e.Branch)
		if !e.Branch {
			b = jsonw.Bool(b, `,"deleted":`, e.Deleted)
			b = jsonw.Uint(b, `,"block_index":`, uint64(e.BlockIndex))
			b = jsonw.Uint(b, `,"block_hash":`, e.BlockHash)
		}
		b = append(b, '}')
	}
	b = jsonw.Uints(append(b, ']'), `,"secondary_entries":`, f.SecondaryEntries)
	return append(b, '}')
}

func orNone(s string) string {
	if s == "" {
		return "(no symbol)"
	}
	return s
}

// AppendText appends f and its entries as `splitdbg bat` lists them.
func (f *Func) AppendText(b []byte) []byte {
	b = append(b, "  "...)
	b = append(b, orNone(f.Name)...)
	b = append(b, "  0x"...)
	b = strconv.AppendUint(b, f.Addr, 16)
	b = append(b, "  size "...)
	b = strconv.AppendUint(b, f.Size, 10)
	if f.Cold {
		p := f.Parent()
		b = append(b, "  parent "...)
		b = append(b, orNone(p.Name)...)
		b = append(b, " (0x"...)
		b = strconv.AppendUint(b, p.Addr, 16)
		b = append(b, ")  input skew "...)
		b = strconv.AppendUint(b, uint64(f.InputSkew), 10)
	} else {
		b = append(b, "  hash 0x"...)
		b = strconv.AppendUint(b, f.Hash, 16)
		b = append(b, "  blocks "...)
		b = strconv.AppendUint(b, uint64(f.NumBlocks), 10)
		if len(f.Fragments()) > 1 {
			b = append(b, "  fragments"...)
			for _, c := range f.Fragments()[1:] {
				b = append(b, ' ')
				b = append(b, orNone(c.Name)...)
			}
		}
	}
	b = append(b, '\n')
	for i := range f.Entries {
		e := &f.Entries[i]
		b = append(b, "    0x"...)
		b = strconv.AppendUint(b, uint64(e.OutputOffset), 16)
		b = append(b, " -> 0x"...)
		b = strconv.AppendUint(b, uint64(e.InputOffset), 16)
		if e.Branch {
			b = append(b, "  branch"...)
		} else {
			b = append(b, "  block "...)
			b = strconv.AppendUint(b, uint64(e.BlockIndex), 10)
			b = append(b, " hash 0x"...)
			b = strconv.AppendUint(b, e.BlockHash, 16)
			if e.Deleted {
				b = append(b, " deleted"...)
			}
		}
		b = append(b, '\n')
	}
	if len(f.SecondaryEntries) > 0 {
		b = append(b, "    secondary entries"...)
		for _, off := range f.SecondaryEntries {
			b = append(b, " 0x"...)
			b = strconv.AppendUint(b, uint64(off), 16)
		}
		b = append(b, '\n')
	}
	return b
}
