package proxy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/delvetest"
)

// TestColdLine drives a real headless Delve through the proxy with an
// rpc2 client, as an editor or script would: on each binary's cold path
// it breaks on a cold line, continues, and reads the stop, the backtrace,
// the disassembly, the function list and the breakpoints. Every answer
// must be the adapter's (over its own connection to the same Delve), and
// plain Delve must still fail where the issue says it does.
func TestColdLine(t *testing.T) {
	for _, tc := range coldCases {
		t.Run(tc.bin, func(t *testing.T) {
			up := startDelve(t, tc.bin, "cold")
			// Direct connections first: Delve's SetApiVersion, which rpc2
			// clients send first, races with other connections' requests.
			ad := newAdapter(t, up)
			_, addr := startProxy(t, up)
			c := dialRPC(t, addr)
			defer c.Disconnect(false)
			file, line := coldLine(t, tc.src, tc.marker)
			loc := fmt.Sprintf("%s:%d", file, line)

			pl, _, err := up.direct.FindLocation(curScope, loc, true, nil)
			if err != nil || len(pl) != 1 || len(pl[0].PCs) != 0 {
				t.Errorf("plain FindLocation(%s) = %+v, %v; want no PCs (Delve 1.27)", loc, pl, err)
			}
			locs, _, err := c.FindLocation(curScope, loc, true, nil)
			if err != nil || len(locs) != 1 || len(locs[0].PCs) == 0 {
				t.Fatalf("FindLocation(%s) = %+v, %v", loc, locs, err)
			}
			alocs, _, _ := ad.FindLocation(curScope, loc, true, nil)
			if diff := cmp.Diff(alocs, locs); diff != "" {
				t.Errorf("FindLocation(%s) (-adapter +proxy):\n%s", loc, diff)
			}

			bp, err := c.CreateBreakpoint(&api.Breakpoint{File: file, Line: line})
			if err != nil {
				t.Fatalf("CreateBreakpoint(%s): %v", loc, err)
			}
			if !slices.Equal(bp.Addrs, locs[0].PCs) || bp.FunctionName != tc.fn || !strings.HasSuffix(bp.File, tc.file) || bp.Line != line {
				t.Errorf("CreateBreakpoint(%s) = %s %s:%d %#x; want %s %s:%d %#x", loc, bp.FunctionName, bp.File, bp.Line, bp.Addrs, tc.fn, tc.file, line, locs[0].PCs)
			}
			if pb, err := up.direct.GetBreakpoint(bp.ID); err != nil || pb.FunctionName != "" {
				t.Errorf("plain GetBreakpoint = %q, %v; want Delve's nameless breakpoint", pb.FunctionName, err)
			}

			st := <-c.Continue()
			if st.Err != nil || st.Exited || st.CurrentThread == nil {
				t.Fatalf("Continue: %+v", st)
			}
			th := st.CurrentThread
			if !slices.Contains(bp.Addrs, th.PC) || th.Function.Name() != tc.fn || !strings.HasSuffix(th.File, tc.file) || th.Line != line {
				t.Errorf("stop at %#x %s %s:%d; want %s %s:%d at %#x", th.PC, th.Function.Name(), th.File, th.Line, tc.fn, tc.file, line, bp.Addrs)
			}
			if th.Breakpoint == nil || th.Breakpoint.ID != bp.ID || th.Breakpoint.FunctionName != tc.fn {
				t.Errorf("stop breakpoint %+v; want %d in %s", th.Breakpoint, bp.ID, tc.fn)
			}

			// The stop and the backtrace. Delve's unwinder reads a shared
			// library's CFI once its image list is loaded, which an adapter's
			// first look at a library does: load it first so that every
			// stack below sees the same Delve.
			up.direct.ListDynamicLibraries()
			frames, err := c.Stacktrace(-1, 50, 0, 0, nil)
			if err != nil || len(frames) == 0 {
				t.Fatalf("Stacktrace: %v, %v", frames, err)
			}
			if f := frames[0]; f.Function.Name() != tc.fn || f.Line != line {
				t.Errorf("frame 0 = %s:%d; want %s:%d", f.Function.Name(), f.Line, tc.fn, line)
			}
			delvetest.CheckCallers(t, frames, tc.stack)
			plain, err := up.direct.Stacktrace(-1, 50, 0, 0, nil)
			if err != nil || len(plain) == 0 || plain[0].Function != nil {
				t.Errorf("plain frame 0 = %+v, %v; want ??? (Delve 1.27)", plain, err)
			}
			afr, _ := ad.Stacktrace(-1, 50, 0, 0, nil)
			if diff := cmp.Diff(realFrames(afr), realFrames(frames)); diff != "" {
				t.Errorf("Stacktrace (-adapter +proxy):\n%s", diff)
			}
			for _, d := range []int{0, 1, 3} { // depth and skip as Delve takes them
				pf, err := c.Stacktrace(-1, d, 1, 0, nil)
				af, _ := ad.Stacktrace(-1, d, 1, 0, nil)
				if diff := cmp.Diff(realFrames(af), realFrames(pf)); err != nil || diff != "" {
					t.Errorf("Stacktrace(depth %d, skip 1): %v (-adapter +proxy):\n%s", d, err, diff)
				}
			}
			cs, err := c.GetState()
			as, _ := ad.GetState()
			sortThreads(cs, as)
			if diff := cmp.Diff(as, cs); err != nil || diff != "" {
				t.Errorf("GetState: %v (-adapter +proxy):\n%s", err, diff)
			}

			// Arguments and locals of the moved frame 0, and a stack with
			// variables: the adapter's; plain Delve has none.
			cfg := api.LoadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 64, MaxArrayValues: 64, MaxStructFields: -1}
			for _, call := range []struct {
				name         string
				proxy, adapt func(api.EvalScope, api.LoadConfig) ([]api.Variable, error)
			}{{"ListFunctionArgs", c.ListFunctionArgs, ad.ListFunctionArgs}, {"ListLocalVariables", c.ListLocalVariables, ad.ListLocalVariables}} {
				pv, err := call.proxy(curScope, cfg)
				av, aerr := call.adapt(curScope, cfg)
				if diff := cmp.Diff(av, pv); err != nil || aerr != nil || diff != "" {
					t.Errorf("%s: %v, %v (-adapter +proxy):\n%s", call.name, err, aerr, diff)
				}
			}
			if _, err := up.direct.ListFunctionArgs(curScope, cfg); err == nil {
				t.Errorf("plain ListFunctionArgs in moved code worked; Delve 1.27 finds no function context")
			}
			if args, _ := c.ListFunctionArgs(curScope, cfg); len(args) > 0 {
				v, err := c.EvalVariable(curScope, args[0].Name, cfg)
				if err != nil || v.Value != args[0].Value {
					t.Errorf("Eval(%s) = %+v, %v; want %q", args[0].Name, v, err, args[0].Value)
				}
			} else {
				t.Errorf("no arguments in %s through the proxy", tc.fn)
			}
			if full, err := c.Stacktrace(-1, 1, 0, 0, &cfg); err != nil || len(full) == 0 || len(full[0].Arguments) == 0 {
				t.Errorf("Stacktrace with variables: frame 0 has no arguments (%v)", err)
			}

			// Disassembly covers every fragment.
			ins, err := c.DisassemblePC(curScope, th.PC, api.IntelFlavour)
			if err != nil {
				t.Fatalf("DisassemblePC: %v", err)
			}
			ranges := ad.Resolver().Ranges(th.PC)
			if len(ranges) < 2 {
				t.Fatalf("Ranges(%#x) = %v: not split", th.PC, ranges)
			}
			for _, r := range ranges {
				if !slices.ContainsFunc(ins, func(in api.AsmInstruction) bool { return in.Loc.PC == r.Start }) {
					t.Errorf("disassembly lacks fragment [%#x,%#x)", r.Start, r.End)
				}
			}
			ains, _ := ad.DisassemblePC(curScope, th.PC, api.IntelFlavour)
			if diff := cmp.Diff(ains, ins); diff != "" {
				t.Errorf("DisassemblePC (-adapter +proxy):\n%s", diff)
			}
			if _, err := up.direct.DisassemblePC(curScope, th.PC, api.IntelFlavour); err == nil {
				t.Errorf("plain DisassemblePC in moved code worked; Delve 1.27 refuses it")
			}

			fns, err := c.ListFunctions("^"+strings.ReplaceAll(tc.fn, ".", `\.`)+"$", 0)
			if err != nil || !slices.Equal(fns, []string{tc.fn}) {
				t.Errorf("ListFunctions(%s) = %v, %v", tc.fn, fns, err)
			}
			bps, err := c.ListBreakpoints(false)
			abps, _ := ad.ListBreakpoints(false)
			if diff := cmp.Diff(normBreakpoints(abps), normBreakpoints(bps)); err != nil || diff != "" {
				t.Errorf("ListBreakpoints: %v (-adapter +proxy):\n%s", err, diff)
			}

			// The cold path runs to the end.
			if _, err := c.ClearBreakpoint(bp.ID); err != nil {
				t.Fatal(err)
			}
			st = <-c.Continue()
			if !st.Exited || st.ExitStatus != 0 {
				t.Errorf("final continue: %+v", st)
			}
		})
	}
}

// realFrames returns the frames before the first one Delve could not
// read: past the C start-up code Delve 1.27 lists frames with an error,
// one more at each call.
var realFrames = delvetest.RealFrames

// normBreakpoints sorts breakpoints by ID and the addresses of those with
// several: Delve lists both in map order.
func normBreakpoints(bps []*api.Breakpoint) []*api.Breakpoint {
	out := make([]*api.Breakpoint, len(bps))
	for i, bp := range bps {
		c := *bp
		if len(c.Addrs) > 1 {
			c.Addrs = slices.Sorted(slices.Values(c.Addrs))
			c.Addr = c.Addrs[0]
		}
		out[i] = &c
	}
	slices.SortFunc(out, func(a, b *api.Breakpoint) int {
		if a.ID != b.ID {
			return a.ID - b.ID
		}
		return int(a.Addr) - int(b.Addr)
	})
	return out
}

// sortThreads sorts the threads of states: Delve lists them in map order.
func sortThreads(sts ...*api.DebuggerState) {
	for _, st := range sts {
		if st != nil {
			slices.SortFunc(st.Threads, func(a, b *api.Thread) int { return a.ID - b.ID })
		}
	}
}
