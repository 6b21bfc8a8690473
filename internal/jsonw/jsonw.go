// Package jsonw appends JSON text (RFC 8259) to byte slices without
// reflection: the one streaming writer behind splitdbg's large outputs
// (funcs, addr, bbaddrmap and bat -json), whose shapes are defined next
// to their types. What it writes is byte for byte what encoding/json
// writes for the same values.
//
// The field appenders take the member's separator and name as one raw
// prefix, e.g. `,"size":`, so that a record is a run of appends.
package jsonw

import (
	"strconv"
	"unicode/utf8"
)

// String appends s as a JSON string (RFC 8259, section 7), escaped as
// encoding/json escapes it: control characters (\b, \f, \n, \r and \t
// by name), the HTML characters <, > and &, U+2028 and U+2029, and
// invalid UTF-8 as U+FFFD.
func String(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&15])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// Str appends prefix, then s as a JSON string.
func Str(b []byte, prefix, s string) []byte { return String(append(b, prefix...), s) }

// Uint appends prefix, then v.
func Uint(b []byte, prefix string, v uint64) []byte {
	return strconv.AppendUint(append(b, prefix...), v, 10)
}

// Int appends prefix, then v.
func Int(b []byte, prefix string, v int64) []byte {
	return strconv.AppendInt(append(b, prefix...), v, 10)
}

// Bool appends prefix, then v.
func Bool(b []byte, prefix string, v bool) []byte {
	return strconv.AppendBool(append(b, prefix...), v)
}

// Uints appends prefix, then vs as an array on one line.
func Uints[T ~uint8 | ~uint16 | ~uint32 | ~uint64](b []byte, prefix string, vs []T) []byte {
	b = append(b, prefix...)
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return append(b, ']')
}

// Array frames a JSON array streamed one element at a time, each element
// starting on its own line: the array opens with its first element, so
// that output that fails before any element has written nothing.
type Array struct{ n int }

// Elem appends what goes before the next element, "[" or ",".
func (a *Array) Elem(b []byte) []byte {
	a.n++
	if a.n == 1 {
		return append(b, '[')
	}
	return append(b, ',')
}

// End appends the array's end: "\n]" after elements, "[]" for none.
func (a *Array) End(b []byte) []byte {
	if a.n == 0 {
		return append(b, "[]"...)
	}
	return append(b, "\n]"...)
}

// Len returns the number of elements so far.
func (a *Array) Len() int { return a.n }
