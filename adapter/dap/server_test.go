package dap

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-dap"

	"github.com/splitdbg/splitdbg/adapter"
	"github.com/splitdbg/splitdbg/internal/delvetest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// serve runs a Server for one connection on a loopback port, as
// "splitdbg dap --listen" does, and returns its address. The test fails
// if Serve has not returned a few seconds after the test's end.
func serve(tb testing.TB) string {
	tb.Helper()
	s := serveDone(tb)
	tb.Cleanup(func() {
		select {
		case err := <-s.done:
			if err != nil {
				tb.Errorf("Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			tb.Errorf("Serve did not return after the client left")
		}
	})
	return s.addr
}

// coldCase is a test binary run on its cold path, a COLD-LINE of it, and
// the logical function a stop there is in.
type coldCase struct {
	bin, src, marker, fn string
}

var coldCases = []coldCase{
	{"demo", "demo/demo.c", "scale", "C.scale"},
	{"gcc-cold", "gcccold/main.c", "process", "C.process"},
	{"gcc-pgo", "pgo/pgo.c", "checksum", "C.checksum"},
	{"clang19-mfs", "clang/split.c", "report", "C.report"},
	{"clang22-mfs", "clang/split.c", "scan", "C.scan"},
	{"clang22-bbsections", "clang/split.c", "scan", "C.scan"},
	{"bolt22", "bolt/bolt.c", "tally-plain", "C.tally"},
	{"bolt22-over-gcc", "bolt/bolt.c", "tally-attr", "C.tally"},
	{"vars", "vars/vars.c", "inspect", "C.inspect"},
	{"cgo", "cgo/split.c", "c_classify", "C.c_classify"},
}

// editorPath returns the path an editor names a case's source file by,
// its absolute path, and the cold line. The cgo program was built in a
// directory of another name, so there the editor's path is the one the
// binary records.
func editorPath(tb testing.TB, bin string, tc coldCase) (string, int) {
	tb.Helper()
	file, line := delvetest.ColdLine(tb, tc.src, tc.marker)
	if tc.bin == "cgo" {
		return sourcePath(tb, bin, file, line), line
	}
	path, err := filepath.Abs(filepath.Join(testbin.Dir(), "..", "src", tc.src))
	if err != nil {
		tb.Fatal(err)
	}
	return path, line
}

// sourcePath returns the path the binary's line table gives the file of
// a cold line: what an editor whose checkout matches the build sends.
func sourcePath(tb testing.TB, bin, file string, line int) string {
	tb.Helper()
	r, err := adapter.NewResolver(bin)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	res, err := r.Resolve(file + ":" + strconv.Itoa(line))
	if err != nil || len(res.Locs) == 0 {
		tb.Fatalf("resolving %s:%d in %s: %v", file, line, bin, err)
	}
	return res.Locs[0].File
}

// launch initializes a session and launches bin with args, stopped at
// its entry until configurationDone.
func launch(tb testing.TB, c *client, bin string, args ...string) {
	tb.Helper()
	start(tb, c, "launch", map[string]any{"mode": "exec", "program": bin, "args": args})
}

// start initializes a session and sends command (launch or attach) with
// args, as an editor does, skipping the test when the kernel forbids
// tracing; it returns after the initialized event.
func start(tb testing.TB, c *client, command string, args map[string]any) {
	tb.Helper()
	call[*dap.InitializeResponse](c, "initialize", map[string]any{"adapterID": "go", "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"})
	r := c.response(c.send(command, args))
	if e, ok := r.(*dap.ErrorResponse); ok {
		if strings.Contains(describe(e), "not permitted") {
			tb.Skipf("ptrace is not permitted here: %s", describe(e))
		}
		tb.Fatalf("%s: %s", command, describe(e))
	}
	nextEvent[*dap.InitializedEvent](c)
}

// TestColdLine drives the server with a DAP client on every producer's
// split binary: a breakpoint on a line whose code is in a moved fragment
// is verified and hit, the stop is on a thread the threads request
// lists, frame 0 is named by the logical function with the cold line,
// its scopes list variables, the disassembly at the stop covers the
// entry fragment too, and the program runs to its exit code.
func TestColdLine(t *testing.T) {
	for _, tc := range coldCases {
		t.Run(tc.bin, func(t *testing.T) {
			bin := testbin.Path(t, tc.bin)
			path, line := editorPath(t, bin, tc)
			c := dial(t, serve(t))
			launch(t, c, bin, "cold")

			bps := call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
				"source": map[string]any{"path": path}, "breakpoints": []map[string]any{{"line": line}}})
			if len(bps.Body.Breakpoints) != 1 || !bps.Body.Breakpoints[0].Verified || bps.Body.Breakpoints[0].Line != line {
				t.Fatalf("setBreakpoints %s:%d = %s; want one verified breakpoint at line %d", path, line, describe(bps), line)
			}
			call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
			stop := nextEvent[*dap.StoppedEvent](c)
			if stop.Body.Reason != "breakpoint" || stop.Body.ThreadId == 0 || len(stop.Body.HitBreakpointIds) != 1 || stop.Body.HitBreakpointIds[0] != bps.Body.Breakpoints[0].Id {
				t.Fatalf("stopped = %s; want a breakpoint stop on a thread, hitting breakpoint %d", describe(stop), bps.Body.Breakpoints[0].Id)
			}

			threads := call[*dap.ThreadsResponse](c, "threads", nil)
			found := false
			for _, th := range threads.Body.Threads {
				found = found || th.Id == stop.Body.ThreadId
			}
			if !found {
				t.Errorf("threads %s do not list the stopped thread %d", describe(threads), stop.Body.ThreadId)
			}

			st := call[*dap.StackTraceResponse](c, "stackTrace", map[string]any{"threadId": stop.Body.ThreadId, "startFrame": 0, "levels": 20})
			if len(st.Body.StackFrames) < 2 {
				t.Fatalf("stackTrace = %s; want the frame and its callers", describe(st))
			}
			f0 := st.Body.StackFrames[0]
			if f0.Name != tc.fn || f0.Line != line || f0.Source == nil || f0.Source.Path != path {
				t.Errorf("frame 0 = %s; want %s at %s:%d", describe(st), tc.fn, path, line)
			}
			for _, f := range st.Body.StackFrames {
				if f.Source == nil {
					continue // in a library without symbols
				}
				if strings.Contains(f.Name, ".cold") || strings.Contains(f.Name, "__part") || f.Name == "???" {
					t.Errorf("frame %q is named by a fragment or not at all: %s", f.Name, describe(st))
				}
			}
			// Paging: frames from 1 on are the same frames.
			page := call[*dap.StackTraceResponse](c, "stackTrace", map[string]any{"threadId": stop.Body.ThreadId, "startFrame": 1, "levels": 1})
			if len(page.Body.StackFrames) != 1 || page.Body.StackFrames[0].Name != st.Body.StackFrames[1].Name || page.Body.StackFrames[0].Line != st.Body.StackFrames[1].Line {
				t.Errorf("stackTrace startFrame 1 levels 1 = %s; want frame 1 of %s", describe(page), describe(st))
			}

			if tc.bin == "bolt22-over-gcc" {
				// GCC's tally.cold, kept by BOLT, is in no DWARF range:
				// there is no scope to read its variables in.
				e := c.callErr("scopes", map[string]any{"frameId": f0.Id})
				if !strings.Contains(describe(e), "DWARF describes no code of fragment tally.cold") {
					t.Errorf("scopes in tally.cold: %s", describe(e))
				}
			} else {
				vars := checkScopes(t, c, f0.Id)
				if tc.bin == "demo" {
					// As the README shows, and gdb: x = 7, k = 0.
					var got []string
					for _, v := range vars {
						got = append(got, v.Name+" = "+v.Value)
					}
					if strings.Join(got, ", ") != "x = 7, k = 0" {
						t.Errorf("variables of scale at the cold line: %v, want x = 7, k = 0", got)
					}
				}
			}

			dis := call[*dap.DisassembleResponse](c, "disassemble", map[string]any{
				"memoryReference": f0.InstructionPointerReference, "instructionOffset": -200, "instructionCount": 400})
			if len(dis.Body.Instructions) != 400 {
				t.Fatalf("disassemble: %d instructions, want 400", len(dis.Body.Instructions))
			}
			var at, fragments int
			last := ""
			for i, in := range dis.Body.Instructions {
				if in.Address == f0.InstructionPointerReference {
					at = i
				}
				if in.Instruction == invalidInstruction.Instruction {
					continue
				}
				if in.Symbol != "" && in.Symbol != last {
					fragments++
					last = in.Symbol
				}
			}
			if at != 200 {
				t.Errorf("disassemble: the stop address is instruction %d, want 200", at)
			}
			if last == "" {
				t.Errorf("disassemble names no function")
			}

			call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": stop.Body.ThreadId})
			// Demo and the others stop once per cold run of the line; run on.
			for {
				m := c.read()
				if s, ok := m.(*dap.StoppedEvent); ok {
					call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": s.Body.ThreadId})
					continue
				}
				if e, ok := m.(*dap.ExitedEvent); ok {
					if e.Body.ExitCode != 0 && tc.bin != "gcc-cold" && tc.bin != "gcc-cold-nopie" {
						t.Logf("exit code %d", e.Body.ExitCode)
					}
					break
				}
			}
			nextEvent[*dap.TerminatedEvent](c)
			call[*dap.DisconnectResponse](c, "disconnect", map[string]any{})
		})
	}
}

