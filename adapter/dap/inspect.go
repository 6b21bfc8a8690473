package dap

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-dap"
)

// loadConfig is what "dlv dap" loads of a variable (its DefaultLoadConfig).
var loadConfig = api.LoadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 512, MaxArrayValues: 64, MaxStructFields: -1}

// maxValueLen bounds the value string of a variable with children, as
// "dlv dap" does.
const maxValueLen = 256

// defaultLevels is the stack depth given when a request asks for none.
const defaultLevels = 50

// maxGoroutines bounds the threads request, as in "dlv dap".
const maxGoroutines = 1 << 10

// handles are the frame and variable references handed to the client;
// they are valid until the target runs again.
type handles struct {
	mu     sync.Mutex
	frames []frameRef
	vars   []*container
}

// frameRef is a stack frame the client may ask about.
type frameRef struct {
	thread, frame int
	fn            *api.Function
}

// container is a variable (or a scope) whose children the client may ask
// for.
type container struct {
	thread, frame int
	// expr is the expression that names it; "" in a scope.
	expr  string
	scope bool
	v     api.Variable
}

func (h *handles) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frames, h.vars = nil, nil
}

func (h *handles) frame(f frameRef) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frames = append(h.frames, f)
	return len(h.frames)
}

func (h *handles) getFrame(id int) (frameRef, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id < 1 || id > len(h.frames) {
		return frameRef{}, false
	}
	return h.frames[id-1], true
}

func (h *handles) container(c *container) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.vars = append(h.vars, c)
	return len(h.vars)
}

func (h *handles) getContainer(id int) (*container, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id < 1 || id > len(h.vars) {
		return nil, false
	}
	return h.vars[id-1], true
}

// scope returns Delve's evaluation scope for frame of thread, selecting
// the thread first in a program without goroutines.
func (s *Server) scope(d *debuggee, thread, frame int) (api.EvalScope, error) {
	if d.goProgram {
		return api.EvalScope{GoroutineID: int64(thread), Frame: frame}, nil
	}
	if err := s.selectThread(d, thread); err != nil {
		return api.EvalScope{}, err
	}
	return api.EvalScope{GoroutineID: -1, Frame: frame}, nil
}

func (s *Server) onThreads(d *debuggee, r *dap.ThreadsRequest) {
	resp := &dap.ThreadsResponse{Response: response(&r.Request)}
	if d.run.isRunning() {
		resp.Body.Threads = []dap.Thread{{Id: 1, Name: "Dummy"}}
		s.send(resp)
		return
	}
	threads, err := s.threads(d)
	if err != nil || len(threads) == 0 {
		if err != nil && !exited(err) {
			s.output("stderr", fmt.Sprintf("Unable to retrieve threads: %v\n", err))
		}
		threads = []dap.Thread{{Id: 1, Name: "Dummy"}}
	}
	resp.Body.Threads = threads
	s.send(resp)
}

// threads lists goroutines in a Go program, named as "dlv dap" names
// them, and OS threads in other programs.
func (s *Server) threads(d *debuggee) ([]dap.Thread, error) {
	st, err := d.c.GetStateNonBlocking()
	if err != nil {
		return nil, err
	}
	var out []dap.Thread
	if d.goProgram {
		gs, _, err := d.c.ListGoroutines(0, maxGoroutines)
		if err != nil {
			return nil, err
		}
		for _, g := range gs {
			sel := ""
			if st.SelectedGoroutine != nil && st.SelectedGoroutine.ID == g.ID {
				sel = "* "
			}
			th := ""
			if g.ThreadID != 0 {
				th = fmt.Sprintf(" (Thread %d)", g.ThreadID)
			}
			out = append(out, dap.Thread{Id: int(g.ID), Name: fmt.Sprintf("%s[Go %d] %s%s", sel, g.ID, fnName(g.UserCurrentLoc.Function), th)})
		}
		return out, nil
	}
	ths, err := d.c.ListThreads()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ths, func(a, b *api.Thread) int { return a.ID - b.ID })
	for _, th := range ths {
		sel := ""
		if st.CurrentThread != nil && st.CurrentThread.ID == th.ID {
			sel = "* "
		}
		out = append(out, dap.Thread{Id: th.ID, Name: fmt.Sprintf("%s[Thread %d] %s", sel, th.ID, fnName(th.Function))})
	}
	return out, nil
}

