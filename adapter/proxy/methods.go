package proxy

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/rpc2"

	"github.com/splitdbg/splitdbg/adapter"
)

// methods maps rpc2 method names (without "RPCServer.") to how the proxy
// answers them. A method not listed is synchronous and forwarded.
var methods = map[string]method{
	// Run or change the target.
	"Command":           {async: true, own: true, fn: command},
	"Restart":           {async: true, own: true, fn: restart},
	"SetExecutionPoint": {fn: setExecutionPoint},
	"Set":               {fn: set},
	// Locations, breakpoints, stacks and code in split functions.
	"State":            {async: true, own: true, fn: state},
	"FindLocation":     {fn: findLocation},
	"CreateBreakpoint": {fn: createBreakpoint},
	"GetBreakpoint":    {fn: getBreakpoint},
	"ListBreakpoints":  {fn: listBreakpoints},
	"ClearBreakpoint":  {fn: clearBreakpoint},
	"ToggleBreakpoint": {fn: toggleBreakpoint},
	"Stacktrace":       {fn: stacktrace},
	"ListThreads":      {fn: listThreads},
	"GetThread":        {fn: getThread},
	"ListGoroutines":   {fn: listGoroutines},
	"ListFunctions":    {fn: listFunctions},
	"Disassemble":      {fn: disassemble},
	// Scopes: frame numbers of a repaired stack become Delve's.
	"ListRegisters":    {fn: listRegisters},
	"ListLocalVars":    {fn: listLocalVars},
	"ListFunctionArgs": {fn: listFunctionArgs},
	"Eval":             {fn: eval},
	"CreateWatchpoint": {fn: createWatchpoint},
	// Events of the commands the adapter sent for the client.
	"GetEvents":                {async: true, own: true, fn: getEvents},
	"DownloadLibraryDebugInfo": {async: true, own: true, fn: downloadLibraryDebugInfo},
	// Answered here (see upstreamConn).
	"SetApiVersion": {own: true, fn: setAPIVersion},
	// Forwarded, but asynchronous in Delve.
	"StopRecording":   {async: true},
	"CancelDownloads": {async: true},
}

// decode reads a method's argument as Delve's server does.
func decode[T any](arg json.RawMessage) (T, error) {
	var in T
	if err := json.Unmarshal(arg, &in); err != nil {
		return in, fmt.Errorf("malformed request body: %w", err)
	}
	return in, nil
}

// fullLoad is the load configuration Delve uses where a call gives none
// (Eval, Stacktrace with Full).
func fullLoad() *api.LoadConfig {
	full := proc.LoadFullValue()
	return api.LoadConfigFromProc(&full)
}

func state(s *session, _ *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.StateIn](arg)
	if err != nil {
		return nil, err
	}
	var ad *adapter.Client
	if in.NonBlocking {
		// Do not wait for an adapter that waits for the target to stop.
		var ready bool
		if ad, ready = s.adapterNow(); !ready {
			return s.forward("State", arg)
		}
	} else {
		ad = s.adapterWait()
	}
	if ad == nil {
		return s.forward("State", arg)
	}
	var st *api.DebuggerState
	if in.NonBlocking {
		st, err = ad.GetStateNonBlocking()
	} else {
		st, err = ad.GetState()
	}
	if err != nil {
		return nil, err
	}
	s.noteStop(st)
	return rpc2.StateOut{State: st}, nil
}

