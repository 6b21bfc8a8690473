package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	hexenc "encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/linetable"
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
read before the command line's.`,
	setup: func(*flag.FlagSet) func(*cli, []string) error {
		return func(c *cli, args []string) error { return errors.New("run through cli.symbolize") }
	},
}

// gcPercent is the symbolizer's GOGC; budget bounds its heap where it
// can tell what the files need.
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

// symbolizer is one run of the symbolize command.
type symbolizer struct {
	prog      string // for error messages
	addr2line bool
	obj       string
	buildID   []byte
	adjust    uint64
	relative  bool
	inlines   bool
	debugDirs []string
	opts      symbolize.Options
	p         symbolize.Printer
	modules   map[string]*module
	objMod    *module // --obj's file, once read
	files     int64   // bytes of the files read, for budget
	unbounded bool    // a file's needs are unknown: no memory limit
	stderr    io.Writer
	frames    []symbolize.Frame
}

type module struct {
	m        *symbolize.Module
	err      string
	reported bool
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
	args = append(strings.Fields(os.Getenv(env)), args...)
	s := &symbolizer{prog: prog, addr2line: addr2line, stderr: c.stderr, modules: make(map[string]*module)}
	inputs, help, err := s.parseArgs(args)
	if err != nil {
		fmt.Fprintf(c.stderr, "error: %v\n", err)
		return 1
	}
	if help {
		c.commandHelp(c.stdout, symbolizeCmd)
		return 0
	}
	out := bufio.NewWriterSize(c.stdout, 64<<10)
	defer out.Flush()
	if len(inputs) > 0 {
		var list [][]byte
		for _, in := range inputs {
			b := s.answer(nil, in)
			if s.p.Style == symbolize.JSON {
				list = append(list, b)
			} else {
				out.Write(b)
			}
		}
		if s.p.Style == symbolize.JSON {
			b := append([]byte{'['}, bytes.Join(list, []byte{','})...)
			b = append(b, ']')
			if s.p.Pretty {
				b = indentJSON(b)
			}
			out.Write(append(b, '\n'))
		}
		return 0
	}
	if err := s.stream(c.stdin, out); err != nil {
		fmt.Fprintf(c.stderr, "%s: error: %v\n", s.prog, err)
		return 1
	}
	return 0
}

