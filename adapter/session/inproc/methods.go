package inproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/pkg/version"
	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/rpc2"
)

// The methods of service.Client, each asking the server what
// rpc2.RPCClient's method of the same name asks over the wire.

// GetVersion returns Delve's version and the API version served, as
// rpccommon's common GetVersion does.
func (c *Client) GetVersion() *api.GetVersionOut {
	out, _ := call(c, "GetVersion", func(_ struct{}, out *api.GetVersionOut) error {
		out.DelveVersion = version.DelveVersion.String()
		out.APIVersion = c.cfg.APIVersion
		return c.d.GetVersion(out)
	}, struct{}{})
	return &out
}

func (c *Client) ProcessPid() int {
	out, _ := call(c, "ProcessPid", c.s.ProcessPid, rpc2.ProcessPidIn{})
	return out.Pid
}

func (c *Client) BuildID() string {
	out, _ := call(c, "BuildID", c.s.BuildID, rpc2.BuildIDIn{})
	return out.BuildID
}

func (c *Client) LastModified() time.Time {
	out, _ := call(c, "LastModified", c.s.LastModified, rpc2.LastModifiedIn{})
	return out.Time
}

// Detach detaches the debugger, killing the process if kill is set (and
// always one Delve launched); the session ends either way.
func (c *Client) Detach(kill bool) error {
	_, err := call(c, "Detach", c.s.Detach, rpc2.DetachIn{Kill: kill})
	c.shutdown()
	return err
}

func (c *Client) Restart(rebuild bool) ([]api.DiscardedBreakpoint, error) {
	out, err := early[rpc2.RestartOut](c, "Restart", c.s.Restart, rpc2.RestartIn{Rebuild: rebuild})
	ownDiscarded(out.DiscardedBreakpoints)
	return out.DiscardedBreakpoints, err
}

func (c *Client) RestartFrom(rerecord bool, pos string, resetArgs bool, newArgs []string, newRedirects [3]string, rebuild bool) ([]api.DiscardedBreakpoint, error) {
	out, err := early[rpc2.RestartOut](c, "Restart", c.s.Restart, rpc2.RestartIn{
		Position: pos, ResetArgs: resetArgs, NewArgs: slices.Clone(newArgs),
		Rerecord: rerecord, Rebuild: rebuild, NewRedirects: newRedirects})
	ownDiscarded(out.DiscardedBreakpoints)
	return out.DiscardedBreakpoints, err
}

func ownDiscarded(ds []api.DiscardedBreakpoint) {
	for i := range ds {
		ownBreakpoint(ds[i].Breakpoint)
	}
}

func (c *Client) GetState() (*api.DebuggerState, error) {
	return c.state(false)
}

func (c *Client) GetStateNonBlocking() (*api.DebuggerState, error) {
	return c.state(true)
}

func (c *Client) state(nonBlocking bool) (*api.DebuggerState, error) {
	out, err := early[rpc2.StateOut](c, "State", c.s.State, rpc2.StateIn{NonBlocking: nonBlocking})
	ownState(out.State)
	return out.State, err
}

func (c *Client) Continue() <-chan *api.DebuggerState {
	return c.continueDir(api.Continue)
}

func (c *Client) Rewind() <-chan *api.DebuggerState {
	return c.continueDir(api.Rewind)
}

func (c *Client) DirectionCongruentContinue() <-chan *api.DebuggerState {
	return c.continueDir(api.DirectionCongruentContinue)
}

// continueDir runs the target as rpc2.RPCClient does: a state on the
// channel for each stop, going on past stops at tracepoints only.
func (c *Client) continueDir(name string) <-chan *api.DebuggerState {
	ch := make(chan *api.DebuggerState)
	retCfg, events := c.options()
	go func() {
		for {
			state, err := c.command(api.DebuggerCommand{Name: name, ReturnInfoLoadConfig: retCfg}, events)
			if err != nil {
				state.Err = err
			}
			if state.Exited {
				//lint:ignore ST1005 Delve's client's message, which doors match
				state.Err = fmt.Errorf("Process %d has exited with status %d", c.ProcessPid(), state.ExitStatus)
			}
			ch <- &state
			if err != nil || state.Exited {
				close(ch)
				return
			}
			isbreakpoint, istracepoint := false, true
			for _, th := range state.Threads {
				if th.Breakpoint != nil {
					isbreakpoint = true
					istracepoint = istracepoint && (th.Breakpoint.Tracepoint || th.Breakpoint.TraceReturn)
				}
			}
			if !isbreakpoint || !istracepoint {
				close(ch)
				return
			}
		}
	}()
	return ch
}