// command runs a DebuggerCommand through the adapter's call of the same
// meaning.
func command(s *session, _ *adapter.Client, arg json.RawMessage) (any, error) {
	cmd, err := decode[api.DebuggerCommand](arg)
	if err != nil {
		return nil, err
	}
	var ad *adapter.Client
	if cmd.Name == api.Halt {
		// Halt must reach Delve while the adapter is still being made
		// (that waits for a running target to stop).
		ad, _ = s.adapterNow()
	} else {
		ad = s.adapterWait()
	}
	if ad == nil {
		s.moving()
		defer s.moving()
		return s.forward("Command", arg)
	}
	var run func() (*api.DebuggerState, error)
	switch cmd.Name {
	case api.Halt:
		// While a continue runs: its own call records the stop.
		st, err := ad.Halt()
		return commandOut(st, err)
	case api.SwitchThread, api.SwitchGoroutine:
		s.fresh(ad)
		run := func() (*api.DebuggerState, error) { return ad.SwitchGoroutine(cmd.GoroutineID) }
		if cmd.Name == api.SwitchThread {
			run = func() (*api.DebuggerState, error) { return ad.SwitchThread(cmd.ThreadID) }
		}
		st, err := run()
		s.moved()
		s.noteStop(st)
		return commandOut(st, err)
	case api.Continue, api.Rewind, api.DirectionCongruentContinue:
		return s.cont(ad, &cmd)
	case api.Next:
		run = ad.Next
	case api.ReverseNext:
		run = ad.ReverseNext
	case api.Step:
		run = ad.Step
	case api.ReverseStep:
		run = ad.ReverseStep
	case api.StepOut:
		run = ad.StepOut
	case api.ReverseStepOut:
		run = ad.ReverseStepOut
	case api.StepInstruction, api.NextInstruction:
		run = func() (*api.DebuggerState, error) { return ad.StepInstruction(cmd.Name == api.NextInstruction) }
	case api.ReverseStepInstruction, api.ReverseNextInstruction:
		run = func() (*api.DebuggerState, error) {
			return ad.ReverseStepInstruction(cmd.Name == api.ReverseNextInstruction)
		}
	case api.Call:
		run = func() (*api.DebuggerState, error) { return ad.Call(cmd.GoroutineID, cmd.Expr, cmd.UnsafeCall) }
	default:
		// A command this Delve may not know: its answer, unchanged.
		s.moving()
		defer s.moving()
		return s.forward("Command", arg)
	}
	s.begin(ad, &cmd)
	st, err := run()
	s.finish()
	s.noteStop(st)
	return commandOut(st, err)
}

// begin prepares a command that runs the target: the upstream client
// sends the client's return-value load configuration and asks for events
// if the client did (then it drains them and the client gets them from
// GetEvents). finish ends it.
func (s *session) begin(ad *adapter.Client, cmd *api.DebuggerCommand) {
	s.beginEvents(ad, cmd.Name, cmd.WithEvents)
	if s.pending == nil && !sameLoadConfig(s.retCfg, cmd.ReturnInfoLoadConfig) {
		s.retCfg = cmd.ReturnInfoLoadConfig
		s.rpc.SetReturnValuesLoadConfig(s.retCfg)
	}
}

// beginEvents prepares a call that runs the target or makes events. A
// command other than the one the adapter repeats (see cont) lets that
// one run to its end first; while it goes on, the upstream client keeps
// its settings: rpc2's client reads them at each repetition.
func (s *session) beginEvents(ad *adapter.Client, name string, withEvents bool) {
	s.cmdMu.Lock()
	if s.pending != nil && s.pendingName != name {
		drain(s.pending)
		s.pending = nil
	}
	s.fresh(ad)
	s.ev.begin(withEvents)
	if s.pending == nil && withEvents != s.withEvents {
		s.withEvents = withEvents
		if withEvents {
			s.rpc.SetEventsFn(s.ev.push)
		} else {
			s.rpc.SetEventsFn(nil)
		}
	}
	s.moving()
}

// finish ends a command begun with begin or beginEvents.
func (s *session) finish() {
	s.moved()
	s.ev.end()
	s.cmdMu.Unlock()
}

func sameLoadConfig(a, b *api.LoadConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func commandOut(st *api.DebuggerState, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, errors.New("splitdbg proxy: Delve returned no state")
	}
	return rpc2.CommandOut{State: *st}, nil
}

// cont runs continue (or rewind) through the adapter. rpc2's client
// repeats a continue that stopped only at tracepoints, and so does the
// adapter's; the proxy answers each of the client's repeated Commands
// with the next state of the adapter's continue instead of starting
// another.
func (s *session) cont(ad *adapter.Client, cmd *api.DebuggerCommand) (any, error) {
	st, err := s.cont1(ad, cmd)
	if err != nil {
		return nil, err
	}
	s.noteStop(st)
	return rpc2.CommandOut{State: *st}, nil
}

