package proxy

import (
	"testing"

	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/rpc2"
	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/adapter"
)

// TestCallerFrames stops at the first instruction of inv's value (through
// the proxy, on a breakpoint at the function's entry) and checks that a
// client of the proxy gets audit's arguments, locals and registers in
// frame 1 as the adapter reads them at the same stop (registers unwound
// through CFI; adapter's TestCallerVariablesAsGDB compares those with
// gdb), where plain Delve lacks the callee-saved registers.
func TestCallerFrames(t *testing.T) {
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(bin, func(t *testing.T) {
			c, core := stopBoth(t, bin, 2, func(c *rpc2.RPCClient) *api.Breakpoint {
				locs, _, err := c.FindLocation(api.EvalScope{GoroutineID: -1}, "C.value", false, nil)
				if err != nil || len(locs) == 0 || locs[0].Function == nil {
					t.Fatalf("FindLocation(C.value): %v %v", locs, err)
				}
				return &api.Breakpoint{Addr: locs[0].Function.Value}
			})
			scope := api.EvalScope{GoroutineID: -1, Frame: 1}
			cfg := api.LoadConfig{MaxStringLen: 64}
			for what, got := range sameVariables(t, c, core, scope, cfg) {
				for _, v := range got {
					if v.Unreadable != "" {
						t.Errorf("frame 1 %s: %s unreadable (%s)", what, v.Name, v.Unreadable)
					}
				}
			}
			got, err := c.ListScopeRegisters(scope, false)
			if err != nil {
				t.Fatal(err)
			}
			want, err := core.ListScopeRegisters(scope, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("frame 1 registers (-adapter +proxy):\n%s", diff)
			}
		})
	}
}

// sameVariables checks that a client of the proxy gets the arguments and
// locals of scope that the adapter gives, and returns the proxy's by
// "args" and "locals".
func sameVariables(t *testing.T, c service.Client, core *adapter.Client, scope api.EvalScope, cfg api.LoadConfig) map[string][]api.Variable {
	t.Helper()
	out := map[string][]api.Variable{}
	for _, call := range []struct {
		name         string
		proxy, local func(api.EvalScope, api.LoadConfig) ([]api.Variable, error)
	}{
		{"args", c.ListFunctionArgs, core.ListFunctionArgs},
		{"locals", c.ListLocalVariables, core.ListLocalVariables},
	} {
		got, err := call.proxy(scope, cfg)
		if err != nil {
			t.Fatalf("frame %d %s: %v", scope.Frame, call.name, err)
		}
		want, err := call.local(scope, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("frame %d %s (-adapter +proxy):\n%s", scope.Frame, call.name, diff)
		}
		out[call.name] = got
	}
	return out
}

// stopBoth runs bin on its cold path under Delve, with a client of the
// proxy and an adapter over Delve, both closed at the end of the test;
// it sets the breakpoint bp returns through the proxy and continues to
// its n-th hit.
func stopBoth(t *testing.T, bin string, n int, bp func(*rpc2.RPCClient) *api.Breakpoint) (*rpc2.RPCClient, *adapter.Client) {
	t.Helper()
	up := startDelve(t, bin, "cold")
	_, addr := startProxy(t, up)
	c := dialRPC(t, addr)
	t.Cleanup(func() { c.Disconnect(false) })
	if _, err := c.CreateBreakpoint(bp(c)); err != nil {
		t.Fatal(err)
	}
	for range n {
		if st := <-c.Continue(); st.Err != nil || st.Exited {
			t.Fatalf("continue: %+v", st)
		}
	}
	core, err := adapter.New(up.direct, up.bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	return c, core
}
