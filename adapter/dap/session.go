package dap

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/google/go-dap"

	"github.com/splitdbg/splitdbg/adapter"
	"github.com/splitdbg/splitdbg/adapter/session"
)

// debuggee is the session's program under Delve, from launch or attach
// until disconnect.
type debuggee struct {
	sess *session.Session
	c    *adapter.Client
	// goProgram selects goroutines as DAP threads; otherwise OS threads.
	goProgram   bool
	stopOnEntry bool
	// outw are the write ends of the program's stdout and stderr pipes,
	// closed when the session ends so their readers finish.
	outw    []*os.File
	outr    []*os.File
	readers sync.WaitGroup
	// busy counts readers between a read and the event it sends.
	busy atomic.Int32
	// built is a binary this session built (mode "debug"), removed at the end.
	built string
	// args are a launched program's arguments, for restart.
	args []string

	run runState
	h   handles
	bps breakpoints
}

// launchArgs are the launch and attach arguments splitdbg reads, named as
// "dlv dap" names them (vscode-go's launch.json attributes).
type launchArgs struct {
	Mode        string             `json:"mode"`
	Program     string             `json:"program"`
	Args        []string           `json:"args"`
	Cwd         string             `json:"cwd"`
	Env         map[string]*string `json:"env"`
	StopOnEntry bool               `json:"stopOnEntry"`
	BuildFlags  json.RawMessage    `json:"buildFlags"`
	Output      string             `json:"output"`
	ProcessID   int                `json:"processId"`
	NoDebug     bool               `json:"noDebug"`
}

// handle dispatches one request; it reports whether the session is over.
func (s *Server) handle(m dap.RequestMessage) (done bool) {
	req := m.GetRequest()
	s.logf("<- %s %d", req.Command, req.Seq)
	d := s.debuggee()
	switch r := m.(type) {
	case *dap.InitializeRequest:
		s.onInitialize(r)
		return false
	case *dap.LaunchRequest:
		s.onLaunch(r)
		return false
	case *dap.AttachRequest:
		s.onAttach(r)
		return false
	case *dap.DisconnectRequest:
		s.onDisconnect(r)
		return true
	}
	if d == nil {
		s.fail(req, errNotYetLaunched, "Unable to "+req.Command, errors.New("no program is being debugged: send launch or attach first"))
		return false
	}
	switch r := m.(type) {
	case *dap.TerminateRequest:
		s.onTerminate(d, r)
	case *dap.RestartRequest:
		s.onRestart(d, r)
	case *dap.ConfigurationDoneRequest:
		s.onConfigurationDone(d, r)
	case *dap.SetBreakpointsRequest:
		s.onSetBreakpoints(d, r)
	case *dap.SetFunctionBreakpointsRequest:
		s.onSetFunctionBreakpoints(d, r)
	case *dap.SetInstructionBreakpointsRequest:
		s.onSetInstructionBreakpoints(d, r)
	case *dap.SetExceptionBreakpointsRequest:
		s.send(&dap.SetExceptionBreakpointsResponse{Response: response(req)})
	case *dap.ContinueRequest:
		s.onContinue(d, r)
	case *dap.NextRequest:
		s.onStep(d, req, r.Arguments.ThreadId, r.Arguments.Granularity, "next")
	case *dap.StepInRequest:
		s.onStep(d, req, r.Arguments.ThreadId, r.Arguments.Granularity, "stepIn")
	case *dap.StepOutRequest:
		s.onStep(d, req, r.Arguments.ThreadId, r.Arguments.Granularity, "stepOut")
	case *dap.PauseRequest:
		s.onPause(d, r)
	case *dap.ThreadsRequest:
		s.onThreads(d, r)
	case *dap.StackTraceRequest:
		s.onStackTrace(d, r)
	case *dap.ScopesRequest:
		s.onScopes(d, r)
	case *dap.VariablesRequest:
		s.onVariables(d, r)
	case *dap.EvaluateRequest:
		s.onEvaluate(d, r)
	case *dap.SetVariableRequest:
		s.onSetVariable(d, r)
	case *dap.DisassembleRequest:
		s.onDisassemble(d, r)
	case *dap.ReadMemoryRequest:
		s.onReadMemory(d, r)
	case *dap.ExceptionInfoRequest:
		s.onExceptionInfo(d, r)
	default:
		s.fail(req, errUnsupported, "Unsupported command", fmt.Errorf("cannot process %q request", req.Command))
	}
	return false
}