func (s *session) cont1(ad *adapter.Client, cmd *api.DebuggerCommand) (*api.DebuggerState, error) {
	s.begin(ad, cmd)
	defer s.finish()
	ch := s.pending
	if ch == nil {
		switch cmd.Name {
		case api.Rewind:
			ch = ad.Rewind()
		case api.DirectionCongruentContinue:
			ch = ad.DirectionCongruentContinue()
		default:
			ch = ad.Continue()
		}
	}
	s.pending = nil
	st, ok := <-ch
	if !ok || st == nil {
		return nil, errors.New("splitdbg proxy: Delve returned no state")
	}
	if repeats(st) {
		s.pending, s.pendingName = ch, cmd.Name
	} else {
		drain(ch) // closed after this state
	}
	if st.Err != nil && !st.Exited {
		return nil, st.Err
	}
	return st, nil
}

// repeats reports whether rpc2's client continues again after st: every
// thread stopped at a breakpoint stopped at a tracepoint.
func repeats(st *api.DebuggerState) bool {
	if st.Err != nil || st.Exited {
		return false
	}
	bp, trace := false, true
	for _, th := range st.Threads {
		if th.Breakpoint != nil {
			bp = true
			trace = trace && (th.Breakpoint.Tracepoint || th.Breakpoint.TraceReturn)
		}
	}
	return bp && trace
}

func drain(ch <-chan *api.DebuggerState) {
	for range ch {
	}
}

func restart(s *session, _ *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.RestartIn](arg)
	if err != nil {
		return nil, err
	}
	s.moving()
	defer s.moved()
	ad := s.adapterWait()
	if ad == nil {
		// Delve's restart, and then the adapter the session could not
		// make before, typically because the process had exited.
		out, err := s.forward("Restart", arg)
		if err == nil {
			s.newAdapter()
		}
		return out, err
	}
	s.fresh(ad)
	d, err := ad.RestartFrom(in.Rerecord, in.Position, in.ResetArgs, in.NewArgs, in.NewRedirects, in.Rebuild)
	if err != nil {
		return nil, err
	}
	// The other clients' adapters learn the new load bias of the
	// executable; their caches go with the epoch.
	bias := ad.Resolver().ExecutableBias()
	for _, o := range s.p.others(s) {
		o.Resolver().SetExecutableBias(bias)
	}
	return rpc2.RestartOut{DiscardedBreakpoints: d}, nil
}

func setExecutionPoint(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.SetExecutionPointIn](arg)
	if err != nil {
		return nil, err
	}
	s.moving()
	st, err := ad.SetExecutionPoint(in.Addr)
	s.moved()
	if err != nil {
		return nil, err
	}
	s.noteStop(st)
	return rpc2.SetExecutionPointOut{State: *st}, nil
}

func set(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.SetIn](arg)
	if err != nil {
		return nil, err
	}
	s.moving()
	defer s.moved()
	return rpc2.SetOut{}, ad.SetVariable(in.Scope, in.Symbol, in.Value)
}

func findLocation(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.FindLocationIn](arg)
	if err != nil {
		return nil, err
	}
	locs, subst, err := ad.FindLocation(in.Scope, in.Loc, !in.IncludeNonExecutableLines, in.SubstitutePathRules)
	if err != nil {
		return nil, err
	}
	return rpc2.FindLocationOut{Locations: locs, SubstituteLocExpr: subst}, nil
}

func createBreakpoint(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.CreateBreakpointIn](arg)
	if err != nil {
		return nil, err
	}
	bp, err := ad.CreateBreakpointWithExpr(&in.Breakpoint, in.LocExpr, in.SubstitutePathRules, in.Suspended)
	if err != nil {
		return nil, err
	}
	return rpc2.CreateBreakpointOut{Breakpoint: *bp}, nil
}

func getBreakpoint(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.GetBreakpointIn](arg)
	if err != nil {
		return nil, err
	}
	var bp *api.Breakpoint
	if in.Name != "" {
		bp, err = ad.GetBreakpointByName(in.Name)
	} else {
		bp, err = ad.GetBreakpoint(in.Id)
	}
	if err != nil {
		return nil, err
	}
	return rpc2.GetBreakpointOut{Breakpoint: *bp}, nil
}

