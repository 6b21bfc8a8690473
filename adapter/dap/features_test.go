package dap

import (
	"encoding/base64"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-delve/delve/service"
	delvedap "github.com/go-delve/delve/service/dap"
	"github.com/go-delve/delve/service/debugger"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-dap"

	"github.com/splitdbg/splitdbg/internal/gdbtest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// stopped waits for the next stop and returns it with the stack's first
// frames.
func stopped(t *testing.T, c *client, reason string) (*dap.StoppedEvent, []dap.StackFrame) {
	t.Helper()
	ev := nextEvent[*dap.StoppedEvent](c)
	if ev.Body.Reason != reason {
		t.Fatalf("stopped = %s; want reason %q (stderr %q)", describe(ev), reason, c.output["stderr"])
	}
	st := call[*dap.StackTraceResponse](c, "stackTrace", map[string]any{"threadId": ev.Body.ThreadId, "levels": 10})
	return ev, st.Body.StackFrames
}

func evaluate(t *testing.T, c *client, frame int, expr string) string {
	t.Helper()
	r := call[*dap.EvaluateResponse](c, "evaluate", map[string]any{"expression": expr, "frameId": frame, "context": "watch"})
	return r.Body.Result
}

// TestSession walks the demo (gcc -O2, split) through what an editor
// does: stop on entry, function breakpoints by C name with and without
// Delve's "C." prefix, a conditional breakpoint, a logpoint and a hit
// condition on hot lines, next, step in, step out, evaluate, set a
// variable, read memory, an instruction breakpoint, the program's output
// and its exit.
func TestSession(t *testing.T) {
	bin := testbin.Path(t, "demo")
	c := dial(t, serve(t))
	start(t, c, "launch", map[string]any{"mode": "exec", "program": bin, "args": []string{"cold"}, "stopOnEntry": true})
	fb := call[*dap.SetFunctionBreakpointsResponse](c, "setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{
		{"name": "sum"}, {"name": "C.scale"}, {"name": "no_such_function"}}})
	if b := fb.Body.Breakpoints; len(b) != 3 || !b[0].Verified || !b[1].Verified || b[2].Verified || b[2].Message == "" {
		t.Fatalf("setFunctionBreakpoints = %s; want sum and C.scale verified, no_such_function not, with a message", describe(fb))
	}
	call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
	entry := nextEvent[*dap.StoppedEvent](c)
	if entry.Body.Reason != "entry" || entry.Body.ThreadId == 0 {
		t.Fatalf("first stop = %s; want the entry, on a thread", describe(entry))
	}

	call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": entry.Body.ThreadId})
	ev, frames := stopped(t, c, "function breakpoint")
	if frames[0].Name != "C.sum" || frames[1].Name != "C.main" {
		t.Fatalf("function breakpoint sum: frames %+v", frames)
	}
	if got := evaluate(t, c, frames[0].Id, "n"); got != "4" {
		t.Errorf("evaluate n in sum = %q, want 4", got)
	}
	// The caller's frame: main's locals.
	sc1 := call[*dap.ScopesResponse](c, "scopes", map[string]any{"frameId": frames[1].Id})
	vars1 := call[*dap.VariablesResponse](c, "variables", map[string]any{"variablesReference": sc1.Body.Scopes[0].VariablesReference})
	if !slices.ContainsFunc(vars1.Body.Variables, func(v dap.Variable) bool { return v.Name == "cold" && v.Value == "1" }) {
		t.Errorf("variables of main: %s; want cold = 1", describe(vars1))
	}

	// A conditional breakpoint and a logpoint on hot lines of sum.
	path, _ := filepath.Abs(filepath.Join(testbin.Dir(), "..", "src", "demo", "demo.c"))
	bps := call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
		"source": map[string]any{"path": path},
		"breakpoints": []map[string]any{
			{"line": 40, "condition": "s >= 3"},
			{"line": 51, "logMessage": "main prints s={s} r={r}"},
		}})
	for _, b := range bps.Body.Breakpoints {
		if !b.Verified {
			t.Fatalf("setBreakpoints = %s", describe(bps))
		}
	}
	call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": ev.Body.ThreadId})
	ev, frames = stopped(t, c, "breakpoint")
	if frames[0].Line != 40 || evaluate(t, c, frames[0].Id, "s") != "3" {
		t.Fatalf("conditional breakpoint: stopped at %+v with s = %s; want line 40 with s == 3 (1+2)", frames[0], evaluate(t, c, frames[0].Id, "s"))
	}
	// set s = 100 where Delve can write it, and read it back.
	scopes := call[*dap.ScopesResponse](c, "scopes", map[string]any{"frameId": frames[0].Id})
	sv := c.response(c.send("setVariable", map[string]any{"variablesReference": scopes.Body.Scopes[0].VariablesReference, "name": "s", "value": "100"}))
	wantSum := "3 + 4"
	if _, ok := sv.(*dap.SetVariableResponse); ok {
		wantSum = "104" // 100 + v[3]
		if got := evaluate(t, c, frames[0].Id, "s"); got != "100" {
			t.Errorf("after setVariable s = 100, s = %s", got)
		}
	} else if !strings.Contains(describe(sv), "Unable to set variable") {
		t.Errorf("setVariable: %s", describe(sv))
	}
	mem := call[*dap.ReadMemoryResponse](c, "readMemory", map[string]any{"memoryReference": frames[0].InstructionPointerReference, "count": 16})
	if b, err := base64.StdEncoding.DecodeString(mem.Body.Data); err != nil || len(b) != 16 || mem.Body.Address != frames[0].InstructionPointerReference {
		t.Errorf("readMemory = %s", describe(mem))
	}

	// next stays in sum; step out returns to main.
	call[*dap.NextResponse](c, "next", map[string]any{"threadId": ev.Body.ThreadId})
	ev, frames = stopped(t, c, "step")
	if frames[0].Name != "C.sum" {
		t.Errorf("after next: frame 0 %+v", frames[0])
	}
	call[*dap.StepOutResponse](c, "stepOut", map[string]any{"threadId": ev.Body.ThreadId})
	_, frames = stopped(t, c, "step")
	if frames[0].Name != "C.main" {
		t.Errorf("after stepOut: frame 0 %+v", frames[0])
	}

	// The function breakpoint on scale (C.scale) stops next; a
	// breakpoint on its first instruction in the cold fragment after.
	call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": ev.Body.ThreadId})
	ev, frames = stopped(t, c, "function breakpoint")
	if frames[0].Name != "C.scale" {
		t.Fatalf("function breakpoint C.scale: frames %+v", frames)
	}
	call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": ev.Body.ThreadId})
	ex := nextEvent[*dap.ExitedEvent](c)
	nextEvent[*dap.TerminatedEvent](c)
	if ex.Body.ExitCode != 0 {
		t.Errorf("exit code %d, want 0", ex.Body.ExitCode)
	}
	if want := "main prints s=" + map[string]string{"3 + 4": "7", "104": "104"}[wantSum] + " r="; !strings.Contains(c.output["console"], want) {
		t.Errorf("logpoint: console output %q, want %q", c.output["console"], want)
	}
	if !strings.Contains(c.output["stdout"], "warning: scale by zero") {
		t.Errorf("the program's output did not reach the client: %q", c.output)
	}
	call[*dap.DisconnectResponse](c, "disconnect", nil)
}