// fnName is a function's name as "dlv dap" shows it: the package path
// before the last slash left out.
func fnName(fn *api.Function) string {
	if fn == nil {
		return "???"
	}
	name := fn.Name()
	pkg := name
	if i := strings.IndexByte(pkg, '['); i >= 0 {
		pkg = pkg[:i]
	}
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func (s *Server) onStackTrace(d *debuggee, r *dap.StackTraceRequest) {
	if d.run.isRunning() {
		s.fail(&r.Request, errUnableToStackTrace, "Unable to produce stack trace", errors.New("the program is running"))
		return
	}
	start := max(r.Arguments.StartFrame, 0)
	levels := defaultLevels
	if r.Arguments.Levels > 0 {
		levels = r.Arguments.Levels
	}
	scope, err := s.scope(d, r.Arguments.ThreadId, 0)
	if err != nil {
		s.fail(&r.Request, errUnableToStackTrace, "Unable to produce stack trace", err)
		return
	}
	frames, err := d.c.Stacktrace(scope.GoroutineID, start+levels-1, 0, 0, nil)
	if err != nil {
		s.fail(&r.Request, errUnableToStackTrace, "Unable to produce stack trace", err)
		return
	}
	// A frame at address 0 is past the bottom of the stack.
	for i, f := range frames {
		if f.PC == 0 {
			frames = frames[:i]
			break
		}
	}
	out := []dap.StackFrame{}
	for i := start; i < start+levels && i < len(frames); i++ {
		f := &frames[i]
		sf := dap.StackFrame{
			Id:                          d.h.frame(frameRef{thread: r.Arguments.ThreadId, frame: i, fn: f.Function}),
			Name:                        fnName(f.Function),
			Line:                        f.Line,
			InstructionPointerReference: fmt.Sprintf("%#x", f.PC),
		}
		if f.File != "" && f.File != "?" && f.File != "<autogenerated>" {
			sf.Source = d.bps.source(f.File)
		}
		out = append(out, sf)
	}
	total := len(frames)
	if len(frames) >= start+levels && !frames[len(frames)-1].Bottom && frames[len(frames)-1].PC != 0 {
		total += defaultLevels // more may follow
	}
	s.send(&dap.StackTraceResponse{Response: response(&r.Request), Body: dap.StackTraceResponseBody{StackFrames: out, TotalFrames: total}})
}

func (s *Server) onScopes(d *debuggee, r *dap.ScopesRequest) {
	f, ok := d.h.getFrame(r.Arguments.FrameId)
	if !ok {
		s.fail(&r.Request, errUnableToListLocals, "Unable to list locals", fmt.Errorf("unknown frame id %d", r.Arguments.FrameId))
		return
	}
	if f.fn == nil {
		s.fail(&r.Request, errUnableToListLocals, "Unable to find enclosing function", errors.New("no function at this frame's address"))
		return
	}
	scope, err := s.scope(d, f.thread, f.frame)
	if err != nil {
		s.fail(&r.Request, errUnableToListLocals, "Unable to list locals", err)
		return
	}
	args, err := d.c.ListFunctionArgs(scope, loadConfig)
	if err != nil {
		s.fail(&r.Request, errUnableToListLocals, "Unable to list args", err)
		return
	}
	locals, err := d.c.ListLocalVariables(scope, loadConfig)
	if err != nil {
		s.fail(&r.Request, errUnableToListLocals, "Unable to list locals", err)
		return
	}
	name := "Locals"
	if f.fn.Optimized {
		name += " (warning: optimized function)"
	}
	c := &container{thread: f.thread, frame: f.frame, scope: true, v: api.Variable{Name: name, Children: append(args, locals...)}}
	s.send(&dap.ScopesResponse{Response: response(&r.Request), Body: dap.ScopesResponseBody{Scopes: []dap.Scope{
		{Name: name, VariablesReference: d.h.container(c)},
	}}})
}

func (s *Server) onVariables(d *debuggee, r *dap.VariablesRequest) {
	c, ok := d.h.getContainer(r.Arguments.VariablesReference)
	if !ok {
		s.fail(&r.Request, errUnableToDisplay, "Unable to lookup variable", fmt.Errorf("unknown reference %d", r.Arguments.VariablesReference))
		return
	}
	kids := c.v.Children
	indexed := !c.scope && (c.v.Kind == reflect.Array || c.v.Kind == reflect.Slice)
	if r.Arguments.Filter == "named" && indexed {
		kids = nil
	}
	first := 0
	if indexed && (r.Arguments.Start > 0 || r.Arguments.Count > 0) {
		first = min(max(r.Arguments.Start, 0), len(kids))
		end := len(kids)
		if r.Arguments.Count > 0 {
			end = min(first+r.Arguments.Count, end)
		}
		kids = kids[first:end]
	}
	out := []dap.Variable{}
	for i := range kids {
		k := &kids[i]
		name, expr := k.Name, ""
		switch {
		case indexed:
			name = fmt.Sprintf("[%d]", first+i)
			expr = fmt.Sprintf("%s[%d]", c.expr, first+i)
		case c.scope:
			expr = k.Name
		case c.v.Kind == reflect.Pointer:
			expr = fmt.Sprintf("(*%s)", c.expr)
		case c.v.Kind == reflect.Interface:
			expr = fmt.Sprintf("%s.(%s)", c.expr, k.Name)
		case c.expr != "":
			expr = c.expr + "." + k.Name
		}
		if strings.HasPrefix(k.Name, "~") || strings.HasPrefix(k.Name, ".") {
			expr = ""
		}
		if k.Flags&api.VariableShadowed != 0 {
			name = "(" + name + ")"
		}
		out = append(out, s.variable(d, c.thread, c.frame, name, expr, k))
	}
	s.send(&dap.VariablesResponse{Response: response(&r.Request), Body: dap.VariablesResponseBody{Variables: out}})
}

// variable describes v to the client, with a reference to its children.
func (s *Server) variable(d *debuggee, thread, frame int, name, expr string, v *api.Variable) dap.Variable {
	value, ref := s.convert(d, thread, frame, expr, v)
	out := dap.Variable{Name: name, Value: value, Type: s.typeName(v), EvaluateName: expr, VariablesReference: ref}
	if ref > 0 && (v.Kind == reflect.Array || v.Kind == reflect.Slice) {
		out.IndexedVariables = len(v.Children)
	}
	if v.Addr != 0 {
		out.MemoryReference = fmt.Sprintf("%#x", v.Addr)
	}
	return out
}

// convert returns the value string of v as "dlv dap" writes it and a
// reference to its children, if it has any worth showing.
func (s *Server) convert(d *debuggee, thread, frame int, expr string, v *api.Variable) (string, int) {
	value := formatValue(v)
	if v.Unreadable != "" {
		return value, 0
	}
	hasKids := false
	switch v.Kind {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n, err := strconv.ParseUint(api.ExtractIntValue(v.Value), 10, 64); err == nil {
			value = fmt.Sprintf("%s = %#x", value, n)
		}
	case reflect.UnsafePointer, reflect.String:
	case reflect.Pointer, reflect.Interface:
		hasKids = len(v.Children) > 0 && v.Children[0].Addr != 0 && v.Children[0].Kind != reflect.Invalid && !v.Children[0].OnlyAddr
	case reflect.Slice, reflect.Array, reflect.Map:
		hasKids = v.Base != 0 && len(v.Children) > 0 || v.Kind == reflect.Array && len(v.Children) > 0
	default:
		hasKids = len(v.Children) > 0
	}
	if !hasKids {
		return value, 0
	}
	if len(value) > maxValueLen {
		value = value[:maxValueLen] + "..."
	}
	return value, d.h.container(&container{thread: thread, frame: frame, expr: expr, v: *v})
}

// typeName is v's type for a client that shows types, as "dlv dap".
func (s *Server) typeName(v *api.Variable) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.variableTypes {
		return ""
	}
	return v.Type
}