func listBreakpoints(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.ListBreakpointsIn](arg)
	if err != nil {
		return nil, err
	}
	bps, err := ad.ListBreakpoints(in.All)
	if err != nil {
		return nil, err
	}
	return rpc2.ListBreakpointsOut{Breakpoints: bps}, nil
}

func clearBreakpoint(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.ClearBreakpointIn](arg)
	if err != nil {
		return nil, err
	}
	var bp *api.Breakpoint
	if in.Name != "" {
		bp, err = ad.ClearBreakpointByName(in.Name)
	} else {
		bp, err = ad.ClearBreakpoint(in.Id)
	}
	if err != nil {
		return nil, err
	}
	return rpc2.ClearBreakpointOut{Breakpoint: bp}, nil
}

func toggleBreakpoint(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.ToggleBreakpointIn](arg)
	if err != nil {
		return nil, err
	}
	var bp *api.Breakpoint
	if in.Name != "" {
		bp, err = ad.ToggleBreakpointByName(in.Name)
	} else {
		bp, err = ad.ToggleBreakpoint(in.Id)
	}
	if err != nil {
		return nil, err
	}
	return rpc2.ToggleBreakpointOut{Breakpoint: bp}, nil
}

func stacktrace(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.StacktraceIn](arg)
	if err != nil {
		return nil, err
	}
	if in.Skip == 0 && !s.movedAtTop(ad.Resolver(), in.Id) {
		raw, err := s.forward("Stacktrace", arg)
		if err != nil {
			return nil, err
		}
		frames, ok := namelessFrames(raw)
		need := needAdapter
		if ok {
			need = stackNeeds(ad.Resolver(), frames)
		}
		if need == needLibraries {
			// Nameless frames in libraries the resolver has not seen
			// (the C library under main): the adapter would load Delve's
			// image list and look again; so does the proxy, without
			// asking Delve for the stack again.
			if imgs, _, err := s.rpc.ListDynamicLibraries(); err == nil {
				ad.Resolver().SetLibraries(imgs)
			}
			// A frame in no image even now the adapter could not name.
			need = stackNeeds(ad.Resolver(), frames)
			if need == needLibraries {
				need = needNothing
			}
		}
		if need == needNothing {
			return raw, nil
		}
	}
	cfg := in.Cfg
	if cfg == nil && in.Full {
		cfg = fullLoad()
	}
	if in.Defers {
		in.Opts |= api.StacktraceReadDefers
	}
	frames, err := ad.Stacktrace(in.Id, in.Depth, in.Skip, in.Opts, cfg)
	if err != nil {
		return nil, err
	}
	return rpc2.StacktraceOut{Locations: frames}, nil
}

// movedAtTop reports whether the innermost frame of goroutine gid (-1:
// the selected one) is in moved code at the last stop this client saw, if
// no client ran the target since: then the adapter is asked straight away
// for the stack, whose frame 0 it names and may repair.
func (s *session) movedAtTop(r *adapter.Resolver, gid int64) bool {
	s.stopMu.Lock()
	st, epoch := s.stop, s.stopEpoch
	s.stopMu.Unlock()
	if st == nil || epoch != s.p.epoch.Load() {
		return false
	}
	var pc uint64
	switch g := st.SelectedGoroutine; {
	case gid < 0 && g != nil:
		pc = g.CurrentLoc.PC
	case gid < 0 && st.CurrentThread != nil:
		pc = st.CurrentThread.PC
	default:
		for _, th := range st.Threads {
			if th.GoroutineID == gid {
				pc = th.PC
			}
		}
	}
	f, ok := r.Frame(pc, false)
	return ok && f.Moved()
}

// What the adapter would do with a stack.
const (
	needNothing   = iota // it would answer Delve's stack
	needLibraries        // it would load the library list first
	needAdapter          // it would change the stack
)

// namelessFrame is a frame of Delve's stack that Delve could not name.
type namelessFrame struct {
	index int
	pc    uint64
}

