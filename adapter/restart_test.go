package adapter

import (
	"slices"
	"testing"

	"github.com/go-delve/delve/service/api"
)

// TestRestart restarts a PIE program: a breakpoint on a cold line keeps
// its ID and moves to the new load bias, and new breakpoints get new IDs.
// Plain Delve discards a breakpoint it was given as a list of addresses.
func TestRestart(t *testing.T) {
	file, line := coldLine(t, "demo/demo.c", "scale")
	s := startDelve(t, "demo", "cold")
	c := s.client
	cold, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line})
	if err != nil {
		t.Fatal(err)
	}
	warn, err := c.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.warn"})
	if err != nil {
		t.Fatal(err)
	}
	before := c.Resolver().ExecutableBias()
	discarded, err := c.Restart(false)
	if err != nil || len(discarded) != 0 {
		t.Fatalf("Restart: %v, discarded %+v", err, discarded)
	}
	after := c.Resolver().ExecutableBias()
	t.Logf("load bias %#x, after restart %#x", before, after)
	res, err := c.Resolver().Resolve(spec(file, line))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBreakpoint(cold.ID)
	if err != nil || !slices.Equal(got.Addrs, res.Addrs()) || got.FunctionName != "C.scale" || got.Line != line {
		t.Fatalf("breakpoint %d after restart: %+v, %v; want %#x", cold.ID, got, err, res.Addrs())
	}
	sum, err := c.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.sum"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ID == cold.ID || sum.ID == warn.ID {
		t.Fatalf("new breakpoint reuses ID %d", sum.ID)
	}
	// sum, whose cold path calls warn, then scale.cold, which calls warn.
	for _, want := range []int{sum.ID, warn.ID, cold.ID, warn.ID} {
		st := <-c.Continue()
		if st.Err != nil || st.CurrentThread == nil || st.CurrentThread.Breakpoint == nil || st.CurrentThread.Breakpoint.ID != want {
			t.Fatalf("Continue: %+v; want a stop at breakpoint %d", st, want)
		}
	}
}

func TestRestartPlain(t *testing.T) {
	file, line := coldLine(t, "demo/demo.c", "scale")
	s := startDelve(t, "demo", "cold")
	res, err := s.client.Resolver().Resolve(spec(file, line))
	if err != nil {
		t.Fatal(err)
	}
	bp, err := s.plain.CreateBreakpoint(&api.Breakpoint{Addrs: res.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	discarded, err := s.plain.Restart(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(discarded) != 1 || discarded[0].Breakpoint.ID != bp.ID {
		t.Errorf("plain Restart discarded %+v; want breakpoint %d", discarded, bp.ID)
	} else {
		t.Logf("plain Delve: %s", discarded[0].Reason)
	}
}
