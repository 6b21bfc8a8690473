package symbolize

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// FuzzSymbolizeInput: any input line gets exactly one answer, and
// nothing panics.
func FuzzSymbolizeInput(f *testing.F) {
	bin := testbin.Path(f, "demo")
	for _, s := range []string{"0x1250", "sum+4", "DATA 0x4010", `CODE "x" 0x1`, "BUILDID:ab 1", "FILE:FILE:", "'", "12z"} {
		f.Add(s)
	}
	// One symbolizer per style, its module read once.
	syms := map[string]*Server{}
	for _, style := range []string{"LLVM", "JSON"} {
		cfg, _, _, err := ParseArgs([]string{"--obj=" + bin, "--output-style=" + style}, false)
		if err != nil {
			f.Fatal(err)
		}
		syms[style] = NewServer(cfg, "fuzz", io.Discard)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, line)
		for _, style := range []string{"LLVM", "JSON"} {
			out := string(syms[style].answer(nil, line))
			if style == "JSON" && (strings.Count(out, "\n") != 0 || !strings.HasPrefix(out, "{")) {
				t.Errorf("JSON answer to %q is %q, want one object", line, out)
			}
			if style == "LLVM" && !strings.HasSuffix(out, "\n\n") {
				t.Errorf("LLVM answer to %q is %q, want an answer ending in an empty line", line, out)
			}
			// Through Serve's pipeline, the same answer.
			if len(line) < 1023 {
				var b bytes.Buffer
				w := bufio.NewWriter(&b)
				if err := syms[style].Serve(strings.NewReader(line+"\n"), w); err != nil {
					t.Fatal(err)
				}
				if want := string(syms[style].renderLine(nil, ptr(syms[style].prepare([]byte(line))), &syms[style].frames)); b.String() != want {
					t.Errorf("Serve answers %q with %q, want %q", line, b.String(), want)
				}
			}
		}
	})
}