// namelessFrames decodes the frames Delve left nameless from raw (a
// StacktraceOut); ok is false if raw does not decode.
func namelessFrames(raw json.RawMessage) (frames []namelessFrame, ok bool) {
	var out struct {
		Locations []struct {
			PC       uint64          `json:"pc"`
			Function json.RawMessage `json:"function"`
			Err      string
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, false
	}
	for i, f := range out.Locations {
		if f.Err == "" && f.PC != 0 && (len(f.Function) == 0 || string(f.Function) == "null") {
			frames = append(frames, namelessFrame{i, f.PC})
		}
	}
	return frames, true
}

// stackNeeds says what the adapter would do with a stack of Delve's whose
// nameless frames are frames: it names only the frames Delve left
// nameless whose PC lies in a split function, and repairs a stack only
// after such a frame 0 (see the adapter's Stacktrace). A stack with
// neither goes to the client as Delve sent it, without the cost of
// encoding it again (a backtrace with variables is large). For a nameless
// frame in an image the resolver does not know, the adapter loads the
// library list.
func stackNeeds(r *adapter.Resolver, frames []namelessFrame) int {
	need := needNothing
	for _, f := range frames {
		at := f.pc
		if f.index > 0 {
			at-- // a return address: the call is before it
		}
		if !r.Known(at) {
			need = needLibraries
			continue
		}
		if fr, ok := r.Frame(f.pc, f.index > 0); ok && fr.Split() {
			return needAdapter
		}
	}
	return need
}

func listThreads(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	if _, err := decode[rpc2.ListThreadsIn](arg); err != nil {
		return nil, err
	}
	ths, err := ad.ListThreads()
	if err != nil {
		return nil, err
	}
	return rpc2.ListThreadsOut{Threads: ths}, nil
}

func getThread(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.GetThreadIn](arg)
	if err != nil {
		return nil, err
	}
	th, err := ad.GetThread(in.Id)
	if err != nil {
		return nil, err
	}
	return rpc2.GetThreadOut{Thread: th}, nil
}

func listGoroutines(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.ListGoroutinesIn](arg)
	if err != nil {
		return nil, err
	}
	gs, groups, next, tooMany, err := ad.ListGoroutinesWithFilter(in.Start, in.Count, in.Filters, &in.GoroutineGroupingOptions, in.EvalScope)
	if err != nil {
		return nil, err
	}
	return rpc2.ListGoroutinesOut{Goroutines: gs, Nextg: next, Groups: groups, TooManyGroups: tooMany}, nil
}

func listFunctions(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.ListFunctionsIn](arg)
	if err != nil {
		return nil, err
	}
	fns, err := ad.ListFunctions(in.Filter, in.FollowCalls)
	if err != nil {
		return nil, err
	}
	return rpc2.ListFunctionsOut{Funcs: fns}, nil
}

func disassemble(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.DisassembleIn](arg)
	if err != nil {
		return nil, err
	}
	var ins api.AsmInstructions
	if in.EndPC == 0 {
		ins, err = ad.DisassemblePC(in.Scope, in.StartPC, in.Flavour)
	} else {
		ins, err = ad.DisassembleRange(in.Scope, in.StartPC, in.EndPC, in.Flavour)
	}
	if err != nil {
		return nil, err
	}
	return rpc2.DisassembleOut{Disassemble: ins}, nil
}

func listRegisters(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.ListRegistersIn](arg)
	if err != nil {
		return nil, err
	}
	if in.Scope == nil || in.Scope.Frame == 0 {
		// A thread's registers, or frame 0's: the adapter translates
		// only the frame numbers of a repaired stack, and frame 0 is
		// always Delve's.
		return s.forward("ListRegisters", arg)
	}
	regs, err := ad.ListScopeRegisters(*in.Scope, in.IncludeFp)
	if err != nil {
		return nil, err
	}
	return rpc2.ListRegistersOut{Registers: regs.String(), Regs: regs}, nil
}

