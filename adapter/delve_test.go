package adapter

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/rpc2"

	"github.com/splitdbg/splitdbg/adapter/session/inproc"
	"github.com/splitdbg/splitdbg/internal/delvetest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// session is a real Delve server run in-process on a loopback listener,
// debugging one test binary, with a plain rpc2 client and the splitdbg
// Client over the same connection.
type session struct {
	bin    string
	plain  service.Client
	client *Client
}

// startDelve launches bin with args under Delve's native backend, skipping
// the test when the kernel does not let this process trace others.
func startDelve(t testing.TB, name string, args ...string) *session {
	t.Helper()
	srv := delvetest.Start(t, false, name, args...)
	conn, err := net.DialTimeout("tcp", srv.Addr, 30*time.Second)
	if err != nil {
		srv.Stop()
		t.Fatalf("dial Delve: %v", err)
	}
	plain := rpc2.NewClientFromConn(conn)
	s := &session{bin: srv.Bin, plain: plain}
	t.Cleanup(func() {
		plain.Detach(true)
		srv.Stop()
		if s.client != nil {
			s.client.Close()
		}
	})
	c, err := New(plain, srv.Bin)
	if err != nil {
		t.Fatalf("adapter.New(%s): %v", name, err)
	}
	s.client = c
	return s
}

// startInProcess is startDelve with Delve called in process, without
// JSON (package inproc), as splitdbg debug and splitdbg dap reach it:
// the benchmarks time what those doors do.
func startInProcess(t testing.TB, name string, args ...string) *session {
	t.Helper()
	bin := testbin.Path(t, name)
	dc := inProcess(t, append([]string{bin}, args...)...)
	s := &session{bin: bin, plain: dc}
	t.Cleanup(func() {
		if s.client != nil {
			s.client.Close()
		}
	})
	c, err := New(dc, bin)
	if err != nil {
		t.Fatalf("adapter.New(%s): %v", name, err)
	}
	s.client = c
	return s
}

// inProcess runs args under Delve called in process; the test's cleanup
// detaches, killing the process.
func inProcess(t testing.TB, args ...string) service.Client {
	t.Helper()
	dc, err := inproc.New(delvetest.Config(args))
	if err != nil {
		delvetest.SkipNoPtrace(t, err, args[0])
		t.Fatalf("Delve on %s: %v", args[0], err)
	}
	t.Cleanup(func() { dc.Detach(true) })
	return dc
}

// coldLine returns FILE:LINE of the COLD-LINE marker name in the test
// sources (testdata/src/DIR/FILE).
func coldLine(t testing.TB, file, name string) (base string, line int) {
	t.Helper()
	return delvetest.ColdLine(t, file, name)
}

func spec(file string, line int) string { return fmt.Sprintf("%s:%d", file, line) }

func itoa(n int) string { return fmt.Sprint(n) }
