package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/rpc2"
	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// within fails the test if f does not return in d: the proxy must never
// leave a client hanging.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return in %v", what, d)
	}
}

// startContinue sends a continue with events on r and returns once the
// first event says the target runs.
func startContinue(t *testing.T, r *rawConn) {
	t.Helper()
	r.send(t, `{"method":"RPCServer.Command","params":[{"name":"continue","WithEvents":true}],"id":1}`)
	r.send(t, `{"method":"RPCServer.GetEvents","params":[{}],"id":2}`)
	resp := decodeResponse(t, r.read(t))
	var out rpc2.GetEventsOut
	if err := json.Unmarshal(resp.Result, &out); err != nil || string(resp.ID) != "2" || len(out.Events) == 0 || out.Events[0].Kind != api.EventResumed {
		t.Fatalf("GetEvents after continue: %s, %v", resp.Result, err)
	}
}

// slowBreakpoint makes a continue run for a while: a breakpoint whose
// condition is never true on a line bolt22 runs 2,000 times (main's call
// of lookup), and one that stops at the end, on main's printf.
func slowBreakpoint(t *testing.T, c *rpc2.RPCClient) (end *api.Breakpoint) {
	t.Helper()
	for _, loc := range []string{"bolt.c:77", "bolt.c:81"} {
		locs, _, err := c.FindLocation(curScope, loc, true, nil)
		if err != nil || len(locs) != 1 {
			t.Fatalf("FindLocation(%s) = %v, %v", loc, locs, err)
		}
		bp := &api.Breakpoint{Addrs: locs[0].PCs}
		if loc == "bolt.c:77" {
			bp.Cond = "1 == 0"
		}
		if end, err = c.CreateBreakpoint(bp); err != nil {
			t.Fatalf("CreateBreakpoint(%s): %v", loc, err)
		}
	}
	return end
}

// TestUpstreamKilled kills the upstream Delve (SIGKILL) while a client
// has a continue running and another waits for events: every call in
// progress and every later call fails with an error that says the
// upstream is gone, at once; a new client gets "cannot connect". Then a
// new Delve starts at the same address: new clients of the same proxy
// work, old ones keep getting the error.
func TestUpstreamKilled(t *testing.T) {
	ch := startChildDelve(t, "127.0.0.1:0", "bolt22")
	_, addr := startProxyTo(t, ch.addr, ch.bin)
	a := dialRPC(t, addr)
	slowBreakpoint(t, a)
	r := dialRaw(t, addr)
	startContinue(t, r)
	r.send(t, `{"method":"RPCServer.GetEvents","params":[{}],"id":3}`)
	state := make(chan error, 1)
	go func() {
		_, err := a.GetState() // waits for the running target
		state <- err
	}()
	time.Sleep(50 * time.Millisecond)

	killed := time.Now()
	ch.kill()
	wantLost := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "lost the connection to the upstream Delve at "+ch.addr) {
			t.Errorf("%s: error %v; want the upstream lost", what, err)
		}
	}
	within(t, 10*time.Second, "the running continue and GetEvents", func() {
		for range 2 {
			resp := decodeResponse(t, r.read(t))
			if resp.Error == nil {
				t.Errorf("reply %s: %s; want an error", resp.ID, resp.Result)
			} else {
				wantLost("reply "+string(resp.ID), errors.New(*resp.Error))
			}
		}
	})
	within(t, 10*time.Second, "GetState", func() { wantLost("GetState", <-state) })
	t.Logf("calls in progress failed %v after the kill", time.Since(killed))
	within(t, 10*time.Second, "later calls", func() {
		_, err := a.GetState()
		wantLost("GetState", err)
		_, err = a.Stacktrace(-1, 10, 0, 0, nil)
		wantLost("Stacktrace", err)
		resp := decodeResponse(t, r.call(t, "ProcessPid", `{}`))
		if resp.Error == nil || !strings.Contains(*resp.Error, "lost the connection") {
			t.Errorf("ProcessPid after the kill: %+v", resp)
		}
	})
	within(t, 20*time.Second, "a new client", func() {
		n := dialRPC(t, addr)
		_, err := n.GetState()
		if err == nil || !strings.Contains(err.Error(), "cannot connect to the upstream Delve at "+ch.addr) {
			t.Errorf("GetState of a new client: %v; want cannot connect", err)
		}
		n.Disconnect(false)
	})

	// Delve comes back at the same address.
	re := startChildDelve(t, ch.addr, "bolt22", "cold")
	b := dialRPC(t, addr)
	defer b.Disconnect(false)
	within(t, 30*time.Second, "a client of the new Delve", func() {
		file, line := coldLine(t, "bolt/bolt.c", "tally-plain")
		bp, err := b.CreateBreakpoint(&api.Breakpoint{File: file, Line: line})
		if err != nil || len(bp.Addrs) == 0 || bp.FunctionName != "C.tally" {
			t.Fatalf("CreateBreakpoint on the new Delve: %+v, %v", bp, err)
		}
		s := <-b.Continue()
		if s.Err != nil || s.CurrentThread == nil || s.CurrentThread.Line != line {
			t.Errorf("continue on the new Delve: %+v", s)
		}
		_, err = a.GetState()
		wantLost("GetState of the old client", err)
	})
	re.kill()
}

