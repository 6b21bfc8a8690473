// Package addrlines reads addresses one per line, as "splitdbg addr -"
// and "splitdbg bat -translate -" take them from standard input, without
// allocating per address.
package addrlines

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// Line is one input line: an address, or Bad says why it is none.
type Line struct {
	Addr   uint64
	LineNo int
	Input  string // the line, if Bad
	Bad    string
}

// Read reads one address per line from in and hands them to handle in
// batches: the lines already buffered, at most max, so that a peer that
// writes one address at a time gets each answer before it sends the
// next. flush is called whenever the input has nothing more buffered.
// Blank lines are skipped; a line that is no address (or longer than the
// buffer) is handed on with the reason.
func Read(in io.Reader, max int, handle func([]Line) error, flush func() error) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var batch []Line
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			batch = append(batch, Line{LineNo: lineNo, Input: string(line[:64]) + "...", Bad: "line too long"})
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
			line = nil
		}
		if s := bytes.TrimSpace(line); len(s) > 0 {
			v, ok := Parse(s)
			l := Line{Addr: v, LineNo: lineNo}
			if !ok {
				l.Input, l.Bad = string(s), "bad address"
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

// Parse parses an address as linetable.ParseAddr does, without
// allocating: "0x..." hexadecimal, else decimal.
func Parse(s []byte) (uint64, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return Digits(s[2:], 16)
	}
	return Digits(s, 10)
}

// Digits parses digits of base (at most 16) without overflow.
func Digits(t []byte, base uint64) (uint64, bool) {
	if len(t) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range t {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base || v > (1<<64-1-d)/base {
			return 0, false
		}
		v = v*base + d
	}
	return v, true
}