func (s *Server) debuggee() *debuggee {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dbg
}

func (s *Server) onInitialize(r *dap.InitializeRequest) {
	s.mu.Lock()
	s.variableTypes = r.Arguments.SupportsVariableType
	s.mu.Unlock()
	resp := &dap.InitializeResponse{Response: response(&r.Request)}
	b := &resp.Body
	b.SupportsConfigurationDoneRequest = true
	b.SupportsConditionalBreakpoints = true
	b.SupportsHitConditionalBreakpoints = true
	b.SupportsLogPoints = true
	b.SupportsFunctionBreakpoints = true
	b.SupportsInstructionBreakpoints = true
	b.SupportsDelayedStackTraceLoading = true
	b.SupportsEvaluateForHovers = true
	b.SupportsSetVariable = true
	b.SupportsSteppingGranularity = true
	b.SupportsDisassembleRequest = true
	b.SupportsReadMemoryRequest = true
	b.SupportsRestartRequest = true
	b.SupportsTerminateRequest = true
	b.SupportTerminateDebuggee = true
	b.SupportsExceptionInfoRequest = true
	s.send(resp)
}

// launchArgs reads the arguments of a launch or attach request, which
// may come only once in a session; it answers the request with an error
// (id, summary) when it cannot.
func (s *Server) launchArgs(req *dap.Request, raw json.RawMessage, id int, summary string) (launchArgs, bool) {
	var a launchArgs
	if s.debuggee() != nil {
		s.fail(req, id, summary, errors.New("a program is already being debugged in this session"))
		return a, false
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		s.fail(req, id, summary, fmt.Errorf("%s arguments: %w", req.Command, err))
		return a, false
	}
	return a, true
}

func (s *Server) onLaunch(r *dap.LaunchRequest) {
	a, ok := s.launchArgs(&r.Request, r.Arguments, errFailedToLaunch, "Failed to launch")
	if !ok {
		return
	}
	if a.NoDebug {
		s.fail(&r.Request, errFailedToLaunch, "Failed to launch", errors.New("noDebug is not supported: splitdbg always debugs"))
		return
	}
	if a.Program == "" {
		s.fail(&r.Request, errFailedToLaunch, "Failed to launch", errors.New("the program attribute is missing in debug configuration"))
		return
	}
	program := a.Program
	var built string
	switch a.Mode {
	case "exec":
	case "", "debug":
		out, err := buildGo(a)
		if err != nil {
			s.fail(&r.Request, errFailedToLaunch, "Failed to launch", err)
			return
		}
		program, built = out, out
	default:
		s.fail(&r.Request, errFailedToLaunch, "Failed to launch", fmt.Errorf("unsupported mode %q: splitdbg launches in mode \"exec\" (a built program) or \"debug\" (a Go main package)", a.Mode))
		return
	}
	cfg := session.Config{Program: program, Args: a.Args, Dir: a.Cwd}
	for k, v := range a.Env {
		if v != nil {
			cfg.Env = append(cfg.Env, k+"="+*v)
		}
	}
	sort.Strings(cfg.Env)
	d := &debuggee{stopOnEntry: a.StopOnEntry, built: built, args: a.Args}
	if err := d.pipes(); err != nil {
		s.fail(&r.Request, errFailedToLaunch, "Failed to launch", err)
		return
	}
	cfg.Stdout, cfg.Stderr = d.outw[0], d.outw[1]
	sess, err := session.Start(cfg)
	if err != nil {
		d.closeOutput()
		for _, f := range d.outr {
			f.Close()
		}
		if built != "" {
			os.Remove(built)
		}
		s.fail(&r.Request, errFailedToLaunch, "Failed to launch", err)
		return
	}
	s.readOutput(d)
	s.started(d, sess, &r.Request)
	s.send(&dap.LaunchResponse{Response: response(&r.Request)})
	s.send(&dap.InitializedEvent{Event: event("initialized")})
}