// step runs a command that stops by itself, with the return values and
// events of the client's options.
func (c *Client) step(name string) (*api.DebuggerState, error) {
	retCfg, events := c.options()
	st, err := c.command(api.DebuggerCommand{Name: name, ReturnInfoLoadConfig: retCfg}, events)
	return &st, err
}

func (c *Client) Next() (*api.DebuggerState, error)           { return c.step(api.Next) }
func (c *Client) ReverseNext() (*api.DebuggerState, error)    { return c.step(api.ReverseNext) }
func (c *Client) Step() (*api.DebuggerState, error)           { return c.step(api.Step) }
func (c *Client) ReverseStep() (*api.DebuggerState, error)    { return c.step(api.ReverseStep) }
func (c *Client) StepOut() (*api.DebuggerState, error)        { return c.step(api.StepOut) }
func (c *Client) ReverseStepOut() (*api.DebuggerState, error) { return c.step(api.ReverseStepOut) }

func (c *Client) Call(goroutineID int64, expr string, unsafe bool) (*api.DebuggerState, error) {
	retCfg, events := c.options()
	st, err := c.command(api.DebuggerCommand{Name: api.Call, ReturnInfoLoadConfig: retCfg, Expr: expr, UnsafeCall: unsafe, GoroutineID: goroutineID}, events)
	return &st, err
}

// StepInstruction steps one instruction (over calls with skipCalls); as
// Delve's client, it sends no return-value configuration.
func (c *Client) StepInstruction(skipCalls bool) (*api.DebuggerState, error) {
	return c.instruction(api.StepInstruction, api.NextInstruction, skipCalls)
}

func (c *Client) ReverseStepInstruction(skipCalls bool) (*api.DebuggerState, error) {
	return c.instruction(api.ReverseStepInstruction, api.ReverseNextInstruction, skipCalls)
}

// instruction runs step, or over when skipCalls is set.
func (c *Client) instruction(step, over string, skipCalls bool) (*api.DebuggerState, error) {
	if skipCalls {
		step = over
	}
	_, events := c.options()
	st, err := c.command(api.DebuggerCommand{Name: step}, events)
	return &st, err
}

func (c *Client) SwitchThread(threadID int) (*api.DebuggerState, error) {
	st, err := c.command(api.DebuggerCommand{Name: api.SwitchThread, ThreadID: threadID}, nil)
	return &st, err
}

func (c *Client) SwitchGoroutine(goroutineID int64) (*api.DebuggerState, error) {
	st, err := c.command(api.DebuggerCommand{Name: api.SwitchGoroutine, GoroutineID: goroutineID}, nil)
	return &st, err
}

// Halt stops the target; it may be called while a Continue runs.
func (c *Client) Halt() (*api.DebuggerState, error) {
	st, err := c.command(api.DebuggerCommand{Name: api.Halt}, nil)
	return &st, err
}

func (c *Client) GetBreakpoint(id int) (*api.Breakpoint, error) {
	out, err := call(c, "GetBreakpoint", c.s.GetBreakpoint, rpc2.GetBreakpointIn{Id: id})
	ownBreakpoint(&out.Breakpoint)
	return &out.Breakpoint, err
}

func (c *Client) GetBreakpointByName(name string) (*api.Breakpoint, error) {
	out, err := call(c, "GetBreakpoint", c.s.GetBreakpoint, rpc2.GetBreakpointIn{Name: name})
	ownBreakpoint(&out.Breakpoint)
	return &out.Breakpoint, err
}

func (c *Client) CreateBreakpoint(bp *api.Breakpoint) (*api.Breakpoint, error) {
	return c.CreateBreakpointWithExpr(bp, "", nil, false)
}

func (c *Client) CreateBreakpointWithExpr(bp *api.Breakpoint, locExpr string, substitutePathRules [][2]string, suspended bool) (*api.Breakpoint, error) {
	if bp == nil {
		return &api.Breakpoint{}, errNoBreakpoint
	}
	out, err := call(c, "CreateBreakpoint", c.s.CreateBreakpoint, rpc2.CreateBreakpointIn{
		Breakpoint: inBreakpoint(bp), LocExpr: locExpr,
		SubstitutePathRules: slices.Clone(substitutePathRules), Suspended: suspended})
	ownBreakpoint(&out.Breakpoint)
	return &out.Breakpoint, err
}

