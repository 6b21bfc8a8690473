package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/splitdbg/splitdbg/internal/jsonw"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/symbolize"
)

var addrCmd = &command{
	name:    "addr",
	args:    "[-json] BIN ADDR... | -",
	summary: "map addresses to logical functions, in any fragment",
	help: `
Maps each address to the logical function whose fragments hold it:
"function" is the logical name even for an address in foo.cold, "fragment"
the fragment's index in logical order, "symbol" the fragment's own symbol,
and "offset" the offset within the logical function (its fragments
concatenated in logical order); "file", "line" and "column" are the
source position from the line table, in any fragment. In a file with an
LLVM basic-block address map (clang -fbasic-block-address-map), "bb_id" is
the ID of the basic block holding the address (IDs follow the function's
layout before splitting) and "bb_metadata" how the block ends, as
"splitdbg bbaddrmap" prints them.

ADDR is hexadecimal with a 0x prefix, or decimal. With "-", addresses are
read from standard input, one per line, and answered as they arrive; a
line that is no address gets an answer of its own in its place,
{"line","input","error"} in JSON, and the command goes on (exit status 1
at the end).`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) < 2 {
				return usagef("want BIN and at least one ADDR or -")
			}
			stream := len(args) == 2 && args[1] == "-"
			var addrs []uint64
			if !stream {
				for _, a := range args[1:] {
					v, err := linetable.ParseAddr(a)
					if err != nil {
						return usagef("%v", err)
					}
					addrs = append(addrs, v)
				}
			}
			t, err := linetable.Open(args[0])
			if err != nil {
				return err
			}
			w := &addrWriter{w: bufio.NewWriterSize(c.stdout, 64<<10), t: t, json: *asJSON}
			w.begin()
			if stream {
				err = w.stream(c.stdin)
			} else {
				for _, a := range addrs {
					w.write(a)
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

// addrWriter formats lookups without allocating per address.
type addrWriter struct {
	w    *bufio.Writer
	t    *linetable.Table
	json bool
	n    int
	bad  int // input lines that were no address
	buf  []byte
}

func (a *addrWriter) begin() {
	if a.json {
		a.w.WriteString("[")
	}
}

func (a *addrWriter) end() {
	if a.json {
		if a.n > 0 {
			a.w.WriteString("\n")
		}
		a.w.WriteString("]\n")
	}
}

// stream answers one address per input line, flushing whenever the input
// has nothing more buffered so that an interactive peer gets its answers.
// A line that is no address gets an error answer in its place.
func (a *addrWriter) stream(in io.Reader) error {
	// The addresses already buffered (at most 1<<batchBits) are looked up
	// and formatted in address order, so that neighbours share cache
	// lines, into an arena; the answers are then written in input order.
	// Sorting packs address and input index into one word.
	const batchBits = 14
	var keys []uint64 // addr<<batchBits | index, sorted
	type span struct{ start, end int32 }
	var slots []span
	var arena []byte
	var ans symbolize.Answer
	answer := func(batch []addrLine) error {
		keys = keys[:0]
		packed := true
		for k, l := range batch {
			if l.bad != "" {
				continue
			}
			if l.addr >= 1<<(64-batchBits) {
				packed = false
				break
			}
			keys = append(keys, l.addr<<batchBits|uint64(k))
		}
		slices.Sort(keys)
		slots = slices.Grow(slots[:0], len(batch))[:len(batch)]
		arena = arena[:0]
		at := func(k int) {
			start := int32(len(arena))
			if l := &batch[k]; l.bad != "" {
				arena = a.formatBad(arena, l)
			} else {
				symbolize.Lookup(a.t, l.addr, &ans)
				arena = a.format(arena, &ans)
			}
			slots[k] = span{start, int32(len(arena))}
		}
		if packed {
			for _, key := range keys {
				at(int(key & (1<<batchBits - 1)))
			}
			for k := range batch {
				if batch[k].bad != "" {
					at(k)
				}
			}
		} else { // addresses too large to pack: in input order
			for k := range batch {
				at(k)
			}
		}
		for _, sl := range slots {
			a.emit(arena[sl.start:sl.end])
		}
		return nil
	}
	if err := readAddrs(in, 1<<batchBits, answer, a.w.Flush); err != nil {
		return err
	}
	if a.bad > 0 {
		return fmt.Errorf("stdin: %d line(s) were no address", a.bad)
	}
	return nil
}

// addrLine is one input line: an address, or bad says why it is none.
type addrLine struct {
	addr   uint64
	lineNo int
	input  string
	bad    string
}

// readAddrs reads one address per line from in and hands them to handle
// in batches: the lines already buffered, at most max, so that a peer
// that writes one address at a time gets each answer before it sends the
// next. flush is called whenever the input has nothing more buffered.
// Addresses are parsed without allocating; a line that is no address
// (or longer than the buffer) is handed on with the reason.
func readAddrs(in io.Reader, max int, handle func([]addrLine) error, flush func() error) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var batch []addrLine
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			batch = append(batch, addrLine{lineNo: lineNo, input: string(line[:64]) + "...", bad: "line too long"})
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
			line = nil
		}
		if s := bytes.TrimSpace(line); len(s) > 0 {
			v, ok := parseAddrBytes(s)
			l := addrLine{addr: v, lineNo: lineNo}
			if !ok {
				l.input, l.bad = string(s), "bad address"
			}
			batch = append(batch, l)
		}
		if err == io.EOF {
			if len(batch) > 0 {
				return handle(batch)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("stdin: %w", err)
		}
		if r.Buffered() == 0 || len(batch) == max {
			if len(batch) > 0 {
				if err := handle(batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
			if r.Buffered() == 0 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
}

// parseAddrBytes parses an address as linetable.ParseAddr does, without
// allocating: "0x..." hexadecimal, else decimal.
func parseAddrBytes(s []byte) (uint64, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return parseDigits(s[2:], 16)
	}
	return parseDigits(s, 10)
}

func (a *addrWriter) write(addr uint64) {
	var ans symbolize.Answer
	symbolize.Lookup(a.t, addr, &ans)
	a.buf = a.format(a.buf[:0], &ans)
	a.emit(a.buf)
}

// emit writes one formatted answer, with the separator JSON needs.
func (a *addrWriter) emit(b []byte) {
	if a.json && a.n > 0 {
		a.w.WriteByte(',')
	}
	a.w.Write(b)
	a.n++
}

// formatBad appends the answer to an input line that is no address:
// {"line","input","error"} in JSON, else "stdin line N: ERROR: INPUT".
func (a *addrWriter) formatBad(b []byte, l *addrLine) []byte {
	a.bad++
	if a.json {
		b = append(b, "\n{\"line\":"...)
		b = strconv.AppendInt(b, int64(l.lineNo), 10)
		b = append(b, ",\"input\":"...)
		b = jsonw.String(b, l.input)
		b = append(b, ",\"error\":"...)
		b = jsonw.String(b, l.bad)
		return append(b, '}')
	}
	b = append(b, "stdin line "...)
	b = strconv.AppendInt(b, int64(l.lineNo), 10)
	b = append(b, ": "...)
	b = append(b, l.bad...)
	b = append(b, ": "...)
	b = strconv.AppendQuote(b, l.input)
	return append(b, '\n')
}

// format appends one answer: a JSON object on its own line, or a text
// line.
func (a *addrWriter) format(b []byte, ans *symbolize.Answer) []byte {
	addr, loc, ok := ans.Addr, ans.Loc, ans.Found
	file, line, column, hasPos := ans.File, ans.Line, ans.Column, ans.HasPos
	bb, hasBB := ans.BB, ans.HasBB
	if a.json {
		b = append(b, "\n{\"addr\":"...)
		b = strconv.AppendUint(b, addr, 10)
		b = append(b, ",\"found\":"...)
		b = strconv.AppendBool(b, ok)
		if ok {
			f := loc.Fragment()
			b = append(b, ",\"function\":"...)
			b = jsonw.String(b, loc.Proc.Name)
			b = append(b, ",\"fragment\":"...)
			b = strconv.AppendInt(b, int64(loc.Frag), 10)
			b = append(b, ",\"kind\":"...)
			b = jsonw.String(b, f.Kind.String())
			b = append(b, ",\"symbol\":"...)
			b = jsonw.String(b, f.Symbol)
			b = append(b, ",\"offset\":"...)
			b = strconv.AppendUint(b, loc.Offset, 10)
		}
		if hasBB {
			b = append(b, ",\"bb_id\":"...)
			b = strconv.AppendUint(b, uint64(bb.ID), 10)
			b = append(b, ",\"bb_metadata\":"...)
			b = bb.Metadata.AppendJSON(b)
		}
		if hasPos {
			b = append(b, ",\"file\":"...)
			b = jsonw.String(b, file)
			b = append(b, ",\"line\":"...)
			b = strconv.AppendInt(b, int64(line), 10)
			b = append(b, ",\"column\":"...)
			b = strconv.AppendInt(b, int64(column), 10)
		}
		b = append(b, '}')
	} else {
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, addr, 16)
		if ok {
			f := loc.Fragment()
			b = append(b, ' ')
			b = append(b, loc.Proc.Name...)
			b = append(b, "+0x"...)
			b = strconv.AppendUint(b, loc.Offset, 16)
			b = append(b, " (fragment "...)
			b = strconv.AppendInt(b, int64(loc.Frag), 10)
			b = append(b, ' ')
			b = append(b, f.Kind.String()...)
			if f.Symbol != "" {
				b = append(b, ' ')
				b = append(b, f.Symbol...)
			}
			b = append(b, ')')
			if hasBB {
				b = append(b, " bb "...)
				b = strconv.AppendUint(b, uint64(bb.ID), 10)
			}
		} else {
			b = append(b, " ??"...)
		}
		if hasPos {
			b = append(b, " at "...)
			b = append(b, file...)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(line), 10)
		}
		b = append(b, '\n')
	}
	return b
}

func newFlushWriter(w io.Writer) *bufio.Writer { return bufio.NewWriter(w) }
