package adapter

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/x86scan"
)

// Delve's next needs the current function (pkg/proc: "no source for PC"
// when the PC is in no function's first DWARF range), so from moved code
// it fails, and from the entry fragment of a split function it sets its
// breakpoints in that fragment only and runs through moved code without
// stopping. In a split function the Client does what Delve's next does,
// over the API: a temporary breakpoint on every statement of the logical
// function — all fragments — other than the current line, and on the
// return address, then continue, then clear it. Unlike Delve's it does
// not check the goroutine or the frame of the stop, so a recursive call
// or another thread running the function also stops it.

// nextName names the temporary breakpoint of next and step out.
const nextName = "splitdbgnext"

// Delve's step fails the same way. In a split function the Client's step
// is its next plus a temporary breakpoint at the start (FuncStart: after
// the prologue) of each function with line information that the current
// line calls directly; calls through the PLT or a register are stepped
// over, as Delve steps over functions without debugging information.

// Next implements service.Client: Delve's next, or in a split function
// the next described above.
func (c *Client) Next() (*api.DebuggerState, error) {
	if st, ok, err := c.stepInSplit(false); ok {
		return st, err
	}
	return c.step(c.delve.Next)
}

// Step implements service.Client: Delve's step, or in a split function
// the step described above.
func (c *Client) Step() (*api.DebuggerState, error) {
	if st, ok, err := c.stepInSplit(true); ok {
		return st, err
	}
	return c.step(c.delve.Step)
}

// stepInSplit runs next, or step if into is set, in a split function; ok
// is false elsewhere.
func (c *Client) stepInSplit(into bool) (st *api.DebuggerState, ok bool, err error) {
	cur, err := c.stopState()
	if err != nil || cur.CurrentThread == nil || cur.Exited || cur.NextInProgress {
		return nil, false, nil
	}
	f, found := c.frame(cur.CurrentThread.PC, false)
	if !found || !f.Split() || f.Line <= 0 {
		return nil, false, nil
	}
	addrs, err := c.nextAddrs(&f)
	if err != nil {
		return nil, true, err
	}
	what := "next"
	if into {
		what = "step"
		addrs = append(addrs, c.calleeStarts(&f)...)
	}
	st, err = c.runTo(addrs)
	if err != nil {
		err = fmt.Errorf("adapter: %s from %s:%d: %w", what, f.File, f.Line, err)
	}
	return st, true, err
}

// calleeStarts returns the runtime addresses where the functions called
// directly from frame f's line start, for those with line information.
func (c *Client) calleeStarts(f *Frame) []uint64 {
	im := c.res.imageOf(f.PC)
	if im == nil {
		return nil
	}
	t, err := im.load()
	if err != nil {
		return nil
	}
	mode := x86scan.ModeOf(t.f.Machine)
	if mode == 0 {
		return nil
	}
	var out []uint64
	for _, frag := range f.Proc.Fragments {
		code, err := t.f.ReadVA(frag.Start, frag.Len())
		if err != nil {
			continue
		}
		for at, in := range x86scan.All(code, frag.Start, mode) {
			if in.Kind != x86scan.Call {
				continue
			}
			if pos, ok := t.lines.PC(at); !ok || pos.Line != f.Line || pos.File != f.File {
				continue
			}
			loc, ok := t.procs.Lookup(in.Target)
			if !ok || loc.Proc.Entry != in.Target {
				continue
			}
			if start := t.lines.FuncStart(loc.Proc); start.Line > 0 && !slices.Contains(out, start.Addr+im.bias) {
				out = append(out, start.Addr+im.bias)
			}
		}
	}
	return out
}

// StepOut implements service.Client. When Delve lost the caller of a
// frame in moved code (a cgo call: its stop-out breakpoint goes on the
// goroutine stack's frame and the program runs to its end), it runs to
// the return address splitdbg unwound.
func (c *Client) StepOut() (*api.DebuggerState, error) {
	if c.stoppedInMoved() {
		if s := c.spliceFor(-1); s != nil && len(s.own) > 0 {
			st, err := c.runTo([]uint64{s.own[0].PC})
			if err != nil {
				err = fmt.Errorf("adapter: step out: %w", err)
			}
			return st, err
		}
	}
	return c.step(c.delve.StepOut)
}

// stoppedInMoved reports whether the current thread stopped in moved code.
func (c *Client) stoppedInMoved() bool {
	st, err := c.stopState()
	if err != nil || st.CurrentThread == nil {
		return false
	}
	f, ok := c.frame(st.CurrentThread.PC, false)
	return ok && f.Moved()
}

// runTo continues to the first of addrs under a temporary breakpoint, and
// returns the stop as Delve's stepping commands report theirs: without
// the temporary breakpoint.
func (c *Client) runTo(addrs []uint64) (st *api.DebuggerState, err error) {
	bp, err := c.delve.CreateBreakpoint(&api.Breakpoint{Name: nextName, Addrs: addrs})
	if err != nil {
		return nil, err
	}
	c.moved()
	for s := range c.delve.Continue() {
		st = s
	}
	c.moved()
	_, cerr := c.delve.ClearBreakpoint(bp.ID)
	if st == nil {
		return nil, errors.Join(errors.New("no state"), cerr)
	}
	for _, th := range st.Threads {
		if th.Breakpoint != nil && th.Breakpoint.ID == bp.ID {
			th.Breakpoint, th.BreakpointInfo = nil, nil
		}
	}
	if th := st.CurrentThread; th != nil && th.Breakpoint != nil && th.Breakpoint.ID == bp.ID {
		th.Breakpoint, th.BreakpointInfo = nil, nil
	}
	st = c.fixState(st)
	c.stopLine(st.CurrentThread)
	return st, errors.Join(st.Err, cerr)
}

// nextAddrs returns the runtime addresses next stops at from frame f:
// every statement of its procedure not on f's line, and the return
// address, without those that already have a breakpoint.
func (c *Client) nextAddrs(f *Frame) ([]uint64, error) {
	im := c.res.imageOf(f.PC)
	if im == nil {
		return nil, fmt.Errorf("adapter: next: %#x in no image", f.PC)
	}
	t, err := im.load()
	if err != nil {
		return nil, err
	}
	// Not the current PC: other lines' rows may share its address, and a
	// breakpoint there would stop where the thread is, without moving.
	taken := map[uint64]bool{f.PC: true}
	bps, err := c.delve.ListBreakpoints(true)
	if err != nil {
		return nil, err
	}
	for _, bp := range bps {
		for _, a := range bp.Addrs {
			taken[a] = true
		}
	}
	var addrs []uint64
	add := func(a uint64) {
		if !taken[a] {
			taken[a] = true
			addrs = append(addrs, a)
		}
	}
	for pos := range t.lines.Walk(f.Proc) {
		if pos.IsStmt && pos.Line > 0 && (pos.Line != f.Line || pos.File != f.File) {
			add(pos.Addr + im.bias)
		}
	}
	frames, _, err := c.physStack(-1, 1, 0)
	if err == nil && len(frames) > 1 && frames[1].PC != 0 {
		add(frames[1].PC)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("adapter: next from %s:%d: nowhere to stop", f.File, f.Line)
	}
	return addrs, nil
}
