package adapter

import (
	"fmt"

	"github.com/go-delve/delve/pkg/locspec"
	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// Delve creates a logical breakpoint at explicit addresses when the
// request has Addrs and neither File nor FunctionName (service/debugger:
// File wins, then FunctionName, then Addrs, then Addr). That is how one
// breakpoint gets an address in every fragment of a split function; the
// terminal's break command already sends FindLocation's PCs that way.

// CreateBreakpoint implements service.Client. A FILE:LINE request for a
// line with code in moved fragments, and a FUNC request for a split
// function Delve cannot place, become one breakpoint at every address.
func (c *Client) CreateBreakpoint(req *api.Breakpoint) (*api.Breakpoint, error) {
	return c.create(req, nil, "", func(r *api.Breakpoint) (*api.Breakpoint, error) {
		return c.delve.CreateBreakpoint(r)
	})
}

// CreateBreakpointWithExpr implements service.Client, as CreateBreakpoint.
func (c *Client) CreateBreakpointWithExpr(req *api.Breakpoint, locExpr string, rules [][2]string, suspended bool) (*api.Breakpoint, error) {
	if _, err := locspec.Parse(locExpr); err != nil && req != nil && len(req.Addrs) > 0 {
		// A location Delve does not parse (FILE:FUNC) that FindLocation
		// answered: the addresses say it all.
		return c.create(req, rules, locExpr, func(r *api.Breakpoint) (*api.Breakpoint, error) {
			return c.delve.CreateBreakpoint(r)
		})
	}
	return c.create(req, rules, locExpr, func(r *api.Breakpoint) (*api.Breakpoint, error) {
		return c.delve.CreateBreakpointWithExpr(r, locExpr, rules, suspended)
	})
}

// create creates a breakpoint through Delve's call do, rewriting requests
// for locations with code in moved fragments to explicit addresses; a
// breakpoint on FILE:LINE (in the request, or locExpr, the terminal's
// words) is named by the line as splitdbg resolved it, as gdb names it,
// whatever line shares its first address.
func (c *Client) create(req *api.Breakpoint, rules [][2]string, locExpr string, do func(*api.Breakpoint) (*api.Breakpoint, error)) (*api.Breakpoint, error) {
	if req != nil && req.File != "" && len(rules) == 0 {
		// The file as the binary records it: Delve knows a file only by
		// that name, a user or an editor by a base name or an absolute
		// path (the rules of FILE:LINE).
		if f := c.res.SourceFile(req.File); f != req.File {
			r := *req
			r.File = f
			req = &r
		}
	}
	var line *linePlace
	if r, at := c.lineRequest(req, rules); r != nil {
		req, line = r, at
	} else if res, ok := c.splitFuncRequest(req); ok && len(res.Locs) > 1 {
		// Several functions of the name: a location in each, as gdb.
		r := *req
		r.FunctionName, r.Addrs = "", res.Addrs()
		req = &r
	} else if ok {
		// Delve places most split functions right: try it first, and
		// replace its answer when it fails or lands in moved code.
		bp, err := do(req)
		if err == nil && c.inEntry(bp.Addrs, res.Locs[0].Proc) {
			c.created(bp)
			return bp, nil
		}
		if err == nil {
			if _, err := c.delve.ClearBreakpoint(bp.ID); err != nil {
				return nil, fmt.Errorf("adapter: breakpoint %d at %s in moved code: %w", bp.ID, req.FunctionName, err)
			}
		}
		r := *req
		r.FunctionName, r.Addrs = "", res.Addrs()
		req = &r
	}
	if line == nil && locExpr != "" {
		line = c.exprLine(locExpr, rules)
	}
	req, cond := c.moveCondition(req)
	bp, err := do(req)
	if bp != nil {
		c.held(bp.ID, cond)
		if line != nil {
			c.mu.Lock()
			if c.lines == nil {
				c.lines = map[int]linePlace{}
			}
			c.lines[bp.ID] = *line
			c.mu.Unlock()
		}
	}
	c.created(bp)
	return bp, err
}

// forgetLine drops the line breakpoint id was set on.
func (c *Client) forgetLine(id int) {
	c.mu.Lock()
	delete(c.lines, id)
	c.mu.Unlock()
}

// linePlace is the source line a breakpoint was set on.
type linePlace struct {
	file string
	line int
}

// exprLine is the resolved line of a FILE:LINE location expression with
// code in moved fragments, nil for any other expression.
func (c *Client) exprLine(locExpr string, rules [][2]string) *linePlace {
	spec, err := linetable.ParseSpec(locExpr)
	if err != nil || spec.Line <= 0 {
		return nil
	}
	res, err := c.res.ResolveSpec(unsubstitute(spec, rules))
	if err != nil || !res.Moved() {
		return nil
	}
	return &linePlace{res.File, res.Line}
}

// AmendBreakpoint implements service.Client: the hit condition of a
// conditional breakpoint in moved code stays with the client.
func (c *Client) AmendBreakpoint(bp *api.Breakpoint) error {
	r, cond := c.moveCondition(bp)
	if cond != nil {
		c.mu.Lock()
		if old := c.conds[bp.ID]; old != nil {
			cond.hits = old.hits
		}
		c.mu.Unlock()
	}
	err := c.delve.AmendBreakpoint(r)
	if err == nil {
		c.held(bp.ID, cond)
	}
	return err
}

// lineRequest returns a FILE:LINE request rewritten to explicit addresses
// when the line has code in moved fragments, and the line it resolved
// to; nil otherwise.
func (c *Client) lineRequest(req *api.Breakpoint, rules [][2]string) (*api.Breakpoint, *linePlace) {
	if !plainRequest(req) || req.File == "" || req.Line <= 0 {
		return nil, nil
	}
	locs, ok := c.findLine(api.EvalScope{GoroutineID: -1}, linetable.LineSpec(req.File, req.Line), true, rules)
	if !ok {
		return nil, nil
	}
	r := *req
	r.File, r.Line, r.FunctionName = "", 0, ""
	r.Addrs, r.AddrPid = locs[0].PCs, locs[0].PCPids
	return &r, &linePlace{locs[0].File, locs[0].Line}
}

// splitFuncRequest resolves a FUNC request for a split function, or for a
// name of several functions.
func (c *Client) splitFuncRequest(req *api.Breakpoint) (Resolution, bool) {
	if !plainRequest(req) || req.File != "" || req.FunctionName == "" || req.Line != 0 {
		return Resolution{}, false
	}
	res, err := c.res.ResolveSpec(linetable.FuncSpec(req.FunctionName))
	if err != nil || len(res.Locs) == 1 && !res.Locs[0].Split() {
		return Resolution{}, false
	}
	return res, true
}

// plainRequest reports a request that names its location rather than
// giving addresses.
func plainRequest(req *api.Breakpoint) bool {
	return req != nil && len(req.Addrs) == 0 && req.Addr == 0 && !req.TraceReturn
}

// inEntry reports whether every address is in the entry fragment of p.
func (c *Client) inEntry(addrs []uint64, p *splitinfo.Proc) bool {
	for _, a := range addrs {
		if f, ok := c.frame(a, false); !ok || f.Proc != p || f.Frag != 0 {
			return false
		}
	}
	return len(addrs) > 0
}

// created names a new breakpoint and remembers its moved addresses so a
// restart can set them again.
func (c *Client) created(bp *api.Breakpoint) {
	if bp == nil {
		return
	}
	c.fixBreakpoint(bp)
	c.arm(bp)
}

// GetBreakpoint implements service.Client.
func (c *Client) GetBreakpoint(id int) (*api.Breakpoint, error) {
	bp, err := c.delve.GetBreakpoint(id)
	c.fixBreakpoint(bp)
	return bp, err
}

// GetBreakpointByName implements service.Client.
func (c *Client) GetBreakpointByName(name string) (*api.Breakpoint, error) {
	bp, err := c.delve.GetBreakpointByName(name)
	c.fixBreakpoint(bp)
	return bp, err
}

// ListBreakpoints implements service.Client.
func (c *Client) ListBreakpoints(all bool) ([]*api.Breakpoint, error) {
	bps, err := c.delve.ListBreakpoints(all)
	return c.fixBreakpoints(bps), err
}

// ClearBreakpoint implements service.Client.
func (c *Client) ClearBreakpoint(id int) (*api.Breakpoint, error) {
	bp, err := c.delve.ClearBreakpoint(id)
	if err == nil {
		c.disarm(id)
		c.held(id, nil)
		c.forgetLine(id)
	}
	c.fixBreakpoint(bp)
	return bp, err
}

// ClearBreakpointByName implements service.Client.
func (c *Client) ClearBreakpointByName(name string) (*api.Breakpoint, error) {
	bp, err := c.delve.ClearBreakpointByName(name)
	if err == nil && bp != nil {
		c.disarm(bp.ID)
		c.held(bp.ID, nil)
		c.forgetLine(bp.ID)
	}
	c.fixBreakpoint(bp)
	return bp, err
}

// ToggleBreakpoint implements service.Client.
func (c *Client) ToggleBreakpoint(id int) (*api.Breakpoint, error) {
	bp, err := c.delve.ToggleBreakpoint(id)
	c.fixBreakpoint(bp)
	return bp, err
}

// ToggleBreakpointByName implements service.Client.
func (c *Client) ToggleBreakpointByName(name string) (*api.Breakpoint, error) {
	bp, err := c.delve.ToggleBreakpointByName(name)
	c.fixBreakpoint(bp)
	return bp, err
}
