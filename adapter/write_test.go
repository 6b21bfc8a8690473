package adapter

import (
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"
)

// TestWriteInMovedFrame stops at withdraw's cold line (in withdraw.cold)
// and, in that frame, sets a variable in memory, refuses one held in a
// register, and watches a global: the watchpoint stops where the cold
// path writes it (backorder += shortfall), as gdb's watch does. Plain
// Delve answers each with "unable to find function context".
func TestWriteInMovedFrame(t *testing.T) {
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(bin, func(t *testing.T) {
			s := startDelve(t, bin, "cold")
			c := s.client
			file, line := coldLine(t, "inv/inv.c", "withdraw")
			if _, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
				t.Fatal(err)
			}
			if st := <-c.Continue(); st.Err != nil || st.Exited {
				t.Fatalf("continue: %+v", st)
			}
			if err := s.plain.SetVariable(curScope, "it.qty", "7"); err == nil {
				t.Logf("plain Delve set it.qty in the moved frame")
			}
			if err := c.SetVariable(curScope, "it.qty", "7"); err != nil {
				t.Fatalf("set it.qty = 7: %v", err)
			}
			if v, err := c.EvalVariable(curScope, "stock[1].qty", loadCfg); err != nil || v.Value != "7" {
				t.Errorf("after set it.qty = 7 (it is &stock[1]): stock[1].qty = %+v, %v", v, err)
			}
			err := c.SetVariable(curScope, "shortfall", "9")
			if v, _ := c.EvalVariable(curScope, "shortfall", loadCfg); err == nil && (v == nil || v.Value != "9") {
				t.Errorf("set shortfall = 9: no error, but shortfall = %+v", v)
			} else if err != nil && !strings.Contains(err.Error(), "register") {
				t.Errorf("set shortfall = 9: %v", err)
			}
			wp, err := c.CreateWatchpoint(curScope, "backorder", api.WatchWrite)
			if err != nil {
				t.Fatalf("watch -w backorder: %v", err)
			}
			if _, err := c.ClearBreakpoint(1); err != nil {
				t.Fatal(err)
			}
			st := <-c.Continue()
			if st.Err != nil || st.Exited || st.CurrentThread == nil || st.CurrentThread.Breakpoint == nil || st.CurrentThread.Breakpoint.ID != wp.ID {
				t.Fatalf("continue to the watchpoint: %+v", st)
			}
			if v, err := c.EvalVariable(curScope, "backorder", loadCfg); err != nil || v.Value != "3" {
				t.Errorf("at the watchpoint: backorder = %+v, %v; want 3 (the first shortfall)", v, err)
			}
			if th := st.CurrentThread; th.Function == nil || th.Function.Name() != "C.withdraw" {
				t.Errorf("watchpoint stop in %+v, want C.withdraw", th.Function)
			}
		})
	}
}