func (c *Client) SetExecutionPoint(addr uint64) (*api.DebuggerState, error) {
	out, err := call(c, "SetExecutionPoint", c.s.SetExecutionPoint, rpc2.SetExecutionPointIn{Addr: addr})
	ownState(&out.State)
	return &out.State, err
}

func (c *Client) CreateWatchpoint(scope api.EvalScope, expr string, wtype api.WatchType) (*api.Breakpoint, error) {
	out, err := call(c, "CreateWatchpoint", c.s.CreateWatchpoint, rpc2.CreateWatchpointIn{Scope: scope, Expr: expr, Type: wtype})
	ownBreakpoint(out.Breakpoint)
	return out.Breakpoint, err
}

func (c *Client) ListBreakpoints(all bool) ([]*api.Breakpoint, error) {
	out, err := call(c, "ListBreakpoints", c.s.ListBreakpoints, rpc2.ListBreakpointsIn{All: all})
	for _, bp := range out.Breakpoints {
		ownBreakpoint(bp)
	}
	return out.Breakpoints, err
}

func (c *Client) ClearBreakpoint(id int) (*api.Breakpoint, error) {
	out, err := call(c, "ClearBreakpoint", c.s.ClearBreakpoint, rpc2.ClearBreakpointIn{Id: id})
	ownBreakpoint(out.Breakpoint)
	return out.Breakpoint, err
}

func (c *Client) ClearBreakpointByName(name string) (*api.Breakpoint, error) {
	out, err := call(c, "ClearBreakpoint", c.s.ClearBreakpoint, rpc2.ClearBreakpointIn{Name: name})
	ownBreakpoint(out.Breakpoint)
	return out.Breakpoint, err
}

func (c *Client) ToggleBreakpoint(id int) (*api.Breakpoint, error) {
	out, err := call(c, "ToggleBreakpoint", c.s.ToggleBreakpoint, rpc2.ToggleBreakpointIn{Id: id})
	ownBreakpoint(out.Breakpoint)
	return out.Breakpoint, err
}

func (c *Client) ToggleBreakpointByName(name string) (*api.Breakpoint, error) {
	out, err := call(c, "ToggleBreakpoint", c.s.ToggleBreakpoint, rpc2.ToggleBreakpointIn{Name: name})
	ownBreakpoint(out.Breakpoint)
	return out.Breakpoint, err
}

// errNoBreakpoint is the error of a nil breakpoint to create or amend.
var errNoBreakpoint = errors.New("delve: no breakpoint given")

func (c *Client) AmendBreakpoint(bp *api.Breakpoint) error {
	if bp == nil {
		return errNoBreakpoint
	}
	_, err := call(c, "AmendBreakpoint", c.s.AmendBreakpoint, rpc2.AmendBreakpointIn{Breakpoint: inBreakpoint(bp)})
	return err
}

func (c *Client) CancelNext() error {
	_, err := call(c, "CancelNext", c.s.CancelNext, rpc2.CancelNextIn{})
	return err
}

func (c *Client) ListThreads() ([]*api.Thread, error) {
	out, err := call(c, "ListThreads", c.s.ListThreads, rpc2.ListThreadsIn{})
	for _, th := range out.Threads {
		ownThread(th)
	}
	return out.Threads, err
}

func (c *Client) GetThread(id int) (*api.Thread, error) {
	out, err := call(c, "GetThread", c.s.GetThread, rpc2.GetThreadIn{Id: id})
	ownThread(out.Thread)
	return out.Thread, err
}

func (c *Client) ListPackageVariables(filter string, cfg api.LoadConfig) ([]api.Variable, error) {
	out, err := call(c, "ListPackageVars", c.s.ListPackageVars, rpc2.ListPackageVarsIn{Filter: filter, Cfg: cfg})
	return out.Variables, err
}

func (c *Client) EvalVariable(scope api.EvalScope, expr string, cfg api.LoadConfig) (*api.Variable, error) {
	out, err := call(c, "Eval", c.s.Eval, rpc2.EvalIn{Scope: scope, Expr: expr, Cfg: &cfg})
	return out.Variable, err
}

