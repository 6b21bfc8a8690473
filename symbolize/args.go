package symbolize

import (
	hexenc "encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/splitdbg/splitdbg/linetable"
)

// ParseArgs reads llvm-symbolizer's options (llvm-addr2line's, with its
// defaults, if addr2line); it returns the addresses given on the command
// line and whether help was asked for.
func ParseArgs(args []string, addr2line bool) (cfg Config, inputs []string, help bool, err error) {
	args = expandResponseFiles(args, 0)
	s := &cfg
	s.Addr2line = addr2line
	var (
		style            = "LLVM"
		functions        = ""
		demangle, inline *bool
		paths            = linetable.PathAbsolute
		buildID          string
		t, f             = true, false
	)
	if s.Addr2line {
		style = "GNU"
	}
	type opt struct {
		value bool // takes a value
		do    func(v string) error
	}
	set := func(p **bool, v *bool) func(string) error {
		return func(string) error { *p = v; return nil }
	}
	flagOpt := func(fn func()) opt { return opt{do: func(string) error { fn(); return nil }} }
	ignore := opt{do: func(string) error { return nil }}
	ignoreValue := opt{value: true, do: func(string) error { return nil }}
	unsupported := func(name string) opt {
		return opt{do: func(string) error { return fmt.Errorf("%s is not supported by splitdbg symbolize", name) }}
	}
	obj := opt{value: true, do: func(v string) error { s.Obj = v; return nil }}
	long := map[string]opt{
		"addresses":            flagOpt(func() { s.Printer.Addresses = true }),
		"print-address":        flagOpt(func() { s.Printer.Addresses = true }),
		"adjust-vma":           {value: true, do: func(v string) error { return parseIntArg("--adjust-vma=", v, &s.Adjust) }},
		"basenames":            flagOpt(func() { paths = linetable.PathBase }),
		"relativenames":        flagOpt(func() { paths = linetable.PathRelative }),
		"build-id":             {value: true, do: func(v string) error { buildID = v; return nil }},
		"cache-size":           ignoreValue,
		"color":                unsupported("--color"),
		"debug-file-directory": {value: true, do: func(v string) error { s.DebugDirs = append(s.DebugDirs, v); return nil }},
		"debuginfod":           ignore,
		"no-debuginfod":        ignore,
		"default-arch":         ignoreValue,
		"demangle":             {do: set(&demangle, &t)},
		"no-demangle":          {do: set(&demangle, &f)},
		"disable-gsym":         ignore,
		"filter-markup":        unsupported("--filter-markup"),
		"functions":            flagOpt(func() { functions = "linkage" }),
		"gsym-file-directory":  ignoreValue,
		"help":                 flagOpt(func() { help = true }),
		"dwp":                  ignoreValue,
		"dsym-hint":            ignoreValue,
		"fallback-debug-path":  ignoreValue,
		"inlines":              {do: set(&inline, &t)},
		"inlining":             {do: set(&inline, &t)},
		"no-inlines":           {do: set(&inline, &f)},
		"obj":                  obj,
		"exe":                  obj,
		"output-style":         {value: true, do: func(v string) error { style = v; return nil }},
		"pretty-print":         flagOpt(func() { s.Printer.Pretty = true }),
		"print-source-context-lines": {value: true, do: func(v string) error {
			var n uint64
			if err := parseIntArg("--print-source-context-lines=", v, &n); err != nil || n == 0 {
				return err
			}
			return errors.New("--print-source-context-lines is not supported by splitdbg symbolize")
		}},
		"relative-address":   flagOpt(func() { s.Relative = true }),
		"skip-line-zero":     unsupported("--skip-line-zero"),
		"untag-addresses":    ignore,
		"no-untag-addresses": ignore,
		"dia":                ignore,
		"verbose":            unsupported("--verbose"),
		"version":            flagOpt(func() { help = true }),
		"inlining=true":      {do: set(&inline, &t)},
		"inlining=false":     {do: set(&inline, &f)},
	}
	short := map[byte]string{'a': "addresses", 'C': "demangle", 'f': "functions", 'h': "help", 'i': "inlines", 'p': "pretty-print", 's': "basenames", 'v': "version"}
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case a == "-help":
			help = true
		case a == "-demangle=true":
			demangle = &t
		case a == "-demangle=false":
			demangle = &f
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			o, ok := long[a[2:]]
			if ok {
				hasVal = false
			} else if o, ok = long[name]; !ok || (hasVal && !o.value) {
				if name == "functions" && hasVal {
					functions = val
					continue
				}
				return Config{}, nil, false, fmt.Errorf("unknown argument '%s'", a)
			}
			if o.value && !hasVal {
				if k+1 >= len(args) {
					return Config{}, nil, false, fmt.Errorf("argument to '%s' is missing (expected 1 value)", a)
				}
				k++
				val = args[k]
			}
			if err := o.do(val); err != nil {
				return Config{}, nil, false, err
			}
		case strings.HasPrefix(a, "-f="):
			functions = a[3:]
		case len(a) > 1 && a[0] == '-':
			for i := 1; i < len(a); i++ {
				if a[i] == 'e' {
					// -e takes the rest as its value, grouped or not:
					// -e BIN, -e=BIN, -eBIN, -apCie BIN, -apCie=BIN.
					v := strings.TrimPrefix(a[i+1:], "=")
					if v == "" {
						if k+1 >= len(args) {
							return Config{}, nil, false, fmt.Errorf("argument to '-e' is missing (expected 1 value)")
						}
						k++
						v = args[k]
					}
					s.Obj = v
					break
				}
				name, ok := short[a[i]]
				if !ok {
					return Config{}, nil, false, fmt.Errorf("unknown argument '%s'", a)
				}
				long[name].do("")
			}
		default:
			inputs = append(inputs, a)
		}
	}
	if buildID != "" {
		if s.Obj != "" {
			return Config{}, nil, false, errors.New("cannot specify both --build-id and --obj")
		}
		id, err := hexenc.DecodeString(buildID)
		if err != nil || len(id) == 0 {
			return Config{}, nil, false, fmt.Errorf("--build-id=: expected a build ID, but got '%s'", buildID)
		}
		s.BuildID = id
	}
	switch style {
	case "GNU":
		s.Printer.Style = GNU
	case "JSON":
		s.Printer.Style = JSON
	default:
		s.Printer.Style = LLVM
	}
	s.Options.Paths = paths
	s.Options.Demangle = !s.Addr2line
	if demangle != nil {
		s.Options.Demangle = *demangle
	}
	s.Inlines = !s.Addr2line
	if inline != nil {
		s.Inlines = *inline
	}
	s.Options.Functions = LinkageNames
	switch {
	case functions == "none" || functions == "" && s.Addr2line:
		s.Options.Functions = NoNames
	case functions == "short":
		s.Options.Functions = ShortNames
	}
	s.Printer.Functions = s.Options.Functions != NoNames
	return cfg, inputs, help, nil
}

