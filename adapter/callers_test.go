package adapter

import (
	"debug/elf"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/gdbtest"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestCallerVariablesAsGDB stops at the first instruction of callees
// whose callers keep variables in callee-saved registers (inv's audit:
// total, i and to in rbp, rbx and r12 at -O2; main: got and cold) and
// compares the arguments and locals of every caller frame, up to main,
// value by value with gdb 13's "frame N" + "info args" + "info locals" at
// the same stops, and its callee-saved registers and PC with gdb's. At a callee's entry no callee-saved register has been
// saved yet: Delve's unwinder has no value for them in the caller
// ("register not available", or 0).
func TestCallerVariablesAsGDB(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, tc := range []struct {
		bin     string
		args    []string
		callees []string // symbol prefixes: a stop at the entry of each
	}{
		{"gcc-inv", []string{"cold"}, []string{"value", "complain"}},
		{"clang22-inv", []string{"cold"}, []string{"value", "complain"}},
		{"vars", []string{"cold"}, []string{"sink", "note"}},
		{"demo", []string{"cold"}, []string{"warn", "scale"}},
	} {
		t.Run(tc.bin, func(t *testing.T) {
			s := startDelve(t, tc.bin, tc.args...)
			c := s.client
			entries := entrySymbols(t, s.bin, tc.callees)
			want := gdbCallerVariables(t, gdb, s.bin, entries, tc.args)
			img := executableRange(t, s.bin)
			for _, e := range entries {
				if _, err := c.CreateBreakpoint(&api.Breakpoint{Addr: e.Value + c.Resolver().ExecutableBias()}); err != nil {
					t.Fatal(err)
				}
			}
			compared := 0
			seen := gdbtest.Seen{}
			stops := eachStop(t, c, want, func(stop int, g gdbtest.Stop) {
				frames, err := c.Stacktrace(-1, 10, 0, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, gf := range g.Frames {
					if gf.N >= len(frames) || strings.TrimPrefix(frames[gf.N].Function.Name(), "C.") != gf.Name {
						t.Errorf("stop %d: frame %d is not %s", stop+1, gf.N, gf.Name)
						continue
					}
					scope := api.EvalScope{GoroutineID: -1, Frame: gf.N}
					args, err := c.ListFunctionArgs(scope, loadCfg)
					if err != nil {
						t.Fatalf("stop %d: frame %d args: %v", stop+1, gf.N, err)
					}
					locs, err := c.ListLocalVariables(scope, loadCfg)
					if err != nil {
						t.Fatalf("stop %d: frame %d locals: %v", stop+1, gf.N, err)
					}
					where := fmt.Sprintf("stop %d (%s), frame %d %s", stop+1, frames[0].Function.Name(), gf.N, gf.Name)
					regs, err := c.ListScopeRegisters(scope, false)
					if err != nil {
						t.Fatalf("%s: registers: %v", where, err)
					}
					compared += compareRegisters(t, where, gf.Regs, regs, g.Bias, c.Resolver().ExecutableBias(), img)
					compared += compareVariables(t, where, gf.Vars, append(args, locs...), g.Bias, c.Resolver().ExecutableBias(), img,
						knownTo(tc.bin, gf.Name, seen))
				}
			})
			if compared == 0 {
				t.Fatal("no variable compared")
			}
			gdbtest.CheckSeen(t, tc.bin, seen)
			t.Logf("%d stops, %d values equal to gdb's", stops, compared)
		})
	}
}

// eachStop continues c until the program ends and calls f at each stop,
// numbered from 0, with gdb's stop of the same number; it returns the
// number of stops and fails unless gdb stopped as often.
func eachStop(t *testing.T, c *Client, want []gdbtest.Stop, f func(stop int, g gdbtest.Stop)) int {
	t.Helper()
	stop := 0
	for ; ; stop++ {
		st := <-c.Continue()
		if st.Exited {
			break
		}
		if st.Err != nil {
			t.Fatal(st.Err)
		}
		if stop >= len(want) {
			t.Fatalf("stop %d: gdb stopped only %d times", stop+1, len(want))
		}
		f(stop, want[stop])
	}
	if stop != len(want) {
		t.Errorf("%d stops, gdb %d", stop, len(want))
	}
	return stop
}

// entrySymbols returns the function symbols of bin named by one of the
// prefixes (complain matches GCC's complain.isra.0).
func entrySymbols(t *testing.T, bin string, prefixes []string) []elf.Symbol {
	t.Helper()
	syms, err := testbin.OpenELF(t, bin).Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var out []elf.Symbol
	for _, p := range prefixes {
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && (s.Name == p || strings.HasPrefix(s.Name, p+".") && !strings.Contains(s.Name, ".cold")) {
				out = append(out, s)
			}
		}
	}
	if len(out) != len(prefixes) {
		t.Fatalf("%s: entries %v for %v", bin, out, prefixes)
	}
	return out
}

// executableRange returns the link-time addresses the executable's
// loadable segments cover.
func executableRange(t *testing.T, bin string) [2]uint64 {
	r := [2]uint64{^uint64(0), 0}
	for _, p := range testbin.OpenELF(t, bin).Progs {
		if p.Type == elf.PT_LOAD {
			r[0], r[1] = min(r[0], p.Vaddr), max(r[1], p.Vaddr+p.Memsz)
		}
	}
	return r
}

// gdbCallerVariables runs bin under gdb with a breakpoint at each entry
// and returns, at each stop, the arguments and locals gdb shows in every
// frame from 1 to main.
func gdbCallerVariables(t *testing.T, gdb, bin string, entries []elf.Symbol, args []string) []gdbtest.Stop {
	t.Helper()
	var breaks []string
	for _, e := range entries {
		breaks = append(breaks, fmt.Sprintf("*'%s'", e.Name))
	}
	return gdbtest.Frames(t, gdb, bin, breaks, 1, nil, args)
}

// compareVariables compares gdb's variables of a frame with the Client's
// and returns how many values it compared: as gdb prints them (gdbText,
// pointers as "0x…"), and pointers into the executable also by link-time
// address (each debugger runs the program at its own load address).
func compareVariables(t *testing.T, where string, want [][2]string, got []api.Variable, gdbBias, ourBias uint64, img [2]uint64, known func(name string, differs bool) bool) int {
	t.Helper()
	n := 0
	for _, w := range want {
		i := slices.IndexFunc(got, func(v api.Variable) bool { return v.Name == w[0] })
		if i < 0 {
			if !known(w[0], true) {
				t.Errorf("%s: %s = %s in gdb, missing", where, w[0], w[1])
			}
			continue
		}
		g := got[i]
		got = slices.Delete(got, i, i+1)
		if ours, theirs := gdbText(g), gdbPointers.ReplaceAllString(w[1], "0x…"); ours != theirs {
			if !known(w[0], true) {
				t.Errorf("%s: %s = %s %s, gdb %s", where, w[0], ours, g.Unreadable, w[1])
			}
			continue
		}
		known(w[0], false)
		n++
		if g.Kind != reflect.Pointer || g.Unreadable != "" {
			continue
		}
		ga, err1 := strconv.ParseUint(strings.Fields(w[1])[0], 0, 64)
		oa, err2 := strconv.ParseUint(g.Value, 10, 64)
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %s = %q, gdb %s", where, w[0], g.Value, w[1])
		} else if gl := ga - gdbBias; gl >= img[0] && gl < img[1] && gl != oa-ourBias {
			t.Errorf("%s: %s = %#x (link address %#x), gdb %s (%#x)", where, w[0], oa, oa-ourBias, w[1], gl)
		}
	}
	for _, g := range got {
		if !known(g.Name, true) {
			t.Errorf("%s: %s = %s, not in gdb", where, g.Name, gdbText(g))
		}
	}
	return n
}

