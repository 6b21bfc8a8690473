package symbolize

import (
	"strconv"
	"unicode/utf8"
)

// Style is an output style of llvm-symbolizer (--output-style).
type Style uint8

const (
	LLVM Style = iota // function, then FILE:LINE:COLUMN, then an empty line
	GNU               // function, then FILE:LINE (discriminator N), as GNU addr2line
	JSON              // one object per request
)

// Printer formats answers as llvm-symbolizer 22 prints them (its
// DIPrinter: PlainPrinterBase, LLVMPrinter, GNUPrinter, JSONPrinter).
type Printer struct {
	Style Style
	// Functions prints function names (not with --functions=none).
	Functions bool
	// Addresses prints the address before its answer (--addresses).
	Addresses bool
	// Pretty puts a frame on one line, "FUNC at FILE:LINE", marking
	// callers " (inlined by) " (--pretty-print); JSON is indented.
	Pretty bool
}

// Request is what an answer answers: a module, as the request named it,
// and an address in it (HasAddr) or a symbol name; with neither, the
// input was no request.
type Request struct {
	Module  string
	Addr    uint64
	HasAddr bool
	Symbol  string
}

// appendJSONHead opens a JSON answer with the request's keys that sort
// before key, and key.
func appendJSONHead(b []byte, q *Request, key string) []byte {
	b = append(b, '{')
	if q.HasAddr {
		b = append(b, `"Address":`...)
		b = appendHexString(b, q.Addr)
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, `":`...)
}

// appendJSONTail closes a JSON answer with the request's keys that sort
// after Data, Error, Frame and Loc; symbolKey is the key that follows
// them ("Symbol"), if any.
func appendJSONTail(b []byte, q *Request) []byte {
	b = append(b, `,"ModuleName":`...)
	b = appendJSONString(b, q.Module)
	if q.Symbol != "" {
		b = append(b, `,"SymName":`...)
		b = appendJSONString(b, q.Symbol)
	}
	return b
}

// AppendCode appends the answer for a code address: frames, innermost
// first, from Frames; for a symbol name, one frame per symbol of that
// name (Module.Symbol).
func (p *Printer) AppendCode(b []byte, q *Request, frames []Frame) []byte {
	if p.Style == JSON {
		if q.Symbol != "" {
			b = appendJSONHead(b, q, "Loc")
			b = appendJSONFrames(b, frames)
			b = appendJSONTail(b, q)
			return append(b, '}')
		}
		if q.HasAddr {
			b = append(b, `{"Address":`...)
			b = appendHexString(b, q.Addr)
			b = append(b, ',')
		} else {
			b = append(b, '{')
		}
		b = append(b, `"ModuleName":`...)
		b = appendJSONString(b, q.Module)
		b = append(b, `,"Symbol":`...)
		b = appendJSONFrames(b, frames)
		return append(b, '}')
	}
	if q.HasAddr {
		b = p.appendHeader(b, q.Addr)
	}
	if len(frames) == 0 {
		b = p.appendFrame(b, &Frame{}, false)
	}
	for i := range frames {
		b = p.appendFrame(b, &frames[i], i > 0 && q.Symbol == "")
	}
	return p.appendFooter(b)
}

// AppendFrame appends the answer for a FRAME request as for an address
// without local variables (reading their locations is not implemented).
func (p *Printer) AppendFrame(b []byte, q *Request) []byte {
	if p.Style == JSON {
		b = appendJSONHead(b, q, "Frame")
		b = append(b, "[]"...)
		b = appendJSONTail(b, q)
		return append(b, '}')
	}
	if q.HasAddr {
		b = p.appendHeader(b, q.Addr)
	}
	b = append(b, "??\n"...)
	return p.appendFooter(b)
}

// AppendData appends the answer for a data address.
func (p *Printer) AppendData(b []byte, q *Request, g *Global) []byte {
	if p.Style == JSON {
		b = appendJSONHead(b, q, "Data")
		// llvm-symbolizer's JSON has no declaration.
		b = append(b, `{"Name":`...)
		b = appendJSONString(b, g.Name)
		b = append(b, `,"Size":`...)
		b = appendHexString(b, g.Size)
		b = append(b, `,"Start":`...)
		b = appendHexString(b, g.Start)
		b = append(b, '}')
		b = appendJSONTail(b, q)
		return append(b, '}')
	}
	if q.HasAddr {
		b = p.appendHeader(b, q.Addr)
	}
	b = append(b, orUnknown(g.Name)...)
	b = append(b, '\n')
	b = strconv.AppendUint(b, g.Start, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, g.Size, 10)
	b = append(b, '\n')
	if g.DeclFile == "" {
		b = append(b, "??:?"...)
	} else {
		b = append(b, g.DeclFile...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(g.DeclLine), 10)
	}
	b = append(b, '\n')
	return p.appendFooter(b)
}

