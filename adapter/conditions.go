package adapter

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-delve/delve/service/api"
)

// Delve evaluates a breakpoint's condition in its own scope of the
// stopped frame, which it has no function context for in moved code
// ("could not find symbol value for shortfall"), so it stops at every
// hit. A breakpoint with an address in moved code therefore keeps its
// condition and hit condition here: Delve gets the breakpoint without
// them, and Continue evaluates them at each hit with the moved-frame
// evaluator, running on when they do not hold, as Delve would.

// condition is a breakpoint's condition held by the client.
type condition struct {
	cond    string // expression; "" is always true
	hitCond string // Delve's hit condition ("> 2", "== 3", "% 2"); "" is always true
	hits    int    // hits at which cond held
}

// moveCondition takes req's condition and hit condition into the client
// when one of its addresses is in moved code, and returns the request to
// give Delve.
func (c *Client) moveCondition(req *api.Breakpoint) (*api.Breakpoint, *condition) {
	if req == nil || req.Cond == "" && req.HitCond == "" || !c.anyMoved(req) {
		return req, nil
	}
	r := *req
	r.Cond, r.HitCond = "", ""
	return &r, &condition{cond: req.Cond, hitCond: req.HitCond}
}

// anyMoved reports whether a breakpoint has an address in moved code.
func (c *Client) anyMoved(bp *api.Breakpoint) bool {
	for _, a := range append(bp.Addrs[:len(bp.Addrs):len(bp.Addrs)], bp.Addr) {
		if a == 0 {
			continue
		}
		if f, ok := c.frame(a, false); ok && f.Moved() {
			return true
		}
	}
	return false
}

// held records (or, with nil, drops) the condition the client holds for
// breakpoint id.
func (c *Client) held(id int, cond *condition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cond == nil {
		delete(c.conds, id)
		return
	}
	if c.conds == nil {
		c.conds = map[int]*condition{}
	}
	c.conds[id] = cond
}

// showCondition puts a held condition back on a breakpoint Delve lists,
// with the hits at which it held.
func (c *Client) showCondition(bp *api.Breakpoint) {
	if bp == nil {
		return
	}
	c.mu.Lock()
	cond := c.conds[bp.ID]
	c.mu.Unlock()
	if cond == nil {
		return
	}
	bp.Cond, bp.HitCond = cond.cond, cond.hitCond
	bp.TotalHitCount = uint64(cond.hits)
}

// runOn reports whether a stop is only at breakpoints whose held
// conditions do not hold there, so the target should run on. A condition
// that cannot be evaluated stops the target, as in Delve.
func (c *Client) runOn(st *api.DebuggerState) bool {
	if st == nil || st.Exited || st.Err != nil {
		return false
	}
	hit := false
	for _, th := range st.Threads {
		bp := th.Breakpoint
		if bp == nil {
			continue
		}
		c.mu.Lock()
		cond := c.conds[bp.ID]
		c.mu.Unlock()
		if cond == nil {
			return false
		}
		hit = true
		if c.holds(st, th, cond) {
			return false
		}
	}
	return hit
}

// holds evaluates a held condition at thread th's stop and counts the
// hit when the condition holds.
func (c *Client) holds(st *api.DebuggerState, th *api.Thread, cond *condition) bool {
	if cond.cond != "" {
		scope := api.EvalScope{GoroutineID: th.GoroutineID}
		if th.GoroutineID == 0 {
			if st.CurrentThread == nil || st.CurrentThread.ID != th.ID {
				if _, err := c.delve.SwitchThread(th.ID); err != nil {
					return true
				}
			}
			scope.GoroutineID = -1
		}
		v, err := c.EvalVariable(scope, cond.cond, api.LoadConfig{})
		if err != nil || v.Kind != reflect.Bool {
			return true // stop, and let the user see why
		}
		if v.Value != "true" {
			return false
		}
	}
	c.mu.Lock()
	cond.hits++
	n := cond.hits
	c.mu.Unlock()
	ok, err := hitHolds(cond.hitCond, n)
	return ok || err != nil
}

// hitHolds evaluates Delve's hit condition — an operator (==, !=, <, <=,
// >, >=, %) and a number, or a bare number meaning == — for hit n.
func hitHolds(hc string, n int) (bool, error) {
	hc = strings.TrimSpace(hc)
	if hc == "" {
		return true, nil
	}
	op := "=="
	for _, o := range []string{"==", "!=", "<=", ">=", "<", ">", "%"} {
		if rest, ok := strings.CutPrefix(hc, o); ok {
			op, hc = o, strings.TrimSpace(rest)
			break
		}
	}
	k, err := strconv.Atoi(hc)
	if err != nil {
		return false, fmt.Errorf("adapter: bad hit condition %q", hc)
	}
	switch op {
	case "==":
		return n == k, nil
	case "!=":
		return n != k, nil
	case "<":
		return n < k, nil
	case "<=":
		return n <= k, nil
	case ">":
		return n > k, nil
	case ">=":
		return n >= k, nil
	}
	if k == 0 {
		return false, fmt.Errorf("adapter: hit condition %% 0")
	}
	return n%k == 0, nil
}