// stream answers each line of in, flushing whenever in has nothing more
// buffered, so that a peer waiting for each answer gets it. The lines
// already buffered are prepared in order (parsed, their files read,
// errors reported) and then answered on every core, each core a
// contiguous share of them, and written in order.
func (s *symbolizer) stream(in io.Reader, out *bufio.Writer) error {
	r := bufio.NewReaderSize(in, 256<<10)
	workers := runtime.GOMAXPROCS(0)
	var (
		lines []byte // the batch's lines, back to back
		ends  []int
		b     = batch{bufs: make([][]byte, workers), frames: make([][]symbolize.Frame, workers)}
	)
	for {
		line, err := r.ReadSlice('\n')
		for err == bufio.ErrBufferFull {
			// llvm-symbolizer reads lines of at most 1023 bytes; a longer
			// line is answered in pieces as it would be.
			var more []byte
			more, err = r.ReadSlice('\n')
			line = append(append([]byte(nil), line...), more...)
		}
		for len(line) > 0 {
			n := min(len(line), 1023)
			lines = append(lines, line[:n]...)
			ends = append(ends, len(lines))
			line = line[n:]
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(ends) > 0 && (err == io.EOF || r.Buffered() == 0 || len(ends) >= 1<<batchBits-1023) {
			// A very long line can make more pieces than a batch holds.
			for start := 0; start < len(ends); start += 1 << batchBits {
				part := ends[start:min(len(ends), start+1<<batchBits)]
				from := 0
				if start > 0 {
					from = ends[start-1]
				}
				s.answerBatch(&b, lines[:part[len(part)-1]], part, from, out)
			}
			lines, ends = lines[:0], ends[:0]
		}
		if err == io.EOF {
			return out.Flush()
		}
		if r.Buffered() == 0 {
			if err := out.Flush(); err != nil {
				return err
			}
		}
	}
}

// batchBits bounds a batch: 1<<batchBits lines, whose indices pack
// below the address in a sort key.
const batchBits = 14

// answerBatch answers the lines lines[ends[k-1]:ends[k]] (the first
// from start) into out, at most 1<<batchBits of them. The
// lines are prepared in order; then their answers are rendered in address
// order, so that neighbours share cache lines, by len(bufs) goroutines,
// each taking a contiguous run of that order into its own buffer with its
// own frames; and written in input order.
func (s *symbolizer) answerBatch(b *batch, lines []byte, ends []int, start int, out *bufio.Writer) {
	js := b.jobs[:0]
	for _, end := range ends {
		js = append(js, s.prepare(lines[start:end]))
		start = end
	}
	b.jobs = js
	b.order = b.order[:0]
	sorted := true
	for k := range js {
		if a := js[k].q.addr; a < 1<<(64-batchBits) {
			b.order = append(b.order, a<<batchBits|uint64(k))
		} else {
			sorted = false
		}
	}
	if sorted {
		slices.Sort(b.order)
	} else {
		b.order = b.order[:0]
		for k := range js {
			b.order = append(b.order, uint64(k))
		}
	}
	b.spans = slices.Grow(b.spans[:0], len(js))[:len(js)]
	workers := len(b.bufs)
	if len(js) < 256 {
		workers = 1
	}
	per := (len(js) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		part := b.order[min(len(js), w*per):min(len(js), (w+1)*per)]
		render := func() {
			buf := b.bufs[w][:0]
			for _, key := range part {
				k := int(key & (1<<batchBits - 1))
				from := len(buf)
				buf = s.renderLine(buf, &js[k], &b.frames[w])
				b.spans[k] = span{int32(w), int32(from), int32(len(buf))}
			}
			b.bufs[w] = buf
		}
		if w == workers-1 {
			render()
			break
		}
		wg.Add(1)
		go func() { defer wg.Done(); render() }()
	}
	wg.Wait()
	for _, sp := range b.spans {
		out.Write(b.bufs[sp.w][sp.start:sp.end])
	}
}

// batch is the scratch space of answerBatch, kept across batches.
type batch struct {
	jobs   []job
	order  []uint64 // addr<<batchBits | index, or the index
	spans  []span   // per job, where its answer is
	bufs   [][]byte // per goroutine
	frames [][]symbolize.Frame
}

type span struct{ w, start, end int32 }

// renderLine appends a stream answer: in JSON one line.
func (s *symbolizer) renderLine(b []byte, j *job, frames *[]symbolize.Frame) []byte {
	start := len(b)
	b = s.render(b, j, frames)
	if s.p.Style == symbolize.JSON {
		if s.p.Pretty {
			b = append(b[:start], indentJSON(b[start:])...)
		}
		b = append(b, '\n')
	}
	return b
}

func stripNewlines(b []byte) string {
	if bytes.IndexAny(b, "\r\n") < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c != '\r' && c != '\n' {
			out = append(out, c)
		}
	}
	return string(out)
}

// indentJSON indents JSON as LLVM's writer does with an indent of 2.
func indentJSON(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return b
	}
	return out.Bytes()
}

// request is one parsed input line.
type request struct {
	kind    string // "CODE", "DATA" or "FRAME"
	module  string // as named, or the build ID in upper-case hex
	path    string // the file to read
	addr    uint64
	symbol  string // a symbol name instead of an address
	symOff  uint64
	buildID bool
}

const delims = " \n\r"