// parseIntArg parses an option's integer as llvm-symbolizer does (any
// radix prefix).
func parseIntArg(spelling, v string, dst *uint64) error {
	n, ok := parseAutoRadix(v)
	if !ok {
		return fmt.Errorf("%s: expected a non-negative integer, but got '%s'", spelling, v)
	}
	*dst = n
	return nil
}

// expandResponseFiles replaces each argument @FILE by the arguments FILE
// holds, as LLVM's tools do (cl::ExpandResponseFiles with the GNU
// tokenizer), to a depth of 20; an @FILE that cannot be read stays as it
// is.
func expandResponseFiles(args []string, depth int) []string {
	var out []string
	for _, a := range args {
		if len(a) < 2 || a[0] != '@' || depth >= 20 {
			out = append(out, a)
			continue
		}
		text, err := os.ReadFile(a[1:])
		if err != nil {
			out = append(out, a)
			continue
		}
		out = append(out, expandResponseFiles(tokenizeGNU(string(text)), depth+1)...)
	}
	return out
}

// tokenizeGNU splits a response file as LLVM's TokenizeGNUCommandLine
// does: white space separates arguments, and empty ones are dropped; a
// backslash takes the next character as it is, inside quotes too;
// '...' and "..." group.
func tokenizeGNU(src string) []string {
	var out []string
	var tok strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if tok.Len() > 0 {
				out = append(out, tok.String())
				tok.Reset()
			}
		case c == '\\' && i+1 < len(src):
			i++
			tok.WriteByte(src[i])
		case c == '\'' || c == '"':
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' && i+1 < len(src) {
					i++
				}
				tok.WriteByte(src[i])
			}
		default:
			tok.WriteByte(c)
		}
	}
	if tok.Len() > 0 {
		out = append(out, tok.String())
	}
	return out
}
