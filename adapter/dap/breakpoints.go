package dap

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-dap"
)

// breakpoints remembers which Delve breakpoints each DAP request set: a
// setBreakpoints request replaces those of its source, the function and
// instruction requests theirs.
type breakpoints struct {
	mu       sync.Mutex
	bySource map[string]map[int]int // source path → line → breakpoint ID
	funcs    map[string]int         // function name → ID
	instrs   map[string]int         // instruction reference → ID
	kind     map[int]string         // ID → the stopped reason it gives
	logs     map[int]string         // ID → log message of a logpoint
	// paths maps a file as the binary names it to the path the client
	// named it by in setBreakpoints, so frames point at the client's
	// file (a compile directory's relative "src/a.c" is no path an
	// editor can open).
	paths map[string]string
}

// source returns the DAP source of a file the binary names.
func (b *breakpoints) source(file string) *dap.Source {
	b.mu.Lock()
	p, ok := b.paths[file]
	b.mu.Unlock()
	if !ok {
		p = file
	}
	return &dap.Source{Name: filepath.Base(p), Path: p}
}

func (b *breakpoints) init() {
	b.bySource = map[string]map[int]int{}
	b.funcs = map[string]int{}
	b.instrs = map[string]int{}
	b.kind = map[int]string{}
	b.logs = map[int]string{}
	b.paths = map[string]string{}
}

// reason returns the stopped-event reason of breakpoint id.
func (b *breakpoints) reason(id int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k, ok := b.kind[id]; ok {
		return k
	}
	return "breakpoint"
}

func (b *breakpoints) logMessage(id int) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.logs[id]
	return m, ok
}

// want is one breakpoint a request asks for, whatever its kind.
type want struct {
	key                    string
	cond, hitCond, message string
}

// place makes Delve's breakpoints match wants: an existing breakpoint of
// the same key is amended, a new one created, and the ones no
// longer wanted cleared; request gives the Delve request for want i. It
// returns the DAP answer for each want.
func (s *Server) place(d *debuggee, kind string, existing map[string]int, wants []want, request func(i int) (*api.Breakpoint, error)) []dap.Breakpoint {
	out := make([]dap.Breakpoint, len(wants))
	s.stopped(d, func() {
		keep := map[string]bool{}
		for _, w := range wants {
			keep[w.key] = true
		}
		for key, id := range existing {
			if !keep[key] {
				d.c.ClearBreakpoint(id)
				delete(existing, key)
				d.bps.forget(id)
			}
		}
		seen := map[string]bool{}
		for i, w := range wants {
			var bp *api.Breakpoint
			var err error
			if seen[w.key] {
				err = errors.New("breakpoint exists at this location")
			} else if id, ok := existing[w.key]; ok {
				bp, err = d.c.GetBreakpoint(id)
				if err == nil {
					setCondition(bp, w)
					err = d.c.AmendBreakpoint(bp)
				}
			} else {
				var req *api.Breakpoint
				if req, err = request(i); err == nil {
					setCondition(req, w)
					bp, err = d.c.CreateBreakpoint(req)
				}
			}
			seen[w.key] = true
			if err != nil {
				out[i] = dap.Breakpoint{Verified: false, Message: err.Error()}
				continue
			}
			existing[w.key] = bp.ID
			d.bps.remember(bp.ID, kind, w.message)
			out[i] = dapBreakpoint(bp)
		}
	})
	return out
}

// setCondition applies a want's condition and hit condition to bp. A
// logpoint is an ordinary breakpoint the server continues from after
// printing its message, so its {expressions} are evaluated by the core,
// in moved frames too.
func setCondition(bp *api.Breakpoint, w want) {
	bp.Cond, bp.HitCond = w.cond, w.hitCond
}

func (b *breakpoints) remember(id int, kind, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kind[id] = kind
	if msg != "" {
		b.logs[id] = msg
	} else {
		delete(b.logs, id)
	}
}

func (b *breakpoints) forget(id int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.kind, id)
	delete(b.logs, id)
}

// dapBreakpoint describes a Delve breakpoint to the client: verified,
// with the line and source it stops at.
func dapBreakpoint(bp *api.Breakpoint) dap.Breakpoint {
	out := dap.Breakpoint{Id: bp.ID, Verified: len(bp.Addrs) > 0 || bp.Addr != 0, Line: bp.Line}
	if bp.File != "" {
		out.Source = &dap.Source{Name: filepath.Base(bp.File), Path: bp.File}
	}
	if len(bp.Addrs) > 0 {
		out.InstructionReference = fmt.Sprintf("%#x", bp.Addrs[0])
	} else if bp.Addr != 0 {
		out.InstructionReference = fmt.Sprintf("%#x", bp.Addr)
	}
	if !out.Verified {
		out.Message = "no code at this location"
	}
	return out
}