func (s *Server) onAttach(r *dap.AttachRequest) {
	a, ok := s.launchArgs(&r.Request, r.Arguments, errFailedToAttach, "Failed to attach")
	if !ok {
		return
	}
	if a.Mode != "" && a.Mode != "local" {
		s.fail(&r.Request, errFailedToAttach, "Failed to attach", fmt.Errorf("unsupported mode %q: splitdbg attaches to local processes (mode \"local\"); to reach a remote Delve use \"splitdbg proxy\"", a.Mode))
		return
	}
	if a.ProcessID <= 0 {
		s.fail(&r.Request, errFailedToAttach, "Failed to attach", errors.New("the processId attribute is missing in debug configuration"))
		return
	}
	sess, err := session.Start(session.Config{Pid: a.ProcessID, Program: a.Program})
	if err != nil {
		s.fail(&r.Request, errFailedToAttach, "Failed to attach", err)
		return
	}
	d := &debuggee{stopOnEntry: a.StopOnEntry}
	s.started(d, sess, &r.Request)
	s.send(&dap.AttachResponse{Response: response(&r.Request)})
	s.send(&dap.InitializedEvent{Event: event("initialized")})
}

// started records a session that launch or attach started.
func (s *Server) started(d *debuggee, sess *session.Session, req *dap.Request) {
	d.sess, d.c = sess, sess.Client
	d.goProgram = d.c.Resolver().GoProgram()
	d.bps.init()
	s.mu.Lock()
	s.dbg = d
	s.mu.Unlock()
	s.logf("%s: debugging %s (Go program: %v)", req.Command, d.c.Resolver().Executable(), d.goProgram)
}

// pipes makes the pipes a launched program's stdout and stderr go to.
func (d *debuggee) pipes() error {
	var r, w []*os.File
	for range 2 {
		pr, pw, err := os.Pipe()
		if err != nil {
			for _, f := range append(r, w...) {
				f.Close()
			}
			return err
		}
		r, w = append(r, pr), append(w, pw)
	}
	d.outr, d.outw = r, w
	return nil
}

// readOutput starts sending what arrives on the output pipes as output
// events.
func (s *Server) readOutput(d *debuggee) {
	for i, f := range d.outr {
		d.readers.Add(1)
		go s.copyOutput(d, f, [...]string{"stdout", "stderr"}[i])
	}
}

// copyOutput sends what the program writes to f as output events.
func (s *Server) copyOutput(d *debuggee, f *os.File, category string) {
	defer d.readers.Done()
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		d.busy.Add(1)
		if n > 0 {
			s.output(category, string(buf[:n]))
		}
		d.busy.Add(-1)
		if err != nil {
			return
		}
	}
}

// unread is how many bytes wait in the pipe f, 0 once copyOutput has
// closed it. It reaches the descriptor through SyscallConn, which holds
// it open for the call (f.Fd would race with the close, and put the
// pipe into blocking mode under the reader).
func unread(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	k := 0
	rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			k = v
		}
	})
	return k
}