// formatValue is a variable's value on one line, as "dlv dap" and the
// terminal print it.
func formatValue(v *api.Variable) string {
	return v.StringWithOptions("", "", api.PrettyShortenType)
}

func (s *Server) onEvaluate(d *debuggee, r *dap.EvaluateRequest) {
	if d.run.isRunning() {
		s.fail(&r.Request, errUnableToEvaluate, "Unable to evaluate expression", errors.New("the program is running"))
		return
	}
	thread, frame := 0, 0
	if r.Arguments.FrameId > 0 {
		f, ok := d.h.getFrame(r.Arguments.FrameId)
		if !ok {
			s.fail(&r.Request, errUnableToEvaluate, "Unable to evaluate expression", fmt.Errorf("unknown frame id %d", r.Arguments.FrameId))
			return
		}
		thread, frame = f.thread, f.frame
	}
	scope := api.EvalScope{GoroutineID: -1}
	if thread > 0 {
		var err error
		if scope, err = s.scope(d, thread, frame); err != nil {
			s.fail(&r.Request, errUnableToEvaluate, "Unable to evaluate expression", err)
			return
		}
	}
	cfg := loadConfig
	if r.Arguments.Context == "repl" || r.Arguments.Context == "clipboard" {
		cfg.MaxStringLen = 4 << 10
	}
	v, err := d.c.EvalVariable(scope, r.Arguments.Expression, cfg)
	if err != nil {
		s.fail(&r.Request, errUnableToEvaluate, "Unable to evaluate expression", err)
		return
	}
	value, ref := s.convert(d, thread, frame, r.Arguments.Expression, v)
	resp := &dap.EvaluateResponse{Response: response(&r.Request)}
	resp.Body = dap.EvaluateResponseBody{Result: value, Type: s.typeName(v), VariablesReference: ref}
	if ref > 0 && (v.Kind == reflect.Array || v.Kind == reflect.Slice) {
		resp.Body.IndexedVariables = len(v.Children)
	}
	s.send(resp)
}