// TestPauseAndExitCode pauses a program that has no debug information
// and no goroutines: the stop is on an OS thread whose stack the client
// can read; terminate ends it, and an exit status reaches the client.
func TestPauseAndExitCode(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	c := dial(t, serve(t))
	launch(t, c, sleep, "60")
	call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
	call[*dap.PauseResponse](c, "pause", map[string]any{"threadId": 1})
	ev, frames := stopped(t, c, "pause")
	th := call[*dap.ThreadsResponse](c, "threads", nil)
	if len(th.Body.Threads) != 1 || th.Body.Threads[0].Id != ev.Body.ThreadId || th.Body.Threads[0].Name == "Dummy" {
		t.Errorf("threads = %s; want the one OS thread %d", describe(th), ev.Body.ThreadId)
	}
	if len(frames) == 0 {
		t.Errorf("no frames at the pause")
	}
	call[*dap.TerminateResponse](c, "terminate", nil)
	nextEvent[*dap.TerminatedEvent](c)
	call[*dap.DisconnectResponse](c, "disconnect", nil)

	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	c = dial(t, serve(t))
	launch(t, c, sh, "-c", "exit 3")
	call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
	if ex := nextEvent[*dap.ExitedEvent](c); ex.Body.ExitCode != 3 {
		t.Errorf("exit code %d, want 3", ex.Body.ExitCode)
	}
	call[*dap.DisconnectResponse](c, "disconnect", nil)
}