func (c *Client) TypeInfo(name string) (*api.TypeInfo, error) {
	out, err := call(c, "TypeInfo", c.s.TypeInfo, rpc2.TypeInfoIn{Name: name})
	return out.TypeInfo, err
}

func (c *Client) SetVariable(scope api.EvalScope, symbol, value string) error {
	_, err := call(c, "Set", c.s.Set, rpc2.SetIn{Scope: scope, Symbol: symbol, Value: value})
	return err
}

func (c *Client) ListSources(filter string) ([]string, error) {
	out, err := call(c, "ListSources", c.s.ListSources, rpc2.ListSourcesIn{Filter: filter})
	return out.Sources, err
}

func (c *Client) ListFunctions(filter string, traceFollow int) ([]string, error) {
	out, err := call(c, "ListFunctions", c.s.ListFunctions, rpc2.ListFunctionsIn{Filter: filter, FollowCalls: traceFollow})
	return out.Funcs, err
}

func (c *Client) ListTypes(filter string) ([]string, error) {
	out, err := call(c, "ListTypes", c.s.ListTypes, rpc2.ListTypesIn{Filter: filter})
	return out.Types, err
}

func (c *Client) ListPackagesBuildInfo(filter string, includeFiles bool) ([]api.PackageBuildInfo, error) {
	out, err := call(c, "ListPackagesBuildInfo", c.s.ListPackagesBuildInfo, rpc2.ListPackagesBuildInfoIn{Filter: filter, IncludeFiles: includeFiles})
	return out.List, err
}

func (c *Client) ListLocalVariables(scope api.EvalScope, cfg api.LoadConfig) ([]api.Variable, error) {
	out, err := call(c, "ListLocalVars", c.s.ListLocalVars, rpc2.ListLocalVarsIn{Scope: scope, Cfg: cfg})
	return out.Variables, err
}

func (c *Client) ListFunctionArgs(scope api.EvalScope, cfg api.LoadConfig) ([]api.Variable, error) {
	out, err := call(c, "ListFunctionArgs", c.s.ListFunctionArgs, rpc2.ListFunctionArgsIn{Scope: scope, Cfg: cfg})
	return out.Args, err
}

func (c *Client) ListThreadRegisters(threadID int, includeFp bool) (api.Registers, error) {
	out, err := call(c, "ListRegisters", c.s.ListRegisters, rpc2.ListRegistersIn{ThreadID: threadID, IncludeFp: includeFp})
	return out.Regs, err
}

func (c *Client) ListScopeRegisters(scope api.EvalScope, includeFp bool) (api.Registers, error) {
	out, err := call(c, "ListRegisters", c.s.ListRegisters, rpc2.ListRegistersIn{IncludeFp: includeFp, Scope: &scope})
	return out.Regs, err
}

func (c *Client) ListGoroutines(start, count int) ([]*api.Goroutine, int, error) {
	out, err := call(c, "ListGoroutines", c.s.ListGoroutines, rpc2.ListGoroutinesIn{Start: start, Count: count})
	for _, g := range out.Goroutines {
		ownGoroutine(g)
	}
	return out.Goroutines, out.Nextg, err
}

func (c *Client) ListGoroutinesWithFilter(start, count int, filters []api.ListGoroutinesFilter, group *api.GoroutineGroupingOptions, scope *api.EvalScope) ([]*api.Goroutine, []api.GoroutineGroup, int, bool, error) {
	in := rpc2.ListGoroutinesIn{Start: start, Count: count, Filters: slices.Clone(filters)}
	if group != nil {
		in.GoroutineGroupingOptions = *group
	}
	if scope != nil {
		sc := *scope
		in.EvalScope = &sc
	}
	out, err := call(c, "ListGoroutines", c.s.ListGoroutines, in)
	for _, g := range out.Goroutines {
		ownGoroutine(g)
	}
	return out.Goroutines, out.Groups, out.Nextg, out.TooManyGroups, err
}

func (c *Client) Stacktrace(goroutineID int64, depth, skip int, opts api.StacktraceOptions, cfg *api.LoadConfig) ([]api.Stackframe, error) {
	in := rpc2.StacktraceIn{Id: goroutineID, Depth: depth, Opts: opts, Skip: skip}
	if cfg != nil {
		lc := *cfg
		in.Cfg = &lc
	}
	out, err := call(c, "Stacktrace", c.s.Stacktrace, in)
	return out.Locations, err
}