// TestMalformed sends requests that are not JSON-RPC, or not Delve's: a
// value that is JSON gets an error reply (with its ID when it has one) and
// the connection goes on; bytes that are not JSON get an error reply and
// the connection is closed. Another client works throughout.
func TestMalformed(t *testing.T) {
	up := startDelve(t, "demo", "cold")
	p, addr := startProxy(t, up)
	good := dialRPC(t, addr)
	defer good.Disconnect(false)
	want, err := good.Stacktrace(-1, 5, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls int
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := good.Stacktrace(-1, 5, 0, 0, nil)
			if err != nil || len(got) == 0 || got[0].PC != want[0].PC {
				t.Errorf("the other client's Stacktrace: %v, %v", got, err)
				return
			}
			calls++
		}
	})

	bad := dialRaw(t, addr)
	for _, tc := range []struct {
		req, id, err string
	}{
		{`{"method":"RPCServer.Stacktrace","params":["x"],"id":1}`, "1", "malformed request body: json: cannot unmarshal string into Go value of type rpc2.StacktraceIn"},
		{`{"method":"RPCServer.State","params":{},"id":2}`, "2", `malformed request body: "params" is not an array`},
		{`{"method":7,"params":[],"id":3}`, "3", "splitdbg proxy: malformed request: json: cannot unmarshal number"},
		{`{"params":[{}],"id":4}`, "4", `splitdbg proxy: malformed request: no "method"`},
		{`[1,2,3]`, "null", "splitdbg proxy: malformed request: json: cannot unmarshal array"},
		{`{"method":"State","params":[{}],"id":"six"}`, `"six"`, "unknown method: State"},
		{`{"method":"RPCServer.NoSuch","params":[{}],"id":7}`, "7", "unknown method: RPCServer.NoSuch"},
		{`{"method":"RPCServer.Command","params":[{"name":"continue","threadID":"x"}],"id":8}`, "8", "malformed request body"},
		{`{"method":"RPCServer.ProcessPid","params":[{}],"id":9}`, "9", ""},
		{`{"method":"RPCServer.GetVersion","id":10}`, "10", ""},
	} {
		bad.send(t, tc.req)
		r := decodeResponse(t, bad.read(t))
		if string(r.ID) != tc.id {
			t.Errorf("%s: reply id %s; want %s", tc.req, r.ID, tc.id)
		}
		switch {
		case tc.err == "" && r.Error != nil:
			t.Errorf("%s: error %q", tc.req, *r.Error)
		case tc.err != "" && (r.Error == nil || !strings.HasPrefix(*r.Error, tc.err)):
			t.Errorf("%s: reply %s %v; want error %q", tc.req, r.Result, r.Error, tc.err)
		}
	}
	// Two requests in one write, the second cut short: the first is
	// answered, then the stream error.
	bad.send(t, `{"method":"RPCServer.ProcessPid","params":[{}],"id":11}{"method": "RPCServer.State", "params": [{]`)
	if r := decodeResponse(t, bad.read(t)); r.Error != nil || string(r.ID) != "11" {
		t.Errorf("the request before the bad bytes: %+v", r)
	}
	r := decodeResponse(t, bad.read(t))
	if r.Error == nil || !strings.Contains(*r.Error, "malformed JSON-RPC stream") || string(r.ID) != "null" {
		t.Errorf("bad bytes: %+v; want a stream error", r)
	}
	bad.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := bad.rd.ReadByte(); err == nil {
		t.Errorf("connection still open after bad bytes (read %q)", b)
	}
	// Binary garbage on a new connection.
	junk := dialRaw(t, addr)
	junk.send(t, "\x00\xff\xfe garbage \x01")
	if r := decodeResponse(t, junk.read(t)); r.Error == nil {
		t.Errorf("garbage: %+v", r)
	}

	close(stop)
	wg.Wait()
	t.Logf("the other client made %d calls meanwhile", calls)
	if calls == 0 {
		t.Errorf("the other client made no calls")
	}
	if st, err := good.GetState(); err != nil || st.CurrentThread == nil {
		t.Errorf("GetState after: %v, %v", st, err)
	}
	waitSessions(t, p, 1)
}