// hotView is what a user sees at a stop in hot Go code: thread names,
// the top frames, the scopes and frame 0's variables.
type hotView struct {
	Threads   []string
	Frames    []string
	Scopes    []string
	Variables []dap.Variable
}

// view collects the hot view from a session stopped at a breakpoint.
func view(t *testing.T, c *client) hotView {
	t.Helper()
	ev := nextEvent[*dap.StoppedEvent](c)
	var v hotView
	// Which runtime goroutines exist depends on timing; the stopped one
	// does not.
	threadID := regexp.MustCompile(`\(Thread \d+\)`)
	for _, th := range call[*dap.ThreadsResponse](c, "threads", nil).Body.Threads {
		if th.Id == ev.Body.ThreadId {
			v.Threads = append(v.Threads, threadID.ReplaceAllString(th.Name, "(Thread N)"))
		}
	}
	st := call[*dap.StackTraceResponse](c, "stackTrace", map[string]any{"threadId": ev.Body.ThreadId, "levels": 3})
	for _, f := range st.Body.StackFrames {
		src := ""
		if f.Source != nil {
			src = filepath.Base(f.Source.Path)
		}
		v.Frames = append(v.Frames, f.Name+" "+src+":"+strconv.Itoa(f.Line)+" "+f.InstructionPointerReference)
	}
	sc := call[*dap.ScopesResponse](c, "scopes", map[string]any{"frameId": st.Body.StackFrames[0].Id})
	for _, s := range sc.Body.Scopes {
		v.Scopes = append(v.Scopes, s.Name)
	}
	vars := call[*dap.VariablesResponse](c, "variables", map[string]any{"variablesReference": sc.Body.Scopes[0].VariablesReference})
	for _, x := range vars.Body.Variables {
		x.VariablesReference = 0 // handles are the server's own
		x.MemoryReference = ""
		v.Variables = append(v.Variables, x)
	}
	return v
}

// TestHotGoAsDelve stops the cgo program in its Go main under splitdbg's
// server and under Delve's own DAP server ("dlv dap", the pinned module,
// in this process), and compares what the client sees.
func TestHotGoAsDelve(t *testing.T) {
	bin := testbin.Path(t, "cgo")
	path := sourcePath(t, bin, "main.go", 26)
	run := func(addr string) hotView {
		c := dial(t, addr)
		launch(t, c, bin)
		call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
			"source": map[string]any{"path": path}, "breakpoints": []map[string]any{{"line": 26}}})
		call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
		v := view(t, c)
		call[*dap.DisconnectResponse](c, "disconnect", map[string]any{"terminateDebuggee": true})
		return v
	}
	ours := run(serve(t))

	delve := run(dlvDAP(t))
	if diff := cmp.Diff(delve, ours); diff != "" {
		t.Errorf("splitdbg dap differs from dlv dap at a stop in hot Go code (-dlv dap +splitdbg):\n%s", diff)
	}
}

