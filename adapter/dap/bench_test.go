package dap

import (
	"syscall"
	"testing"
	"time"

	"github.com/google/go-dap"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// BenchmarkRequests measures the round trip of the requests an editor
// sends at every stop (threads, stackTrace, scopes, variables, evaluate)
// in hot Go code, through splitdbg's server and through Delve's own DAP
// server ("dlv dap", in this process), on the same program and stop.
//
// Both servers are stopped at the same breakpoint; each iteration sends
// the request to one and then to the other, which one first alternating,
// so that the load of a shared machine falls on both alike. It reports
// per server the wall time (splitdbg-ns/op, dlv-ns/op) and this
// process's CPU time (client, server and Delve, not the debugged
// program; splitdbg-cpu-ns/op, dlv-cpu-ns/op) of one request, and
// splitdbg's over dlv's: ratio (wall) and cpu-ratio.
func BenchmarkRequests(b *testing.B) {
	bin := testbin.Path(b, "cgo")
	path := sourcePath(b, bin, "main.go", 26)
	type stop struct {
		c                *client
		thread, frame, v int
	}
	var stops []stop
	for _, addr := range []func() string{func() string { return serve(b) }, func() string { return dlvDAP(b) }} {
		c := dial(b, addr())
		launch(b, c, bin)
		call[*dap.SetBreakpointsResponse](c, "setBreakpoints", map[string]any{
			"source": map[string]any{"path": path}, "breakpoints": []map[string]any{{"line": 26}}})
		call[*dap.ConfigurationDoneResponse](c, "configurationDone", nil)
		ev := nextEvent[*dap.StoppedEvent](c)
		st := call[*dap.StackTraceResponse](c, "stackTrace", map[string]any{"threadId": ev.Body.ThreadId, "levels": 20})
		frame := st.Body.StackFrames[0].Id
		sc := call[*dap.ScopesResponse](c, "scopes", map[string]any{"frameId": frame})
		stops = append(stops, stop{c, ev.Body.ThreadId, frame, sc.Body.Scopes[0].VariablesReference})
		defer call[*dap.DisconnectResponse](c, "disconnect", map[string]any{"terminateDebuggee": true})
	}
	for _, req := range []struct {
		name string
		do   func(s stop)
	}{
		{"threads", func(s stop) { call[*dap.ThreadsResponse](s.c, "threads", nil) }},
		{"stackTrace", func(s stop) {
			call[*dap.StackTraceResponse](s.c, "stackTrace", map[string]any{"threadId": s.thread, "levels": 20})
		}},
		{"scopes", func(s stop) { call[*dap.ScopesResponse](s.c, "scopes", map[string]any{"frameId": s.frame}) }},
		{"variables", func(s stop) {
			call[*dap.VariablesResponse](s.c, "variables", map[string]any{"variablesReference": s.v})
		}},
		{"evaluate", func(s stop) {
			call[*dap.EvaluateResponse](s.c, "evaluate", map[string]any{"expression": "x", "frameId": s.frame, "context": "hover"})
		}},
	} {
		b.Run(req.name, func(b *testing.B) {
			b.ReportAllocs()
			var wall, cpu [2]int64
			for n := 0; b.Loop(); n++ {
				for k := range 2 {
					i := (n + k) % 2
					t, c := time.Now(), cpuTime(b)
					req.do(stops[i])
					cpu[i] += cpuTime(b) - c
					wall[i] += int64(time.Since(t))
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(wall[0])/n, "splitdbg-ns/op")
			b.ReportMetric(float64(wall[1])/n, "dlv-ns/op")
			b.ReportMetric(float64(cpu[0])/n, "splitdbg-cpu-ns/op")
			b.ReportMetric(float64(cpu[1])/n, "dlv-cpu-ns/op")
			b.ReportMetric(float64(wall[0])/float64(wall[1]), "ratio")
			b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu-ratio")
		})
	}
}

// cpuTime returns the CPU time this process has used, user and system.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
