package dap

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-dap"
)

// runState tracks the one command that runs the target at a time.
type runState struct {
	mu      sync.Mutex
	running bool
	done    chan struct{} // closed when the running command returns
	// paused: the client asked to pause; quiet: the server halted the
	// target itself (to change breakpoints) and resumes it, unreported.
	paused, quiet bool
}

func (r *runState) isRunning() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running
}

// begin marks the target running; it reports false if it already was.
func (r *runState) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		return false
	}
	r.running, r.paused, r.quiet = true, false, false
	r.done = make(chan struct{})
	return true
}

// interrupted reports whether a pause or a quiet halt was asked for.
func (r *runState) interrupted() (paused, quiet bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paused, r.quiet
}

// end marks the run over and returns how it was interrupted.
func (r *runState) end() (paused, quiet bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running = false
	close(r.done)
	return r.paused, r.quiet
}

// interrupt halts a running target and returns the channel closed when
// the running command returns (nil if none runs). A halt that reaches
// Delve before the command has resumed the target stops nothing, and
// Delve answers a halt only once the target stops, so halts are sent
// from their own goroutines, again every 200ms, until the command
// returns.
func (r *runState) interrupt(d *debuggee) <-chan struct{} {
	r.mu.Lock()
	running, done := r.running, r.done
	r.mu.Unlock()
	if !running {
		return nil
	}
	go func() {
		for {
			go d.c.Halt()
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return done
}

// halt halts a running target quietly (the stop is not reported) and
// returns the channel closed when the running command returns (nil if
// none runs).
func (r *runState) halt(d *debuggee) <-chan struct{} {
	r.mu.Lock()
	r.quiet = true
	r.mu.Unlock()
	return r.interrupt(d)
}

// stop halts a running target quietly and waits for the running command
// to return.
func (r *runState) stop(d *debuggee) {
	if done := r.halt(d); done != nil {
		<-done
	}
}

// stopped runs f with the target stopped: a running target is halted
// first, quietly, and continued after.
func (s *Server) stopped(d *debuggee, f func()) {
	if !d.run.isRunning() {
		f()
		return
	}
	d.run.stop(d)
	f()
	s.resume(d, "continue", 0, "")
}

func (s *Server) onConfigurationDone(d *debuggee, r *dap.ConfigurationDoneRequest) {
	s.send(&dap.ConfigurationDoneResponse{Response: response(&r.Request)})
	if d.stopOnEntry {
		st, _ := d.c.GetState()
		s.sendStopped(d, "entry", st)
		return
	}
	s.resume(d, "continue", 0, "")
}

func (s *Server) onContinue(d *debuggee, r *dap.ContinueRequest) {
	resp := &dap.ContinueResponse{Response: response(&r.Request)}
	resp.Body.AllThreadsContinued = true
	if d.run.isRunning() {
		s.send(resp)
		return
	}
	s.send(resp)
	s.resume(d, "continue", 0, "")
}

// onStep answers next, stepIn and stepOut: the thread the client names
// is selected first, then the step runs and a stopped event follows.
func (s *Server) onStep(d *debuggee, req *dap.Request, thread int, gran dap.SteppingGranularity, cmd string) {
	if d.run.isRunning() {
		s.fail(req, errUnableToStep, "Unable to step", errors.New("the program is running"))
		return
	}
	if err := s.selectThread(d, thread); err != nil {
		s.fail(req, errUnableToStep, "Unable to step", err)
		return
	}
	switch cmd {
	case "next":
		s.send(&dap.NextResponse{Response: response(req)})
	case "stepIn":
		s.send(&dap.StepInResponse{Response: response(req)})
	case "stepOut":
		s.send(&dap.StepOutResponse{Response: response(req)})
	}
	s.resume(d, cmd, thread, gran)
}

// selectThread makes thread (a goroutine in Go programs, an OS thread
// otherwise) Delve's selected one, so scopes with goroutine -1 and steps
// act on it.
func (s *Server) selectThread(d *debuggee, thread int) error {
	if thread <= 0 {
		return nil
	}
	st, err := d.c.GetState()
	if err != nil {
		return err
	}
	if d.goProgram {
		if st.SelectedGoroutine != nil && st.SelectedGoroutine.ID == int64(thread) {
			return nil
		}
		_, err = d.c.SwitchGoroutine(int64(thread))
		return err
	}
	if st.CurrentThread != nil && st.CurrentThread.ID == thread {
		return nil
	}
	_, err = d.c.SwitchThread(thread)
	return err
}

func (s *Server) onPause(d *debuggee, r *dap.PauseRequest) {
	d.run.mu.Lock()
	d.run.paused = true
	d.run.mu.Unlock()
	d.run.interrupt(d)
	s.send(&dap.PauseResponse{Response: response(&r.Request)})
}

// resume runs cmd (continue, next, stepIn, stepOut) in the background and
// reports the stop or the exit as events.
func (s *Server) resume(d *debuggee, cmd string, thread int, gran dap.SteppingGranularity) {
	if !d.run.begin() {
		return
	}
	go func() {
		st, err := s.runCommand(d, cmd, gran)
		paused, quiet := d.run.end()
		d.h.reset()
		if quiet && (err == nil || !exited(err)) && (st == nil || !st.Exited) {
			return
		}
		if st != nil && st.Exited || exited(err) {
			code := 0
			if st != nil {
				code = st.ExitStatus
			}
			d.drainOutput()
			s.send(&dap.ExitedEvent{Event: event("exited"), Body: dap.ExitedEventBody{ExitCode: code}})
			s.send(&dap.TerminatedEvent{Event: event("terminated")})
			return
		}
		if err != nil {
			s.output("stderr", fmt.Sprintf("%s: %v\n", cmd, err))
		}
		reason := "step"
		switch {
		case paused:
			reason = "pause"
		case cmd == "continue":
			reason = "pause"
			if err != nil {
				reason = "exception"
			}
		}
		s.sendStopped(d, reason, st)
	}()
}

// runCommand runs one command to its stop; for continue, logpoint hits
// on the way are printed and run past.
func (s *Server) runCommand(d *debuggee, cmd string, gran dap.SteppingGranularity) (*api.DebuggerState, error) {
	if gran == "instruction" && cmd != "continue" {
		if cmd == "stepOut" {
			return d.c.StepOut()
		}
		return d.c.StepInstruction(cmd == "next")
	}
	switch cmd {
	case "next":
		return d.c.Next()
	case "stepIn":
		return d.c.Step()
	case "stepOut":
		return d.c.StepOut()
	}
	for {
		var last *api.DebuggerState
		for st := range d.c.Continue() {
			last = st
		}
		if last == nil {
			return nil, errors.New("continue: no state from Delve")
		}
		if last.Err != nil || last.Exited {
			return last, last.Err
		}
		if !s.logpoints(d, last) {
			return last, nil
		}
		if _, quiet := d.run.interrupted(); quiet {
			return last, nil
		}
	}
}

// sendStopped reports a stop. A stop at a breakpoint says which; a stop
// in a panic or fatal error is an exception.
func (s *Server) sendStopped(d *debuggee, reason string, st *api.DebuggerState) {
	ev := &dap.StoppedEvent{Event: event("stopped")}
	ev.Body.Reason = reason
	ev.Body.AllThreadsStopped = true
	if st != nil {
		ev.Body.ThreadId = stoppedThread(d, st)
		if th := st.CurrentThread; th != nil && th.Breakpoint != nil && reason != "entry" {
			bp := th.Breakpoint
			ev.Body.HitBreakpointIds = []int{bp.ID}
			switch {
			case bp.Name == "unrecovered-panic":
				ev.Body.Reason, ev.Body.Description = "exception", "panic"
			case bp.Name == "runtime-fatal-throw":
				ev.Body.Reason, ev.Body.Description = "exception", "fatal error"
			case bp.ID < 0:
				ev.Body.Reason = "exception"
			default:
				ev.Body.Reason = d.bps.reason(bp.ID)
			}
		}
	}
	s.send(ev)
}

// stoppedThread is the DAP thread of a stop: the selected goroutine in a
// Go program (as "dlv dap"), the current OS thread otherwise.
func stoppedThread(d *debuggee, st *api.DebuggerState) int {
	if d.goProgram {
		if st.SelectedGoroutine != nil {
			return int(st.SelectedGoroutine.ID)
		}
		if st.CurrentThread != nil {
			return int(st.CurrentThread.GoroutineID)
		}
		return 0
	}
	if st.CurrentThread != nil {
		return st.CurrentThread.ID
	}
	return 0
}

// logpoints prints the message of every logpoint hit in st and reports
// whether those were all the breakpoints hit (so the run goes on). The
// message's {expressions} are evaluated in the stopped thread's frame.
func (s *Server) logpoints(d *debuggee, st *api.DebuggerState) bool {
	hit, all := false, true
	for _, th := range st.Threads {
		bp := th.Breakpoint
		if bp == nil {
			continue
		}
		msg, ok := d.bps.logMessage(bp.ID)
		if !ok {
			all = false
			continue
		}
		hit = true
		scope := api.EvalScope{GoroutineID: th.GoroutineID}
		if !d.goProgram || th.GoroutineID == 0 {
			if _, err := d.c.SwitchThread(th.ID); err != nil {
				s.output("stderr", fmt.Sprintf("logpoint %d: %v\n", bp.ID, err))
			}
			scope = api.EvalScope{GoroutineID: -1}
		}
		s.output("console", interpolate(msg, func(expr string) string {
			v, err := d.c.EvalVariable(scope, expr, loadConfig)
			if err != nil {
				return "<" + expr + ": " + err.Error() + ">"
			}
			return formatValue(v)
		})+"\n")
	}
	return hit && all
}

// interpolate replaces each {expr} of a log message with its value.
func interpolate(msg string, eval func(string) string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(msg, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(msg[open:], '}')
		if end < 0 {
			break
		}
		b.WriteString(msg[:open])
		b.WriteString(eval(msg[open+1 : open+end]))
		msg = msg[open+end+1:]
	}
	b.WriteString(msg)
	return b.String()
}
