package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/rpc2"

	"github.com/splitdbg/splitdbg/adapter"
	"github.com/splitdbg/splitdbg/internal/delvetest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// The tests run real Delve servers (the pinned module), in process as
// "dlv exec --headless --accept-multiclient" would, or in a child process
// (this test binary again) when a test kills it or when a benchmark
// wants Delve, the proxy and the clients in separate processes, as they
// are used.

const childEnv = "SPLITDBG_PROXY_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChild(spec))
	}
	os.Exit(m.Run())
}

// childSpec is what a child process serves.
type childSpec struct {
	Kind   string // "delve", "proxy" or "relay"
	Listen string
	Args   []string // delve: the program and its arguments
	// Upstream and Executable configure a proxy; a relay copies bytes
	// to Upstream.
	Upstream, Executable string
}

// runChild serves spec on spec.Listen, prints its address and serves
// until its standard input closes.
func runChild(spec string) int {
	var cs childSpec
	if err := json.Unmarshal([]byte(spec), &cs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	l, err := net.Listen("tcp", cs.Listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop := func() {}
	switch cs.Kind {
	case "delve":
		srv := delvetest.NewServer(l, true, cs.Args)
		if err := srv.Run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		stop = func() { srv.Stop() }
	case "proxy":
		p, err := New(Config{Upstream: cs.Upstream, Executable: cs.Executable})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go p.Serve(l)
		stop = func() { p.Close() }
	case "relay":
		go relay(l, cs.Upstream)
	}
	fmt.Printf("listening %s\n", l.Addr())
	bufio.NewReader(os.Stdin).ReadString(0)
	stop()
	return 0
}

// relay copies bytes both ways between each client of l and a new
// connection to upstream: the least any proxy does.
func relay(l net.Listener, upstream string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", upstream)
		if err != nil {
			c.Close()
			continue
		}
		go func() { io.Copy(u, c); u.Close() }()
		go func() { io.Copy(c, u); c.Close() }()
	}
}

// upstream is a headless Delve debugging one test binary.
type upstream struct {
	bin  string
	addr string
	// direct is a plain rpc2 client connected straight to Delve.
	direct *rpc2.RPCClient
}

// startDelve runs Delve in process on test binary name with args.
func startDelve(t testing.TB, name string, args ...string) *upstream {
	t.Helper()
	srv := delvetest.Start(t, true, name, args...)
	u := &upstream{bin: srv.Bin, addr: srv.Addr}
	u.direct = dialRPC(t, u.addr)
	t.Cleanup(func() {
		u.direct.Detach(true)
		srv.Stop()
	})
	return u
}

// child is a Delve server in a child process.
type child struct {
	upstream
	cmd   *exec.Cmd
	stdin interface{ Close() error }
	pid   int // of the debugged program
}

// startChildDelve runs Delve on test binary name in a child process
// listening on listen ("127.0.0.1:0" for any port).
func startChildDelve(t testing.TB, listen, name string, args ...string) *child {
	t.Helper()
	bin := testbin.Path(t, name)
	c := startChild(t, childSpec{Kind: "delve", Listen: listen, Args: append([]string{bin}, args...)})
	c.bin = bin
	c.direct = dialRPC(t, c.addr)
	c.pid = c.direct.ProcessPid()
	return c
}

// startChild runs spec in a child process.
func startChild(t testing.TB, spec childSpec) *child {
	t.Helper()
	js, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	var stderr bytes.Buffer // read after the child exits
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin}
	t.Cleanup(c.kill)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		addr, ok := strings.CutPrefix(strings.TrimSpace(s), "listening ")
		if !ok {
			err := cmd.Wait()
			msg := strings.TrimSpace(stderr.String())
			delvetest.SkipNoPtrace(t, errors.New(msg), spec.Kind)
			t.Fatalf("child %s: %q, %v: %s", spec.Kind, s, err, msg)
		}
		c.addr = addr
	case <-time.After(60 * time.Second):
		t.Fatalf("child %s did not start", spec.Kind)
	}
	return c
}

// kill kills the child Delve at once (SIGKILL) and the program it debugs.
func (c *child) kill() {
	if c.cmd.ProcessState != nil {
		return
	}
	c.cmd.Process.Kill()
	c.cmd.Wait()
	c.stdin.Close()
	if c.pid > 0 {
		syscall.Kill(c.pid, syscall.SIGKILL)
	}
}

// dialRPC connects an rpc2 client, as "dlv connect" does.
func dialRPC(t testing.TB, addr string) *rpc2.RPCClient {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return rpc2.NewClientFromConn(conn)
}

// startProxy serves a Proxy for up on a loopback listener.
func startProxy(t testing.TB, up *upstream) (*Proxy, string) {
	t.Helper()
	return startProxyTo(t, up.addr, up.bin)
}

func startProxyTo(t testing.TB, addr, bin string) (*Proxy, string) {
	t.Helper()
	p, err := New(Config{Upstream: addr, Executable: bin, Logf: func(f string, args ...any) { t.Logf("proxy: "+f, args...) }})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-served; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return p, l.Addr().String()
}

// newAdapter returns the adapter over a new direct connection to up: what
// the proxy's answers are compared with.
func newAdapter(t testing.TB, up *upstream) *adapter.Client {
	t.Helper()
	ad, err := adapter.New(dialRPC(t, up.addr), up.bin)
	if err != nil {
		t.Fatalf("adapter.New: %v", err)
	}
	t.Cleanup(func() { ad.Close() })
	return ad
}

// coldCase is a cold line of a test binary and what a debugger should
// show when it stops there (as in adapter's tests).
type coldCase struct {
	bin    string
	src    string // under testdata/src
	marker string // the COLD-LINE marker
	fn     string // the logical function, as Delve names it
	file   string // suffix of the file Delve reports
	// stack lists functions the backtrace shows below frame 0, in order.
	stack []string
	// ordinary is an unsplit function the cold run calls.
	ordinary string
}

var coldCases = []coldCase{
	{"gcc-cold", "gcccold/main.c", "process", "C.process", "gcccold/main.c", []string{"C.main"}, "C.note_cold"},
	{"demo", "demo/demo.c", "scale", "C.scale", "demo/demo.c", []string{"C.main"}, "C.warn"},
	{"bolt22", "bolt/bolt.c", "tally-plain", "C.tally", "bolt/bolt.c", []string{"C.main"}, "C.alarm_"},
	{"cgo", "cgo/split.c", "c_classify", "C.c_classify", "cgoprog/split.c",
		[]string{"_Cfunc_c_classify", "runtime.asmcgocall", "runtime.cgocall", "main._Cfunc_c_classify", "main.main"}, "C.c_report"},
}

// coldLine returns the base name and line of the COLD-LINE marker name in
// testdata/src/file.
var coldLine = delvetest.ColdLine

var curScope = api.EvalScope{GoroutineID: -1}

// formatFrames prints frames one a line, for failure messages.
var formatFrames = delvetest.FormatFrames
