package adapter

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-delve/delve/service/api"
)

// Delve evaluates a breakpoint's condition in its own scope of the
// stopped frame, which has no function context in moved code ("could not
// find symbol value for shortfall"): it stops at every hit and its
// continue fails with "error evaluating expression". For a breakpoint
// with an address in moved code the client evaluates the condition
// again at such a stop, with the moved-frame evaluator, and runs on when
// it does not hold. Delve counts a hit whose condition it could not
// evaluate, so the hit condition of such a breakpoint is the client's
// too, counted over the hits where the condition held. A condition Delve
// can evaluate (a constant, a global) stays Delve's alone.

// condition is what the client holds of a breakpoint in moved code.
type condition struct {
	cond    string // the condition, also Delve's
	hitCond string // Delve's hit condition syntax ("> 2", "== 3", "% 2"); "" always holds
	hits    int    // hits at which cond held
}

// moveCondition returns the request to give Delve for a breakpoint with
// a condition and an address in moved code — its hit condition taken
// out — and what the client holds of it; other requests are unchanged.
func (c *Client) moveCondition(req *api.Breakpoint) (*api.Breakpoint, *condition) {
	if req == nil || req.Cond == "" || !c.anyMoved(req) {
		return req, nil
	}
	r := *req
	r.HitCond = ""
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

// held records (or, with nil, drops) what the client holds of breakpoint
// id.
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

// holdsConditions reports whether the client holds any condition.
func (c *Client) holdsConditions() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conds) > 0
}

// showCondition puts a held hit condition back on a breakpoint Delve
// lists, with the hits at which its condition held.
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
	bp.HitCond = cond.hitCond
	bp.TotalHitCount = uint64(cond.hits)
}

// judge decides a stop at breakpoints the client holds conditions of:
// runOn when none of them holds there, so the target should run on; and
// evaluated when Delve's condition error is answered, so the stop should
// not carry it. A stop for any other reason is left as it is.
func (c *Client) judge(st *api.DebuggerState) (runOn, evaluated bool) {
	if st == nil || st.Exited {
		return false, false
	}
	condErr := conditionError(st)
	if st.Err != nil && !condErr {
		return false, false
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
			return false, false // Delve's own stop
		}
		hit = true
		holds, err := c.holds(st, th, cond, condErr)
		if err != nil {
			return false, false // stop, with Delve's error: the user sees why
		}
		if holds {
			return false, condErr
		}
	}
	return hit, condErr
}

// conditionError reports a continue that failed because Delve could not
// evaluate a breakpoint's condition.
func conditionError(st *api.DebuggerState) bool {
	return st != nil && st.Err != nil && strings.Contains(st.Err.Error(), "error evaluating expression")
}

// holds reports whether a held condition holds at thread th's stop —
// evaluating it when Delve could not — and counts the hit if so.
func (c *Client) holds(st *api.DebuggerState, th *api.Thread, cond *condition, evaluate bool) (bool, error) {
	if evaluate {
		scope := api.EvalScope{GoroutineID: th.GoroutineID}
		if th.GoroutineID == 0 {
			if st.CurrentThread == nil || st.CurrentThread.ID != th.ID {
				if _, err := c.delve.SwitchThread(th.ID); err != nil {
					return false, err
				}
			}
			scope.GoroutineID = -1
		}
		v, err := c.EvalVariable(scope, cond.cond, api.LoadConfig{})
		if err != nil {
			return false, err
		}
		if v.Kind != reflect.Bool {
			return false, fmt.Errorf("adapter: condition %q is not boolean", cond.cond)
		}
		if v.Value != "true" {
			return false, nil
		}
	}
	c.mu.Lock()
	cond.hits++
	n := cond.hits
	c.mu.Unlock()
	return hitHolds(cond.hitCond, n)
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