func (c *Client) Ancestors(goroutineID int64, numAncestors int, depth int) ([]api.Ancestor, error) {
	out, err := call(c, "Ancestors", c.s.Ancestors, rpc2.AncestorsIn{GoroutineID: goroutineID, NumAncestors: numAncestors, Depth: depth})
	return out.Ancestors, err
}

func (c *Client) AttachedToExistingProcess() bool {
	out, _ := call(c, "AttachedToExistingProcess", c.s.AttachedToExistingProcess, rpc2.AttachedToExistingProcessIn{})
	return out.Answer
}

func (c *Client) FindLocation(scope api.EvalScope, loc string, findInstructions bool, substitutePathRules [][2]string) ([]api.Location, string, error) {
	out, err := call(c, "FindLocation", c.s.FindLocation, rpc2.FindLocationIn{
		Scope: scope, Loc: loc, IncludeNonExecutableLines: !findInstructions,
		SubstitutePathRules: slices.Clone(substitutePathRules)})
	return out.Locations, out.SubstituteLocExpr, err
}

func (c *Client) DisassembleRange(scope api.EvalScope, startPC, endPC uint64, flavour api.AssemblyFlavour) (api.AsmInstructions, error) {
	out, err := call(c, "Disassemble", c.s.Disassemble, rpc2.DisassembleIn{Scope: scope, StartPC: startPC, EndPC: endPC, Flavour: flavour})
	return out.Disassemble, err
}

func (c *Client) DisassemblePC(scope api.EvalScope, pc uint64, flavour api.AssemblyFlavour) (api.AsmInstructions, error) {
	out, err := call(c, "Disassemble", c.s.Disassemble, rpc2.DisassembleIn{Scope: scope, StartPC: pc, Flavour: flavour})
	return out.Disassemble, err
}

func (c *Client) Recorded() bool {
	out, _ := call(c, "Recorded", c.s.Recorded, rpc2.RecordedIn{})
	return out.Recorded
}

func (c *Client) TraceDirectory() (string, error) {
	out, err := call(c, "Recorded", c.s.Recorded, rpc2.RecordedIn{})
	return out.TraceDirectory, err
}

func (c *Client) Checkpoint(where string) (int, error) {
	out, err := call(c, "Checkpoint", c.s.Checkpoint, rpc2.CheckpointIn{Where: where})
	return out.ID, err
}

func (c *Client) ListCheckpoints() ([]api.Checkpoint, error) {
	out, err := call(c, "ListCheckpoints", c.s.ListCheckpoints, rpc2.ListCheckpointsIn{})
	return out.Checkpoints, err
}

func (c *Client) ClearCheckpoint(id int) error {
	_, err := call(c, "ClearCheckpoint", c.s.ClearCheckpoint, rpc2.ClearCheckpointIn{ID: id})
	return err
}

// SetReturnValuesLoadConfig sets how the return values of the functions
// a step leaves are read; a copy of *cfg is taken at each command.
func (c *Client) SetReturnValuesLoadConfig(cfg *api.LoadConfig) {
	c.optMu.Lock()
	c.retValLoadCfg = cfg
	c.optMu.Unlock()
}

// SetEventsFn sets the function each later command's events are given to.
func (c *Client) SetEventsFn(fn func(*api.Event)) {
	c.optMu.Lock()
	c.eventsFn = fn
	c.optMu.Unlock()
}

func (c *Client) IsMulticlient() bool {
	out, _ := call(c, "IsMulticlient", c.s.IsMulticlient, rpc2.IsMulticlientIn{})
	return out.IsMulticlient
}

// ListDynamicLibraries lists the loaded libraries; as Delve's client, it
// reports no error.
func (c *Client) ListDynamicLibraries() ([]api.Image, bool, error) {
	out, _ := call(c, "ListDynamicLibraries", c.s.ListDynamicLibraries, rpc2.ListDynamicLibrariesIn{})
	return out.List, out.ExecutableTrimpath, nil
}

func (c *Client) ExamineMemory(address uint64, length int) ([]byte, bool, error) {
	out, err := call(c, "ExamineMemory", c.s.ExamineMemory, rpc2.ExamineMemoryIn{Address: address, Length: length})
	if err != nil {
		return nil, false, err
	}
	return out.Mem, out.IsLittleEndian, nil
}