func (s *Server) onSetVariable(d *debuggee, r *dap.SetVariableRequest) {
	c, ok := d.h.getContainer(r.Arguments.VariablesReference)
	if !ok {
		s.fail(&r.Request, errUnableToSetVariable, "Unable to set variable", fmt.Errorf("unknown reference %d", r.Arguments.VariablesReference))
		return
	}
	expr := r.Arguments.Name
	if !c.scope {
		switch {
		case strings.HasPrefix(expr, "["):
			expr = c.expr + expr
		case c.v.Kind == reflect.Pointer:
			expr = "(*" + c.expr + ")"
		default:
			expr = c.expr + "." + expr
		}
	}
	scope, err := s.scope(d, c.thread, c.frame)
	if err == nil {
		err = d.c.SetVariable(scope, expr, r.Arguments.Value)
	}
	if err != nil {
		s.fail(&r.Request, errUnableToSetVariable, "Unable to set variable", err)
		return
	}
	v, err := d.c.EvalVariable(scope, expr, loadConfig)
	if err != nil {
		s.fail(&r.Request, errUnableToSetVariable, "Unable to set variable", err)
		return
	}
	value, ref := s.convert(d, c.thread, c.frame, expr, v)
	resp := &dap.SetVariableResponse{Response: response(&r.Request)}
	resp.Body = dap.SetVariableResponseBody{Value: value, Type: s.typeName(v), VariablesReference: ref}
	s.send(resp)
}

// invalidInstruction fills a disassembly outside the code asked about.
var invalidInstruction = dap.DisassembledInstruction{Instruction: "invalid instruction"}