// TestAttach attaches to a running process by processId, pauses it,
// reads its threads, and disconnects: the process keeps running.
func TestAttach(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	cmd := exec.Command(sleep, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c := dial(t, serve(t))
	start(t, c, "attach", map[string]any{"mode": "local", "processId": cmd.Process.Pid})
	call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
	call[*dap.PauseResponse](c, "pause", map[string]any{"threadId": cmd.Process.Pid})
	ev := nextEvent[*dap.StoppedEvent](c)
	if ev.Body.ThreadId != cmd.Process.Pid {
		t.Errorf("stopped on thread %d, want the process's one thread %d", ev.Body.ThreadId, cmd.Process.Pid)
	}
	call[*dap.DisconnectResponse](c, "disconnect", map[string]any{})
	time.Sleep(100 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the attached process is gone after disconnect: %v", err)
	}
}

// TestRestart restarts a program stopped at a cold-line breakpoint,
// twice: it stops there again, at the new load address, and the session
// ends (serve's cleanup waits for it) once the client leaves. The
// collector is off, so that no finalizer closes an output pipe of an
// earlier run the server forgot, whose reader the end waits for.
func TestRestart(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	bin := testbin.Path(t, "demo")
	c := dial(t, serve(t))
	launch(t, c, bin, "cold")
	path, line := editorPath(t, bin, coldCases[0])
	call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
		"source": map[string]any{"path": path}, "breakpoints": []map[string]any{{"line": line}}})
	call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
	_, before := stopped(t, c, "breakpoint")
	for i := range 2 {
		call[*dap.RestartResponse](c, "restart", nil)
		_, after := stopped(t, c, "breakpoint")
		if after[0].Name != before[0].Name || after[0].Line != line {
			t.Errorf("after restart %d: frame 0 %+v, want %s at line %d", i+1, after[0], before[0].Name, line)
		}
	}
	call[*dap.DisconnectResponse](c, "disconnect", map[string]any{})
}

// TestDebugMode launches a Go main package in mode "debug", as VS Code's
// default configuration does: splitdbg builds it without optimizations
// and stops at a breakpoint in it.
func TestDebugMode(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	src := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tn := 6 * 7\n\tfmt.Println(n)\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hello\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := dial(t, serve(t))
	start(t, c, "launch", map[string]any{"mode": "debug", "program": dir})
	call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
		"source": map[string]any{"path": filepath.Join(dir, "main.go")}, "breakpoints": []map[string]any{{"line": 7}}})
	call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
	_, frames := stopped(t, c, "breakpoint")
	if frames[0].Name != "main.main" || frames[0].Line != 7 {
		t.Fatalf("frame 0 %+v, want main.main at line 7", frames[0])
	}
	if got := evaluate(t, c, frames[0].Id, "n"); got != "42" {
		t.Errorf("n = %s, want 42 (built without optimizations)", got)
	}
	call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": 1})
	nextEvent[*dap.TerminatedEvent](c)
	if !strings.Contains(c.output["stdout"], "42") {
		t.Errorf("stdout %q", c.output["stdout"])
	}
	call[*dap.DisconnectResponse](c, "disconnect", map[string]any{})
}