// parse reads one input line as llvm-symbolizer 22 does. An error says
// why the line is no request; module is then what was read of it.
func (s *symbolizer) parse(line string) (request, error) {
	var q request
	in := line
	q.kind = "CODE"
	q.module = s.obj
	for _, k := range []string{"CODE ", "DATA ", "FRAME "} {
		if strings.HasPrefix(in, k) {
			q.kind, in = k[:len(k)-1], in[len(k):]
			break
		}
	}
	var file, build bool
	for {
		if rest, ok := strings.CutPrefix(in, "FILE:"); ok {
			if file {
				return q, errors.New("duplicate input file specification prefix")
			}
			file, in = true, rest
			continue
		}
		if rest, ok := strings.CutPrefix(in, "BUILDID:"); ok {
			if build {
				return q, errors.New("duplicate input file specification prefix")
			}
			build, in = true, rest
			continue
		}
		break
	}
	if file && build {
		return q, errors.New("duplicate input file specification prefix")
	}
	if line == "" {
		q.module = ""
		return q, errEmpty
	}
	switch {
	case s.obj != "":
		q.module, q.path = s.obj, s.obj
	case s.buildID != nil:
		q.module, q.buildID = strings.ToUpper(hexenc.EncodeToString(s.buildID)), true
		q.path = s.findBuildID(s.buildID)
	default:
		in = strings.TrimLeft(in, delims)
		if in != "" && (in[0] == '"' || in[0] == '\'') {
			end := strings.IndexByte(in[1:], in[0])
			if end < 0 {
				return q, errors.New("unbalanced quotes in input file name")
			}
			q.module, in = in[1:1+end], in[2+end:]
		} else {
			n := strings.IndexAny(in, delims)
			if n < 0 {
				n = len(in)
			}
			q.module, in = in[:n], in[n:]
		}
		q.path = q.module
		if build {
			id, err := hexenc.DecodeString(q.module)
			if err != nil || len(id) == 0 {
				q.module = ""
				return q, errors.New("wrong format of build-id")
			}
			q.module, q.buildID = strings.ToUpper(q.module), true
			q.path = s.findBuildID(id)
		}
	}
	in = strings.TrimLeft(in, delims)
	n := strings.IndexAny(in, delims)
	if n < 0 {
		n = len(in)
	}
	// llvm-symbolizer trims the offset of white space.
	tok := strings.Trim(in[:n], " \t\n\v\f\r")
	if tok == "" {
		return q, errors.New("no module offset has been specified")
	}
	if s.addr2line {
		t := strings.TrimPrefix(strings.TrimPrefix(tok, "0x"), "0X")
		if v, err := strconv.ParseUint(t, 16, 64); err == nil && !strings.HasPrefix(t, "+") {
			q.addr = v
			return q, nil
		}
	} else if v, ok := parseAutoRadix(tok); ok {
		q.addr = v
		return q, nil
	}
	if tok[0] >= '0' && tok[0] <= '9' {
		return q, errors.New("expected a number as module offset")
	}
	q.symbol = tok
	if i := strings.LastIndexByte(tok, '+'); i > 0 {
		if v, ok := parseAutoRadix(tok[i+1:]); ok {
			q.symbol, q.symOff = tok[:i], v
		}
	}
	return q, nil
}

var errEmpty = errors.New("")

// parseAutoRadix parses an unsigned integer as LLVM's getAsInteger with
// radix 0: 0x or 0X hexadecimal, 0b or 0B binary, 0o or a leading 0
// octal, else decimal.
func parseAutoRadix(s string) (uint64, bool) {
	base := 10
	switch {
	case len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		s, base = s[2:], 16
	case len(s) > 1 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'):
		s, base = s[2:], 2
	case len(s) > 1 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O'):
		s, base = s[2:], 8
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" || s[0] == '+' || s[0] == '-' || strings.Contains(s, "_") {
		return 0, false
	}
	v, err := strconv.ParseUint(s, base, 64)
	return v, err == nil
}

// findBuildID returns the path of the file with build ID id in the
// debug file directories, "" if there is none.
func (s *symbolizer) findBuildID(id []byte) string {
	if len(id) < 2 {
		return ""
	}
	h := hexenc.EncodeToString(id)
	for _, dir := range elfx.DebugDirs {
		p := filepath.Join(dir, ".build-id", h[:2], h[2:]+".debug")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// load returns the module at path, reading it on first use; a module
// that cannot be read reports its error on standard error once.
func (s *symbolizer) load(q *request) (*module, bool) {
	key := q.path
	if q.buildID {
		key = "BUILDID:" + q.module
	}
	mod, ok := s.modules[key]
	if !ok {
		mod = &module{}
		switch {
		case q.buildID && q.path == "":
			mod.err = "could not find build ID"
		default:
			s.budget(q.path)
			mod.m, mod.err = openModule(q.path)
		}
		s.modules[key] = mod
		if mod.m != nil && !q.buildID && q.path == s.obj {
			s.objMod = mod
		}
	}
	first := !mod.reported
	mod.reported = true
	return mod, first
}

// job is a prepared input line: its request, and its file read.
type job struct {
	q     request
	req   symbolize.Request
	bad   bool // the line is no request
	mod   *module
	first bool // the first request of a file that could not be read
}

// prepare parses an input line and reads its file; it reports a line
// that is no request, and a file that cannot be read, on standard error.
// A plain address with --obj takes no allocation.
func (s *symbolizer) prepare(line []byte) job {
	if s.objMod != nil {
		if addr, ok := quickAddr(line, s.addr2line); ok {
			return job{q: request{kind: "CODE", module: s.obj, addr: addr},
				req: symbolize.Request{Module: s.obj, Addr: addr, HasAddr: true}, mod: s.objMod}
		}
	}
	text := stripNewlines(line)
	q, err := s.parse(text)
	j := job{q: q, req: symbolize.Request{Module: q.module, Addr: q.addr, HasAddr: err == nil && q.symbol == "", Symbol: q.symbol}}
	if err != nil {
		if err != errEmpty {
			fmt.Fprintf(s.stderr, "%s: error: '%s': %v\n", s.prog, text, err)
		}
		j.bad = true
		return j
	}
	j.mod, j.first = s.load(&q)
	if j.mod.m == nil && j.first && s.p.Style != symbolize.JSON {
		fmt.Fprintf(s.stderr, "%s: error: '%s': %s\n", s.prog, q.module, j.mod.err)
	}
	return j
}

// quickAddr parses a line that is only an address (llvm-symbolizer's
// integer forms, or hexadecimal as addr2line), without allocating.
func quickAddr(line []byte, addr2line bool) (uint64, bool) {
	line = bytes.Trim(line, " \t\n\v\f\r")
	if len(line) == 0 || len(line) > 24 {
		return 0, false
	}
	var tok [24]byte
	t := tok[:copy(tok[:], line)]
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == 'x' || c == 'X') {
			return 0, false
		}
	}
	if addr2line {
		if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
			t = t[2:]
		}
		return parseDigits(t, 16)
	}
	switch {
	case len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'):
		return parseDigits(t[2:], 16)
	case len(t) > 1 && t[0] == '0':
		return parseDigits(t[1:], 8)
	}
	return parseDigits(t, 10)
}

