package symbolize

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/splitdbg/splitdbg/internal/addrlines"
	"github.com/splitdbg/splitdbg/internal/jsonw"
	"github.com/splitdbg/splitdbg/linetable"
)

// AddrWriter writes the answers of "splitdbg addr": per address, its
// Answer as a text line or, in JSON, as an object of one array. It
// allocates nothing per address.
type AddrWriter struct {
	w    *bufio.Writer
	t    *linetable.Table
	json bool
	n    int
	bad  int // input lines that were no address
	buf  []byte
}

// NewAddrWriter returns a writer of answers from t to w, in JSON if
// json. Close ends the output.
func NewAddrWriter(w io.Writer, t *linetable.Table, json bool) *AddrWriter {
	a := &AddrWriter{w: bufio.NewWriterSize(w, 64<<10), t: t, json: json}
	if json {
		a.w.WriteString("[")
	}
	return a
}

// Close ends the output (the JSON array) and flushes it.
func (a *AddrWriter) Close() error {
	if a.json {
		if a.n > 0 {
			a.w.WriteString("\n")
		}
		a.w.WriteString("]\n")
	}
	return a.w.Flush()
}

// Stream answers one address per input line, flushing whenever the input
// has nothing more buffered so that an interactive peer gets its answers.
// A line that is no address gets an error answer in its place.
func (a *AddrWriter) Stream(in io.Reader) error {
	// The addresses already buffered (at most 1<<batchBits) are looked up
	// and formatted in address order, so that neighbours share cache
	// lines, into an arena; the answers are then written in input order.
	// Sorting packs address and input index into one word.
	var keys []uint64 // addrOrder's keys
	var slots []span
	var arena []byte
	var ans Answer
	answer := func(batch []addrlines.Line) error {
		keys = addrOrder(keys, len(batch), func(k int) (uint64, bool) { return batch[k].Addr, batch[k].Bad == "" })
		slots = slices.Grow(slots[:0], len(batch))[:len(batch)]
		arena = arena[:0]
		at := func(k int) {
			start := int32(len(arena))
			if l := &batch[k]; l.Bad != "" {
				arena = a.formatBad(arena, l)
			} else {
				Lookup(a.t, l.Addr, &ans)
				arena = a.format(arena, &ans)
			}
			slots[k] = span{0, start, int32(len(arena))}
		}
		for _, key := range keys {
			at(int(key & (1<<batchBits - 1)))
		}
		for k := range batch {
			if batch[k].Bad != "" {
				at(k)
			}
		}
		for _, sl := range slots {
			a.emit(arena[sl.start:sl.end])
		}
		return nil
	}
	if err := addrlines.Read(in, 1<<batchBits, answer, a.w.Flush); err != nil {
		return err
	}
	if a.bad > 0 {
		return fmt.Errorf("stdin: %d line(s) were no address", a.bad)
	}
	return nil
}

// Write writes the answer for addr.
func (a *AddrWriter) Write(addr uint64) {
	var ans Answer
	Lookup(a.t, addr, &ans)
	a.buf = a.format(a.buf[:0], &ans)
	a.emit(a.buf)
}

// emit writes one formatted answer, with the separator JSON needs.
func (a *AddrWriter) emit(b []byte) {
	if a.json && a.n > 0 {
		a.w.WriteByte(',')
	}
	a.w.Write(b)
	a.n++
}

// formatBad appends the answer to an input line that is no address:
// {"line","input","error"} in JSON, else "stdin line N: ERROR: INPUT".
func (a *AddrWriter) formatBad(b []byte, l *addrlines.Line) []byte {
	a.bad++
	if a.json {
		b = append(b, "\n{\"line\":"...)
		b = strconv.AppendInt(b, int64(l.LineNo), 10)
		b = append(b, ",\"input\":"...)
		b = jsonw.String(b, l.Input)
		b = append(b, ",\"error\":"...)
		b = jsonw.String(b, l.Bad)
		return append(b, '}')
	}
	b = append(b, "stdin line "...)
	b = strconv.AppendInt(b, int64(l.LineNo), 10)
	b = append(b, ": "...)
	b = append(b, l.Bad...)
	b = append(b, ": "...)
	b = strconv.AppendQuote(b, l.Input)
	return append(b, '\n')
}

// format appends one answer: a JSON object on its own line, or a text
// line.
func (a *AddrWriter) format(b []byte, ans *Answer) []byte {
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
