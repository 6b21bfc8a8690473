package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-dap"
)

// dapExchange sends an initialize and a disconnect request on conn and
// reports the responses' commands.
func dapExchange(t *testing.T, conn net.Conn) []string {
	t.Helper()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	var got []string
	for i, cmd := range []string{"initialize", "disconnect"} {
		b, _ := json.Marshal(map[string]any{"seq": i + 1, "type": "request", "command": cmd, "arguments": map[string]any{"adapterID": "go"}})
		fmt.Fprintf(conn, "Content-Length: %d\r\n\r\n%s", len(b), b)
		for {
			m, err := dap.ReadProtocolMessage(r)
			if err != nil {
				t.Fatalf("reading the %s response: %v", cmd, err)
			}
			if resp, ok := m.(dap.ResponseMessage); ok {
				got = append(got, resp.GetResponse().Command)
				break
			}
		}
	}
	return got
}

// TestDAPListen runs "splitdbg dap --listen" as VS Code starts "dlv dap":
// it prints Delve's line with the address, serves the client that
// connects, and exits 0 when the session ends.
func TestDAPListen(t *testing.T) {
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		done <- (&cli{strings.NewReader(""), pw, &stderr}).main([]string{"dap", "--listen=127.0.0.1:0", "--log-dest=3", "--log-output=dap"})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "DAP server listening at: ")
	if !ok {
		t.Fatalf("first line %q, want Delve's \"DAP server listening at: ADDR\"", line)
	}
	go io.Copy(io.Discard, pr)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := dapExchange(t, conn); strings.Join(got, " ") != "initialize disconnect" {
		t.Errorf("responses %v", got)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("splitdbg dap did not exit after the session")
	}
}

// TestDAPClientAddr runs "splitdbg dap --client-addr", which dials the
// editor instead of listening.
func TestDAPClientAddr(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	done := make(chan int, 1)
	var stdout, stderr strings.Builder
	go func() {
		done <- (&cli{strings.NewReader(""), &stdout, &stderr}).main([]string{"dap", "--client-addr=" + l.Addr().String()})
	}()
	l.(*net.TCPListener).SetDeadline(time.Now().Add(30 * time.Second))
	conn, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := dapExchange(t, conn); strings.Join(got, " ") != "initialize disconnect" {
		t.Errorf("responses %v", got)
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}
