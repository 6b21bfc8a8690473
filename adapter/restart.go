package adapter

import (
	"fmt"
	"slices"

	"github.com/go-delve/delve/service/api"
)

// Delve cannot restore a breakpoint set through a list of addresses after
// a restart (pkg/proc: "breakpoints set through a list of addresses can
// not be restored after a restart"): it drops the addresses and falls
// back to the breakpoint's location expression, which finds nothing in
// moved code, or discards the breakpoint. And a PIE executable restarts at
// a new load bias. So the client remembers the link-time addresses of
// every breakpoint with moved code and sets them again after a restart,
// under the same ID.

// armed is a breakpoint with addresses in moved code.
type armed struct {
	bp    api.Breakpoint
	links []imageAddr
}

// imageAddr is a link-time address in one image.
type imageAddr struct {
	image string
	addr  uint64
}

// arm remembers bp if any of its addresses is in moved code.
func (c *Client) arm(bp *api.Breakpoint) {
	var links []imageAddr
	moved := false
	for _, a := range bp.Addrs {
		f, ok := c.frame(a, false)
		if !ok {
			return
		}
		moved = moved || f.Moved()
		links = append(links, imageAddr{f.Image, a - f.Bias})
	}
	if !moved {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed == nil {
		c.armed = make(map[int]*armed)
	}
	c.armed[bp.ID] = &armed{bp: *bp, links: links}
}

// disarm forgets breakpoint id.
func (c *Client) disarm(id int) {
	c.mu.Lock()
	delete(c.armed, id)
	c.mu.Unlock()
}

// Restart implements service.Client, and sets breakpoints with moved code
// again at the new addresses.
func (c *Client) Restart(rebuild bool) ([]api.DiscardedBreakpoint, error) {
	c.moved()
	c.armAll()
	d, err := c.delve.Restart(rebuild)
	if err != nil {
		return d, err
	}
	return c.rearm(d)
}

// RestartFrom implements service.Client, as Restart.
func (c *Client) RestartFrom(rerecord bool, pos string, resetArgs bool, newArgs []string, newRedirects [3]string, rebuild bool) ([]api.DiscardedBreakpoint, error) {
	c.moved()
	c.armAll()
	d, err := c.delve.RestartFrom(rerecord, pos, resetArgs, newArgs, newRedirects, rebuild)
	if err != nil {
		return d, err
	}
	return c.rearm(d)
}

// armAll remembers every breakpoint Delve has before a restart, as it is
// now (conditions amended since, and breakpoints other connections set),
// so that those in moved code are set again afterwards; arm skips the
// rest.
func (c *Client) armAll() {
	bps, err := c.delve.ListBreakpoints(false)
	if err != nil {
		return
	}
	for _, bp := range bps {
		c.arm(bp)
	}
}

// rearm refreshes the load biases and sets every remembered breakpoint
// again; discarded lists what Delve dropped, and rearm removes the ones it
// restores.
func (c *Client) rearm(discarded []api.DiscardedBreakpoint) ([]api.DiscardedBreakpoint, error) {
	c.moved()
	if err := c.refreshBias(); err != nil {
		return discarded, err
	}
	c.refreshLibraries()
	c.mu.Lock()
	ids := make([]int, 0, len(c.armed))
	for id := range c.armed {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	if len(ids) == 0 {
		return discarded, nil
	}
	slices.Sort(ids)
	current, err := c.delve.ListBreakpoints(false)
	if err != nil {
		return discarded, err
	}
	maxID := 0
	exists := make(map[int]bool)
	for _, bp := range current {
		exists[bp.ID] = true
		maxID = max(maxID, bp.ID)
	}
	restored := make(map[int]bool)
	for _, id := range ids {
		maxID = max(maxID, id)
		c.mu.Lock()
		a := c.armed[id]
		c.mu.Unlock()
		req := a.bp
		req.Addrs, req.AddrPid = nil, nil
		for _, l := range a.links {
			bias, ok := c.biasOf(l.image)
			if !ok {
				req.Addrs = nil
				break
			}
			req.Addrs = append(req.Addrs, l.addr+bias)
		}
		if len(req.Addrs) == 0 {
			continue
		}
		if exists[id] {
			if _, err := c.delve.ClearBreakpoint(id); err != nil {
				continue
			}
		}
		req.Addr, req.File, req.Line, req.FunctionName = 0, "", 0, ""
		req.HitCount, req.TotalHitCount = nil, 0
		bp, err := c.delve.CreateBreakpoint(&req)
		if err != nil {
			continue
		}
		c.created(bp)
		restored[id] = true
	}
	// Creating a breakpoint with an explicit ID sets Delve's ID counter to
	// it. Unless the last one restored has the highest ID in use, move the
	// counter past every ID in use, so that the next new breakpoint cannot
	// reuse one: a request with no location fails after the counter is set.
	if last := ids[len(ids)-1]; !restored[last] || last != maxID {
		if _, err := c.delve.CreateBreakpoint(&api.Breakpoint{ID: maxID + 1}); err == nil {
			return discarded, fmt.Errorf("adapter: restart: placeholder breakpoint %d was created", maxID+1)
		}
	}
	return slices.DeleteFunc(discarded, func(d api.DiscardedBreakpoint) bool {
		return d.Breakpoint != nil && restored[d.Breakpoint.ID]
	}), nil
}

// biasOf returns the load bias of the image at path.
func (c *Client) biasOf(path string) (uint64, bool) {
	for im := range c.res.images() {
		if im.path == path {
			return im.bias, true
		}
	}
	return 0, false
}
