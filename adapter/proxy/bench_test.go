package proxy

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"
)

// BenchmarkProxy times calls through the proxy against the same calls
// straight to Delve, as they are deployed: Delve, the proxy and a plain
// TCP relay each in its own process (this test binary again), the clients
// in this one. Delve is stopped on a cold line of gcc-cold or cgo.
//
//   - direct: an rpc2 client of Delve;
//   - relay: an rpc2 client of a process that copies bytes both ways
//     between it and Delve: the least any proxy costs (one more loopback
//     hop each way);
//   - proxy: an rpc2 client of the proxy;
//   - adapter: for the calls the adapter answers, an adapter.Client of
//     Delve in this process: the proxy's answer without the proxy.
//
// The machine is shared, so each iteration runs the calls back to back,
// in rotating order, and the benchmark reports the median of each
// (µs) and the proxy's added latency over the direct call (added-%),
// over the relay (over-relay-%) and over the adapter (over-adapter-%);
// ns/op is the whole iteration.
func BenchmarkProxy(b *testing.B) {
	for _, tc := range []coldCase{coldCases[0], coldCases[3]} {
		b.Run(tc.bin, func(b *testing.B) {
			s := newBenchSession(b, tc)
			calls := []struct {
				name string
				call func(c service.Client)
				// rewritten: the adapter answers it in the proxy
				rewritten bool
			}{
				{"ProcessPid", func(c service.Client) { c.ProcessPid() }, false},
				{"ExamineMemory", func(c service.Client) { c.ExamineMemory(s.pc, 64) }, false},
				{"ListDynamicLibraries", func(c service.Client) { c.ListDynamicLibraries() }, false},
				{"State", func(c service.Client) { c.GetState() }, true},
				{"ListBreakpoints", func(c service.Client) { c.ListBreakpoints(false) }, true},
				{"Eval", func(c service.Client) { c.EvalVariable(curScope, "1+2", api.LoadConfig{}) }, true},
				{"FindLocation-cold", func(c service.Client) { c.FindLocation(curScope, s.loc, true, nil) }, true},
				{"Stacktrace", func(c service.Client) { c.Stacktrace(-1, 50, 0, 0, nil) }, true},
				{"Disassemble", func(c service.Client) { c.DisassemblePC(curScope, s.pc, api.IntelFlavour) }, true},
			}
			for _, call := range calls {
				b.Run(call.name, func(b *testing.B) {
					fs := []timed{
						{"direct", func() { call.call(s.direct) }},
						{"relay", func() { call.call(s.relay) }},
						{"proxy", func() { call.call(s.proxy) }},
					}
					if call.rewritten {
						fs = append(fs, timed{"adapter", func() { call.call(s.ad) }})
					}
					compare(b, fs)
				})
			}
		})
	}
}

// timed is one way to make a call.
type timed struct {
	name string
	call func()
}

// compare runs each call once per iteration and reports medians.
func compare(b *testing.B, fs []timed) {
	b.ReportAllocs()
	ds := make([][]time.Duration, len(fs))
	i := 0
	for b.Loop() {
		for k := range fs {
			j := (i + k) % len(fs)
			t0 := time.Now()
			fs[j].call()
			ds[j] = append(ds[j], time.Since(t0))
		}
		i++
	}
	med := make(map[string]float64)
	for j, f := range fs {
		slices.Sort(ds[j])
		med[f.name] = float64(ds[j][len(ds[j])/2])
		b.ReportMetric(med[f.name]/1e3, f.name+"-µs")
	}
	p := med["proxy"]
	b.ReportMetric(100*(p-med["direct"])/med["direct"], "added-%")
	b.ReportMetric(100*(p-med["relay"])/med["relay"], "over-relay-%")
	if a, ok := med["adapter"]; ok {
		b.ReportMetric(100*(p-a)/a, "over-adapter-%")
	}
}

// benchSession is Delve stopped at a cold line and its clients.
type benchSession struct {
	direct, relay, proxy, ad service.Client
	pc                       uint64
	loc                      string
}

func newBenchSession(b *testing.B, tc coldCase) *benchSession {
	d := startChildDelve(b, "127.0.0.1:0", tc.bin, "cold")
	p := startChild(b, childSpec{Kind: "proxy", Listen: "127.0.0.1:0", Upstream: d.addr, Executable: d.bin})
	r := startChild(b, childSpec{Kind: "relay", Listen: "127.0.0.1:0", Upstream: d.addr})
	ad := newAdapter(b, &d.upstream)
	s := &benchSession{direct: d.direct, relay: dialRPC(b, r.addr), proxy: dialRPC(b, p.addr), ad: ad}
	file, line := coldLine(b, tc.src, tc.marker)
	s.loc = fmt.Sprintf("%s:%d", file, line)
	if _, err := s.proxy.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
		b.Fatal(err)
	}
	st := <-s.proxy.Continue()
	if st.Err != nil || st.CurrentThread == nil {
		b.Fatalf("continue: %+v", st)
	}
	s.pc = st.CurrentThread.PC
	d.direct.ListDynamicLibraries()
	return s
}

// BenchmarkProxyContinue times what a debugging session is made of:
// continue to a breakpoint (on a line bolt22 runs 64,000 times: every
// continue, whoever makes it, stops at its next hit) and a backtrace with
// the variables of every frame (bt -full), in the same processes as
// BenchmarkProxy.
func BenchmarkProxyContinue(b *testing.B) {
	d := startChildDelve(b, "127.0.0.1:0", "bolt22")
	p := startChild(b, childSpec{Kind: "proxy", Listen: "127.0.0.1:0", Upstream: d.addr, Executable: d.bin})
	r := startChild(b, childSpec{Kind: "relay", Listen: "127.0.0.1:0", Upstream: d.addr})
	ad := newAdapter(b, &d.upstream)
	s := &benchSession{direct: d.direct, relay: dialRPC(b, r.addr), proxy: dialRPC(b, p.addr), ad: ad}
	locs, _, err := s.proxy.FindLocation(curScope, "bolt.c:41", true, nil)
	if err != nil || len(locs) != 1 {
		b.Fatalf("FindLocation: %v, %v", locs, err)
	}
	if _, err := s.proxy.CreateBreakpoint(&api.Breakpoint{Addrs: locs[0].PCs}); err != nil {
		b.Fatal(err)
	}
	d.direct.ListDynamicLibraries()
	cont := func(c service.Client) func() {
		return func() {
			if st := <-c.Continue(); st.Err != nil || st.Exited {
				b.Fatalf("continue: %+v", st)
			}
		}
	}
	b.Run("Continue", func(b *testing.B) {
		compare(b, []timed{{"direct", cont(s.direct)}, {"relay", cont(s.relay)}, {"proxy", cont(s.proxy)}, {"adapter", cont(s.ad)}})
	})
	full := api.LoadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 64, MaxArrayValues: 64, MaxStructFields: -1}
	bt := func(c service.Client) func() {
		return func() { c.Stacktrace(-1, 50, 0, 0, &full) }
	}
	b.Run("StacktraceFull", func(b *testing.B) {
		compare(b, []timed{{"direct", bt(s.direct)}, {"relay", bt(s.relay)}, {"proxy", bt(s.proxy)}, {"adapter", bt(s.ad)}})
	})
}
