package linetable

import (
	"fmt"
	"strconv"
	"strings"
)

// Spec is a breakpoint location, parsed once: FILE:LINE, FUNC, FILE:FUNC
// (to pick one of several static functions of one name) or *ADDR, the
// forms gdb and Delve take. Every door parses the user's text into a
// Spec and hands the Spec on; nothing downstream reads the text again.
type Spec struct {
	// Text is the location as written, for messages.
	Text string
	// File is FILE of FILE:LINE and FILE:FUNC.
	File string
	// Line is LINE of FILE:LINE; 0 otherwise.
	Line int
	// Func is FUNC of FUNC and FILE:FUNC.
	Func string
	// Addr is ADDR of *ADDR, when IsAddr.
	Addr   uint64
	IsAddr bool
}

// ParseSpec parses a location. An address is hexadecimal with "0x", or
// decimal.
func ParseSpec(s string) (Spec, error) {
	if a, ok := strings.CutPrefix(s, "*"); ok {
		addr, err := ParseAddr(a)
		if err != nil {
			return Spec{}, fmt.Errorf("location %q: %w", s, err)
		}
		return Spec{Text: s, Addr: addr, IsAddr: true}, nil
	}
	if s == "" {
		return Spec{}, fmt.Errorf("empty location")
	}
	if i := strings.LastIndexByte(s, ':'); i > 0 && i < len(s)-1 {
		file, rest := s[:i], s[i+1:]
		if line, err := strconv.Atoi(rest); err == nil {
			if line <= 0 {
				return Spec{}, fmt.Errorf("location %q: line %d", s, line)
			}
			return Spec{Text: s, File: file, Line: line}, nil
		}
		return Spec{Text: s, File: file, Func: rest}, nil
	}
	return Spec{Text: s, Func: s}, nil
}

// LineSpec is the location FILE:LINE.
func LineSpec(file string, line int) Spec {
	return Spec{Text: file + ":" + strconv.Itoa(line), File: file, Line: line}
}

// FuncSpec is the location FUNC, a function's name as it is.
func FuncSpec(name string) Spec { return Spec{Text: name, Func: name} }

// String returns the location as written.
func (s Spec) String() string { return s.Text }
