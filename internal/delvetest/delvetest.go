// Package delvetest is the test plumbing shared by the packages that test
// against a real Delve (the pinned module): a Delve server run in process
// on a loopback listener, Delve's own terminal (pkg/terminal) driven by
// commands, the COLD-LINE markers of the test sources (testdata/src), and
// checks of the backtraces Delve and the terminal print.
package delvetest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/go-delve/delve/pkg/config"
	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/pkg/terminal"
	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/debugger"
	"github.com/go-delve/delve/service/rpccommon"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// Config is how the tests run a program under Delve: API version 2, the
// native backend, the program args[0] with arguments args[1:], its
// output to /dev/null.
func Config(args []string) *service.Config {
	return &service.Config{
		ProcessArgs: args,
		APIVersion:  2,
		Debugger: debugger.Config{
			Backend:     "native",
			ExecuteKind: debugger.ExecutingExistingFile,
			Stdout:      proc.OutputRedirect{Path: os.DevNull},
			Stderr:      proc.OutputRedirect{Path: os.DevNull},
		},
	}
}

// NewServer returns a headless Delve server (Config) on l for args. With
// multi it accepts several clients, as "dlv exec --headless
// --accept-multiclient" does.
func NewServer(l net.Listener, multi bool, args []string) *rpccommon.ServerImpl {
	c := Config(args)
	c.Listener, c.AcceptMulti = l, multi
	return rpccommon.NewServer(c)
}

// SkipNoPtrace skips the test when err says the kernel forbids tracing,
// so Delve cannot launch name.
func SkipNoPtrace(tb testing.TB, err error, name string) {
	tb.Helper()
	if errors.Is(err, syscall.EPERM) || strings.Contains(err.Error(), "operation not permitted") {
		tb.Skipf("ptrace is not permitted here (%v): Delve cannot launch %s", err, name)
	}
}

// Server is a running Delve server from Start.
type Server struct {
	*rpccommon.ServerImpl
	Bin  string // the path of the test binary it debugs
	Addr string // the address of its loopback listener
}

// Start runs a Delve server (see NewServer) in process on a loopback
// listener, debugging test binary name (testdata/bin) with args. It skips
// the test when the binary is missing, when there is no loopback
// listener or when the kernel does not let this process trace others.
// The caller stops the server.
func Start(tb testing.TB, multi bool, name string, args ...string) *Server {
	tb.Helper()
	bin := testbin.Path(tb, name)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Skipf("no loopback listener: %v", err)
	}
	srv := NewServer(l, multi, append([]string{bin}, args...))
	if err := srv.Run(); err != nil {
		l.Close()
		SkipNoPtrace(tb, err, name)
		tb.Fatalf("Delve on %s: %v", name, err)
	}
	return &Server{ServerImpl: srv, Bin: bin, Addr: l.Addr().String()}
}

// ColdLine returns the base name of testdata/src/file and the line of its
// marker comment "/* COLD-LINE: name */".
func ColdLine(tb testing.TB, file, name string) (base string, line int) {
	tb.Helper()
	path := filepath.Join(testbin.Dir(), "..", "src", file)
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	marker := regexp.MustCompile(`/\* COLD-LINE: ` + regexp.QuoteMeta(name) + ` \*/`)
	for i, l := range strings.Split(string(data), "\n") {
		if marker.MatchString(l) {
			return filepath.Base(file), i + 1
		}
	}
	tb.Fatalf("no COLD-LINE %q in %s", name, path)
	return "", 0
}

// RunTerminal drives Delve's own terminal (pkg/terminal, what "dlv
// connect" runs) over client, as a person at the (dlv) prompt would, and
// returns what each command printed; an error a command returns is
// printed as "error: ...". It logs each command and its output, after
// who if that is not empty.
func RunTerminal(tb testing.TB, who string, client service.Client, cmds ...string) []string {
	tb.Helper()
	tb.Setenv("TERM", "dumb")
	term := terminal.New(client, &config.Config{}, false)
	defer term.Close()
	var out bytes.Buffer
	term.RedirectTo(&out)
	dc := terminal.DebugCommands(client)
	prompt := "(dlv) "
	if who != "" {
		prompt = who + " " + prompt
	}
	res := make([]string, len(cmds))
	for i, cmd := range cmds {
		out.Reset()
		if err := dc.Call(cmd, term); err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
		}
		res[i] = out.String()
		tb.Logf("%s%s\n%s", prompt, cmd, res[i])
	}
	return res
}

// Match reports an error unless out, what command what printed, matches
// the regular expression re.
func Match(tb testing.TB, what, out, re string) {
	tb.Helper()
	if !regexp.MustCompile(re).MatchString(out) {
		tb.Errorf("%s printed\n%s\nwant match for %s", what, out, re)
	}
}

// CheckBtCallers reports an error unless the terminal's backtrace bt
// lists each function of stack, in order, each at the end of a line.
func CheckBtCallers(tb testing.TB, bt string, stack []string) {
	tb.Helper()
	rest := bt
	for _, fn := range stack {
		i := strings.Index(rest, fn+"\n")
		if i < 0 {
			tb.Errorf("bt lacks %s after the frames before it:\n%s", fn, bt)
			return
		}
		rest = rest[i:]
	}
}

// CheckCallers reports an error unless frames below frame 0 include, in
// order, functions whose names end with those of stack.
func CheckCallers(tb testing.TB, frames []api.Stackframe, stack []string) {
	tb.Helper()
	next := 0
	for _, f := range frames[1:] {
		if next < len(stack) && strings.HasSuffix(f.Function.Name(), stack[next]) {
			next++
		}
	}
	if next < len(stack) {
		tb.Errorf("backtrace lacks %s (in order %v):\n%s", stack[next], stack, FormatFrames(frames))
	}
}

// FormatFrames prints frames one a line, for failure messages.
func FormatFrames(frames []api.Stackframe) string {
	var b strings.Builder
	for i, f := range frames {
		fmt.Fprintf(&b, "  %d %#x %s %s:%d\n", i, f.PC, f.Function.Name(), f.File, f.Line)
	}
	return b.String()
}

// RealFrames returns the frames before the first one Delve could not
// read: past the C start-up code Delve 1.27 lists frames at PC 0 or with
// an error, one more at each call.
func RealFrames(frames []api.Stackframe) []api.Stackframe {
	for i, f := range frames {
		if f.PC == 0 || f.Err != "" {
			return frames[:i]
		}
	}
	return frames
}
