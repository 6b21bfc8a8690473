package adapter

import (
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-cmp/cmp"
)

// TestSplicedScopes checks frame numbers on the repaired cgo stack: a
// frame splitdbg unwound lists the registers the unwind recovered and its
// variables, which Delve has no scope for; a frame spliced back from Delve's stack is Delve's frame
// of the same function.
func TestSplicedScopes(t *testing.T) {
	s := startDelve(t, "cgo", "cold")
	file, line := coldLine(t, "cgo/split.c", "c_classify")
	if _, err := s.client.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
		t.Fatal(err)
	}
	if st := <-s.client.Continue(); st.Err != nil {
		t.Fatal(st.Err)
	}
	frames, err := s.client.Stacktrace(-1, 50, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := s.plain.Stacktrace(-1, 50, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	own := len(frames) - len(plain)
	if own != 2 {
		t.Fatalf("%d frames unwound by splitdbg; want 2:\n%s", own, formatFrames(frames))
	}
	for i := 1; i <= own; i++ {
		scope := api.EvalScope{GoroutineID: -1, Frame: i}
		regs, err := s.client.ListScopeRegisters(scope, false)
		if err != nil {
			t.Fatalf("frame %d registers: %v", i, err)
		}
		if rip := regValue(regs, regRIP); rip != frames[i].PC {
			t.Errorf("frame %d: Rip %#x; want the frame's PC %#x", i, rip, frames[i].PC)
		}
		// Delve has no scope for the frame; the Client reads its
		// variables with the registers it unwound.
		vs, err := s.client.ListLocalVariables(scope, api.LoadConfig{})
		if err != nil {
			t.Errorf("frame %d (%s) locals: %v", i, frames[i].Function.Name(), err)
		}
		t.Logf("frame %d (%s) locals: %d", i, frames[i].Function.Name(), len(vs))
	}
	// main.main: frame len(frames)-3 here, Delve's frame len(plain)-3.
	main := len(frames) - 3
	if frames[main].Function.Name() != "main.main" {
		t.Fatalf("frame %d is %s; want main.main:\n%s", main, frames[main].Function.Name(), formatFrames(frames))
	}
	cfg := api.LoadConfig{MaxStringLen: 64, MaxArrayValues: 64}
	got, err := s.client.ListLocalVariables(api.EvalScope{GoroutineID: -1, Frame: main}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.plain.ListLocalVariables(api.EvalScope{GoroutineID: -1, Frame: main - own}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("plain Delve lists no locals of main.main")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("main.main locals (-plain frame %d +client frame %d):\n%s", main-own, main, diff)
	}
}

func regValue(regs api.Registers, n int) uint64 {
	for _, r := range regs {
		if r.DwarfNumber == n {
			v, _ := strconv.ParseUint(strings.Fields(r.Value)[0], 0, 64)
			return v
		}
	}
	return 0
}
