package dap

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-dap"
)

// client is a DAP client over TCP built on go-dap's codec, the way an
// editor talks to the server. Every wait is time-boxed.
type client struct {
	tb   testing.TB
	conn net.Conn
	r    *bufio.Reader
	seq  int
	// events holds the events read while waiting for something else.
	events []dap.Message
	// output collects the output events' text by category.
	output map[string]string
}

const wait = 20 * time.Second

func dial(tb testing.TB, addr string) *client {
	tb.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	c := &client{tb: tb, conn: conn, r: bufio.NewReader(conn), output: map[string]string{}}
	tb.Cleanup(func() { conn.Close() })
	return c
}

// send writes a request of command with arguments and returns its seq.
func (c *client) send(command string, args any) int {
	c.tb.Helper()
	c.seq++
	m := map[string]any{"seq": c.seq, "type": "request", "command": command}
	if args != nil {
		m["arguments"] = args
	}
	b, err := json.Marshal(m)
	if err != nil {
		c.tb.Fatal(err)
	}
	c.raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(b), b))
	return c.seq
}

func (c *client) raw(s string) {
	c.tb.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(wait))
	if _, err := c.conn.Write([]byte(s)); err != nil {
		c.tb.Fatal(err)
	}
}

// read returns the next message.
func (c *client) read() dap.Message {
	c.tb.Helper()
	c.conn.SetReadDeadline(time.Now().Add(wait))
	m, err := dap.ReadProtocolMessage(c.r)
	if err != nil {
		buf := make([]byte, 1<<20)
		c.tb.Fatalf("reading from the server: %v\n%s", err, buf[:runtime.Stack(buf, true)])
	}
	if o, ok := m.(*dap.OutputEvent); ok {
		c.output[o.Body.Category] += o.Body.Output
	}
	return m
}

// response reads up to the response to request seq, keeping events, and
// fails the test on an error response unless ok is false.
func (c *client) response(seq int) dap.ResponseMessage {
	c.tb.Helper()
	for {
		m := c.read()
		if r, ok := m.(dap.ResponseMessage); ok && r.GetResponse().RequestSeq == seq {
			return r
		}
		if _, ok := m.(dap.EventMessage); ok {
			c.events = append(c.events, m)
		}
	}
}

// call sends a request and returns its successful response.
func call[T dap.ResponseMessage](c *client, command string, args any) T {
	c.tb.Helper()
	r := c.response(c.send(command, args))
	t, ok := r.(T)
	if !ok {
		c.tb.Fatalf("%s: got %s", command, describe(r))
	}
	return t
}

// callErr sends a request and returns the error response it must get.
func (c *client) callErr(command string, args any) *dap.ErrorResponse {
	c.tb.Helper()
	r := c.response(c.send(command, args))
	e, ok := r.(*dap.ErrorResponse)
	if !ok {
		c.tb.Fatalf("%s: got %s, want an error response", command, describe(r))
	}
	return e
}

// nextEvent returns the next event of type T, from those kept or read next.
func nextEvent[T dap.EventMessage](c *client) T {
	c.tb.Helper()
	for i, m := range c.events {
		if t, ok := m.(T); ok {
			c.events = append(c.events[:i], c.events[i+1:]...)
			return t
		}
	}
	for {
		m := c.read()
		if t, ok := m.(T); ok {
			return t
		}
		if _, ok := m.(dap.EventMessage); ok {
			c.events = append(c.events, m)
		}
	}
}

func describe(m dap.Message) string {
	if e, ok := m.(*dap.ErrorResponse); ok && e.Body.Error != nil {
		return fmt.Sprintf("error response %q", e.Body.Error.Format)
	}
	b, _ := json.Marshal(m)
	return fmt.Sprintf("%v %s", reflect.TypeOf(m), b)
}
