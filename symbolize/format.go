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

// AppendCode appends the answer for a code address: frames, innermost
// first, from Frames. In JSON, module is the module's name as the
// request gave it.
func (p *Printer) AppendCode(b []byte, module string, addr uint64, frames []Frame) []byte {
	if p.Style == JSON {
		b = append(b, `{"Address":`...)
		b = appendHexString(b, addr)
		b = append(b, `,"ModuleName":`...)
		b = appendJSONString(b, module)
		b = append(b, `,"Symbol":`...)
		b = appendJSONFrames(b, frames)
		return append(b, '}')
	}
	b = p.appendHeader(b, addr)
	if len(frames) == 0 {
		b = p.appendFrame(b, &Frame{}, false)
	}
	for i := range frames {
		b = p.appendFrame(b, &frames[i], i > 0)
	}
	return p.appendFooter(b)
}

// AppendSymbol appends the answer for a symbol name looked up with
// Module.Symbol: one frame per symbol of that name.
func (p *Printer) AppendSymbol(b []byte, module, name string, frames []Frame) []byte {
	if p.Style == JSON {
		b = append(b, `{"Loc":`...)
		b = appendJSONFrames(b, frames)
		b = append(b, `,"ModuleName":`...)
		b = appendJSONString(b, module)
		b = append(b, `,"SymName":`...)
		b = appendJSONString(b, name)
		return append(b, '}')
	}
	if len(frames) == 0 {
		b = p.appendFrame(b, &Frame{}, false)
	}
	for i := range frames {
		b = p.appendFrame(b, &frames[i], false)
	}
	return p.appendFooter(b)
}

// AppendData appends the answer for a data address.
func (p *Printer) AppendData(b []byte, module string, addr uint64, g *Global) []byte {
	if p.Style == JSON {
		b = append(b, `{"Address":`...)
		b = appendHexString(b, addr)
		b = append(b, `,"Data":{`...)
		if g.DeclFile != "" {
			b = append(b, `"DeclFile":`...)
			b = appendJSONString(b, g.DeclFile)
			b = append(b, `,"DeclLine":`...)
			b = strconv.AppendInt(b, int64(g.DeclLine), 10)
			b = append(b, ',')
		}
		b = append(b, `"Name":`...)
		b = appendJSONString(b, g.Name)
		b = append(b, `,"Size":`...)
		b = appendHexString(b, g.Size)
		b = append(b, `,"Start":`...)
		b = appendHexString(b, g.Start)
		b = append(b, `},"ModuleName":`...)
		b = appendJSONString(b, module)
		return append(b, '}')
	}
	b = p.appendHeader(b, addr)
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
// read: in JSON an object with the error's message, otherwise an empty
// answer (the message goes to standard error). hasAddr says whether the
// request has an address.
func (p *Printer) AppendError(b []byte, module string, addr uint64, hasAddr bool, msg string) []byte {
	if p.Style != JSON {
		return p.AppendCode(b, module, addr, nil)
	}
	b = append(b, '{')
	if hasAddr {
		b = append(b, `"Address":`...)
		b = appendHexString(b, addr)
		b = append(b, ',')
	}
	b = append(b, `"Error":{"Message":`...)
	b = appendJSONString(b, msg)
	b = append(b, `},"ModuleName":`...)
	b = appendJSONString(b, module)
	return append(b, '}')
}

// AppendInvalid appends the answer to an input line that is no request:
// the line itself, or in JSON an error object.
func (p *Printer) AppendInvalid(b []byte, module, line string) []byte {
	if p.Style == JSON {
		b = append(b, `{"Error":{"Message":`...)
		b = appendJSONString(b, "unable to parse arguments: "+line)
		b = append(b, `},"ModuleName":`...)
		b = appendJSONString(b, module)
		return append(b, '}')
	}
	b = append(b, line...)
	return append(b, '\n')
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

// appendJSONString appends s as a JSON string as LLVM's JSON writer
// does: '"' and '\\' escaped, control characters as \b, \f, \n, \r, \t or
// \u00XX, invalid UTF-8 as U+FFFD, everything else as is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				if c < 0x20 || c == 0x7f {
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