// TestConditionInMovedCode puts a conditional breakpoint and a logpoint
// on withdraw's cold line, which inv runs with shortfalls 3, 1, 4 and 6:
// the program stops where shortfall > 2, as gdb 13 does with the same
// condition at the same address, and the logpoint prints every run, its
// expression read in the moved frame.
func TestConditionInMovedCode(t *testing.T) {
	for _, name := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			path, line := editorPath(t, bin, coldCase{name, "inv/inv.c", "withdraw", "C.withdraw"})
			c := dial(t, serve(t))
			launch(t, c, bin, "cold")
			bps := call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
				"source": map[string]any{"path": path}, "breakpoints": []map[string]any{{"line": line, "condition": "shortfall > 2"}}})
			if !bps.Body.Breakpoints[0].Verified {
				t.Fatalf("setBreakpoints: %s", describe(bps))
			}
			fb := call[*dap.SetFunctionBreakpointsResponse](c, "setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "audit"}}})
			if !fb.Body.Breakpoints[0].Verified {
				t.Fatalf("setFunctionBreakpoints: %s", describe(fb))
			}
			call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
			var got []string
			for {
				ev := nextEvent[*dap.StoppedEvent](c)
				st := call[*dap.StackTraceResponse](c, "stackTrace", map[string]any{"threadId": ev.Body.ThreadId, "levels": 1})
				if ev.Body.Reason == "function breakpoint" {
					break
				}
				got = append(got, evaluate(t, c, st.Body.StackFrames[0].Id, "shortfall"))
				call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": ev.Body.ThreadId})
			}
			if strings.Join(got, " ") != "3 4 6" {
				t.Errorf("stops with shortfall %v, want 3 4 6", got)
			}
			// gdb 13, with the same condition at the same address.
			if gdb, err := exec.LookPath("gdb"); err == nil {
				var gs []string
				for _, b := range gdbBreaks(t, bin, gdbRun{src: "inv/inv.c", lines: []int{line}}) {
					for _, st := range gdbtest.Frames(t, gdb, bin, []string{b + " if shortfall > 2"}, 0, []string{"shortfall"}, []string{"cold"}) {
						gs = append(gs, st.Frames[0].Prints["shortfall"])
					}
				}
				if !slices.Equal(got, gs) {
					t.Errorf("stops with shortfall %v; gdb %v", got, gs)
				}
			}
			// Now a logpoint instead, and the rest of the run: value's cold line.
			call[*dap.SetFunctionBreakpointsResponse](c, "setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{}})
			vpath, vline := editorPath(t, bin, coldCase{name, "inv/inv.c", "value", "C.value"})
			call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
				"source": map[string]any{"path": vpath}, "breakpoints": []map[string]any{{"line": vline, "logMessage": "value: {it->name} calls={calls}"}}})
			call[*dap.ContinueResponse](c, "continue", map[string]any{"threadId": 1})
			nextEvent[*dap.TerminatedEvent](c)
			t.Logf("console: %q", c.output["console"])
			if !strings.Contains(c.output["console"], "value: ") {
				t.Errorf("the logpoint in value.cold printed nothing: %q", c.output)
			}
			call[*dap.DisconnectResponse](c, "disconnect", map[string]any{})
		})
	}
}

// dlvDAP runs Delve's own DAP server ("dlv dap", the pinned module) in
// this process for one session and returns its address.
func dlvDAP(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	srv := delvedap.NewServer(&service.Config{Listener: l, DisconnectChan: make(chan struct{}), Debugger: debugger.Config{Backend: "native"}})
	t.Cleanup(srv.Stop)
	srv.Run()
	return l.Addr().String()
}

// TestDlvDapInMovedCode pins what the README says "dlv dap" does where
// splitdbg's server works (TestColdLine): on the demo's cold line the
// breakpoint is not verified, and the threads of a C program are one
// "Dummy" thread with no stack.
func TestDlvDapInMovedCode(t *testing.T) {
	bin := testbin.Path(t, "demo")
	path, line := editorPath(t, bin, coldCases[0])
	c := dial(t, dlvDAP(t))
	launch(t, c, bin, "cold")
	bps := call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
		"source": map[string]any{"path": path}, "breakpoints": []map[string]any{{"line": line}}})
	if len(bps.Body.Breakpoints) != 1 || bps.Body.Breakpoints[0].Verified {
		t.Errorf("dlv dap: setBreakpoints on the cold line %s:%d = %s; want one unverified breakpoint", path, line, describe(bps))
	}
	th := call[*dap.ThreadsResponse](c, "threads", nil)
	if len(th.Body.Threads) != 1 || th.Body.Threads[0].Name != "Dummy" {
		t.Errorf("dlv dap: threads of a C program = %s; want one Dummy thread", describe(th))
	}
	call[*dap.DisconnectResponse](c, "disconnect", map[string]any{"terminateDebuggee": true})
}