func (c *Client) StopRecording() error {
	_, err := early[rpc2.StopRecordingOut](c, "StopRecording", c.s.StopRecording, rpc2.StopRecordingIn{})
	return err
}

func (c *Client) CoreDumpStart(dest string) (api.DumpState, error) {
	out, err := call(c, "DumpStart", c.s.DumpStart, rpc2.DumpStartIn{Destination: dest})
	return out.State, err
}

func (c *Client) CoreDumpWait(msec int) api.DumpState {
	out, _ := call(c, "DumpWait", c.s.DumpWait, rpc2.DumpWaitIn{Wait: msec})
	return out.State
}

func (c *Client) CoreDumpCancel() error {
	_, err := call(c, "DumpCancel", c.s.DumpCancel, rpc2.DumpCancelIn{})
	return err
}

func (c *Client) ListTargets() ([]api.Target, error) {
	out, err := call(c, "ListTargets", c.s.ListTargets, rpc2.ListTargetsIn{})
	for i := range out.Targets {
		ownThread(out.Targets[i].CurrentThread)
	}
	return out.Targets, err
}

func (c *Client) FollowExec(enable bool, regex string) error {
	_, err := call(c, "FollowExec", c.s.FollowExec, rpc2.FollowExecIn{Enable: enable, Regex: regex})
	return err
}

func (c *Client) FollowExecEnabled() bool {
	out, _ := call(c, "FollowExecEnabled", c.s.FollowExecEnabled, rpc2.FollowExecEnabledIn{})
	return out.Enabled
}

// Disconnect ends the session without detaching Delve; with cont set it
// first lets the target continue, as Delve's client sends a continue it
// does not wait for.
func (c *Client) Disconnect(cont bool) error {
	if cont {
		retCfg, _ := c.options()
		c.start("Command", c.run(api.DebuggerCommand{Name: api.Continue, ReturnInfoLoadConfig: retCfg}, nil))
	}
	c.shutdown()
	return nil
}

func (c *Client) SetDebugInfoDirectories(dirs []string) error {
	_, err := call(c, "DebugInfoDirectories", c.s.DebugInfoDirectories, rpc2.DebugInfoDirectoriesIn{Set: true, List: slices.Clone(dirs)})
	return err
}

func (c *Client) GetDebugInfoDirectories() ([]string, error) {
	out, err := call(c, "DebugInfoDirectories", c.s.DebugInfoDirectories, rpc2.DebugInfoDirectoriesIn{})
	return slices.Clone(out.List), err
}

// GuessSubstitutePath asks "go list" (in this process's directory) for
// the module directories, as Delve's client does, and Delve for the
// substitutions.
func (c *Client) GuessSubstitutePath() ([][2]string, error) {
	in, err := rpc2.MakeGuessSusbtitutePathIn()
	if err != nil {
		return nil, err
	}
	out, err := call(c, "GuessSubstitutePath", c.s.GuessSubstitutePath, rpc2.GuessSubstitutePathIn{Args: *in})
	return out.List, err
}

func (c *Client) CancelDownloads() error {
	_, err := early[rpc2.CancelDownloadsOut](c, "CancelDownloads", c.s.CancelDownloads, rpc2.CancelDownloadsIn{})
	return err
}

// DownloadLibraryDebugInfo downloads the debug information of library n
// (of ListDynamicLibraries), with its events given to the events
// function, as rpc2.RPCServer.DownloadLibraryDebugInfo does.
func (c *Client) DownloadLibraryDebugInfo(n int) error {
	_, events := c.options()
	fn, finish := deliver(events)
	_, err := early[rpc2.DownloadLibraryDebugInfoOut](c, "DownloadLibraryDebugInfo", func(n int, cb service.RPCCallback) {
		close(cb.SetupDoneChan())
		cb.Return(nil, c.d.DownloadLibraryDebugInfo(n+1, fn))
	}, n)
	finish()
	return err
}

