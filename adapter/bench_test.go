package adapter

import (
	"slices"
	"testing"
	"time"

	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"
)

// The benchmarks time the Client against plain Delve calls on the same
// Delve session, called in process as splitdbg's doors call it, for the
// calls the Client changes. "plain" is the cheapest plain Delve call that gives the same result where Delve can:
// for a cold line, a breakpoint at the addresses splitdbg resolves.
//
// The machine is shared and loaded, so each iteration runs the plain call
// and the client call back to back, in alternating order, and the
// benchmark reports the median of each (plain-µs, client-µs) and the
// client's added latency (added-%); ns/op is the pair.

// compare runs plain and client once per iteration and reports medians.
func compare(b *testing.B, plain, client func()) {
	b.ReportAllocs()
	var pd, cd []time.Duration
	i := 0
	for b.Loop() {
		first, second, fd, sd := plain, client, &pd, &cd
		if i%2 == 1 {
			first, second, fd, sd = client, plain, &cd, &pd
		}
		t0 := time.Now()
		first()
		t1 := time.Now()
		second()
		*fd = append(*fd, t1.Sub(t0))
		*sd = append(*sd, time.Since(t1))
		i++
	}
	p, c := median(pd), median(cd)
	b.ReportMetric(float64(p)/1e3, "plain-µs")
	b.ReportMetric(float64(c)/1e3, "client-µs")
	b.ReportMetric(100*(float64(c)-float64(p))/float64(p), "added-%")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkCreateBreakpoint creates and clears a breakpoint.
func BenchmarkCreateBreakpoint(b *testing.B) {
	s := startInProcess(b, "gcc-cold", "cold")
	file, line := coldLine(b, "gcccold/main.c", "process")
	res, err := s.client.Resolver().Resolve(spec(file, line))
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name  string
		plain func() (*api.Breakpoint, error)
		ours  func() (*api.Breakpoint, error)
	}{
		{"function",
			func() (*api.Breakpoint, error) {
				return s.plain.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.note_cold"})
			},
			func() (*api.Breakpoint, error) {
				return s.client.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.note_cold"})
			}},
		{"split-function",
			func() (*api.Breakpoint, error) {
				return s.plain.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.process"})
			},
			func() (*api.Breakpoint, error) {
				return s.client.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.process"})
			}},
		{"cold-line",
			func() (*api.Breakpoint, error) { return s.plain.CreateBreakpoint(&api.Breakpoint{Addrs: res.Addrs()}) },
			func() (*api.Breakpoint, error) {
				return s.client.CreateBreakpoint(&api.Breakpoint{File: file, Line: line})
			}},
	}
	for _, tc := range cases {
		run := func(create func() (*api.Breakpoint, error)) func() {
			return func() {
				bp, err := create()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.plain.ClearBreakpoint(bp.ID); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(tc.name, func(b *testing.B) { compare(b, run(tc.plain), run(tc.ours)) })
	}
}

// BenchmarkStacktrace takes a 50-frame stack trace at a stop in an
// ordinary function (pass-through) and at stops in moved code: in a C
// program (frames named) and in a cgo program (frames named, and the C
// frames Delve loses unwound with .eh_frame). "cached" repeats the trace
// at one stop; "first" drops the client's per-stop cache before every
// call: the cost of the first trace at a stop.
func BenchmarkStacktrace(b *testing.B) {
	cases := []struct {
		name, bin, src, marker, fn string
	}{
		{"ordinary", "gcc-cold", "", "", "C.note_cold"},
		{"moved-c", "gcc-cold", "gcccold/main.c", "process", ""},
		{"moved-cgo", "cgo", "cgo/split.c", "c_classify", ""},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s := startInProcess(b, tc.bin, "cold")
			req := &api.Breakpoint{FunctionName: tc.fn}
			if tc.fn == "" {
				file, line := coldLine(b, tc.src, tc.marker)
				req = &api.Breakpoint{File: file, Line: line}
			}
			if _, err := s.client.CreateBreakpoint(req); err != nil {
				b.Fatal(err)
			}
			if st := <-s.client.Continue(); st.Err != nil {
				b.Fatal(st.Err)
			}
			s.plain.ListDynamicLibraries()
			plain := func() {
				if _, err := s.plain.Stacktrace(-1, 50, 0, 0, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("cached", func(b *testing.B) {
				compare(b, plain, func() {
					if _, err := s.client.Stacktrace(-1, 50, 0, 0, nil); err != nil {
						b.Fatal(err)
					}
				})
			})
			b.Run("first", func(b *testing.B) {
				compare(b, plain, func() {
					s.client.forget()
					if _, err := s.client.Stacktrace(-1, 50, 0, 0, nil); err != nil {
						b.Fatal(err)
					}
				})
			})
		})
	}
}

// forget drops what the client learned at this stop, except the stop
// state Continue reported: as if the stop were new.
func (c *Client) forget() {
	c.mu.Lock()
	c.gen++
	c.stop = stopCache{}
	c.mu.Unlock()
}

// BenchmarkArgs reads the arguments of a frame at vars' cold stop. "moved"
// is frame 0, in moved code, through the client (plain Delve cannot);
// its reference is plain Delve's reading of frame 1 (main, two locals
// and two arguments) at the same stop. "caller" is frame 1 through the
// client, which unwinds its registers through CFI and reads it itself,
// against plain Delve. The client reads a frame's registers and memory
// once per stop: "first" drops them before each call, the cost of the
// first args at a stop.
func BenchmarkArgs(b *testing.B) {
	s := startInProcess(b, "vars", "cold")
	file, line := coldLine(b, "vars/vars.c", "inspect")
	if _, err := s.client.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
		b.Fatal(err)
	}
	if st := <-s.client.Continue(); st.Err != nil {
		b.Fatal(st.Err)
	}
	up := api.EvalScope{GoroutineID: -1, Frame: 1}
	read := func(f func(api.EvalScope, api.LoadConfig) ([]api.Variable, error), scope api.EvalScope) func() {
		return func() {
			if _, err := f(scope, loadCfg); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("moved", func(b *testing.B) {
		compare(b, read(s.plain.ListFunctionArgs, up), read(s.client.ListFunctionArgs, curScope))
	})
	b.Run("moved-first", func(b *testing.B) {
		args := read(s.client.ListFunctionArgs, curScope)
		compare(b, read(s.plain.ListFunctionArgs, up), func() { s.client.forget(); args() })
	})
	b.Run("moved-locals", func(b *testing.B) {
		compare(b, read(s.plain.ListLocalVariables, up), read(s.client.ListLocalVariables, curScope))
	})
	b.Run("caller", func(b *testing.B) {
		compare(b, read(s.plain.ListFunctionArgs, up), read(s.client.ListFunctionArgs, up))
	})
	b.Run("caller-first", func(b *testing.B) {
		args := read(s.client.ListFunctionArgs, up)
		compare(b, read(s.plain.ListFunctionArgs, up), func() { s.client.forget(); args() })
	})
}

// BenchmarkFullStack is "bt -full" of three frames — a stack trace with
// every frame's arguments and locals — at a stop in moved code through
// the client (vars' cold line, in inspect.cold), against plain Delve's
// same request at a stop in hot code of the same function (inspect's
// entry, in another session of the same program). "first" drops what
// the client learned at the stop before each call.
func BenchmarkFullStack(b *testing.B) {
	moved := startInProcess(b, "vars", "cold")
	file, line := coldLine(b, "vars/vars.c", "inspect")
	if _, err := moved.client.CreateBreakpoint(&api.Breakpoint{File: file, Line: line}); err != nil {
		b.Fatal(err)
	}
	hot := startInProcess(b, "vars", "cold")
	if _, err := hot.plain.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.inspect"}); err != nil {
		b.Fatal(err)
	}
	for _, s := range []*session{moved, hot} {
		if st := <-s.client.Continue(); st.Err != nil || st.Exited {
			b.Fatalf("continue: %+v", st)
		}
	}
	full := func(c service.Client) func() {
		return func() {
			frames, err := c.Stacktrace(-1, 3, 0, 0, &loadCfg)
			if err != nil || len(frames) < 2 {
				b.Fatalf("stack: %d frames, %v", len(frames), err)
			}
		}
	}
	b.Run("cached", func(b *testing.B) { compare(b, full(hot.plain), full(moved.client)) })
	b.Run("first", func(b *testing.B) {
		f := full(moved.client)
		compare(b, full(hot.plain), func() { moved.client.forget(); f() })
	})
}
