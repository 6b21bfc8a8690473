package dap

import (
	"testing"

	"github.com/google/go-dap"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// BenchmarkRequests measures the round trip of the requests an editor
// sends at every stop (threads, stackTrace, scopes, variables, evaluate)
// in hot Go code, through splitdbg's server and through Delve's own DAP
// server ("dlv dap", in this process), on the same program and stop.
func BenchmarkRequests(b *testing.B) {
	bin := testbin.Path(b, "cgo")
	path := sourcePath(b, bin, "main.go", 26)
	servers := []struct {
		name string
		addr func() string
	}{
		{"splitdbg", func() string { return serve(b) }},
		{"dlv", func() string { return dlvDAP(b) }},
	}
	for _, srv := range servers {
		c := dial(b, srv.addr())
		launch(b, c, bin)
		call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
			"source": map[string]any{"path": path}, "breakpoints": []map[string]any{{"line": 26}}})
		call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
		ev := nextEvent[*dap.StoppedEvent](c)
		st := call[*dap.StackTraceResponse](c, "stackTrace", map[string]any{"threadId": ev.Body.ThreadId, "levels": 20})
		frame := st.Body.StackFrames[0].Id
		sc := call[*dap.ScopesResponse](c, "scopes", map[string]any{"frameId": frame})
		ref := sc.Body.Scopes[0].VariablesReference
		for _, req := range []struct {
			name string
			do   func()
		}{
			{"threads", func() { call[*dap.ThreadsResponse](c, "threads", nil) }},
			{"stackTrace", func() {
				call[*dap.StackTraceResponse](c, "stackTrace", map[string]any{"threadId": ev.Body.ThreadId, "levels": 20})
			}},
			{"scopes", func() { call[*dap.ScopesResponse](c, "scopes", map[string]any{"frameId": frame}) }},
			{"variables", func() { call[*dap.VariablesResponse](c, "variables", map[string]any{"variablesReference": ref}) }},
			{"evaluate", func() {
				call[*dap.EvaluateResponse](c, "evaluate", map[string]any{"expression": "x", "frameId": frame, "context": "hover"})
			}},
		} {
			b.Run(req.name+"/"+srv.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					req.do()
				}
			})
		}
		call[*dap.DisconnectResponse](c, "disconnect", map[string]any{"terminateDebuggee": true})
	}
}