// waitSessions waits until the proxy serves n client connections.
func waitSessions(t *testing.T, p *Proxy, n int) {
	t.Helper()
	var got int
	for range 500 {
		p.mu.Lock()
		got = len(p.sessions)
		p.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the proxy serves %d connections; want %d", got, n)
}

// TestTwoClients has two clients of the proxy (and a direct one) take
// turns running a cgo program to its cold lines and look at each other's
// stops at the same time: each sees the stop, named, and the whole
// backtrace, although its adapter saw the stack at an earlier stop.
func TestTwoClients(t *testing.T) {
	up := startDelve(t, "cgo", "cold")
	p, addr := startProxy(t, up)
	a := dialRPC(t, addr)
	b := dialRPC(t, addr)
	defer a.Disconnect(false)
	defer b.Disconnect(false)
	if !a.IsMulticlient() {
		t.Fatalf("IsMulticlient through the proxy = false")
	}

	cases := []struct {
		client, other *rpc2.RPCClient
		marker        string
		fn            string
	}{
		{a, b, "c_accumulate", "C.c_accumulate"},
		{b, a, "c_classify", "C.c_classify"},
	}
	for _, tc := range cases {
		file, line := coldLine(t, "cgo/split.c", tc.marker)
		if _, err := tc.client.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
			t.Fatalf("CreateBreakpoint(%s:%d): %v", file, line, err)
		}
	}
	// Both adapters look at the stack before the target runs: what they
	// cache there must not outlive the stop.
	for _, c := range []*rpc2.RPCClient{a, b} {
		if _, err := c.Stacktrace(-1, 20, 0, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	up.direct.ListDynamicLibraries()

	for _, tc := range cases {
		_, line := coldLine(t, "cgo/split.c", tc.marker)
		st := <-tc.client.Continue()
		if st.Err != nil || st.CurrentThread == nil || st.CurrentThread.Function.Name() != tc.fn || st.CurrentThread.Line != line {
			t.Fatalf("continue to %s: %+v", tc.marker, st)
		}
		// Both clients, many calls each, at once.
		var wg sync.WaitGroup
		stacks := make([][]api.Stackframe, 8)
		states := make([]*api.DebuggerState, 8)
		errs := make([]error, 16)
		for i := range 8 {
			c := []*rpc2.RPCClient{tc.other, tc.client}[i%2]
			wg.Go(func() { stacks[i], errs[i] = c.Stacktrace(-1, 50, 0, 0, nil) })
			wg.Go(func() { states[i], errs[8+i] = c.GetState() })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			if got := states[i].CurrentThread; got.Function.Name() != tc.fn || got.Line != line {
				t.Errorf("state %d: %s:%d; want %s:%d", i, got.Function.Name(), got.Line, tc.fn, line)
			}
			frames := realFrames(stacks[i])
			if f := frames[0]; f.Function.Name() != tc.fn || f.Line != line {
				t.Errorf("stack %d frame 0: %s:%d", i, f.Function.Name(), f.Line)
			}
			var names []string
			for _, f := range frames {
				names = append(names, f.Function.Name())
			}
			cgoCall := slices.IndexFunc(names, func(n string) bool { return strings.HasSuffix(n, "_Cfunc_"+tc.marker) })
			if cgoCall != 1 || !slices.Contains(names, "runtime.asmcgocall") || !slices.Contains(names, "main.main") {
				t.Errorf("stack %d is not whole:\n%s", i, formatFrames(frames))
			}
			if diff := cmp.Diff(realFrames(stacks[0]), frames); diff != "" {
				t.Errorf("stack %d differs from stack 0:\n%s", i, diff)
			}
		}
	}
	st := <-a.Continue()
	if !st.Exited {
		t.Errorf("final continue: %+v", st)
	}
	if _, err := b.GetState(); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("the other client after the exit: %v; want Delve's exited error", err)
	}
	a.Disconnect(false)
	waitSessions(t, p, 1)
}

// TestClientDisconnectsMidCall closes clients in the middle of calls: a
// continue (the call goes on in Delve and the target stops where it
// would have, as when a client of Delve disconnects), a call waiting for
// the running target, and one waiting for events. The proxy drops their
// answers and serves the other clients.
func TestClientDisconnectsMidCall(t *testing.T) {
	up := startDelve(t, "bolt22")
	p, addr := startProxy(t, up)
	b := dialRPC(t, addr)
	defer b.Disconnect(false)
	end := slowBreakpoint(t, b)

	r := dialRaw(t, addr)
	startContinue(t, r)
	r.send(t, `{"method":"RPCServer.GetEvents","params":[{}],"id":3}`)
	if st, err := b.GetStateNonBlocking(); err != nil || !st.Running {
		t.Fatalf("the target does not run: %+v, %v", st, err)
	}
	r.conn.Close()
	r2 := dialRaw(t, addr)
	r2.send(t, `{"method":"RPCServer.Stacktrace","params":[{"Id":-1,"Depth":5}],"id":1}`)
	time.Sleep(50 * time.Millisecond)
	r2.conn.Close()

	t0 := time.Now()
	within(t, 60*time.Second, "the stop", func() {
		st, err := b.GetState()
		if err != nil || st.CurrentThread == nil || st.CurrentThread.Breakpoint == nil || st.CurrentThread.Breakpoint.ID != end.ID {
			t.Errorf("state after the disconnected client's continue: %+v, %v; want the stop at breakpoint %d", st, err, end.ID)
		}
	})
	t.Logf("the continue stopped %v after the client left", time.Since(t0))
	waitSessions(t, p, 1)
	within(t, 30*time.Second, "a continue to the end", func() {
		if _, err := b.ClearBreakpoint(end.ID); err != nil {
			t.Error(err)
		}
		if st := <-b.Continue(); !st.Exited {
			t.Errorf("final continue: %+v", st)
		}
	})
}

// TestUpstreamUnreachable: with no Delve at the address, every call gets
// an error that says so, at once.
func TestUpstreamUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	dead := l.Addr().String()
	l.Close()
	_, addr := startProxyTo(t, dead, testbin.Path(t, "demo"))
	c := dialRPC(t, addr)
	defer c.Disconnect(false)
	within(t, 10*time.Second, "calls", func() {
		for _, call := range []func() error{
			func() error { _, err := c.GetState(); return err },
			func() error { _, err := c.CreateBreakpoint(&api.Breakpoint{FunctionName: "main"}); return err },
			func() error { return (<-c.Continue()).Err },
		} {
			if err := call(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("cannot connect to the upstream Delve at %s", dead)) {
				t.Errorf("error %v; want cannot connect", err)
			}
		}
	})
}