// AppendError appends the answer for a request whose module could not be
// read: in JSON an object with the error's message; otherwise an empty
// answer (the message goes to standard error).
func (p *Printer) AppendError(b []byte, q *Request, msg string) []byte {
	if p.Style != JSON {
		return p.AppendCode(b, q, nil)
	}
	b = appendJSONHead(b, q, "Error")
	b = append(b, `{"Message":`...)
	b = appendJSONString(b, msg)
	b = append(b, '}')
	b = appendJSONTail(b, q)
	return append(b, '}')
}

func (p *Printer) appendHeader(b []byte, addr uint64) []byte {
	if !p.Addresses {
		return b
	}
	b = append(b, "0x"...)
	b = strconv.AppendUint(b, addr, 16)
	if p.Pretty {
		return append(b, ": "...)
	}
	return append(b, '\n')
}

func (p *Printer) appendFooter(b []byte) []byte {
	if p.Style == LLVM {
		return append(b, '\n')
	}
	return b
}

func (p *Printer) appendFrame(b []byte, f *Frame, inlined bool) []byte {
	if p.Functions {
		if p.Pretty && inlined {
			b = append(b, " (inlined by) "...)
		}
		b = append(b, orUnknown(f.Function)...)
		if p.Pretty {
			b = append(b, " at "...)
		} else {
			b = append(b, '\n')
		}
	}
	b = append(b, orUnknown(f.File)...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(f.Line), 10)
	if p.Style == GNU {
		if f.Discriminator != 0 {
			b = append(b, " (discriminator "...)
			b = strconv.AppendInt(b, int64(f.Discriminator), 10)
			b = append(b, ')')
		}
	} else {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(f.Column), 10)
	}
	return append(b, '\n')
}

func orUnknown(s string) string {
	if s == "" {
		return "??"
	}
	return s
}

// appendJSONFrames appends frames as LLVM's JSON printer does: an array
// of objects with their keys in sorted order.
func appendJSONFrames(b []byte, frames []Frame) []byte {
	b = append(b, '[')
	for i := range frames {
		f := &frames[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Column":`...)
		b = strconv.AppendInt(b, int64(f.Column), 10)
		b = append(b, `,"Discriminator":`...)
		b = strconv.AppendInt(b, int64(f.Discriminator), 10)
		b = append(b, `,"FileName":`...)
		b = appendJSONString(b, f.File)
		b = append(b, `,"FunctionName":`...)
		b = appendJSONString(b, f.Function)
		b = append(b, `,"Line":`...)
		b = strconv.AppendInt(b, int64(f.Line), 10)
		b = append(b, `,"StartAddress":`...)
		if f.HasStartAddr {
			b = appendHexString(b, f.StartAddr)
		} else {
			b = append(b, `""`...)
		}
		b = append(b, `,"StartFileName":`...)
		b = appendJSONString(b, f.StartFile)
		b = append(b, `,"StartLine":`...)
		b = strconv.AppendInt(b, int64(f.StartLine), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendHexString(b []byte, v uint64) []byte {
	b = append(b, `"0x`...)
	b = strconv.AppendUint(b, v, 16)
	return append(b, '"')
}

// plainPrefix returns the length of the longest prefix of s that JSON
// takes as it is: printable ASCII other than '"' and '\\'. It reads
// eight bytes at a time while they all are (the tests for a byte below
// 0x20 and for a zero byte of the word xor '"' or '\\' are Hacker's
// Delight's, "Find First 0-Byte"), then byte by byte.
func plainPrefix(s string) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q, bs := w^(lo*'"'), w^(lo*'\\')
		if (w|(w-lo*0x20)&^w|(q-lo)&^q|(bs-lo)&^bs)&hi != 0 {
			break
		}
	}
	for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
		i++
	}
	return i
}

// appendJSONString appends s as a JSON string as LLVM's JSON writer
// does: '"' and '\\' escaped, control characters as \t, \n, \r or \u00xx,
// invalid UTF-8 as U+FFFD, everything else as is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	// The plain prefix, usually all of s, in one copy.
	i := plainPrefix(s)
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				if c < 0x20 {
					b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
