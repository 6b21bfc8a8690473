package proxy

import (
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/rpc2"
	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/delvetest"
)

// TestInlinedFrames stops through the proxy in kind_name, inlined into
// syntax_error, inlined into step's moved code (inl), and checks that a
// client of the proxy gets the stack with the inlined frames, each
// frame's arguments and locals, and print of a table indexed by a field
// in the inlined frame, as the adapter gives them at the same stop
// (adapter's TestInlinedFramesAsGDB compares those with gdb).
func TestInlinedFrames(t *testing.T) {
	for _, bin := range []string{"gcc-inl", "clang22-inl"} {
		t.Run(bin, func(t *testing.T) {
			file, line := delvetest.ColdLine(t, "inl/inl.c", "syntax_error")
			c, core := stopBoth(t, bin, 1, func(*rpc2.RPCClient) *api.Breakpoint { return &api.Breakpoint{File: file, Line: line} })
			cfg := api.LoadConfig{MaxStringLen: 64, MaxArrayValues: 16, MaxStructFields: -1, MaxVariableRecurse: 1, FollowPointers: true}
			got, err := c.Stacktrace(-1, 10, 0, 0, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			want, err := core.Stacktrace(-1, 10, 0, 0, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Up to main: below it, in the C library without its debug
			// file, Delve's frames end in errors as deep as it reads.
			upToMain := func(fs []api.Stackframe) []api.Stackframe {
				for i := range fs {
					if fs[i].Function != nil && fs[i].Function.Name() == "C.main" {
						return fs[:i+1]
					}
				}
				return fs
			}
			got, want = upToMain(got), upToMain(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stack (-adapter +proxy):\n%s", diff)
			}
			if len(got) < 3 || got[1].PC != got[0].PC || got[0].Function.Name() != "C.syntax_error" && got[0].Function.Name() != "C.kind_name" {
				t.Fatalf("no inlined frames at the stop: %+v", got)
			}
			for i := range got {
				if strings.TrimPrefix(got[i].Function.Name(), "C.") == "main" {
					break
				}
				scope := api.EvalScope{GoroutineID: -1, Frame: i}
				sameVariables(t, c, core, scope, cfg)
				g, gerr := c.EvalVariable(scope, "kinds[op->p5 - 1]", cfg)
				w, werr := core.EvalVariable(scope, "kinds[op->p5 - 1]", cfg)
				if (gerr == nil) != (werr == nil) || gerr == nil && !cmp.Equal(w, g) {
					t.Errorf("frame %d: print kinds[op->p5 - 1]: proxy %+v, %v; adapter %+v, %v", i, g, gerr, w, werr)
				}
			}
		})
	}
}
