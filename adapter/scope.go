package adapter

import (
	"errors"
	"fmt"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/adapter/locals"
)

// A repaired stack has more frames than Delve's, so frame numbers the
// user sees are translated to Delve's before a scope reaches Delve.
// Frames only splitdbg knows have no Delve scope: their registers come
// from the unwind, and evaluating in them is an error.

// delveScope translates a scope on the shown stack to Delve's stack.
func (c *Client) delveScope(s api.EvalScope) (api.EvalScope, error) {
	if s.Frame == 0 {
		return s, nil
	}
	ps, _ := c.physScope(s)
	return c.delvePhysScope(ps)
}

// delvePhysScope translates a scope on the physical stack (physStack) to
// Delve's stack.
func (c *Client) delvePhysScope(s api.EvalScope) (api.EvalScope, error) {
	if s.Frame == 0 {
		return s, nil
	}
	sp := c.spliceFor(s.GoroutineID)
	if sp == nil {
		return s, nil
	}
	d := sp.delveIndex(s.Frame)
	if d < 0 {
		return s, fmt.Errorf("adapter: frame %d was unwound by splitdbg through moved code; Delve has no scope for it", s.Frame)
	}
	s.Frame = d
	return s, nil
}

// spliceFor returns the repair of goroutine gid's stack at this stop, nil
// if it needs none; it asks for the stack if this stop has not seen it.
func (c *Client) spliceFor(gid int64) *splice {
	c.mu.Lock()
	s, ok := c.stop.stacks[gid]
	c.mu.Unlock()
	if ok {
		return s
	}
	// The repair does not depend on the depth asked (splice).
	if _, _, err := c.physStack(gid, 0, 0); err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop.stacks[gid]
}

// ListScopeRegisters implements service.Client; in a caller frame of C
// code it lists the registers splitdbg unwound through CFI (stack.go),
// where Delve lists only those the callee saved. An inlined frame has
// the registers of the frame it is inlined into.
func (c *Client) ListScopeRegisters(scope api.EvalScope, includeFp bool) (api.Registers, error) {
	ps, _ := c.physScope(scope)
	return c.delveScopeRegisters(ps, includeFp)
}

// delveScopeRegisters is ListScopeRegisters of a frame of the physical
// stack.
func (c *Client) delveScopeRegisters(ps api.EvalScope, includeFp bool) (api.Registers, error) {
	if ps.Frame > 0 && ps.DeferredCall == 0 {
		if regs, ok := c.callerRegisters(ps); ok {
			return apiRegisters(&regs), nil
		}
	}
	ds, err := c.delvePhysScope(ps)
	if err != nil {
		return nil, err
	}
	return c.delve.ListScopeRegisters(ds, includeFp)
}

// callerRegisters returns the registers of caller frame scope.Frame (of
// the physical stack) that splitdbg unwound: through the CFI of every
// inner frame, else those of the frames it spliced into Delve's stack;
// false when it has none (Delve's frame, Go code).
func (c *Client) callerRegisters(scope api.EvalScope) (regSet, bool) {
	if regs, ok := c.unwoundRegisters(scope.GoroutineID, scope.Frame); ok {
		return regs, true
	}
	if sp := c.spliceFor(scope.GoroutineID); sp != nil && sp.delveIndex(scope.Frame) < 0 {
		return sp.ownRegs[scope.Frame-1], true
	}
	return regSet{}, false
}

// ListLocalVariables implements service.Client; in a frame in moved code
// the Client reads them, elsewhere it reads those Delve gives up on
// (vars.go).
func (c *Client) ListLocalVariables(scope api.EvalScope, cfg api.LoadConfig) ([]api.Variable, error) {
	if rd, fr, ok, err := c.movedFrame(scope); ok {
		if err != nil {
			return nil, err
		}
		return rd.Variables(fr, locals.Locals, cfg)
	}
	ds, err := c.delveScope(scope)
	if err != nil {
		return nil, err
	}
	vs, err := c.delve.ListLocalVariables(ds, cfg)
	if err != nil {
		return nil, err
	}
	return c.repair(scope, vs, locals.Locals, cfg), nil
}

// ListFunctionArgs implements service.Client; in a frame in moved code
// the Client reads them, elsewhere it reads those Delve gives up on
// (vars.go).
func (c *Client) ListFunctionArgs(scope api.EvalScope, cfg api.LoadConfig) ([]api.Variable, error) {
	if rd, fr, ok, err := c.movedFrame(scope); ok {
		if err != nil {
			return nil, err
		}
		return rd.Variables(fr, locals.Args, cfg)
	}
	ds, err := c.delveScope(scope)
	if err != nil {
		return nil, err
	}
	vs, err := c.delve.ListFunctionArgs(ds, cfg)
	if err != nil {
		return nil, err
	}
	return c.repair(scope, vs, locals.Args, cfg), nil
}

// EvalVariable implements service.Client; in a frame in moved code the
// Client evaluates expressions on its local variables (vars.go), Delve
// the others.
func (c *Client) EvalVariable(scope api.EvalScope, symbol string, cfg api.LoadConfig) (*api.Variable, error) {
	if rd, fr, ok, err := c.movedFrame(scope); ok {
		if err != nil {
			return nil, err
		}
		v, err := rd.Eval(fr, symbol, cfg)
		if !errors.Is(err, locals.ErrNotLocal) {
			return v, err
		}
	}
	ds, err := c.delveScope(scope)
	if err != nil {
		return nil, err
	}
	v, err := c.delve.EvalVariable(ds, symbol, cfg)
	if err != nil || v != nil && DelveGaveUp(v.Unreadable) {
		// Delve's language is Go's: in C code C's syntax (it->qty, casts)
		// and what Delve does not read are evaluated as in moved code.
		if sf := c.scopeFrame(scope); sf.known && sf.err == nil && sf.c {
			if ov, oerr := sf.rd.Eval(sf.fr, symbol, cfg); oerr == nil {
				return ov, nil
			}
		}
	}
	return v, err
}