// parseDigits parses digits of base without overflow.
func parseDigits(t []byte, base uint64) (uint64, bool) {
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

// budget sets the Go memory limit before a file is read: a symbolizer
// stays up beside the program it serves (pprof, a sanitizer runtime), so
// its heap is held to 32 MiB plus three times the size of the files it
// has read (about what their tables take, with room for the garbage of
// building them), as long as every such file carries its own
// uncompressed DWARF; else there is no limit.
func (s *symbolizer) budget(path string) {
	if s.unbounded {
		return
	}
	f, err := elf.Open(path)
	if err != nil {
		return // openModule says why
	}
	defer f.Close()
	info := f.Section(".debug_info")
	st, err := os.Stat(path)
	if err != nil || info == nil || info.Flags&elf.SHF_COMPRESSED != 0 {
		s.unbounded = true
		debug.SetMemoryLimit(math.MaxInt64)
		return
	}
	s.files += st.Size()
	debug.SetMemoryLimit(32<<20 + 3*s.files)
}

// openModule reads the file at path, or says why it cannot in
// llvm-symbolizer's words where it has them.
func openModule(path string) (*symbolize.Module, string) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, "Is a directory"
	}
	m, err := symbolize.Open(path)
	switch {
	case err == nil:
		return m, ""
	case errors.Is(err, fs.ErrNotExist):
		return nil, "No such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return nil, "Permission denied"
	case errors.Is(err, elfx.ErrNotELF):
		return nil, "The file was not recognized as a valid object file"
	}
	return nil, err.Error()
}

// answer appends the answer to one request line.
func (s *symbolizer) answer(b []byte, line string) []byte {
	j := s.prepare([]byte(line))
	return s.render(b, &j, &s.frames)
}

// render appends the answer to a prepared line, with frames as scratch
// space. It may run on several goroutines at once.
func (s *symbolizer) render(b []byte, j *job, frames *[]symbolize.Frame) []byte {
	req, q := &j.req, &j.q
	noFrames := func() []symbolize.Frame {
		*frames = append((*frames)[:0], symbolize.Frame{})
		return *frames
	}
	if j.bad {
		return s.p.AppendCode(b, req, noFrames())
	}
	if j.mod.m == nil {
		if j.first && s.p.Style == symbolize.JSON {
			return s.p.AppendError(b, req, j.mod.err)
		}
		switch q.kind {
		case "DATA":
			return s.p.AppendData(b, req, &symbolize.Global{})
		case "FRAME":
			return s.p.AppendFrame(b, req)
		}
		if s.inlines || req.Symbol != "" {
			return s.p.AppendCode(b, req, nil)
		}
		return s.p.AppendCode(b, req, noFrames())
	}
	m := j.mod.m
	addr := q.addr - s.adjust
	switch {
	case q.kind == "DATA":
		var g symbolize.Global
		if req.HasAddr {
			g = m.Data(addr, &s.opts)
		}
		return s.p.AppendData(b, req, &g)
	case q.kind == "FRAME":
		return s.p.AppendFrame(b, req)
	case !req.HasAddr:
		*frames = m.Symbol((*frames)[:0], q.symbol, q.symOff, &s.opts)
		return s.p.AppendCode(b, req, *frames)
	}
	o := s.opts
	o.Inlines = s.inlines || s.p.Style == symbolize.GNU
	*frames = m.Frames((*frames)[:0], addr, &o)
	fs := *frames
	if !s.inlines && s.p.Style == symbolize.GNU {
		// llvm-addr2line's single frame is the innermost of the chain.
		fs = fs[:1]
	}
	return s.p.AppendCode(b, req, fs)
}