// TestBudget: reading a file with its own uncompressed DWARF sets the
// memory limit to 32 MiB plus three times the file's size.
func TestBudget(t *testing.T) {
	bin := testbin.Path(t, "demo")
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	cfg, _, _, err := ParseArgs([]string{"--obj=" + bin}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(cfg, "test", io.Discard)
	s.answer(nil, "0x1250")
	if got, want := debug.SetMemoryLimit(-1), 32<<20+3*st.Size(); got != want {
		t.Errorf("memory limit after reading %s: %d, want %d", bin, got, want)
	}
}

// serveLines are requests of every kind for the demo binary with --obj:
// plain addresses over its code, symbols, DATA, bad lines, empty lines,
// and one line longer than the 1023 bytes llvm-symbolizer reads at once.
func serveLines(n int) []string {
	extra := []string{"sum", "sum+4", "zz", "", "DATA 0x4010", "12z", "FRAME 0x1250", strings.Repeat("0x1250 ", 300), `CODE "x" 0x1`}
	var lines []string
	for i := range n {
		if i%97 == 0 {
			lines = append(lines, extra[(i/97)%len(extra)])
			continue
		}
		// Addresses spread over the code, in no order.
		lines = append(lines, "0x"+strconv.FormatUint(0x1000+uint64(i*7919%0x400), 16))
	}
	return lines
}

// wantServe is what Serve answers to lines: each line (each piece of
// 1023 bytes, newline included) answered alone, in order.
func wantServe(t *testing.T, args []string, lines []string) string {
	t.Helper()
	s := newTestServer(t, args)
	var b []byte
	for _, l := range lines {
		l += "\n"
		for len(l) > 0 {
			n := min(len(l), 1023)
			b = s.renderLine(b, ptr(s.prepare([]byte(l[:n]))), &s.frames)
			l = l[n:]
		}
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

func newTestServer(t *testing.T, args []string) *Server {
	t.Helper()
	cfg, _, _, err := ParseArgs(args, false)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(cfg, "test", io.Discard)
	if !s.CheckObj(io.Discard) {
		t.Fatalf("%v: cannot read --obj", args)
	}
	return s
}

// TestServeOrder: answers come in input order, across batches, runs of
// the reader and both kinds of request (plain addresses and the rest),
// in every output style.
func TestServeOrder(t *testing.T) {
	bin := testbin.Path(t, "demo")
	lines := serveLines(3*serveBatch + 1234)
	for _, style := range []string{"LLVM", "GNU", "JSON"} {
		args := []string{"--obj=" + bin, "--output-style=" + style}
		checkServe(t, newTestServer(t, args), args, lines)
	}
}

// checkServe checks that s's Serve answers lines, fed at once, as
// wantServe answers each alone under args.
func checkServe(t *testing.T, s *Server, args, lines []string) {
	t.Helper()
	want := wantServe(t, args, lines)
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	if err := s.Serve(strings.NewReader(strings.Join(lines, "\n")+"\n"), w); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("%v: Serve's answers differ from answering each line alone:\n%s", args, firstDiff(out.String(), want))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// TestServeFlushesOnPause: when the input pauses, every answer to the
// lines read so far is written and flushed, after a full batch as after
// a single line.
func TestServeFlushesOnPause(t *testing.T) {
	bin := testbin.Path(t, "demo")
	args := []string{"--obj=" + bin, "--output-style=JSON"}
	s := newTestServer(t, args)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(outW, 64<<10)
		done <- s.Serve(inR, w)
		outW.Close()
	}()
	answers := bufio.NewReader(outR)
	for _, n := range []int{1, 2*serveBatch + 5, 1, 300, 1} {
		lines := serveLines(n)
		go io.WriteString(inW, strings.Join(lines, "\n")+"\n")
		want := strings.Count(wantServe(t, args, lines), "\n")
		got := make(chan error, 1)
		go func() {
			for range want {
				if _, err := answers.ReadString('\n'); err != nil {
					got <- err
					return
				}
			}
			got <- nil
		}()
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%d lines sent: not all %d answers arrived within 20s", n, want)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(answers); len(rest) > 0 {
		t.Errorf("answers after the last request's: %q", rest)
	}
}

// failingReader gives data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.err == errPanicRead {
			panic(r.err)
		}
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

var errPanicRead = errors.New("read panics")

// TestServeInputEnds: an input that ends without a newline, or with a
// read error in the middle of a batch, has every line read answered,
// then Serve returns the error (nil at EOF); a panic of the reader is
// raised on Serve's goroutine.
func TestServeInputEnds(t *testing.T) {
	bin := testbin.Path(t, "demo")
	args := []string{"--obj=" + bin, "--output-style=JSON"}
	lines := serveLines(serveBatch + 100)
	in := strings.Join(lines, "\n") // the last line has no newline
	want := wantServe(t, args, lines)
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		err  error
	}{{"EOF", nil}, {"error", boom}} {
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		r := io.Reader(strings.NewReader(in))
		if c.err != nil {
			r = &failingReader{[]byte(in), c.err}
		}
		if err := newTestServer(t, args).Serve(r, w); err != c.err {
			t.Errorf("%s: Serve returns %v, want %v", c.name, err, c.err)
		}
		w.Flush()
		if out.String() != want {
			t.Errorf("%s: %s", c.name, firstDiff(out.String(), want))
		}
	}
	func() {
		defer func() {
			if p := recover(); p != errPanicRead {
				t.Errorf("a reader's panic reaches Serve's caller as %v, want %v", p, errPanicRead)
			}
		}()
		newTestServer(t, args).Serve(&failingReader{[]byte(in), errPanicRead}, bufio.NewWriter(io.Discard))
	}()
}

// TestServeObjReadMidStream: when --obj's file is first read by a line
// of a later batch (a library caller that did not call CheckObj, and a
// first batch of empty lines, which read no file), the batch before it may
// still be rendering: the answers stay those of each line alone, and,
// under the race detector, no renderer reads the server's --obj module
// while it is being set.
func TestServeObjReadMidStream(t *testing.T) {
	bin := testbin.Path(t, "demo")
	var lines []string
	for range serveBatch + 300 {
		lines = append(lines, "")
	}
	lines = append(lines, serveLines(2*serveBatch)...)
	args := []string{"--obj=" + bin, "--output-style=JSON"}
	cfg, _, _, err := ParseArgs(args, false)
	if err != nil {
		t.Fatal(err)
	}
	checkServe(t, NewServer(cfg, "test", io.Discard), args, lines) // no CheckObj
}

// TestServeLineLongerThanBuffer: a line longer than the reader's buffer
// is answered as llvm-symbolizer answers it, each piece of 1023 bytes
// alone, its bytes those of the input however many reads it took.
func TestServeLineLongerThanBuffer(t *testing.T) {
	bin := testbin.Path(t, "demo")
	args := []string{"--obj=" + bin, "--output-style=JSON"}
	var long strings.Builder
	for i := 0; long.Len() < 600<<10; i++ {
		fmt.Fprintf(&long, "0x%x ", 0x1000+i%0x400)
	}
	checkServe(t, newTestServer(t, args), args, []string{"0x1250", long.String(), "0x1251"})
}

// TestServeFlushesBeforePartialLine: when the input pauses in the middle
// of a line, the lines before it are answered and flushed before Serve
// waits for the rest.
func TestServeFlushesBeforePartialLine(t *testing.T) {
	bin := testbin.Path(t, "demo")
	args := []string{"--obj=" + bin, "--output-style=JSON"}
	s := newTestServer(t, args)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(inR, bufio.NewWriter(outW))
		outW.Close()
	}()
	answers := bufio.NewReader(outR)
	want := strings.Split(wantServe(t, args, []string{"0x1250", "0x1251"}), "\n")
	for _, part := range []string{"0x1250\n0x12", "51\n"} {
		go io.WriteString(inW, part)
		got := make(chan string, 1)
		go func() {
			a, _ := answers.ReadString('\n')
			got <- a
		}()
		select {
		case a := <-got:
			if a != want[0]+"\n" {
				t.Errorf("after %q: answer %q, want %q", part, a, want[0])
			}
			want = want[1:]
		case <-time.After(20 * time.Second):
			t.Fatalf("after %q: no answer within 20s", part)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// endless gives line over and over, never pausing.
type endless struct {
	line string
	at   int
}

func (r *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.at:])
		n += c
		r.at = (r.at + c) % len(r.line)
	}
	return n, nil
}

// failingWriter fails every write.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestServeStopsOnWriteError: when the output fails, Serve returns its
// error, even while the input keeps coming without a pause.
func TestServeStopsOnWriteError(t *testing.T) {
	bin := testbin.Path(t, "demo")
	s := newTestServer(t, []string{"--obj=" + bin})
	boom := errors.New("boom")
	done := make(chan error, 1)
	go func() { done <- s.Serve(&endless{line: "0x1250\n"}, bufio.NewWriterSize(failingWriter{boom}, 4096)) }()
	select {
	case err := <-done:
		if err != boom {
			t.Errorf("Serve returns %v, want %v", err, boom)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve still answering 20s after its output failed")
	}
}