// onDisassemble disassembles around an address. In a function the core
// knows, the instructions are the function's in logical order, every
// fragment included, so stepping through a split function reads as one
// listing; elsewhere a window of memory around the address.
func (s *Server) onDisassemble(d *debuggee, r *dap.DisassembleRequest) {
	a := r.Arguments
	count := a.InstructionCount
	if count < 0 || count > 1<<16 {
		s.fail(&r.Request, errUnableToDisassemble, "Unable to disassemble", fmt.Errorf("instruction count %d out of range", count))
		return
	}
	addr, err := strconv.ParseUint(a.MemoryReference, 0, 64)
	if err != nil {
		s.fail(&r.Request, errUnableToDisassemble, "Unable to disassemble", err)
		return
	}
	addr += uint64(int64(a.Offset))
	out := make([]dap.DisassembledInstruction, count)
	for i := range out {
		out[i] = invalidInstruction
		out[i].Address = fmt.Sprintf("%#x", uint64(math.MaxUint64))
	}
	scope := api.EvalScope{GoroutineID: -1}
	ins, err := d.c.DisassemblePC(scope, addr, api.GoFlavour)
	if err != nil || !slices.ContainsFunc(ins, func(in api.AsmInstruction) bool { return in.Loc.PC == addr }) {
		const maxLen = 15 // x86-64's longest instruction
		lo := addr - uint64(max(-a.InstructionOffset, 0)*maxLen)
		hi := addr + uint64((max(a.InstructionOffset, 0)+count)*maxLen)
		ins, err = d.c.DisassembleRange(scope, lo, hi, api.GoFlavour)
		if err != nil {
			s.fail(&r.Request, errUnableToDisassemble, "Unable to disassemble", err)
			return
		}
	}
	at := slices.IndexFunc(ins, func(in api.AsmInstruction) bool { return in.Loc.PC == addr })
	if at < 0 {
		at = slices.IndexFunc(ins, func(in api.AsmInstruction) bool { return in.Loc.PC > addr })
		if at < 0 {
			at = len(ins)
		}
	}
	lastFile, lastLine := "", -1
	for i := range out {
		j := at + a.InstructionOffset + i
		if j < 0 {
			out[i].Address = "0x0"
			continue
		}
		if j >= len(ins) {
			continue
		}
		in := ins[j]
		out[i] = dap.DisassembledInstruction{
			Address:          fmt.Sprintf("%#x", in.Loc.PC),
			InstructionBytes: fmt.Sprintf("%x", in.Bytes),
			Instruction:      in.Text,
		}
		if in.Loc.Function != nil && (i == 0 || in.Loc.Function.Name() != fnNameAt(ins, j-1)) {
			out[i].Symbol = in.Loc.Function.Name()
		}
		if in.Loc.File != lastFile || in.Loc.Line != lastLine {
			out[i].Location = d.bps.source(in.Loc.File)
			out[i].Line = in.Loc.Line
			lastFile, lastLine = in.Loc.File, in.Loc.Line
		}
	}
	s.send(&dap.DisassembleResponse{Response: response(&r.Request), Body: dap.DisassembleResponseBody{Instructions: out}})
}

func fnNameAt(ins []api.AsmInstruction, j int) string {
	if j < 0 || j >= len(ins) || ins[j].Loc.Function == nil {
		return ""
	}
	return ins[j].Loc.Function.Name()
}

// maxRead bounds one readMemory request.
const maxRead = 1 << 20

func (s *Server) onReadMemory(d *debuggee, r *dap.ReadMemoryRequest) {
	a := r.Arguments
	addr, err := strconv.ParseUint(a.MemoryReference, 0, 64)
	if err != nil {
		s.fail(&r.Request, errUnableToReadMemory, "Unable to read memory", err)
		return
	}
	addr += uint64(int64(a.Offset))
	if a.Count < 0 || a.Count > maxRead {
		s.fail(&r.Request, errUnableToReadMemory, "Unable to read memory", fmt.Errorf("count %d out of range (at most %d)", a.Count, maxRead))
		return
	}
	resp := &dap.ReadMemoryResponse{Response: response(&r.Request)}
	resp.Body.Address = fmt.Sprintf("%#x", addr)
	if a.Count > 0 {
		mem, _, err := d.c.ExamineMemory(addr, a.Count)
		if err != nil {
			resp.Body.UnreadableBytes = a.Count
		} else {
			resp.Body.Data = base64.StdEncoding.EncodeToString(mem)
			resp.Body.UnreadableBytes = a.Count - len(mem)
		}
	}
	s.send(resp)
}

func (s *Server) onExceptionInfo(d *debuggee, r *dap.ExceptionInfoRequest) {
	st, err := d.c.GetState()
	if err != nil || st.CurrentThread == nil || st.CurrentThread.Breakpoint == nil {
		s.fail(&r.Request, errUnableToDisplay, "Unable to get exception info", errors.New("the program is not stopped at an exception"))
		return
	}
	bp := st.CurrentThread.Breakpoint
	resp := &dap.ExceptionInfoResponse{Response: response(&r.Request)}
	resp.Body.ExceptionId = bp.Name
	resp.Body.BreakMode = "unhandled"
	if st.CurrentThread.Function != nil {
		resp.Body.Description = "in " + st.CurrentThread.Function.Name()
	}
	s.send(resp)
}