// parseArgs reads llvm-symbolizer's options; it returns the addresses
// given on the command line and whether help was asked for.
func (s *symbolizer) parseArgs(args []string) (inputs []string, help bool, err error) {
	var (
		style            = "LLVM"
		functions        = ""
		demangle, inline *bool
		paths            = linetable.PathAbsolute
		buildID          string
		t, f             = true, false
	)
	if s.addr2line {
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
	obj := opt{value: true, do: func(v string) error { s.obj = v; return nil }}
	long := map[string]opt{
		"addresses":            flagOpt(func() { s.p.Addresses = true }),
		"print-address":        flagOpt(func() { s.p.Addresses = true }),
		"adjust-vma":           {value: true, do: func(v string) error { return parseIntArg("--adjust-vma=", v, &s.adjust) }},
		"basenames":            flagOpt(func() { paths = linetable.PathBase }),
		"relativenames":        flagOpt(func() { paths = linetable.PathRelative }),
		"build-id":             {value: true, do: func(v string) error { buildID = v; return nil }},
		"cache-size":           ignoreValue,
		"color":                unsupported("--color"),
		"debug-file-directory": {value: true, do: func(v string) error { s.debugDirs = append(s.debugDirs, v); return nil }},
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
		"pretty-print":         flagOpt(func() { s.p.Pretty = true }),
		"print-source-context-lines": {value: true, do: func(v string) error {
			var n uint64
			if err := parseIntArg("--print-source-context-lines=", v, &n); err != nil || n == 0 {
				return err
			}
			return errors.New("--print-source-context-lines is not supported by splitdbg symbolize")
		}},
		"relative-address":   flagOpt(func() { s.relative = true }),
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
				return nil, false, fmt.Errorf("unknown argument '%s'", a)
			}
			if o.value && !hasVal {
				if k+1 >= len(args) {
					return nil, false, fmt.Errorf("argument to '%s' is missing (expected 1 value)", a)
				}
				k++
				val = args[k]
			}
			if err := o.do(val); err != nil {
				return nil, false, err
			}
		case strings.HasPrefix(a, "-f="):
			functions = a[3:]
		case strings.HasPrefix(a, "-e"):
			v := strings.TrimPrefix(a[2:], "=")
			if v == "" {
				if k+1 >= len(args) {
					return nil, false, fmt.Errorf("argument to '-e' is missing (expected 1 value)")
				}
				k++
				v = args[k]
			}
			s.obj = v
		case len(a) > 1 && a[0] == '-':
			for i := 1; i < len(a); i++ {
				name, ok := short[a[i]]
				if !ok {
					return nil, false, fmt.Errorf("unknown argument '%s'", a)
				}
				long[name].do("")
			}
		default:
			inputs = append(inputs, a)
		}
	}
	if buildID != "" {
		if s.obj != "" {
			return nil, false, errors.New("cannot specify both --build-id and --obj")
		}
		id, err := hexenc.DecodeString(buildID)
		if err != nil || len(id) == 0 {
			return nil, false, fmt.Errorf("--build-id=: expected a build ID, but got '%s'", buildID)
		}
		s.buildID = id
	}
	switch style {
	case "GNU":
		s.p.Style = symbolize.GNU
	case "JSON":
		s.p.Style = symbolize.JSON
	default:
		s.p.Style = symbolize.LLVM
	}
	// Separate debug files and BUILDID: requests are looked for in the
	// --debug-file-directory directories, else in /usr/lib/debug.
	elfx.DebugDirs = []string{elfx.DefaultDebugDir}
	if len(s.debugDirs) > 0 {
		elfx.DebugDirs = s.debugDirs
	}
	s.opts.Paths = paths
	s.opts.Demangle = !s.addr2line
	if demangle != nil {
		s.opts.Demangle = *demangle
	}
	s.inlines = !s.addr2line
	if inline != nil {
		s.inlines = *inline
	}
	s.opts.Functions = symbolize.LinkageNames
	switch {
	case functions == "none" || functions == "" && s.addr2line:
		s.opts.Functions = symbolize.NoNames
	case functions == "short":
		s.opts.Functions = symbolize.ShortNames
	}
	s.p.Functions = s.opts.Functions != symbolize.NoNames
	return inputs, help, nil
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
