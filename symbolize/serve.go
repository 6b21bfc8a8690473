package symbolize

import (
	"bufio"
	"bytes"
	"debug/elf"
	hexenc "encoding/hex"
	"encoding/json"
	"errors"
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
	"sync/atomic"

	"github.com/splitdbg/splitdbg/internal/addrlines"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// Config is what llvm-symbolizer's options select (ParseArgs reads them).
type Config struct {
	Addr2line bool     // llvm-addr2line's defaults: addresses are hexadecimal
	Obj       string   // --obj: the file of requests that name none
	BuildID   []byte   // --build-id: the file of requests that name none
	Adjust    uint64   // --adjust-vma: subtracted from each address
	Relative  bool     // --relative-address (the image base is 0 for ELF)
	Inlines   bool     // print inlined frames
	DebugDirs []string // where separate debug files and BUILDID: requests are looked for
	Options   Options
	Printer   Printer
}

// Server answers llvm-symbolizer's requests (its input lines, in its
// protocol) as llvm-symbolizer 22 does, reading each file once. Errors
// about requests go to its stderr, prefixed by its prog, as
// llvm-symbolizer reports them. As it reads files it bounds the Go
// memory limit (budget): its caller restores the limit when done.
type Server struct {
	Config
	prog      string
	stderr    io.Writer
	modules   map[string]*module
	objMod    *module // --obj's file, once read
	files     int64   // bytes of the files read, for budget
	unbounded bool    // a file's needs are unknown: no memory limit
	frames    []Frame
	// objAddrs are the addresses the requests will ask of --obj's file,
	// when all are known before it is read (Expect): its tables are
	// built over their scope only.
	objAddrs []uint64
}

// Expect tells s the requests it will answer, before any is: when they
// are all plain addresses in --obj's file, that file is read only as far
// as they need (splitinfo.ScopeOfAddrs), for the same answers.
func (s *Server) Expect(inputs []string) {
	if s.Obj == "" || len(inputs) == 0 {
		return
	}
	addrs := make([]uint64, 0, len(inputs))
	for _, in := range inputs {
		a, ok := quickAddr([]byte(in), s.Addr2line)
		if !ok {
			return
		}
		addrs = append(addrs, a-s.Adjust)
	}
	s.objAddrs = addrs
}

// NewServer returns a server of c. Separate debug files and BUILDID:
// requests are looked for in c.DebugDirs, else in /usr/lib/debug: it
// sets the process's debug file directories (elfx.DebugDirs) so.
func NewServer(c Config, prog string, stderr io.Writer) *Server {
	elfx.DebugDirs = []string{elfx.DefaultDebugDir}
	if len(c.DebugDirs) > 0 {
		elfx.DebugDirs = c.DebugDirs
	}
	return &Server{Config: c, prog: prog, stderr: stderr, modules: make(map[string]*module)}
}

// CheckObj reads --obj's file before any request, as llvm-symbolizer 22
// does: if it cannot be read, CheckObj reports why (in JSON as the
// answer to address 0, on out; else on standard error) and returns
// false, and the command exits with status 1.
func (s *Server) CheckObj(out io.Writer) bool {
	if s.Obj == "" {
		return true
	}
	mod, _ := s.load(&request{module: s.Obj, path: s.Obj})
	if mod.m != nil {
		return true
	}
	if s.Printer.Style == JSON {
		out.Write(append(s.Printer.AppendError(nil, &Request{Module: s.Obj, HasAddr: true}, mod.err), '\n'))
	} else {
		fmt.Fprintf(s.stderr, "%s: error: '%s': %s\n", s.prog, s.Obj, mod.err)
	}
	return false
}

// AnswerAll appends the answers to the requests of a command line: in
// JSON one array.
func (s *Server) AnswerAll(b []byte, inputs []string) []byte {
	if s.Printer.Style != JSON {
		for _, in := range inputs {
			b = s.answer(b, in)
		}
		return b
	}
	start := len(b)
	b = append(b, '[')
	for k, in := range inputs {
		if k > 0 {
			b = append(b, ',')
		}
		b = s.answer(b, in)
	}
	b = append(b, ']')
	if s.Printer.Pretty {
		b = append(b[:start], indentJSON(b[start:])...)
	}
	return append(b, '\n')
}

type module struct {
	m        *Module
	err      string
	reported bool
}

// Serve answers each line of in, flushing whenever in has nothing more
// to give at once, so that a peer waiting for each answer gets it. It
// works as a pipeline: one goroutine reads lines (feed), the caller's
// goroutine prepares each batch of them in order (parses them, reads
// their files, reports errors), every core renders a prepared batch in
// address order (renderBatch), and while one batch renders the caller's
// goroutine writes the one before it, in input order, and prepares the
// one after. When a write to out fails, Serve returns its error once the
// batch rendering is done; the reading goroutine ends when its pending
// Read returns.
func (s *Server) Serve(in io.Reader, out *bufio.Writer) error {
	fd := startFeed(in)
	defer fd.stop()
	var (
		states   [2]batch
		flight   *batch // rendering, not yet written
		wait     func()
		nextFree = 0
	)
	// finish waits for the batch in flight and writes it.
	finish := func() error {
		if flight == nil {
			return nil
		}
		wait()
		b := flight
		flight = nil
		return b.write(out)
	}
	for {
		lb, ready := fd.tryNext()
		if !ready {
			// The reader has nothing yet: answer every line read so far
			// before waiting for more.
			if err := finish(); err != nil {
				return err
			}
			if err := out.Flush(); err != nil {
				return err
			}
			lb = fd.next()
		}
		if lb.panicked != nil {
			finish()
			panic(lb.panicked.v)
		}
		for start := 0; start < len(lb.ends); start += serveBatch {
			// A run can hold more lines than a batch.
			part := lb.ends[start:min(len(lb.ends), start+serveBatch)]
			from := 0
			if start > 0 {
				from = lb.ends[start-1]
			}
			b := &states[nextFree]
			nextFree ^= 1
			s.prepareBatch(b, lb.lines[:part[len(part)-1]], part, from)
			w := s.renderBatch(b)
			// The batch before, while this one renders.
			if err := finish(); err != nil {
				w()
				return err
			}
			flight, wait = b, w
		}
		err := lb.err
		fd.recycle(lb)
		if err != nil {
			ferr := finish()
			if ferr == nil {
				ferr = out.Flush()
			}
			if err == io.EOF {
				return ferr
			}
			return err
		}
	}
}

// batchBits bounds a batch: 1<<batchBits lines, whose indices pack
// below the address in a sort key.
const batchBits = 14

// serveBatch is the size of Serve's batches: two are in flight, one
// rendering while the one before it is written, in the memory one batch
// of 1<<batchBits took.
const serveBatch = 1 << (batchBits - 1)

// batch is one batch of input lines on its way through Serve, its
// scratch space kept across batches.
type batch struct {
	n      int
	plain  []bool       // per line, whether it is a plain address in --obj's file
	addrs  []uint64     // per line, its address
	jobs   []job        // per line that is not plain, its prepared request
	order  []uint64     // addrOrder's keys
	spans  []span       // per line, where its answer is
	bufs   [][]byte     // per chunk of order (renderChunk answers)
	frames [][]Frame    // per renderer
	warmed []uint64     // per renderer, what Module.warm read
	next   atomic.Int64 // the next chunk of order to render
}

// span is where an answer is: in which buffer, from where to where.
type span struct{ buf, start, end int32 }

// prepareBatch prepares the lines lines[ends[k-1]:ends[k]] (the first
// from start) into b, in order, at most serveBatch of them, and sorts
// them by address. A plain address in --obj's file (the common request)
// is kept as its address alone.
func (s *Server) prepareBatch(b *batch, lines []byte, ends []int, start int) {
	n := len(ends)
	b.n = n
	b.plain = slices.Grow(b.plain[:0], n)[:n]
	b.addrs = slices.Grow(b.addrs[:0], n)[:n]
	for k, end := range ends {
		line := lines[start:end]
		start = end
		if s.objMod != nil {
			if addr, ok := quickAddr(line, s.Addr2line); ok {
				b.plain[k], b.addrs[k] = true, addr
				continue
			}
		}
		if len(b.jobs) < n {
			b.jobs = slices.Grow(b.jobs, n-len(b.jobs))[:n]
		}
		b.plain[k] = false
		b.jobs[k] = s.prepare(line)
		b.addrs[k] = b.jobs[k].q.addr
	}
	b.order = addrOrder(b.order, n, func(k int) (uint64, bool) { return b.addrs[k], true })
	b.spans = slices.Grow(b.spans[:0], n)[:n]
}

// renderChunk is how many answers, neighbours in address order, a
// renderer takes at a time; it renders them warmGroup at a time, each
// group's records read ahead for all its addresses at once
// (Module.warm).
const (
	renderChunk = 256
	warmGroup   = 32
)

// renderBatch renders the answers of b in address order, so that
// neighbours share cache lines, each chunk of renderChunk answers of that
// order into a buffer of its own: for a large batch on one goroutine per
// core, each taking the next chunk, and returns a function that waits
// for them; for a small one at once.
func (s *Server) renderBatch(b *batch) (wait func()) {
	workers := runtime.GOMAXPROCS(0)
	if b.n < renderChunk {
		workers = 1
	}
	if chunks := (len(b.order) + renderChunk - 1) / renderChunk; len(b.bufs) < chunks {
		b.bufs = append(b.bufs, make([][]byte, chunks-len(b.bufs))...)
	}
	if len(b.frames) < workers {
		b.frames = append(b.frames, make([][]Frame, workers-len(b.frames))...)
		b.warmed = append(b.warmed, make([]uint64, workers-len(b.warmed))...)
	}
	b.next.Store(0)
	// --obj's module as prepareBatch saw it: preparing the next batch,
	// while this one renders, may read the file and set s.objMod.
	obj := s.objMod
	render := func(w int) {
		var (
			addrs [warmGroup]uint64
			where [warmGroup]found
			sum   uint64
		)
		for {
			at := int(b.next.Add(renderChunk)) - renderChunk
			if at >= len(b.order) {
				break
			}
			c := at / renderChunk
			buf := b.bufs[c][:0]
			keys := b.order[at:min(len(b.order), at+renderChunk)]
			for len(keys) > 0 {
				group := keys[:min(len(keys), warmGroup)]
				keys = keys[len(group):]
				if obj != nil {
					for i, key := range group {
						addrs[i] = b.addrs[key&(1<<batchBits-1)] - s.Adjust
					}
					sum += obj.m.warm(addrs[:len(group)], where[:len(group)])
				}
				for i, key := range group {
					k := int(key & (1<<batchBits - 1))
					from := len(buf)
					if b.plain[k] {
						buf = s.renderPlain(buf, obj.m, addrs[i], where[i], &b.frames[w])
					} else {
						buf = s.renderLine(buf, &b.jobs[k], &b.frames[w])
					}
					b.spans[k] = span{int32(c), int32(from), int32(len(buf))}
				}
			}
			b.bufs[c] = buf
		}
		b.warmed[w] = sum
	}
	if workers == 1 {
		render(0)
		return func() {}
	}
	waits := make([]func(), workers)
	for w := range waits {
		waits[w] = goCarry(func() { render(w) })
	}
	return func() {
		for _, wait := range waits {
			wait()
		}
	}
}

// write writes the rendered answers of b in input order, up to out's
// first error.
func (b *batch) write(out *bufio.Writer) error {
	for _, sp := range b.spans[:b.n] {
		if _, err := out.Write(b.bufs[sp.buf][sp.start:sp.end]); err != nil {
			return err
		}
	}
	return nil
}

// addrOrder sets order to the indices k < n for which addr(k) gives an
// address, in address order: each key is addr<<batchBits | k, and
// key & (1<<batchBits - 1) the index. If an address is too large to pack
// so, the keys are the indices alone, in input order.
func addrOrder(order []uint64, n int, addr func(k int) (uint64, bool)) []uint64 {
	order = order[:0]
	for k := range n {
		a, ok := addr(k)
		if !ok {
			continue
		}
		if a >= 1<<(64-batchBits) {
			order = order[:0]
			for k := range n {
				if _, ok := addr(k); ok {
					order = append(order, uint64(k))
				}
			}
			return order
		}
		order = append(order, a<<batchBits|uint64(k))
	}
	slices.Sort(order)
	return order
}

// renderLine appends a stream answer: in JSON one line.
func (s *Server) renderLine(b []byte, j *job, frames *[]Frame) []byte {
	start := len(b)
	b = s.render(b, j, frames)
	return s.endLine(b, start)
}

// renderPlain is renderLine for a plain address in --obj's file m (the
// job prepare makes of it), less --adjust-vma, found at where.
func (s *Server) renderPlain(b []byte, m *Module, addr uint64, where found, frames *[]Frame) []byte {
	start := len(b)
	o := s.codeOptions()
	*frames = m.framesAt((*frames)[:0], addr, where, &o)
	b = s.appendCode(b, &Request{Module: s.Obj, Addr: addr + s.Adjust, HasAddr: true}, *frames)
	return s.endLine(b, start)
}

// endLine ends the stream answer that starts at b[start:].
func (s *Server) endLine(b []byte, start int) []byte {
	if s.Printer.Style == JSON {
		if s.Printer.Pretty {
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
func (s *Server) parse(line string) (request, error) {
	var q request
	in := line
	q.kind = "CODE"
	q.module = s.Obj
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
	if file && strings.TrimLeft(in, " \t\n\v\f\r") == "" {
		return q, errors.New("must be followed by an input file")
	}
	if build && strings.TrimLeft(in, " \t\n\v\f\r") == "" {
		return q, errors.New("must be followed by a hash")
	}
	if (file || build) && (s.Obj != "" || s.BuildID != nil) {
		return q, errors.New("input file has already been specified")
	}
	if line == "" {
		q.module = ""
		return q, errEmpty
	}
	switch {
	case s.Obj != "":
		q.module, q.path = s.Obj, s.Obj
	case s.BuildID != nil:
		q.module, q.buildID = strings.ToUpper(hexenc.EncodeToString(s.BuildID)), true
		q.path = s.findBuildID(s.BuildID)
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
	if s.Addr2line {
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
func (s *Server) findBuildID(id []byte) string {
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
func (s *Server) load(q *request) (*module, bool) {
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
			mod.m, mod.err = s.openModule(q.path)
		}
		s.modules[key] = mod
		if mod.m != nil && !q.buildID && q.path == s.Obj {
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
	req   Request
	bad   bool // the line is no request
	mod   *module
	first bool // the first request of a file that could not be read
}

// prepare parses an input line and reads its file; it reports a line
// that is no request, and a file that cannot be read, on standard error.
// A plain address with --obj takes no allocation.
func (s *Server) prepare(line []byte) job {
	if s.objMod != nil {
		if addr, ok := quickAddr(line, s.Addr2line); ok {
			return job{q: request{kind: "CODE", module: s.Obj, addr: addr},
				req: Request{Module: s.Obj, Addr: addr, HasAddr: true}, mod: s.objMod}
		}
	}
	text := stripNewlines(line)
	q, err := s.parse(text)
	j := job{q: q, req: Request{Module: q.module, Addr: q.addr, HasAddr: err == nil && q.symbol == "", Symbol: q.symbol}}
	if err != nil {
		if err != errEmpty {
			fmt.Fprintf(s.stderr, "%s: error: '%s': %v\n", s.prog, text, err)
		}
		j.bad = true
		return j
	}
	j.mod, j.first = s.load(&q)
	if j.mod.m == nil && j.first && s.Printer.Style != JSON {
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
		return addrlines.Digits(t, 16)
	}
	switch {
	case len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'):
		return addrlines.Digits(t[2:], 16)
	case len(t) > 1 && t[0] == '0':
		return addrlines.Digits(t[1:], 8)
	}
	return addrlines.Digits(t, 10)
}

// budget sets the Go memory limit before the tables of f are built: a
// symbolizer stays up beside the program it serves (pprof, a sanitizer
// runtime), so its heap is held to 32 MiB plus three times the size of
// the files it has read (about what their tables take, with room for the
// garbage of building them), as long as every such file carries its own
// uncompressed DWARF; else there is no limit.
func (s *Server) budget(f *elfx.File) {
	if s.unbounded {
		return
	}
	info := f.File.Section(".debug_info") // the file's own, not its debug file's
	st, err := os.Stat(f.Name)
	if err != nil || info == nil || info.Flags&elf.SHF_COMPRESSED != 0 {
		s.unbounded = true
		debug.SetMemoryLimit(math.MaxInt64)
		return
	}
	s.files += st.Size()
	debug.SetMemoryLimit(32<<20 + 3*s.files)
}

// openModule reads the file at path under the memory budget, or says
// why it cannot in llvm-symbolizer's words where it has them.
func (s *Server) openModule(path string) (*Module, string) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, "Is a directory"
	}
	m, err := elfx.OpenWith(path, func(f *elfx.File) (*Module, error) {
		s.budget(f)
		if path == s.Obj && s.objAddrs != nil {
			scope, err := splitinfo.ScopeOfAddrs(f, s.objAddrs)
			if err != nil {
				return nil, err
			}
			return FromELFIn(f, scope)
		}
		return FromELF(f)
	})
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
func (s *Server) answer(b []byte, line string) []byte {
	j := s.prepare([]byte(line))
	return s.render(b, &j, &s.frames)
}

// render appends the answer to a prepared line, with frames as scratch
// space. It may run on several goroutines at once.
func (s *Server) render(b []byte, j *job, frames *[]Frame) []byte {
	req, q := &j.req, &j.q
	noFrames := func() []Frame {
		*frames = append((*frames)[:0], Frame{})
		return *frames
	}
	if j.bad {
		return s.Printer.AppendCode(b, req, noFrames())
	}
	if j.mod.m == nil {
		if j.first && s.Printer.Style == JSON {
			return s.Printer.AppendError(b, req, j.mod.err)
		}
		switch q.kind {
		case "DATA":
			return s.Printer.AppendData(b, req, &Global{})
		case "FRAME":
			return s.Printer.AppendFrame(b, req)
		}
		if s.Inlines || req.Symbol != "" {
			return s.Printer.AppendCode(b, req, nil)
		}
		return s.Printer.AppendCode(b, req, noFrames())
	}
	m := j.mod.m
	addr := q.addr - s.Adjust
	switch {
	case q.kind == "DATA":
		var g Global
		if req.HasAddr {
			g = m.Data(addr, &s.Options)
		}
		return s.Printer.AppendData(b, req, &g)
	case q.kind == "FRAME":
		return s.Printer.AppendFrame(b, req)
	case !req.HasAddr:
		*frames = m.Symbol((*frames)[:0], q.symbol, q.symOff, &s.Options)
		return s.Printer.AppendCode(b, req, *frames)
	}
	return s.renderCode(b, m, req, addr, frames)
}

// renderCode appends the answer for code address addr of m (the
// request's address less --adjust-vma).
func (s *Server) renderCode(b []byte, m *Module, req *Request, addr uint64, frames *[]Frame) []byte {
	o := s.codeOptions()
	*frames = m.Frames((*frames)[:0], addr, &o)
	return s.appendCode(b, req, *frames)
}

// codeOptions are the options of a code address's lookup.
func (s *Server) codeOptions() Options {
	o := s.Options
	o.Inlines = s.Inlines || s.Printer.Style == GNU
	return o
}

// appendCode appends the answer for a code address with frames.
func (s *Server) appendCode(b []byte, req *Request, frames []Frame) []byte {
	if !s.Inlines && s.Printer.Style == GNU {
		// llvm-addr2line's single frame is the innermost of the chain.
		frames = frames[:1]
	}
	return s.Printer.AppendCode(b, req, frames)
}
