package proxy

import (
	"testing"

	"github.com/go-delve/delve/service/api"
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
			up := startDelve(t, bin, "cold")
			_, addr := startProxy(t, up)
			c := dialRPC(t, addr)
			defer c.Disconnect(false)
			locs, _, err := c.FindLocation(api.EvalScope{GoroutineID: -1}, "C.value", false, nil)
			if err != nil || len(locs) == 0 || locs[0].Function == nil {
				t.Fatalf("FindLocation(C.value): %v %v", locs, err)
			}
			if _, err := c.CreateBreakpoint(&api.Breakpoint{Addr: locs[0].Function.Value}); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if st := <-c.Continue(); st.Err != nil || st.Exited {
					t.Fatalf("continue: %+v", st)
				}
			}
			core, err := adapter.New(up.direct, up.bin)
			if err != nil {
				t.Fatal(err)
			}
			defer core.Close()
			scope := api.EvalScope{GoroutineID: -1, Frame: 1}
			cfg := api.LoadConfig{MaxStringLen: 64}
			for _, call := range []struct {
				name         string
				proxy, local func(api.EvalScope, api.LoadConfig) ([]api.Variable, error)
			}{
				{"args", c.ListFunctionArgs, core.ListFunctionArgs},
				{"locals", c.ListLocalVariables, core.ListLocalVariables},
			} {
				got, err := call.proxy(scope, cfg)
				if err != nil {
					t.Fatal(err)
				}
				want, err := call.local(scope, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("frame 1 %s (-adapter +proxy):\n%s", call.name, diff)
				}
				for _, v := range got {
					if v.Unreadable != "" {
						t.Errorf("frame 1 %s: %s unreadable (%s)", call.name, v.Name, v.Unreadable)
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
