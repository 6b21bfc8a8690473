package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"iter"
	"strconv"

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
			stream := false
			var vals []uint64
			for _, a := range addrs {
				if a == "-" {
					stream = true
					continue
				}
				v, err := linetable.ParseAddr(a)
				if err != nil {
					return usagef("%v", err)
				}
				vals = append(vals, v)
			}
			if stream && len(vals) > 0 {
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
				return writeBAT(c.stdout, t, *asJSON)
			}
			w := &batWriter{w: bufio.NewWriterSize(c.stdout, 64<<10), t: t, json: *asJSON, branch: *branch}
			w.begin()
			if stream {
				err = w.stream(c.stdin)
			} else {
				for _, v := range vals {
					w.write(v)
				}
			}
			w.end()
			if ferr := w.w.Flush(); err == nil {
				err = ferr
			}
			return err
		}
	},
}

// batWriter formats translations without allocating per address.
type batWriter struct {
	w      *bufio.Writer
	t      *bat.Table
	json   bool
	branch bool
	n      int
	buf    []byte
}

func (a *batWriter) begin() {
	if a.json {
		a.w.WriteString("[")
	}
}

func (a *batWriter) end() {
	if a.json {
		if a.n > 0 {
			a.w.WriteString("\n")
		}
		a.w.WriteString("]\n")
	}
}

// stream translates one address per input line, flushing whenever the
// input has nothing more buffered.
func (a *batWriter) stream(in io.Reader) error {
	return readAddrs(in, 1<<10, func(lines []addrLine) error {
		for _, l := range lines {
			if l.bad != "" {
				return fmt.Errorf("stdin line %d: %s %q", l.lineNo, l.bad, l.input)
			}
			a.write(l.addr)
		}
		return nil
	}, a.w.Flush)
}

func (a *batWriter) write(addr uint64) {
	loc, ok := a.t.Translate(addr, a.branch)
	b := a.buf[:0]
	if a.json {
		if a.n > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n{\"addr\":"...)
		b = strconv.AppendUint(b, addr, 10)
		b = append(b, ",\"found\":"...)
		b = strconv.AppendBool(b, ok)
		if ok {
			b = append(b, ",\"function\":"...)
			b = appendJSONString(b, loc.Fragment.Name)
			b = append(b, ",\"parent\":"...)
			b = appendJSONString(b, loc.Function.Name)
			b = append(b, ",\"input_offset\":"...)
			b = strconv.AppendUint(b, loc.InputOffset, 10)
			b = append(b, ",\"is_branch\":"...)
			b = strconv.AppendBool(b, loc.Branch)
		}
		b = append(b, '}')
	} else {
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, addr, 16)
		if ok {
			b = append(b, ' ')
			b = append(b, orNone(loc.Fragment.Name)...)
			b = append(b, "+0x"...)
			b = strconv.AppendUint(b, addr-loc.Fragment.Addr, 16)
			b = append(b, " -> "...)
			b = append(b, orNone(loc.Function.Name)...)
			b = append(b, "+0x"...)
			b = strconv.AppendUint(b, loc.InputOffset, 16)
			if loc.Branch {
				b = append(b, " (branch)"...)
			}
		} else {
			b = append(b, " ??"...)
		}
		b = append(b, '\n')
	}
	a.w.Write(b)
	a.buf = b
	a.n++
}

// writeBAT prints both tables of t.
func writeBAT(w io.Writer, t *bat.Table, asJSON bool) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var b []byte
	if asJSON {
		for i, table := range []iter.Seq[*bat.Func]{t.Hot(), t.Cold()} {
			bw.WriteString([]string{"{\"hot\":[", "],\"cold\":["}[i])
			n := 0
			for f := range table {
				b = appendBATFuncJSON(b[:0], f, n > 0)
				bw.Write(b)
				n++
			}
			if n > 0 {
				bw.WriteString("\n")
			}
		}
		bw.WriteString("]}\n")
		return bw.Flush()
	}
	fmt.Fprintf(bw, "hot table: %d functions\n", t.NumHot())
	for f := range t.Hot() {
		b = appendBATFuncText(b[:0], f)
		bw.Write(b)
	}
	fmt.Fprintf(bw, "cold table: %d fragments\n", t.NumCold())
	for f := range t.Cold() {
		b = appendBATFuncText(b[:0], f)
		bw.Write(b)
	}
	return bw.Flush()
}

// appendBATFuncJSON appends one fragment as a JSON object on its own line.
func appendBATFuncJSON(b []byte, f *bat.Func, comma bool) []byte {
	if comma {
		b = append(b, ',')
	}
	parent := f.Parent()
	b = append(b, "\n{\"addr\":"...)
	b = strconv.AppendUint(b, f.Addr, 10)
	b = append(b, ",\"name\":"...)
	b = appendJSONString(b, f.Name)
	b = append(b, ",\"size\":"...)
	b = strconv.AppendUint(b, f.Size, 10)
	b = append(b, ",\"cold\":"...)
	b = strconv.AppendBool(b, f.Cold)
	b = append(b, ",\"index\":"...)
	b = strconv.AppendInt(b, int64(f.Index), 10)
	b = append(b, ",\"parent\":"...)
	b = appendJSONString(b, parent.Name)
	b = append(b, ",\"parent_addr\":"...)
	b = strconv.AppendUint(b, parent.Addr, 10)
	b = append(b, ",\"hash\":"...)
	b = strconv.AppendUint(b, f.Hash, 10)
	b = append(b, ",\"num_blocks\":"...)
	b = strconv.AppendUint(b, uint64(f.NumBlocks), 10)
	b = append(b, ",\"input_skew\":"...)
	b = strconv.AppendUint(b, uint64(f.InputSkew), 10)
	b = append(b, ",\"equal_elems\":"...)
	b = strconv.AppendUint(b, uint64(f.EqualElems), 10)
	b = append(b, ",\"entries\":["...)
	for i := range f.Entries {
		e := &f.Entries[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "{\"output_offset\":"...)
		b = strconv.AppendUint(b, uint64(e.OutputOffset), 10)
		b = append(b, ",\"input_offset\":"...)
		b = strconv.AppendUint(b, uint64(e.InputOffset), 10)
		b = append(b, ",\"is_branch\":"...)
		b = strconv.AppendBool(b, e.Branch)
		if !e.Branch {
			b = append(b, ",\"deleted\":"...)
			b = strconv.AppendBool(b, e.Deleted)
			b = append(b, ",\"block_index\":"...)
			b = strconv.AppendUint(b, uint64(e.BlockIndex), 10)
			b = append(b, ",\"block_hash\":"...)
			b = strconv.AppendUint(b, e.BlockHash, 10)
		}
		b = append(b, '}')
	}
	b = append(b, "],\"secondary_entries\":["...)
	for i, off := range f.SecondaryEntries {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(off), 10)
	}
	return append(b, "]}"...)
}

// appendBATFuncText appends one fragment and its entries, readably.
func appendBATFuncText(b []byte, f *bat.Func) []byte {
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
