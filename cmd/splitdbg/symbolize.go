package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/symbolize"
)

var symbolizeCmd = &command{
	name:    "symbolize",
	args:    "[options] [ADDR...]",
	summary: "a drop-in llvm-symbolizer and addr2line that names cold code by its function",
	help: `
Answers addresses with their function, file, line and column, inlined
calls included, as llvm-symbolizer 22 does, with its options, its input
and output formats byte for byte — except that an address in a moved
fragment of a split function (foo.cold, foo.cold.0, foo.__part.1) is
named by its function, foo, where llvm-symbolizer names the fragment.
Profilers (pprof), sanitizer runtimes (ASAN_SYMBOLIZER_PATH) and scripts
can use it in llvm-symbolizer's place: run under the name
llvm-symbolizer (a symlink) it is this command; under the name addr2line
or llvm-addr2line it takes llvm-addr2line's defaults (GNU style, no
function names without -f, no inlined frames without -i, hexadecimal
addresses).

With addresses on the command line, each is answered (JSON: one array).
Without, each line of standard input is a request, answered as it
arrives; a line that is no request is answered in its place:
  ADDR                  with --obj
  BIN ADDR              "BIN" or 'BIN' quoted, FILE:BIN, or BUILDID:HEX
  CODE BIN ADDR         the same
  DATA BIN ADDR         the symbol holding a data address
  SYMBOL[+OFFSET]       instead of ADDR: where the symbol is
ADDR is hexadecimal with 0x, octal with 0, binary with 0b, or decimal.

Options (as llvm-symbolizer's):
  --obj=BIN, --exe=BIN, -e BIN   the file to symbolize
  --inlines, --inlining, -i      print inlined frames (the default)
  --no-inlines                   print one frame
  --output-style=LLVM|GNU|JSON   output format
  --functions[=linkage|short|none], -f   function names: symbol or
                                 linkage name, DWARF name, or none
  --demangle, -C / --no-demangle, -demangle=false   C++ and Rust names
  --pretty-print, -p             one line per frame; indented JSON
  --addresses, --print-address, -a   print each address first
  --adjust-vma=OFFSET            subtract OFFSET from each address
  --relative-address             addresses relative to the image base
                                 (which is 0 for ELF)
  --basenames, -s / --relativenames   file names without directories,
                                 or without the compilation directory
  --debug-file-directory=DIR     where separate debug files and BUILDID:
                                 requests are looked for (repeatable;
                                 default /usr/lib/debug)
  --build-id=HEX                 symbolize the file of that build ID
  --default-arch, --dwp, --cache-size, --debuginfod, --untag-addresses
                                 accepted, without effect
Not supported: FRAME requests (answered as without locals),
--verbose, --print-source-context-lines, --filter-markup.
LLVM_SYMBOLIZER_OPTS (LLVM_ADDR2LINE_OPTS as addr2line) holds options
read before the command line's; an argument @FILE stands for the
arguments written in FILE.`,
}

func init() {
	// Set here: symbolize prints symbolizeCmd's help.
	symbolizeCmd.main = func(c *cli, args []string) int { return c.symbolize("splitdbg symbolize", args, false) }
}

// gcPercent is the symbolizer's GOGC; the server bounds its heap where
// it can tell what the files need.
const gcPercent = 200

// symbolizeAs returns whether argv0 names the symbolizer, and whether as
// addr2line.
func symbolizeAs(argv0 string) (isSymbolizer, addr2line bool) {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	switch {
	case strings.Contains(base, "addr2line"):
		return true, true
	case strings.Contains(base, "llvm-symbolizer"):
		return true, false
	}
	return false, false
}

// symbolize runs the command on args; addr2line selects llvm-addr2line's
// defaults. It returns the exit status.
func (c *cli) symbolize(prog string, args []string, addr2line bool) int {
	// A symbolizer stays up beside the program it serves (pprof, a
	// sanitizer runtime): keep the heap near what it holds.
	defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer func(dirs []string) { elfx.DebugDirs = dirs }(elfx.DebugDirs)
	env := "LLVM_SYMBOLIZER_OPTS"
	if addr2line {
		env = "LLVM_ADDR2LINE_OPTS"
	}
	cfg, inputs, help, err := symbolize.ParseArgs(append(strings.Fields(os.Getenv(env)), args...), addr2line)
	if err != nil {
		fmt.Fprintf(c.stderr, "error: %v\n", err)
		return 1
	}
	if help {
		c.commandHelp(c.stdout, symbolizeCmd)
		return 0
	}
	s := symbolize.NewServer(cfg, prog, c.stderr)
	s.Expect(inputs) // addresses on the command line: read only their units
	out := bufio.NewWriterSize(c.stdout, 64<<10)
	defer out.Flush()
	if !s.CheckObj(out) {
		return 1
	}
	if len(inputs) > 0 {
		out.Write(s.AnswerAll(nil, inputs))
		return 0
	}
	if err := s.Serve(c.stdin, out); err != nil {
		fmt.Fprintf(c.stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	return 0
}