// CallAPI calls the server method named method (Delve's API v2 name,
// "ListThreads") with args and fills reply, the values converted as the
// wire converts them: this is the call of scripts (Delve's starlark
// bindings), which build their arguments for the wire.
func (c *Client) CallAPI(method string, args, reply any) error {
	m := reflect.ValueOf(c.s).MethodByName(method)
	switch {
	case method == "GetVersion":
		return recode(c.GetVersion(), reply)
	case method == "SetApiVersion":
		var in api.SetAPIVersionIn
		if err := recode(args, &in); err != nil {
			return err
		}
		if in.APIVersion != 2 {
			return fmt.Errorf("unknown API version")
		}
		return nil
	case !m.IsValid() || m.Type().NumIn() != 2:
		return fmt.Errorf("unknown method: RPCServer.%s", method)
	}
	mt := m.Type()
	in := reflect.New(mt.In(0))
	if err := recode(args, in.Interface()); err != nil {
		return fmt.Errorf("malformed request body: %v", err)
	}
	if mt.In(1) == reflect.TypeFor[service.RPCCallback]() {
		out, err := wait[any](c, method, func(cb service.RPCCallback) {
			m.Call([]reflect.Value{in.Elem(), reflect.ValueOf(cb)})
		})
		if err != nil {
			return err
		}
		return recode(out, reply)
	}
	if mt.NumOut() != 1 || mt.In(1).Kind() != reflect.Pointer {
		return fmt.Errorf("unknown method: RPCServer.%s", method)
	}
	out := reflect.New(mt.In(1).Elem())
	_, err := call(c, method, func(_ struct{}, _ *struct{}) error {
		res := m.Call([]reflect.Value{in.Elem(), out})
		if err, _ := res[0].Interface().(error); err != nil {
			return err
		}
		return nil
	}, struct{}{})
	if err != nil {
		return err
	}
	return recode(out.Interface(), reply)
}

// recode stores v into ptr as the wire would: JSON out, JSON in.
func recode(v, ptr any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, ptr)
}

// ThreadRegisterValues writes the registers of thread threadID numbered
// 0 to len(dst)-1 in the architecture's DWARF numbering (on amd64 the
// System V psABI's: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8 to r15,
// then the return address column, rip) into dst, and returns which it
// wrote as a bit mask. They are the values ListThreadRegisters gives,
// without the text Delve makes of every register first, floating-point
// ones included (api.ConvertRegisters): a debugger core that unwinds
// needs the numbers. It is not part of service.Client.
func (c *Client) ThreadRegisterValues(threadID int, dst []uint64) (written uint64, err error) {
	return call(c, "ListRegisters", func(threadID int, mask *uint64) error {
		regs, _, err := c.d.ThreadRegisters(threadID)
		if err != nil {
			return err
		}
		*mask = registerValues(regs, dst)
		return nil
	}, threadID)
}

// registerValues writes regs numbered 0 to len(dst)-1 (at most 64) into
// dst and returns which it wrote as a bit mask.
func registerValues(regs *op.DwarfRegisters, dst []uint64) (written uint64) {
	for n := range dst[:min(len(dst), 64)] {
		if r := regs.Reg(uint64(n)); r != nil {
			dst[n], written = r.Uint64Val, written|1<<n
		}
	}
	return written
}

// StacktraceRegisters is Stacktrace without variables, which also writes
// into dst, as ThreadRegisterValues does, the registers Delve unwound
// frame 0 from when they are its thread's: when goroutineID names no
// goroutine (a program without Go's runtime, or a thread running none),
// Delve unwinds from the thread's registers (proc.ThreadStacktrace),
// keeps that stack for the stop, and switches no stacks. On a
// goroutine's stack it may rewrite frame 0's stack pointer where it
// switches to the goroutine's stack, and written is 0. A debugger core
// that needs both the stack and the thread's registers at a stop saves
// a second read of the registers: a round trip to Delve's tracing thread.
// It is not part of service.Client.
func (c *Client) StacktraceRegisters(goroutineID int64, depth int, opts api.StacktraceOptions, dst []uint64) (frames []api.Stackframe, written uint64, err error) {
	type answer struct {
		frames  []api.Stackframe
		written uint64
	}
	out, err := call(c, "Stacktrace", func(in rpc2.StacktraceIn, out *answer) error {
		g, err := c.d.FindGoroutine(in.Id)
		if err != nil {
			return err
		}
		raw, err := c.d.Stacktrace(in.Id, in.Depth, in.Opts)
		if err != nil {
			return err
		}
		if out.frames, err = c.d.ConvertStacktrace(raw, nil); err != nil {
			return err
		}
		if g == nil && len(raw) > 0 {
			out.written = registerValues(&raw[0].Regs, dst)
		}
		return nil
	}, rpc2.StacktraceIn{Id: goroutineID, Depth: depth, Opts: opts})
	return out.frames, out.written, err
}