// drainOutput waits, up to a second, until what the program wrote has
// been sent: its pipes are empty and no reader holds unsent bytes, twice
// in a row. It is called before the exited event, so the client has the
// program's last words first.
func (d *debuggee) drainOutput() {
	quiet := 0
	for range 100 {
		n := int(d.busy.Load())
		for _, f := range d.outr {
			n += unread(f)
		}
		if n == 0 {
			if quiet++; quiet == 2 {
				return
			}
		} else {
			quiet = 0
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (d *debuggee) closeOutput() {
	for _, f := range d.outw {
		f.Close()
	}
	d.outw = nil
}

// buildGo builds the Go main package of a "debug" launch as "dlv dap"
// does: optimizations and inlining off, into a temporary binary.
func buildGo(a launchArgs) (string, error) {
	dir := a.Program
	if st, err := os.Stat(dir); err != nil {
		return "", err
	} else if !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	out := a.Output
	if out == "" {
		f, err := os.CreateTemp("", "__debug_bin")
		if err != nil {
			return "", err
		}
		out = f.Name()
		f.Close()
	} else if !filepath.IsAbs(out) {
		out = filepath.Join(dir, out)
	}
	args := []string{"build", "-o", out, "-gcflags=all=-N -l"}
	if len(a.BuildFlags) > 0 {
		var flags []string
		var one string
		switch {
		case json.Unmarshal(a.BuildFlags, &flags) == nil:
		case json.Unmarshal(a.BuildFlags, &one) == nil && one != "":
			flags = splitFields(one)
		}
		args = append(args, flags...)
	}
	args = append(args, ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(out)
		return "", fmt.Errorf("build failed: %s", b)
	}
	return out, nil
}

// splitFields splits build flags at spaces outside quotes.
func splitFields(s string) []string {
	var out []string
	var cur []rune
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		case quote == 0 && r == ' ':
			if len(cur) > 0 {
				out = append(out, string(cur))
				cur = cur[:0]
			}
		default:
			cur = append(cur, r)
		}
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}

func (s *Server) onDisconnect(r *dap.DisconnectRequest) {
	terminate := r.Arguments != nil && r.Arguments.TerminateDebuggee
	if err := s.shutdown(terminate); err != nil {
		s.fail(&r.Request, errInternal, "Error while disconnecting", err)
	} else {
		s.send(&dap.DisconnectResponse{Response: response(&r.Request)})
	}
	s.send(&dap.TerminatedEvent{Event: event("terminated")})
}

func (s *Server) onTerminate(d *debuggee, r *dap.TerminateRequest) {
	d.run.stop(d)
	err := d.sess.Stop(true)
	if err != nil && !exited(err) {
		s.fail(&r.Request, errInternal, "Unable to terminate", err)
		return
	}
	s.send(&dap.TerminateResponse{Response: response(&r.Request)})
	s.send(&dap.TerminatedEvent{Event: event("terminated")})
}

// shutdown ends the session's debuggee: a launched program is killed, an
// attached process detached (killed with terminate), as "dlv dap" does.
// Later calls do nothing.
func (s *Server) shutdown(terminate bool) error {
	s.mu.Lock()
	d := s.dbg
	s.dbg = nil
	s.mu.Unlock()
	if d == nil {
		return nil
	}
	kill := terminate || !d.sess.Attached
	if done := d.run.halt(d); done != nil {
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			// Delve may not answer a halt while it answers another call
			// (a library list for the halt's own state). A program that
			// goes anyway is ended at once.
			if kill {
				d.sess.Kill()
			}
			<-done
		}
	}
	err := d.sess.Stop(kill)
	d.closeOutput()
	d.readers.Wait()
	if d.built != "" {
		os.Remove(d.built)
	}
	if exited(err) {
		err = nil
	}
	return err
}

func (s *Server) onRestart(d *debuggee, r *dap.RestartRequest) {
	d.run.stop(d)
	var err error
	if d.sess.Attached {
		_, err = d.c.Restart(false)
	} else {
		err = s.relaunch(d)
	}
	if err != nil {
		s.fail(&r.Request, errInternal, "Unable to restart", err)
		return
	}
	d.h.reset()
	s.send(&dap.RestartResponse{Response: response(&r.Request)})
	if d.stopOnEntry {
		s.sendStopped(d, "entry", nil)
		return
	}
	s.resume(d, "continue", 0, "")
}

// relaunch restarts a launched program. Delve restarts a program whose
// output went to files it was given (and closed after the start) only
// with the arguments and redirections said again: new pipes, by name.
// The write ends of the last run's pipes are closed first, so that their
// readers end with it.
func (s *Server) relaunch(d *debuggee) error {
	d.closeOutput()
	if err := d.pipes(); err != nil {
		return err
	}
	redirects := [3]string{"", fdPath(d.outw[0]), fdPath(d.outw[1])}
	_, err := d.c.RestartFrom(false, "", true, d.args, redirects, false)
	s.readOutput(d)
	return err
}

// fdPath names an open file of this process by its descriptor.
func fdPath(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }

// exited reports an error that only says the process is gone.
func exited(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrProcessDone) || errors.As(err, new(proc.ErrProcessExited)) {
		return true
	}
	// Delve calls in this process (package inproc) give its own error
	// values, but some of its errors, and the one its client makes of an
	// exit (inproc's Continue), carry the exit only in their text.
	msg := strings.ToLower(err.Error())
	for _, t := range []string{"has exited with status", "process exited", "no such process"} {
		if strings.Contains(msg, t) {
			return true
		}
	}
	return false
}