// checkScopes checks that frame has a Locals scope with variables, none
// unreadable for want of a function context.
func checkScopes(t *testing.T, c *client, frame int) []dap.Variable {
	t.Helper()
	scopes := call[*dap.ScopesResponse](c, "scopes", map[string]any{"frameId": frame})
	if len(scopes.Body.Scopes) == 0 || !strings.HasPrefix(scopes.Body.Scopes[0].Name, "Locals") {
		t.Fatalf("scopes = %s", describe(scopes))
	}
	vars := call[*dap.VariablesResponse](c, "variables", map[string]any{"variablesReference": scopes.Body.Scopes[0].VariablesReference})
	if len(vars.Body.Variables) == 0 {
		t.Errorf("variables of frame 0 in moved code: none")
	}
	for _, v := range vars.Body.Variables {
		if strings.Contains(v.Value, "unable to find function context") {
			t.Errorf("variable %s = %s", v.Name, v.Value)
		}
	}
	return vars.Body.Variables
}

// TestMalformed sends what a broken client might: each gets an error
// response and the server keeps serving.
func TestMalformed(t *testing.T) {
	c := dial(t, serve(t))
	for _, frame := range []string{
		"Content-Length: abc\r\n\r\n",
		"Content-Length: 99999999999\r\n\r\n",
		"Bogus\r\n\r\n",
		"Content-Length: 7\r\n\r\n{nope!}",
		"Content-Length: 2\r\n\r\n[]",
	} {
		c.raw(frame)
		m := c.read()
		if e, ok := m.(*dap.ErrorResponse); !ok || e.Success {
			t.Errorf("after %q: got %s, want an error response", frame, describe(m))
		}
	}
	if e := c.callErr("frobnicate", nil); !strings.Contains(describe(e), "frobnicate") {
		t.Errorf("unknown command: %s", describe(e))
	}
	for _, cmd := range []string{"threads", "stackTrace", "continue", "setBreakpoints", "evaluate"} {
		if e := c.callErr(cmd, map[string]any{}); !strings.Contains(describe(e), "launch") {
			t.Errorf("%s before launch: %s", cmd, describe(e))
		}
	}
	if e := c.callErr("launch", map[string]any{"mode": "exec", "program": "/nonexistent/prog"}); !strings.Contains(describe(e), "nonexistent") {
		t.Errorf("launch of a missing program: %s", describe(e))
	}
	if e := c.callErr("launch", map[string]any{"mode": "replay", "program": "x"}); !strings.Contains(describe(e), "replay") {
		t.Errorf("launch mode replay: %s", describe(e))
	}
	if e := c.callErr("attach", map[string]any{"mode": "local"}); !strings.Contains(describe(e), "processId") {
		t.Errorf("attach without processId: %s", describe(e))
	}
	call[*dap.InitializeResponse](c, "initialize", map[string]any{"adapterID": "go"})
	call[*dap.DisconnectResponse](c, "disconnect", nil)
}

