package proxy

import (
	"testing"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/delvetest"
)

// TestMovedFrameExpressions prints C expressions — globals, statics, ->,
// &, casts, pointer arithmetic — at withdraw's cold line through the
// proxy, as dlv connect would: each answer is the adapter's, over its own
// connection to the same Delve (the adapter's are compared with gdb's in
// package adapter), and the first stop is withdraw(1, 4): "nut", 1 left.
func TestMovedFrameExpressions(t *testing.T) {
	cfg := api.LoadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 64, MaxArrayValues: 64, MaxStructFields: -1}
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(bin, func(t *testing.T) {
			up := startDelve(t, bin, "cold")
			ad := newAdapter(t, up)
			_, addr := startProxy(t, up)
			c := dialRPC(t, addr)
			defer c.Disconnect(false)
			file, line := delvetest.ColdLine(t, "inv/inv.c", "withdraw")
			if _, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
				t.Fatal(err)
			}
			if st := <-c.Continue(); st.Err != nil || st.Exited {
				t.Fatalf("Continue: %+v", st)
			}
			for expr, want := range map[string]string{
				"nstock": "4", "it->qty": "1", "stock[idx].name": "nut", "failures": "0", "(char)it->qty": "1",
				"(struct item *)it == &stock[1]": "true", "(it + 1)->price": "40", "&stock[3] - it": "2", "stock": "",
			} {
				v, err := c.EvalVariable(curScope, expr, cfg)
				if err != nil {
					t.Errorf("print %s: %v", expr, err)
					continue
				}
				if want != "" && v.Value != want {
					t.Errorf("print %s = %s; want %s", expr, v.Value, want)
				}
				av, err := ad.EvalVariable(curScope, expr, cfg)
				if err != nil {
					t.Errorf("adapter: print %s: %v", expr, err)
				} else if diff := cmp.Diff(av, v); diff != "" {
					t.Errorf("print %s (-adapter +proxy):\n%s", expr, diff)
				}
			}
		})
	}
}
