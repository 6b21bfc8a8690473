package adapter

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/adapter/locals"
)

// Delve writes variables (SetVariable) and watches them (CreateWatchpoint)
// only in a frame it has a function for, which a frame in moved code is
// not ("unable to find function context"). There the client finds the
// variable's memory with the moved-frame evaluator and hands Delve the
// same memory spelled with its address and C type — *(*"C.int")(0x...)
// — in the nearest caller frame Delve has a function for. A variable in
// a register at the stop is not memory: setting it is refused, as Delve
// cannot write a caller's registers either.

// errInRegister reports a variable that lives in a register.
var errInRegister = errors.New("is in a register at this stop; splitdbg writes and watches variables in memory only")

// movedMemory returns, for expr in a scope whose frame is in moved code,
// a scope Delve has a function for and expr's memory spelled for Delve
// there; ok is false for a frame Delve has a function for itself.
func (c *Client) movedMemory(scope api.EvalScope, expr string) (hot api.EvalScope, spelled string, ok bool, err error) {
	pc, _, found := c.framePC(scope)
	if !found {
		return scope, "", false, nil
	}
	if f, ok := c.frame(pc, scope.Frame > 0); !ok || !f.Moved() {
		return scope, "", false, nil
	}
	v, err := c.EvalVariable(scope, expr, api.LoadConfig{})
	if err != nil {
		return scope, "", true, err
	}
	switch v.Kind {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
	default:
		return scope, "", true, fmt.Errorf("adapter: %s is a %s: splitdbg writes and watches numbers in moved frames", expr, v.Type)
	}
	if v.Addr == 0 || v.Addr == locals.FakeAddress || v.Flags&api.VariableFakeAddress != 0 {
		return scope, "", true, fmt.Errorf("adapter: %s %w", expr, errInRegister)
	}
	spelled = fmt.Sprintf("*(*%q)(%#x)", "C."+v.Type, v.Addr)
	for k := scope.Frame + 1; k <= scope.Frame+maxOwnFrames; k++ {
		up := api.EvalScope{GoroutineID: scope.GoroutineID, Frame: k}
		pc, _, found := c.framePC(up)
		if !found {
			break
		}
		if f, ok := c.frame(pc, true); ok && f.Moved() {
			continue
		}
		if ds, err := c.delveScope(up); err == nil {
			return ds, spelled, true, nil
		}
	}
	return scope, "", true, fmt.Errorf("adapter: no caller of frame %d has a function Delve knows", scope.Frame)
}

// SetVariable implements service.Client; in a moved frame the variable's
// memory is written through a caller's scope (see movedMemory).
func (c *Client) SetVariable(scope api.EvalScope, symbol, value string) error {
	hot, spelled, moved, err := c.movedMemory(scope, symbol)
	if err != nil {
		return err
	}
	if moved {
		scope, symbol = hot, spelled
	} else if scope, err = c.delveScope(scope); err != nil {
		return err
	}
	c.moved()
	return c.delve.SetVariable(scope, symbol, value)
}

// CreateWatchpoint implements service.Client; in a moved frame the
// variable's memory is watched through a caller's scope (see
// movedMemory).
func (c *Client) CreateWatchpoint(scope api.EvalScope, expr string, wtype api.WatchType) (*api.Breakpoint, error) {
	hot, spelled, moved, err := c.movedMemory(scope, expr)
	if err != nil {
		return nil, err
	}
	if moved {
		bp, err := c.delve.CreateWatchpoint(hot, spelled, wtype)
		if bp != nil {
			bp.WatchExpr = expr
		}
		return bp, err
	}
	ds, err := c.delveScope(scope)
	if err != nil {
		return nil, err
	}
	return c.delve.CreateWatchpoint(ds, expr, wtype)
}