// knownTo is compareVariables' known for function fn of bin: whether a
// variable that differs is a listed difference, and for one that agrees
// a record of that (gdbtest.Seen).
func knownTo(bin, fn string, seen gdbtest.Seen) func(string, bool) bool {
	return func(name string, differs bool) bool {
		if !differs {
			gdbtest.Agree(bin, fn, name, seen)
			return false
		}
		return gdbtest.Known(bin, fn, name, seen) != ""
	}
}

// TestCallerVariablesInStack checks that a stack loaded with variables
// (bt -full) carries the same variables of a caller frame as
// ListLocalVariables in that frame: audit's total, i and to at value's
// first instruction, which Delve reads without the callee-saved
// registers.
func TestCallerVariablesInStack(t *testing.T) {
	s := startDelve(t, "gcc-inv", "cold")
	c := s.client
	e := entrySymbols(t, s.bin, []string{"value"})[0]
	if _, err := c.CreateBreakpoint(&api.Breakpoint{Addr: e.Value + c.Resolver().ExecutableBias()}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second call: total 27, i 1
		if st := <-c.Continue(); st.Err != nil || st.Exited {
			t.Fatalf("continue: %+v", st)
		}
	}
	frames, err := c.Stacktrace(-1, 5, 0, 0, &loadCfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) < 2 || frames[1].Function.Name() != "C.audit" {
		t.Fatalf("frame 1 is not audit: %+v", frames)
	}
	locs, err := c.ListLocalVariables(api.EvalScope{GoroutineID: -1, Frame: 1}, loadCfg)
	if err != nil {
		t.Fatal(err)
	}
	got, want := map[string]string{}, map[string]string{}
	for _, v := range frames[1].Locals {
		got[v.Name] = gdbText(v)
	}
	for _, v := range locs {
		want[v.Name] = gdbText(v)
	}
	if !maps.Equal(got, want) || got["total"] != "27" || got["i"] != "1" {
		t.Errorf("frame 1 locals in the stack %v; ListLocalVariables %v; want total 27, i 1", got, want)
	}
}