func formatBreakpoints(bps []*api.Breakpoint) string {
	var b strings.Builder
	for _, bp := range bps {
		fmt.Fprintf(&b, "%d %#x %s:%d cond %q hits %d\n", bp.ID, bp.Addrs, bp.File, bp.Line, bp.Cond, bp.TotalHitCount)
	}
	return b.String()
}

// TestRestartByOtherClient: when one client restarts a PIE program, the
// other's adapter works at the new load address.
func TestRestartByOtherClient(t *testing.T) {
	up := startDelve(t, "demo", "cold")
	_, addr := startProxy(t, up)
	a := dialRPC(t, addr)
	b := dialRPC(t, addr)
	defer a.Disconnect(false)
	defer b.Disconnect(false)
	file, line := coldLine(t, "demo/demo.c", "scale")
	loc := fmt.Sprintf("%s:%d", file, line)
	before, _, err := a.FindLocation(curScope, loc, true, nil)
	if err != nil || len(before) != 1 || len(before[0].PCs) == 0 {
		t.Fatalf("FindLocation(%s) = %v, %v", loc, before, err)
	}
	if _, err := b.Restart(false); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	after, _, err := a.FindLocation(curScope, loc, true, nil)
	if err != nil || len(after) != 1 {
		t.Fatalf("FindLocation(%s) after the restart = %v, %v", loc, after, err)
	}
	bl, _, _ := b.FindLocation(curScope, loc, true, nil)
	if diff := cmp.Diff(bl, after); diff != "" {
		t.Errorf("FindLocation after the restart (-restarting client +other):\n%s", diff)
	}
	if before[0].PC == after[0].PC {
		t.Logf("the program was loaded at the same address again (no ASLR?)")
	}
	bp, err := a.CreateBreakpoint(&api.Breakpoint{File: file, Line: line})
	if err != nil || !slices.Equal(bp.Addrs, after[0].PCs) {
		t.Fatalf("CreateBreakpoint after the restart: %+v, %v", bp, err)
	}
	st := <-b.Continue()
	if st.Err != nil || st.CurrentThread == nil || st.CurrentThread.Function.Name() != "C.scale" || st.CurrentThread.Line != line {
		t.Errorf("continue: %+v", st)
	}
}

// TestConnectAfterExit: a client that connects when the program has
// exited gets Delve's answers unchanged (the adapter needs a live
// process), and split-function support once it restarts the program.
func TestConnectAfterExit(t *testing.T) {
	up := startDelve(t, "demo", "cold")
	if st := <-up.direct.Continue(); !st.Exited {
		t.Fatalf("continue: %+v", st)
	}
	_, addr := startProxy(t, up)
	c := dialRPC(t, addr)
	defer c.Disconnect(false)
	file, line := coldLine(t, "demo/demo.c", "scale")
	if _, err := c.GetState(); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("GetState after the exit: %v; want Delve's exited error", err)
	}
	if _, err := c.Restart(false); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	bp, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line})
	if err != nil || len(bp.Addrs) == 0 || bp.FunctionName != "C.scale" {
		t.Fatalf("CreateBreakpoint after the restart: %+v, %v", bp, err)
	}
	st := <-c.Continue()
	if st.Err != nil || st.CurrentThread == nil || st.CurrentThread.Function.Name() != "C.scale" || st.CurrentThread.Line != line {
		t.Errorf("continue: %+v", st)
	}
}