func (s *Server) onSetBreakpoints(d *debuggee, r *dap.SetBreakpointsRequest) {
	path := r.Arguments.Source.Path
	if path == "" {
		s.fail(&r.Request, errUnsupported, "Unable to set or clear breakpoints", errors.New("the source has no path"))
		return
	}
	d.bps.mu.Lock()
	lines := d.bps.bySource[path]
	if lines == nil {
		lines = map[int]int{}
		d.bps.bySource[path] = lines
	}
	d.bps.mu.Unlock()
	existing := map[string]int{}
	for line, id := range lines {
		existing[strconv.Itoa(line)] = id
	}
	wants := make([]want, len(r.Arguments.Breakpoints))
	for i, b := range r.Arguments.Breakpoints {
		wants[i] = want{key: strconv.Itoa(b.Line), cond: b.Condition, hitCond: b.HitCondition, message: b.LogMessage}
	}
	out := s.place(d, "breakpoint", existing, wants, func(i int) (*api.Breakpoint, error) {
		return &api.Breakpoint{File: path, Line: r.Arguments.Breakpoints[i].Line}, nil
	})
	d.bps.mu.Lock()
	for i := range out {
		if f := out[i].Source; f != nil && f.Path != path {
			d.bps.paths[f.Path] = path
		}
	}
	clear(lines)
	for key, id := range existing {
		n, _ := strconv.Atoi(key)
		lines[n] = id
	}
	d.bps.mu.Unlock()
	for i := range out {
		if out[i].Line == 0 {
			out[i].Line = r.Arguments.Breakpoints[i].Line
		}
		out[i].Source = &dap.Source{Name: filepath.Base(path), Path: path}
	}
	s.send(&dap.SetBreakpointsResponse{Response: response(&r.Request), Body: dap.SetBreakpointsResponseBody{Breakpoints: out}})
}

func (s *Server) onSetFunctionBreakpoints(d *debuggee, r *dap.SetFunctionBreakpointsRequest) {
	wants := make([]want, len(r.Arguments.Breakpoints))
	for i, b := range r.Arguments.Breakpoints {
		wants[i] = want{key: b.Name, cond: b.Condition, hitCond: b.HitCondition}
	}
	out := s.place(d, "function breakpoint", d.bps.funcs, wants, func(i int) (*api.Breakpoint, error) {
		addrs, err := s.functionAddrs(d, r.Arguments.Breakpoints[i].Name)
		if err != nil {
			return nil, err
		}
		return &api.Breakpoint{Addrs: addrs}, nil
	})
	s.send(&dap.SetFunctionBreakpointsResponse{Response: response(&r.Request), Body: dap.SetFunctionBreakpointsResponseBody{Breakpoints: out}})
}

// functionAddrs finds a function breakpoint's addresses. Delve's own
// lookup (through the core, split-aware) comes first; a C function is
// found by its name with or without Delve's "C." prefix, in the
// executable or a loaded library.
func (s *Server) functionAddrs(d *debuggee, name string) ([]uint64, error) {
	if name == "" {
		return nil, errors.New("empty function name")
	}
	var first error
	if d.goProgram {
		locs, _, err := d.c.FindLocation(api.EvalScope{GoroutineID: -1}, name, true, nil)
		if err == nil && len(locs) > 0 && len(locs[0].PCs) > 0 {
			return locs[0].PCs, nil
		}
		first = err
	}
	res, err := d.c.Resolver().Resolve(strings.TrimPrefix(name, "C."))
	if err == nil && len(res.Locs) > 0 {
		return res.Addrs(), nil
	}
	if first == nil {
		first = err
	}
	if first == nil {
		first = fmt.Errorf("could not find function %s", name)
	}
	return nil, first
}

func (s *Server) onSetInstructionBreakpoints(d *debuggee, r *dap.SetInstructionBreakpointsRequest) {
	wants := make([]want, len(r.Arguments.Breakpoints))
	for i, b := range r.Arguments.Breakpoints {
		wants[i] = want{key: fmt.Sprintf("%s%+d", b.InstructionReference, b.Offset), cond: b.Condition, hitCond: b.HitCondition}
	}
	out := s.place(d, "instruction breakpoint", d.bps.instrs, wants, func(i int) (*api.Breakpoint, error) {
		b := r.Arguments.Breakpoints[i]
		addr, err := strconv.ParseUint(b.InstructionReference, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("instruction reference %q: not an address", b.InstructionReference)
		}
		return &api.Breakpoint{Addr: addr + uint64(int64(b.Offset))}, nil
	})
	s.send(&dap.SetInstructionBreakpointsResponse{Response: response(&r.Request), Body: dap.SetInstructionBreakpointsResponseBody{Breakpoints: out}})
}