// compareRegisters compares the registers gdb unwound for a frame with
// the Client's, values that are not addresses as they are, addresses in
// the executable as link-time addresses; stack and library addresses
// differ between two runs and are not compared.
func compareRegisters(t *testing.T, where string, want []gdbtest.Reg, got api.Registers, gdbBias, ourBias uint64, img [2]uint64) int {
	t.Helper()
	n := 0
	for _, w := range want {
		i := slices.IndexFunc(got, func(r api.Register) bool { return strings.EqualFold(r.Name, w.Name) })
		if i < 0 {
			t.Errorf("%s: no register %s; gdb %#x", where, w.Name, w.V)
			continue
		}
		v, err := strconv.ParseUint(strings.Fields(got[i].Value)[0], 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		switch gl := w.V - gdbBias; {
		case gl >= img[0] && gl < img[1]:
			if v-ourBias != gl {
				t.Errorf("%s: %s = %#x (link address %#x); gdb %#x (%#x)", where, w.Name, v, v-ourBias, w.V, gl)
			}
		case w.V >= 1<<32 && w.V-gdbBias >= 1<<32:
			continue // a stack or library address
		case v != w.V:
			t.Errorf("%s: %s = %#x; gdb %#x", where, w.Name, v, w.V)
		}
		n++
	}
	return n
}

// TestTerminalCallerLocals runs "frame 1 locals" and "frame 1 args" in
// Delve's terminal over the Client (splitdbg debug) at the second stop at
// value's first instruction, and compares each variable it prints with
// gdb's at the same stop: audit's total, i and to live in rbp, rbx and
// r12 there.
func TestTerminalCallerLocals(t *testing.T) {
	gdb := testbin.Tool(t, "gdb")
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(bin, func(t *testing.T) {
			s := startDelve(t, bin, "cold")
			e := entrySymbols(t, s.bin, []string{"value"})
			want := gdbCallerVariables(t, gdb, s.bin, e, []string{"cold"})
			if len(want) < 2 || len(want[1].Frames) == 0 || want[1].Frames[0].Name != "audit" {
				t.Fatalf("gdb's second stop is not in a callee of audit: %+v", want)
			}
			at := fmt.Sprintf("*%#x", e[0].Value+s.client.Resolver().ExecutableBias())
			out := runTerminal(t, s.client, "break "+at, "continue", "continue", "frame 1 args", "frame 1 locals")
			printed := map[string]string{}
			for _, o := range out[3:] {
				for line := range strings.Lines(o) {
					if name, val, ok := strings.Cut(strings.TrimSpace(line), " = "); ok {
						printed[name] = val
					}
				}
			}
			n := 0
			for _, v := range want[1].Frames[0].Vars {
				if gdbtest.Known(bin, "audit", v[0], gdbtest.Seen{}) != "" || v[1] == "<optimized out>" {
					continue
				}
				n++
				if printed[v[0]] != v[1] {
					t.Errorf("frame 1: %s = %q; gdb %s\n%s%s", v[0], printed[v[0]], v[1], out[3], out[4])
				}
			}
			if n < 3 {
				t.Errorf("only %d of audit's variables compared", n)
			}
		})
	}
}

// TestFirstFullStack checks that the first "bt -full" at a stop (a stack
// with every frame's variables, before any other request there) gives the
// variables later requests in each frame give: at vars' cold line, main's
// argc and argv are entry values read in its caller, libc's
// __libc_start_call_main, whose library the client has not looked up yet
// at the first stop. argc is 2 (vars cold).
func TestFirstFullStack(t *testing.T) {
	s := startInProcess(t, "vars", "cold")
	c := s.client
	file, line := coldLine(t, "vars/vars.c", "inspect")
	if _, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
		t.Fatal(err)
	}
	if st := <-c.Continue(); st.Err != nil || st.Exited {
		t.Fatalf("continue: %+v", st)
	}
	frames, err := c.Stacktrace(-1, 3, 0, 0, &loadCfg)
	if err != nil || len(frames) < 2 {
		t.Fatalf("stack: %d frames, %v", len(frames), err)
	}
	text := func(vs []api.Variable) map[string]string {
		m := map[string]string{}
		for _, v := range vs {
			m[v.Name] = gdbText(v) + v.Unreadable
		}
		return m
	}
	for i, fr := range frames[:2] {
		scope := api.EvalScope{GoroutineID: -1, Frame: i}
		args, err := c.ListFunctionArgs(scope, loadCfg)
		if err != nil {
			t.Fatal(err)
		}
		locs, err := c.ListLocalVariables(scope, loadCfg)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := text(fr.Arguments), text(args); !maps.Equal(got, want) {
			t.Errorf("frame %d args in the first stack %v; ListFunctionArgs %v", i, got, want)
		}
		if got, want := text(fr.Locals), text(locs); !maps.Equal(got, want) {
			t.Errorf("frame %d locals in the first stack %v; ListLocalVariables %v", i, got, want)
		}
	}
	if got := text(frames[1].Arguments)["argc"]; got != "2" {
		t.Errorf("main's argc in the first stack = %q, want 2", got)
	}
}
