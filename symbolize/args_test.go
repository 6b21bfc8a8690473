package symbolize

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/linetable"
)

// TestParseArgs: llvm-symbolizer's and llvm-addr2line's defaults, and
// the options that change them, in their several spellings.
func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args      string
		addr2line bool
		want      Config
		inputs    []string
	}{
		{"", false, Config{Inlines: true, Options: Options{Demangle: true}, Printer: Printer{Functions: true}}, nil},
		{"", true, Config{Addr2line: true, Options: Options{Functions: NoNames}, Printer: Printer{Style: GNU}}, nil},
		{"-f -i -C -e x 0x10 sum", true, Config{Addr2line: true, Obj: "x", Inlines: true, Options: Options{Demangle: true},
			Printer: Printer{Style: GNU, Functions: true}}, []string{"0x10", "sum"}},
		{"-aCfip --functions=short --relativenames --output-style=JSON --adjust-vma 0b101 --no-inlines --exe=y", false,
			Config{Obj: "y", Adjust: 5, Options: Options{Functions: ShortNames, Demangle: true, Paths: linetable.PathRelative},
				Printer: Printer{Style: JSON, Functions: true, Addresses: true, Pretty: true}}, nil},
		{"-demangle=false --functions=none -s --build-id=AB01 --debug-file-directory=d1 --debug-file-directory d2 --inlining=false", false,
			Config{BuildID: []byte{0xab, 1}, DebugDirs: []string{"d1", "d2"}, Options: Options{Functions: NoNames, Paths: linetable.PathBase}}, nil},
	} {
		cfg, inputs, help, err := ParseArgs(strings.Fields(c.args), c.addr2line)
		if err != nil || help {
			t.Errorf("%q: help %v, error %v", c.args, help, err)
			continue
		}
		if diff := cmp.Diff(c.want, cfg); diff != "" {
			t.Errorf("%q (addr2line %v): config (-want +got):\n%s", c.args, c.addr2line, diff)
		}
		if strings.Join(inputs, " ") != strings.Join(c.inputs, " ") {
			t.Errorf("%q: inputs %q, want %q", c.args, inputs, c.inputs)
		}
	}
	for _, args := range []string{"-h", "--help", "-help", "--version"} {
		if _, _, help, err := ParseArgs([]string{args}, false); !help || err != nil {
			t.Errorf("%s: help %v, error %v", args, help, err)
		}
	}
}

// TestParseArgsErrors: a malformed command line is an error in
// llvm-symbolizer's words, never a panic.
func TestParseArgsErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--nosuch":                       "unknown argument '--nosuch'",
		"-z":                             "unknown argument '-z'",
		"-az":                            "unknown argument '-az'",
		"--inlines=1":                    "unknown argument '--inlines=1'",
		"--obj":                          "argument to '--obj' is missing (expected 1 value)",
		"-e":                             "argument to '-e' is missing (expected 1 value)",
		"--adjust-vma=zz":                "--adjust-vma=: expected a non-negative integer, but got 'zz'",
		"--adjust-vma=-1":                "--adjust-vma=: expected a non-negative integer, but got '-1'",
		"--build-id=zz":                  "--build-id=: expected a build ID, but got 'zz'",
		"--obj=x --build-id=ab":          "cannot specify both --build-id and --obj",
		"--verbose":                      "--verbose is not supported by splitdbg symbolize",
		"--print-source-context-lines=2": "--print-source-context-lines is not supported by splitdbg symbolize",
	} {
		_, _, _, err := ParseArgs(strings.Fields(args), false)
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
}

// FuzzParseArgs: any command line is read or refused, without a panic.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"-aCfip --obj=x", "--functions= -e", "--adjust-vma 0x", "--build-id= --", "-demangle=true -f=short"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cfg, _, _, err := ParseArgs(strings.Fields(line), false)
		if err == nil && cfg.Printer.Style > JSON {
			t.Errorf("%q: style %d", line, cfg.Printer.Style)
		}
	})
}