func listLocalVars(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.ListLocalVarsIn](arg)
	if err != nil {
		return nil, err
	}
	if in.Scope.Frame == 0 && !ad.MovedFrame(in.Scope) {
		if raw, ok := frameZeroVars(s, "ListLocalVars", arg); ok {
			return raw, nil
		}
	}
	vs, err := ad.ListLocalVariables(in.Scope, in.Cfg)
	if err != nil {
		return nil, err
	}
	return rpc2.ListLocalVarsOut{Variables: vs}, nil
}

func listFunctionArgs(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.ListFunctionArgsIn](arg)
	if err != nil {
		return nil, err
	}
	if in.Scope.Frame == 0 && !ad.MovedFrame(in.Scope) {
		if raw, ok := frameZeroVars(s, "ListFunctionArgs", arg); ok {
			return raw, nil
		}
	}
	vs, err := ad.ListFunctionArgs(in.Scope, in.Cfg)
	if err != nil {
		return nil, err
	}
	return rpc2.ListFunctionArgsOut{Args: vs}, nil
}

func eval(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.EvalIn](arg)
	if err != nil || in.Scope.Frame == 0 && !ad.MovedFrame(in.Scope) {
		return frameZero(s, "Eval", arg, err)
	}
	cfg := in.Cfg
	if cfg == nil {
		cfg = fullLoad()
	}
	v, err := ad.EvalVariable(in.Scope, in.Expr, *cfg)
	if err != nil {
		return nil, err
	}
	return rpc2.EvalOut{Variable: v}, nil
}

// frameZero forwards a call in the scope of frame 0 unchanged: the
// adapter translates only the frame numbers of a repaired stack, and
// frame 0 is always Delve's; only its variables in moved code are not.
func frameZero(s *session, name string, arg json.RawMessage, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return s.forward(name, arg)
}

// frameZeroVars forwards a variables call in frame 0; ok is false when
// it failed or Delve gave up on a variable (adapter.Client repairs those:
// the answer is then the adapter's).
func frameZeroVars(s *session, name string, arg json.RawMessage) (json.RawMessage, bool) {
	raw, err := s.forward(name, arg)
	if err != nil || adapter.DelveGaveUp(string(raw)) {
		return nil, false
	}
	return raw, true
}

func createWatchpoint(s *session, ad *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.CreateWatchpointIn](arg)
	if err != nil {
		return nil, err
	}
	bp, err := ad.CreateWatchpoint(in.Scope, in.Expr, in.Type)
	if err != nil {
		return nil, err
	}
	return rpc2.CreateWatchpointOut{Breakpoint: bp}, nil
}

// getEvents serves the events queued for the client's commands. Without
// an adapter the client's commands went upstream unchanged, and so do
// their events.
func getEvents(s *session, _ *adapter.Client, arg json.RawMessage) (any, error) {
	if s.adapterWait() == nil {
		return s.forward("GetEvents", arg)
	}
	evs := s.ev.take(s.done, s.up.lost)
	if evs == nil {
		if err := s.up.lostErr(); err != nil {
			return nil, err
		}
		return nil, errors.New("splitdbg proxy: the client is gone")
	}
	return rpc2.GetEventsOut{Events: evs}, nil
}

// downloadLibraryDebugInfo runs the download with the upstream client,
// which drains its events for the client as it does a command's.
func downloadLibraryDebugInfo(s *session, _ *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[rpc2.DownloadLibraryDebugInfoIn](arg)
	if err != nil {
		return nil, err
	}
	ad := s.adapterWait()
	if ad == nil {
		return s.forward("DownloadLibraryDebugInfo", arg)
	}
	s.beginEvents(ad, "", in.WithEvents)
	defer s.finish()
	if err := s.rpc.DownloadLibraryDebugInfo(in.N); err != nil {
		return nil, err
	}
	return rpc2.DownloadLibraryDebugInfoOut{}, nil
}

// setAPIVersion answers SetApiVersion as Delve does, without asking it:
// 2 is the only version it serves, and the upstream connection has it.
func setAPIVersion(_ *session, _ *adapter.Client, arg json.RawMessage) (any, error) {
	in, err := decode[api.SetAPIVersionIn](arg)
	if err != nil {
		return nil, err
	}
	if in.APIVersion != 2 {
		return nil, errors.New("unknown API version")
	}
	return api.SetAPIVersionOut{}, nil
}
