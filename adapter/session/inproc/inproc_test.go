package inproc

import (
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/rpc2"
	"github.com/go-delve/delve/service/rpccommon"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/internal/delvetest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// config is how both clients' debuggers run a test program: ASLR off, so
// that addresses, registers and stack contents agree between two runs.
func config(args []string) *service.Config {
	c := delvetest.Config(args)
	c.Debugger.DisableASLR = true
	return c
}

// startInproc runs args under the in-process client.
func startInproc(t *testing.T, args ...string) *Client {
	t.Helper()
	c, err := New(config(args))
	if err != nil {
		delvetest.SkipNoPtrace(t, err, args[0])
		t.Fatalf("inproc.New(%s): %v", args[0], err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// startRPC runs args under Delve's JSON-RPC server in this process and
// returns Delve's rpc2 client over an in-memory pipe: what package
// session used before the in-process client.
func startRPC(t *testing.T, args ...string) *rpc2.RPCClient {
	t.Helper()
	l, conn := service.ListenerPipe()
	cfg := config(args)
	cfg.Listener = l
	srv := rpccommon.NewServer(cfg)
	if err := srv.Run(); err != nil {
		l.Close()
		conn.Close()
		delvetest.SkipNoPtrace(t, err, args[0])
		t.Fatalf("Delve on %s: %v", args[0], err)
	}
	c := rpc2.NewClientFromConn(conn)
	t.Cleanup(func() { srv.Stop() })
	return c
}

// step is one call of a script and what it answered.
type step struct {
	Call   string
	Answer any
	Err    string
}

// recorder runs a script against one client and keeps the answers, with
// the debugged process's ID (which differs between the two runs) taken
// out.
type recorder struct {
	t     *testing.T
	c     service.Client
	pid   int
	steps []step
}

func (r *recorder) add(call string, answer any, err error) {
	s := step{Call: call, Answer: answer}
	if err != nil {
		s.Err = strings.ReplaceAll(err.Error(), strconv.Itoa(r.pid), "PID")
	}
	r.steps = append(r.steps, s)
}

// state is a debugger state with its error as text.
type state struct {
	*api.DebuggerState
	Err string
}

// normState takes the process and thread IDs out of a state.
func (r *recorder) normState(st *api.DebuggerState) state {
	if st == nil {
		return state{}
	}
	s := *st
	s.Pid = 0
	s.Threads = nil
	for _, th := range st.Threads {
		s.Threads = append(s.Threads, r.normThread(th))
	}
	s.CurrentThread = r.normThread(st.CurrentThread)
	var e string
	if s.Err != nil {
		e = strings.ReplaceAll(s.Err.Error(), strconv.Itoa(r.pid), "PID")
		s.Err = nil
	}
	return state{&s, e}
}

func (r *recorder) normThread(th *api.Thread) *api.Thread {
	if th == nil {
		return nil
	}
	t := *th
	if t.ID == r.pid {
		t.ID = 0
	}
	t.Breakpoint = r.normBreakpoint(th.Breakpoint)
	return &t
}

func (r *recorder) normBreakpoint(bp *api.Breakpoint) *api.Breakpoint {
	if bp == nil {
		return nil
	}
	b := *bp
	b.AddrPid = nil
	return &b
}

// breakpoints records the breakpoints, in the order of their IDs (Delve
// lists them from a map).
func (r *recorder) breakpoints(name string) {
	bps, err := r.c.ListBreakpoints(false)
	var nbps []*api.Breakpoint
	for _, bp := range bps {
		nbps = append(nbps, r.normBreakpoint(bp))
	}
	slices.SortFunc(nbps, func(a, b *api.Breakpoint) int { return a.ID - b.ID })
	r.add(name, nbps, err)
}

// local is frame 0 of the current goroutine or thread.
var local = api.EvalScope{GoroutineID: -1}

// load reads variables a few levels deep, as the doors do.
var load = api.LoadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 64, MaxArrayValues: 64, MaxStructFields: -1}

// stop records what a client shows at a stop: state, threads, stack,
// arguments, locals, registers and the code around the PC.
func (r *recorder) stop(name string, st *api.DebuggerState, err error, eval ...string) {
	r.add(name, r.normState(st), err)
	if st == nil || st.CurrentThread == nil || st.Exited {
		return
	}
	cur, err := r.c.GetState()
	r.add(name+": GetState", r.normState(cur), err)
	frames, err := r.c.Stacktrace(-1, 20, 0, 0, &load)
	r.add(name+": Stacktrace", frames, err)
	args, err := r.c.ListFunctionArgs(local, load)
	r.add(name+": ListFunctionArgs", args, err)
	locals, err := r.c.ListLocalVariables(local, load)
	r.add(name+": ListLocalVariables", locals, err)
	for _, e := range eval {
		v, err := r.c.EvalVariable(local, e, load)
		r.add(name+": EvalVariable "+e, v, err)
	}
	regs, err := r.c.ListThreadRegisters(0, false)
	r.add(name+": ListThreadRegisters", regs, err)
	pc := st.CurrentThread.PC
	asm, err := r.c.DisassemblePC(local, pc, api.IntelFlavour)
	r.add(name+": DisassemblePC", asm, err)
	mem, le, err := r.c.ExamineMemory(pc, 16)
	r.add(name+": ExamineMemory", []any{mem, le}, err)
}

// continueTo runs the target to its next stop.
func (r *recorder) continueTo(name string, eval ...string) {
	var last *api.DebuggerState
	for st := range r.c.Continue() {
		last = st
	}
	r.stop(name, last, nil, eval...)
}

// cScript drives gcc-cold (a C program, run with "cold" so its cold
// code runs) through what the doors ask of Delve: breakpoints by line,
// function and cold line, stops, stacks, variables, stepping, breakpoint
// changes, the exit, a restart and the end.
func cScript(r *recorder) {
	c := r.c
	st, err := c.GetState()
	r.add("GetState at entry", r.normState(st), err)
	locs, subst, err := c.FindLocation(local, "a.c:17", true, nil)
	var nlocs []api.Location
	for _, l := range locs {
		l.PCPids = nil
		nlocs = append(nlocs, l)
	}
	r.add("FindLocation a.c:17", []any{nlocs, subst}, err)
	if len(locs) == 0 {
		r.t.Fatalf("FindLocation a.c:17: %v", err)
	}
	bp, err := c.CreateBreakpoint(&api.Breakpoint{Addr: locs[0].PC})
	r.add("CreateBreakpoint a.c:17", r.normBreakpoint(bp), err)
	locs, _, err = c.FindLocation(local, "validate", true, nil)
	if len(locs) == 0 {
		r.t.Fatalf("FindLocation validate: %v", err)
	}
	bp, err = c.CreateBreakpoint(&api.Breakpoint{Addr: locs[0].PC, Name: "v"})
	r.add("CreateBreakpoint validate", r.normBreakpoint(bp), err)
	_, cold := delvetest.ColdLine(r.t, "gcccold/a.c", "a-helper")
	// Delve reads a breakpoint's variables through the goroutine, which a
	// C program has none of: they are on one that is not hit.
	bp, err = c.CreateBreakpointWithExpr(&api.Breakpoint{File: "a.c", Line: cold, Variables: []string{"x", "r"}}, fmt.Sprintf("a.c:%d", cold), nil, true)
	r.add("CreateBreakpointWithExpr cold line", r.normBreakpoint(bp), err)
	r.breakpoints("ListBreakpoints")

	r.continueTo("Continue to validate", "cold_count", "v1 + v2")
	ths, err := c.ListThreads()
	var nths []*api.Thread
	for _, th := range ths {
		nths = append(nths, r.normThread(th))
	}
	r.add("ListThreads", nths, err)
	gs, next, err := c.ListGoroutines(0, 10)
	r.add("ListGoroutines", []any{gs, next}, err)
	st, err = c.Next()
	r.stop("Next", st, err)
	st, err = c.Step()
	r.stop("Step", st, err)
	st, err = c.StepOut()
	r.stop("StepOut", st, err)
	st, err = c.StepInstruction(false)
	r.stop("StepInstruction", st, err)

	r.continueTo("Continue to helper")
	bp, err = c.GetBreakpointByName("v")
	r.add("GetBreakpointByName", r.normBreakpoint(bp), err)
	if err != nil {
		r.t.Fatalf("GetBreakpointByName: %v", err)
	}
	bp, err = c.ToggleBreakpoint(bp.ID)
	r.add("ToggleBreakpoint", r.normBreakpoint(bp), err)
	if err != nil {
		r.t.Fatalf("ToggleBreakpoint: %v", err)
	}
	bp.Cond = "x > 1000"
	bp.Disabled = false
	r.add("AmendBreakpoint", nil, c.AmendBreakpoint(bp))
	bp, err = c.GetBreakpoint(bp.ID)
	r.add("GetBreakpoint", r.normBreakpoint(bp), err)
	bp, err = c.ClearBreakpointByName("v")
	r.add("ClearBreakpointByName", r.normBreakpoint(bp), err)
	_, err = c.GetBreakpoint(9999)
	r.add("GetBreakpoint 9999", nil, err)
	srcs, err := c.ListSources("gcccold")
	r.add("ListSources", srcs, err)
	fns, err := c.ListFunctions("helper", 0)
	r.add("ListFunctions", fns, err)

	// Scripts (Delve's starlark bindings) call the server by name.
	var listOut rpc2.ListBreakpointsOut
	err = c.CallAPI("ListBreakpoints", rpc2.ListBreakpointsIn{}, &listOut)
	slices.SortFunc(listOut.Breakpoints, func(a, b *api.Breakpoint) int { return a.ID - b.ID })
	for i, bp := range listOut.Breakpoints {
		listOut.Breakpoints[i] = r.normBreakpoint(bp)
	}
	r.add("CallAPI ListBreakpoints", listOut, err)
	var stateOut rpc2.StateOut
	err = c.CallAPI("State", rpc2.StateIn{}, &stateOut)
	r.add("CallAPI State", r.normState(stateOut.State), err)
	var evalOut rpc2.EvalOut
	err = c.CallAPI("Eval", map[string]any{"Scope": map[string]any{"GoroutineID": -1}, "Expr": "x"}, &evalOut)
	r.add("CallAPI Eval, arguments as a map", evalOut, err)
	r.add("CallAPI of no method", nil, c.CallAPI("Nope", struct{}{}, &struct{}{}))

	r.continueTo("Continue to helper again")
	r.continueTo("Continue to the exit")
	st, err = c.GetState()
	r.add("GetState after the exit", r.normState(st), err)
	_, err = c.Stacktrace(-1, 5, 0, 0, nil)
	r.add("Stacktrace after the exit", nil, err)

	discarded, err := c.Restart(false)
	slices.SortFunc(discarded, func(a, b api.DiscardedBreakpoint) int { return a.Breakpoint.ID - b.Breakpoint.ID })
	r.add("Restart", discarded, err)
	r.pid = c.ProcessPid()
	st, err = c.GetState()
	r.add("GetState after the restart", r.normState(st), err)
	r.breakpoints("ListBreakpoints after the restart")
	r.continueTo("Continue after the restart")
	r.add("Detach", nil, c.Detach(true))
	_, err = c.GetState()
	r.add("GetState after Detach fails", err != nil, nil)
}

// goScript drives the cgo program: a breakpoint in hot Go code, the stop,
// stepping in Go, and the exit. Only the stopped goroutine is compared:
// where the runtime's other threads are depends on timing.
func goScript(r *recorder) {
	c := r.c
	locs, _, err := c.FindLocation(local, "main.go:26", true, nil)
	if len(locs) == 0 {
		r.t.Fatalf("FindLocation main.go:26: %v", err)
	}
	bp, err := c.CreateBreakpointWithExpr(&api.Breakpoint{Addr: locs[0].PC}, "main.go:26", nil, false)
	if err != nil {
		r.t.Fatalf("CreateBreakpoint main.go:26: %v", err)
	}
	r.add("CreateBreakpoint main.go:26", r.normBreakpoint(bp), err)
	var st *api.DebuggerState
	for s := range c.Continue() {
		st = s
	}
	r.add("Continue: current thread's location", []any{st.CurrentThread.File, st.CurrentThread.Line, st.CurrentThread.Function}, st.Err)
	r.add("Continue: selected goroutine", st.SelectedGoroutine, nil)
	frames, err := c.Stacktrace(st.SelectedGoroutine.ID, 20, 0, 0, nil)
	r.add("Stacktrace", frames, err)
	locals, err := c.ListLocalVariables(api.EvalScope{GoroutineID: st.SelectedGoroutine.ID}, load)
	r.add("ListLocalVariables", locals, err)
	v, err := c.EvalVariable(api.EvalScope{GoroutineID: st.SelectedGoroutine.ID}, "x", load)
	r.add("EvalVariable x", v, err)
	g, _, err := c.ListGoroutines(0, 1)
	r.add("ListGoroutines(0, 1)", g, err)
	st, err = c.Next()
	r.add("Next", st.SelectedGoroutine, err)
	for s := range c.Continue() {
		st = s
	}
	r.add("Continue to the exit", []any{st.Exited, st.ExitStatus, strings.ReplaceAll(fmt.Sprint(st.Err), strconv.Itoa(r.pid), "PID")}, nil)
}

// TestSameAsRPC runs the same calls through the in-process client and
// through Delve's JSON-RPC client (over an in-memory pipe to Delve's
// server in this process, as package session did before) on two runs of
// the same program, and compares every answer field by field.
func TestSameAsRPC(t *testing.T) {
	for _, tc := range []struct {
		bin    string
		args   []string
		script func(*recorder)
		// ignore are the fields that differ between two runs.
		ignore cmp.Option
	}{
		{"gcc-cold", []string{"cold"}, cScript, nil},
		// Go's heap and goroutine stacks are not where ASLR puts them.
		{"cgo", nil, goScript, cmp.Options{
			cmpopts.IgnoreFields(api.Variable{}, "Addr", "Base", "LocationExpr"),
			cmpopts.IgnoreFields(api.Stackframe{}, "FramePointerOffset"),
			cmpopts.IgnoreFields(api.Goroutine{}, "ThreadID"),
		}},
	} {
		t.Run(tc.bin, func(t *testing.T) {
			bin := testbin.Path(t, tc.bin)
			args := append([]string{bin}, tc.args...)
			var want, got []step
			for _, side := range []struct {
				c   service.Client
				out *[]step
			}{
				{startRPC(t, args...), &want},
				{startInproc(t, args...), &got},
			} {
				var events []api.EventKind
				side.c.SetEventsFn(func(e *api.Event) { events = append(events, e.Kind) })
				r := &recorder{t: t, c: side.c, pid: side.c.ProcessPid()}
				tc.script(r)
				r.add("events", events, nil)
				*side.out = r.steps
			}
			if len(got) != len(want) {
				t.Errorf("%d answers, rpc2 gave %d", len(got), len(want))
			}
			for i := range min(len(want), len(got)) {
				if d := cmp.Diff(want[i], got[i], cmpopts.EquateEmpty(), tc.ignore); d != "" {
					t.Errorf("%s: in-process answer differs from rpc2's (-rpc2 +inproc):\n%s", want[i].Call, d)
				}
			}
		})
	}
}

// TestHaltInterruptsContinue halts a program that would sleep for a
// minute while a Continue runs, from another goroutine, as a door's
// pause does.
//
// Delve itself reads the selected target without a lock when it halts
// (proc.TargetGroup.RequestManualStop reads grp.Selected, which the
// running Continue writes in pickCurrentTarget as it stops), whichever
// client asks: the race detector reports that, so the test does not run
// under it.
func TestHaltInterruptsContinue(t *testing.T) {
	if raceDetector {
		t.Skip("Delve's halt reads TargetGroup.Selected unsynchronized (pkg/proc/target.go:592 against target_exec.go:418), a race in Delve the detector reports")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	c := startInproc(t, sleep, "60")
	states := c.Continue()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := c.GetStateNonBlocking()
		if err != nil {
			t.Fatalf("GetStateNonBlocking: %v", err)
		}
		if st.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the target never ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if _, err := c.Halt(); err != nil {
		t.Fatalf("Halt: %v", err)
	}
	select {
	case st := <-states:
		if st.Err != nil || st.Exited || st.Running {
			t.Errorf("Continue ended with %+v, want a stop", st)
		}
		if _, ok := <-states; ok {
			t.Error("Continue went on after the halt")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Continue did not return after Halt")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the halt took %v", d)
	}
	st, err := c.GetState()
	if err != nil || st.Running || st.CurrentThread == nil {
		t.Errorf("after the halt: state %+v, %v; want a stopped thread", st, err)
	}
	if err := c.Detach(true); err != nil {
		t.Errorf("Detach: %v", err)
	}
	if _, err := c.GetState(); !errors.Is(err, ErrDetached) {
		t.Errorf("GetState after Detach: %v, want ErrDetached", err)
	}
}

// TestPanicIsError checks that a panic inside a call — what Delve does on
// some damaged DWARF — is the call's error, naming it, and that calls go
// on after it, for each kind of server method.
func TestPanicIsError(t *testing.T) {
	c := &Client{disconnected: make(chan struct{})}
	// released fails the test, rather than letting the next call hang,
	// when a call that panicked left the client locked.
	released := func(method string) {
		t.Helper()
		if !c.mu.TryLock() {
			t.Fatalf("%s panicked and left the client locked", method)
		}
		c.mu.Unlock()
	}
	_, err := call(c, "Stacktrace", func(struct{}, *struct{}) error { panic("index out of range") }, struct{}{})
	released("Stacktrace")
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Method != "Stacktrace" || !strings.Contains(err.Error(), "Stacktrace") || !strings.Contains(err.Error(), "index out of range") {
		t.Errorf("synchronous call: error %v, want a PanicError naming Stacktrace", err)
	}
	_, err = early[rpc2.StateOut](c, "State", func(struct{}, service.RPCCallback) { panic("nil map") }, struct{}{})
	if !errors.As(err, &pe) || pe.Method != "State" {
		t.Errorf("call with a callback: error %v, want a PanicError naming State", err)
	}
	released("State")
	_, err = wait[rpc2.CommandOut](c, "Command", func(service.RPCCallback) { panic("bad CFI") })
	if !errors.As(err, &pe) || pe.Method != "Command" {
		t.Errorf("command: error %v, want a PanicError naming Command", err)
	}
	released("Command")
	if _, err := call(c, "ProcessPid", func(struct{}, *struct{}) error { return nil }, struct{}{}); err != nil {
		t.Errorf("call after the panics: %v", err)
	}
}

// TestThreadRegisterValues compares the numbers with ListThreadRegisters'
// text of the same registers, at a stop in gcc-cold's main.
func TestThreadRegisterValues(t *testing.T) {
	c := startInproc(t, testbin.Path(t, "gcc-cold"), "cold")
	if _, err := c.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.main"}); err != nil {
		t.Fatal(err)
	}
	st := <-c.Continue()
	if st.Err != nil || st.Exited || st.CurrentThread == nil {
		t.Fatalf("continue: %+v", st)
	}
	tid := st.CurrentThread.ID
	var got [17]uint64
	written, err := c.ThreadRegisterValues(tid, got[:])
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.ListThreadRegisters(tid, false)
	if err != nil {
		t.Fatal(err)
	}
	var want [17]uint64
	var listed uint64
	for _, r := range rs {
		if r.DwarfNumber < 0 || r.DwarfNumber >= len(want) {
			continue
		}
		v, err := strconv.ParseUint(strings.Fields(r.Value)[0], 0, 64)
		if err != nil {
			t.Fatalf("%s = %q: %v", r.Name, r.Value, err)
		}
		want[r.DwarfNumber], listed = v, listed|1<<r.DwarfNumber
	}
	if written != listed || got != want {
		t.Errorf("ThreadRegisterValues = %#x %x, ListThreadRegisters gives %#x %x", written, got, listed, want)
	}
	if want[16] != st.CurrentThread.PC {
		t.Errorf("rip = %#x, the thread's PC is %#x", want[16], st.CurrentThread.PC)
	}
	if _, err := c.ThreadRegisterValues(-5, got[:]); err == nil {
		t.Error("no error for a thread that does not exist")
	}
}

// TestStacktraceRegisters checks the stack against Stacktrace's and the
// registers against ThreadRegisterValues' at a stop in gcc-cold's main
// (no goroutine: the thread's registers), twice (the second from Delve's
// stack kept for the stop), and that a goroutine's stack (cgo's
// main.main) comes without registers.
func TestStacktraceRegisters(t *testing.T) {
	stop := func(t *testing.T, bin, fn string) (*Client, *api.DebuggerState) {
		c := startInproc(t, testbin.Path(t, bin))
		if _, err := c.CreateBreakpoint(&api.Breakpoint{FunctionName: fn}); err != nil {
			t.Fatal(err)
		}
		st := <-c.Continue()
		if st.Err != nil || st.Exited || st.CurrentThread == nil {
			t.Fatalf("continue: %+v", st)
		}
		return c, st
	}
	c, st := stop(t, "gcc-cold", "C.main")
	var want [17]uint64
	wantWritten, err := c.ThreadRegisterValues(st.CurrentThread.ID, want[:])
	if err != nil {
		t.Fatal(err)
	}
	wantFrames, err := c.Stacktrace(-1, 5, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The frames to the bottom: Delve's stack kept for the stop goes on
	// past it, a frame more at each call ("NULL address").
	whole := func(frames []api.Stackframe) []api.Stackframe {
		i := slices.IndexFunc(frames, func(f api.Stackframe) bool { return f.Bottom || f.Err != "" })
		if i < 0 {
			return frames
		}
		return frames[:i+1]
	}
	for range 2 {
		var got [17]uint64
		frames, written, err := c.StacktraceRegisters(-1, 5, 0, got[:])
		if err != nil {
			t.Fatal(err)
		}
		if written != wantWritten || got != want {
			t.Errorf("StacktraceRegisters: registers %#x %x; ThreadRegisterValues %#x %x", written, got, wantWritten, want)
		}
		if !reflect.DeepEqual(whole(frames), whole(wantFrames)) {
			t.Errorf("StacktraceRegisters: frames %+v; Stacktrace %+v", frames, wantFrames)
		}
	}
	c, _ = stop(t, "cgo", "main.main")
	var got [17]uint64
	frames, written, err := c.StacktraceRegisters(-1, 5, 0, got[:])
	if err != nil || len(frames) == 0 {
		t.Fatalf("cgo: %d frames, %v", len(frames), err)
	}
	if written != 0 {
		t.Errorf("cgo's main.main: registers %#x given with a goroutine's stack", written)
	}
}
