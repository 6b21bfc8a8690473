package adapter

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/debugger"
	"github.com/go-delve/delve/service/rpc2"
	"github.com/go-delve/delve/service/rpccommon"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// session is a real Delve server run in-process on a loopback listener,
// debugging one test binary, with a plain rpc2 client and the splitdbg
// Client over the same connection.
type session struct {
	bin    string
	plain  *rpc2.RPCClient
	client *Client
}

// startDelve launches bin with args under Delve's native backend, skipping
// the test when the kernel does not let this process trace others.
func startDelve(t testing.TB, name string, args ...string) *session {
	t.Helper()
	bin := testbin.Path(t, name)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	srv := rpccommon.NewServer(&service.Config{
		Listener:    l,
		ProcessArgs: append([]string{bin}, args...),
		APIVersion:  2,
		Debugger: debugger.Config{
			Backend:     "native",
			ExecuteKind: debugger.ExecutingExistingFile,
			Stdout:      proc.OutputRedirect{Path: os.DevNull},
			Stderr:      proc.OutputRedirect{Path: os.DevNull},
		},
	})
	if err := srv.Run(); err != nil {
		l.Close()
		if errors.Is(err, syscall.EPERM) || strings.Contains(err.Error(), "operation not permitted") {
			t.Skipf("ptrace is not permitted here (%v): Delve cannot launch %s", err, name)
		}
		t.Fatalf("Delve on %s: %v", name, err)
	}
	conn, err := net.DialTimeout("tcp", l.Addr().String(), 30*time.Second)
	if err != nil {
		srv.Stop()
		t.Fatalf("dial Delve: %v", err)
	}
	plain := rpc2.NewClientFromConn(conn)
	s := &session{bin: bin, plain: plain}
	t.Cleanup(func() {
		plain.Detach(true)
		srv.Stop()
		if s.client != nil {
			s.client.Close()
		}
	})
	c, err := New(plain, bin)
	if err != nil {
		t.Fatalf("adapter.New(%s): %v", name, err)
	}
	s.client = c
	return s
}

// coldLine returns FILE:LINE of the COLD-LINE marker name in the test
// sources (testdata/src/DIR/FILE).
func coldLine(t testing.TB, file, name string) (base string, line int) {
	t.Helper()
	path := filepath.Join(testbin.Dir(), "..", "src", file)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	marker := regexp.MustCompile(`/\* COLD-LINE: ` + regexp.QuoteMeta(name) + ` \*/`)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if marker.MatchString(sc.Text()) {
			return filepath.Base(file), n
		}
	}
	t.Fatalf("no COLD-LINE %q in %s", name, path)
	return "", 0
}

func spec(file string, line int) string { return fmt.Sprintf("%s:%d", file, line) }

func itoa(n int) string   { return fmt.Sprint(n) }
func hex(n uint64) string { return fmt.Sprintf("%#x", n) }