// TestClientLeaves closes the connection while the program runs and
// while it is stopped: each time the launched program is killed and the
// server returns, leaving no goroutine behind.
func TestClientLeaves(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	sleep, _ = filepath.EvalSymlinks(sleep)
	for _, stopOnEntry := range []bool{false, true} {
		before := runtime.NumGoroutine()
		others := pidsOf(sleep)
		addr := serveDone(t)
		c := dial(t, addr.addr)
		start(t, c, "launch", map[string]any{"mode": "exec", "program": sleep, "args": []string{"60"}, "stopOnEntry": stopOnEntry})
		pids := slices.DeleteFunc(pidsOf(sleep), func(p int) bool { return slices.Contains(others, p) })
		if len(pids) == 0 {
			t.Fatalf("no process runs %s after launch", sleep)
		}
		call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
		if stopOnEntry {
			nextEvent[*dap.StoppedEvent](c)
		}
		c.conn.Close()
		select {
		case err := <-addr.done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("stopOnEntry %v: Serve did not return after the client left:\n%s", stopOnEntry, buf[:runtime.Stack(buf, true)])
		}
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				if st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
					t.Errorf("stopOnEntry %v: process %d (%s) still runs after the client left", stopOnEntry, pid, sleep)
				}
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			t.Errorf("stopOnEntry %v: %d goroutines after the session, %d before:\n%s", stopOnEntry, n, before, buf[:runtime.Stack(buf, true)])
		}
	}
}

// server is a Server on a loopback port whose Serve result arrives on done.
type server struct {
	addr string
	done chan error
}

func serveDone(tb testing.TB) server {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Skipf("no loopback listener: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		conn, err := l.Accept()
		l.Close()
		if err != nil {
			done <- err
			return
		}
		done <- New(conn, Options{}).Serve()
	}()
	return server{l.Addr().String(), done}
}

// pidsOf returns the processes running bin.
func pidsOf(bin string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && exe == bin {
			out = append(out, pid)
		}
	}
	return out
}
