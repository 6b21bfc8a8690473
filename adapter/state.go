package adapter

import (
	"github.com/go-delve/delve/service/api"
)

// The calls below are Delve's; the states, threads, goroutines and
// breakpoints they return are named through fixState and friends, and
// every call that may run the target invalidates the caches.

// GetState implements service.Client.
func (c *Client) GetState() (*api.DebuggerState, error) {
	st, err := c.delve.GetState()
	return c.fixState(st), err
}

// GetStateNonBlocking implements service.Client.
func (c *Client) GetStateNonBlocking() (*api.DebuggerState, error) {
	st, err := c.delve.GetStateNonBlocking()
	return c.fixState(st), err
}

// states forwards Delve's states, named, until Delve closes the channel.
func (c *Client) states(in <-chan *api.DebuggerState) <-chan *api.DebuggerState {
	out := make(chan *api.DebuggerState)
	go func() {
		defer close(out)
		for st := range in {
			c.moved()
			out <- c.fixState(st)
		}
	}()
	return out
}

// Continue implements service.Client. A stop only at breakpoints in
// moved code whose conditions Delve could not evaluate, and which do not
// hold there (conditions.go), is run past, as Delve runs past its own.
func (c *Client) Continue() <-chan *api.DebuggerState {
	c.moved()
	in := c.delve.Continue()
	if !c.holdsConditions() {
		return c.states(in)
	}
	out := make(chan *api.DebuggerState)
	go func() {
		defer close(out)
		for {
			// Delve sends tracepoint stops before the final state: pass
			// each on, and judge the last.
			var last *api.DebuggerState
			for st := range in {
				c.moved()
				if last != nil {
					out <- c.fixState(last)
				}
				last = st
			}
			if last == nil {
				return
			}
			if conditionError(last) {
				// A failed command carries no state: ask for the stop.
				if st, err := c.delve.GetState(); err == nil {
					st.Err = last.Err
					last = st
				}
			}
			runOn, evaluated := c.judge(last)
			if !runOn {
				if evaluated {
					last.Err = nil
				}
				out <- c.fixState(last)
				return
			}
			c.moved()
			in = c.delve.Continue()
		}
	}()
	return out
}

// Rewind implements service.Client.
func (c *Client) Rewind() <-chan *api.DebuggerState {
	c.moved()
	return c.states(c.delve.Rewind())
}

// DirectionCongruentContinue implements service.Client.
func (c *Client) DirectionCongruentContinue() <-chan *api.DebuggerState {
	c.moved()
	return c.states(c.delve.DirectionCongruentContinue())
}

// step runs a call that may move the target and names its state.
func (c *Client) step(f func() (*api.DebuggerState, error)) (*api.DebuggerState, error) {
	c.moved()
	st, err := f()
	c.moved()
	return c.fixState(st), err
}

// ReverseNext implements service.Client.
func (c *Client) ReverseNext() (*api.DebuggerState, error) { return c.step(c.delve.ReverseNext) }

// ReverseStep implements service.Client.
func (c *Client) ReverseStep() (*api.DebuggerState, error) { return c.step(c.delve.ReverseStep) }

// ReverseStepOut implements service.Client.
func (c *Client) ReverseStepOut() (*api.DebuggerState, error) {
	return c.step(c.delve.ReverseStepOut)
}

// Call implements service.Client.
func (c *Client) Call(goroutineID int64, expr string, unsafe bool) (*api.DebuggerState, error) {
	return c.step(func() (*api.DebuggerState, error) { return c.delve.Call(goroutineID, expr, unsafe) })
}

// StepInstruction implements service.Client.
func (c *Client) StepInstruction(skipCalls bool) (*api.DebuggerState, error) {
	return c.step(func() (*api.DebuggerState, error) { return c.delve.StepInstruction(skipCalls) })
}

// ReverseStepInstruction implements service.Client.
func (c *Client) ReverseStepInstruction(skipCalls bool) (*api.DebuggerState, error) {
	return c.step(func() (*api.DebuggerState, error) { return c.delve.ReverseStepInstruction(skipCalls) })
}

// SwitchThread implements service.Client.
func (c *Client) SwitchThread(threadID int) (*api.DebuggerState, error) {
	return c.step(func() (*api.DebuggerState, error) { return c.delve.SwitchThread(threadID) })
}

// SwitchGoroutine implements service.Client.
func (c *Client) SwitchGoroutine(goroutineID int64) (*api.DebuggerState, error) {
	return c.step(func() (*api.DebuggerState, error) { return c.delve.SwitchGoroutine(goroutineID) })
}

// Halt implements service.Client. Its state is Delve's own, not named:
// Delve forgets a halt that comes before a continue has resumed the
// target, so a halt's answer may be overtaken by the continue it was
// meant to stop, and naming its locations asks Delve for the library
// list, a call that waits for that continue to stop while every later
// call, the next halt included, waits behind it. The stop a halt causes
// is reported, named, by the command it interrupts.
func (c *Client) Halt() (*api.DebuggerState, error) {
	c.moved()
	st, err := c.delve.Halt()
	c.moved()
	return st, err
}

// SetExecutionPoint implements service.Client.
func (c *Client) SetExecutionPoint(addr uint64) (*api.DebuggerState, error) {
	return c.step(func() (*api.DebuggerState, error) { return c.delve.SetExecutionPoint(addr) })
}

// ListThreads implements service.Client.
func (c *Client) ListThreads() ([]*api.Thread, error) {
	ths, err := c.delve.ListThreads()
	for _, th := range ths {
		c.fixThread(th)
	}
	return ths, err
}

// GetThread implements service.Client.
func (c *Client) GetThread(id int) (*api.Thread, error) {
	th, err := c.delve.GetThread(id)
	c.fixThread(th)
	return th, err
}

// ListGoroutines implements service.Client.
func (c *Client) ListGoroutines(start, count int) ([]*api.Goroutine, int, error) {
	gs, next, err := c.delve.ListGoroutines(start, count)
	for _, g := range gs {
		c.fixGoroutine(g)
	}
	return gs, next, err
}

// ListGoroutinesWithFilter implements service.Client.
func (c *Client) ListGoroutinesWithFilter(start, count int, filters []api.ListGoroutinesFilter, group *api.GoroutineGroupingOptions, scope *api.EvalScope) ([]*api.Goroutine, []api.GoroutineGroup, int, bool, error) {
	if scope != nil {
		ds, err := c.delveScope(*scope)
		if err != nil {
			return nil, nil, 0, false, err
		}
		scope = &ds
	}
	gs, groups, next, tooMany, err := c.delve.ListGoroutinesWithFilter(start, count, filters, group, scope)
	for _, g := range gs {
		c.fixGoroutine(g)
	}
	return gs, groups, next, tooMany, err
}
