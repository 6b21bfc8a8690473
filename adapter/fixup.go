package adapter

import (
	"slices"
	"strings"

	"github.com/go-delve/delve/service/api"
)

// The fix-ups below change only what Delve could not name: a location
// with no function ("???") whose PC lies in a split procedure. Anything
// Delve named is left as Delve reported it.

// logicalFunction returns the api.Function of a frame's procedure. Delve
// marks only Go functions optimized (from the compiler flags in the
// producer string), never C ones, so neither does this.
func logicalFunction(f *Frame) *api.Function {
	return &api.Function{Name_: f.Function, Value: f.Entry}
}

// fixLocation names a location Delve left nameless when its PC lies in a
// split procedure. call says the PC is a return address. It reports
// whether it changed the location.
func (c *Client) fixLocation(loc *api.Location, call bool) bool {
	if loc == nil || loc.Function != nil || loc.PC == 0 {
		return false
	}
	f, ok := c.frame(loc.PC, call)
	if !ok || !f.Split() {
		return false
	}
	loc.Function = logicalFunction(&f)
	if f.Line > 0 {
		loc.File, loc.Line = f.File, f.Line
	}
	return true
}

// fixThread names the thread's location and its breakpoint.
func (c *Client) fixThread(th *api.Thread) {
	if th == nil {
		return
	}
	loc := api.Location{PC: th.PC, File: th.File, Line: th.Line, Function: th.Function}
	if c.fixLocation(&loc, false) {
		th.File, th.Line, th.Function = loc.File, loc.Line, loc.Function
	}
	c.fixBreakpoint(th.Breakpoint)
	if bp := th.Breakpoint; bp != nil && bp.Line > 0 && slices.Contains(bp.Addrs, th.PC) {
		// A stop at a breakpoint set on a line is reported on that line,
		// as gdb reports it, not on another line whose row shares the
		// address.
		c.mu.Lock()
		_, set := c.lines[bp.ID]
		c.mu.Unlock()
		if set {
			th.File, th.Line = bp.File, bp.Line
		}
	}
	// Delve reads return values through the goroutine (g), which a C
	// program has none of: "return value read error: could not get g" is
	// no value, so it is left out, as for a function that returns none.
	th.ReturnValues = slices.DeleteFunc(th.ReturnValues, func(v api.Variable) bool {
		return v.Name == "return value read error" && strings.Contains(v.Value, "could not get g")
	})
	if len(th.ReturnValues) == 0 {
		th.ReturnValues = nil
	}
}

// stopLine reports a stop in C code on the line gdb reports: where rows
// of several lines share the address (GCC's function entries: the
// opening line, then the first statements) Delve reports the first, gdb
// the last statement row, the line that runs next. The Client does so
// at the stops of its own stepping; elsewhere Delve's line stands.
func (c *Client) stopLine(th *api.Thread) {
	if th == nil || th.Function == nil || !strings.HasPrefix(th.Function.Name(), "C.") {
		return
	}
	if file, line, ok := c.res.StopLine(th.PC); ok {
		th.File, th.Line = file, line
	}
}

// fixGoroutine names the goroutine's current location.
func (c *Client) fixGoroutine(g *api.Goroutine) {
	if g == nil {
		return
	}
	c.fixLocation(&g.CurrentLoc, false)
	c.fixLocation(&g.UserCurrentLoc, false)
}

// fixState names the locations of a debugger state and remembers it.
func (c *Client) fixState(st *api.DebuggerState) *api.DebuggerState {
	if st == nil {
		return nil
	}
	c.fixThread(st.CurrentThread)
	for _, th := range st.Threads {
		if th != st.CurrentThread {
			c.fixThread(th)
		}
	}
	c.fixGoroutine(st.SelectedGoroutine)
	for _, bp := range st.WatchOutOfScope {
		c.fixBreakpoint(bp)
	}
	if st.Err == nil && !st.Running {
		c.mu.Lock()
		c.state = st
		c.mu.Unlock()
	}
	return st
}

// fixBreakpoint gives a breakpoint with addresses in split procedures the
// logical function, file and line that Delve could not find: Delve names
// a breakpoint from the function and line of each address, and has none
// for addresses in moved code ("" or "<multiple locations>", "(multiple
// functions)").
func (c *Client) fixBreakpoint(bp *api.Breakpoint) {
	if bp == nil || len(bp.Addrs) == 0 {
		return
	}
	c.showCondition(bp)
	defer c.showLine(bp)
	if bp.FunctionName != "" && bp.FunctionName != "(multiple functions)" &&
		bp.File != "" && bp.File != "<multiple locations>" {
		return
	}
	var first Frame
	split, sameFunc, sameLine := false, true, true
	for i, a := range bp.Addrs {
		f, ok := c.frame(a, false)
		if !ok {
			return // an address we cannot place: keep Delve's answer
		}
		split = split || f.Split()
		if i == 0 {
			first = f
			continue
		}
		sameFunc = sameFunc && f.Proc == first.Proc
		sameLine = sameLine && f.File == first.File && f.Line == first.Line
	}
	if !split {
		return
	}
	if sameFunc && first.Proc != nil {
		bp.FunctionName = first.Function
	}
	if sameLine && first.Line > 0 {
		bp.File, bp.Line = first.File, first.Line
	}
}

// showLine names a breakpoint by the line it was set on.
func (c *Client) showLine(bp *api.Breakpoint) {
	c.mu.Lock()
	at, ok := c.lines[bp.ID]
	c.mu.Unlock()
	if ok {
		bp.File, bp.Line = at.file, at.line
	}
}

// fixBreakpoints fixes each breakpoint of a list.
func (c *Client) fixBreakpoints(bps []*api.Breakpoint) []*api.Breakpoint {
	for _, bp := range bps {
		c.fixBreakpoint(bp)
	}
	return bps
}
