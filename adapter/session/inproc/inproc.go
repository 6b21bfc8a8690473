// Package inproc is a Delve client (service.Client) that calls Delve's
// debugger in this process directly. Each call asks Delve's API v2
// server (service/rpc2.RPCServer, the methods "dlv --headless" serves)
// what Delve's own JSON-RPC client (rpc2.RPCClient) would ask it over a
// connection, and answers as that client would — with no JSON encoding
// and no connection in between. Delve's DAP server ("dlv dap") calls
// the debugger the same way.
//
// What the connection gave is kept (service/rpccommon's serveJSONCodec):
//   - calls run one at a time, in the order they arrive; a call the server
//     answers through a callback (Command, State, Restart...) lets the
//     next one in once it is under way — for continue, next and step
//     once the target runs — so a Halt reaches a running Continue;
//   - a panic inside Delve (a damaged DWARF or CFI entry) is that call's
//     error, naming the method, not a crash;
//   - an answer on error is the zero answer; fields the wire does not
//     carry (api.DebuggerState.Err, api.Breakpoint.UserData, tagged
//     json:"-") are zero; after Detach or Disconnect every call fails.
//   - no answer shares memory with Delve's state: the slices and maps
//     Delve would hand out of its breakpoints and goroutine caches
//     (breakpoint Variables and CustomCommands, goroutine Labels, debug
//     info directories) are copied, as are those a caller hands in.
//
// What differs: strings are Delve's bytes (the wire replaces invalid
// UTF-8 in a variable's value with U+FFFD), errors are Delve's own values
// (errors.As works; their text is the same), empty and nil slices may
// differ where the wire's omitempty turned one into the other, and
// api.DebuggerState.CurrentThread is one of its Threads, not a copy.
package inproc

import (
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/debugger"
	"github.com/go-delve/delve/service/rpc2"
)

// Client is a service.Client over a Delve debugger in this process.
type Client struct {
	cfg *service.Config
	d   *debugger.Debugger
	s   *rpc2.RPCServer

	// mu admits one call at a time, as rpccommon's connection loop
	// reads one request at a time.
	mu sync.Mutex
	// closed is set (under mu) by Detach and Disconnect.
	closed bool
	// disconnected is closed with closed: the connection's
	// clientDisconnectChan, which Delve checks before it warns of a
	// stop no client will see.
	disconnected chan struct{}
	closeOnce    sync.Once

	// optMu guards what the client sends with each command.
	optMu         sync.Mutex
	retValLoadCfg *api.LoadConfig
	eventsFn      func(*api.Event)
}

var _ service.Client = (*Client)(nil)

// ErrDetached is the error of every call after Detach or Disconnect,
// where Delve's client reports its closed connection.
var ErrDetached = errors.New("delve: the debugging session has ended (detached)")

// PanicError is a panic inside Delve turned into the error of the call
// that caused it.
type PanicError struct {
	// Method is the call, as Delve's API names it ("Stacktrace").
	Method string
	// Value is what Delve panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("delve: %s: internal debugger error: %v", e.Method, e.Value)
}

// New starts Delve's debugger for cfg — launching cfg.ProcessArgs or
// attaching to cfg.Debugger.AttachPid, as rpccommon.ServerImpl.Run does
// (cfg.Listener is not used) — and returns a client over it.
func New(cfg *service.Config) (c *Client, err error) {
	if cfg.APIVersion == 0 {
		cfg.APIVersion = 2
	}
	if cfg.APIVersion != 2 {
		return nil, errors.New("unknown API version")
	}
	dc := cfg.Debugger
	var d *debugger.Debugger
	err = guard("New", func() error {
		var err error
		d, err = debugger.New(&dc, cfg.ProcessArgs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, d: d, s: rpc2.NewServer(cfg, d), disconnected: make(chan struct{})}, nil
}

// Stop ends the debugger as rpccommon.ServerImpl.Stop does: it halts a
// running target and detaches, killing a process Delve launched. Calls
// after it fail with ErrDetached.
func (c *Client) Stop() error {
	c.shutdown()
	return guard("Stop", func() error {
		if c.d.IsRunning() {
			c.d.Command(&api.DebuggerCommand{Name: api.Halt}, nil, nil, nil)
		}
		return c.d.Detach(c.cfg.Debugger.AttachPid == 0)
	})
}

// shutdown makes every later call fail, as closing the connection does.
func (c *Client) shutdown() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.closeOnce.Do(func() { close(c.disconnected) })
}

// guard runs f, turning a panic into a *PanicError for method.
func guard(method string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Method: method, Value: r, Stack: debug.Stack()}
		}
	}()
	return f()
}

// call runs a synchronous server method, alone; on error its answer is
// the zero answer, as the wire sends none.
func call[In, Out any](c *Client, method string, f func(In, *Out) error, in In) (Out, error) {
	var out Out
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return out, ErrDetached
	}
	if err := guard(method, func() error { return f(in, &out) }); err != nil {
		var zero Out
		return zero, err
	}
	return out, nil
}

// callback is the service.RPCCallback of one call answered through it.
type callback struct {
	setupDone    chan struct{}
	disconnected chan struct{}
	answer       chan answer
}

type answer struct {
	out any
	err error
}

// callback makes the callback of one call.
func (c *Client) callback() *callback {
	return &callback{setupDone: make(chan struct{}), disconnected: c.disconnected, answer: make(chan answer, 1)}
}

func (cb *callback) SetupDoneChan() chan struct{}  { return cb.setupDone }
func (cb *callback) DisconnectChan() chan struct{} { return cb.disconnected }

// Return delivers the answer; like rpccommon's, it first ends the setup
// if the method did not.
func (cb *callback) Return(out any, err error) {
	select {
	case <-cb.setupDone:
	default:
		close(cb.setupDone)
	}
	select {
	case cb.answer <- answer{out, err}:
	default: // a second answer: the first stands
	}
}

// start runs a server method that answers through a callback on its own
// goroutine, as rpccommon does, and returns once the method has closed
// its setup channel; the next call may then start.
func (c *Client) start(method string, f func(service.RPCCallback)) (*callback, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrDetached
	}
	cb := c.callback()
	go func() {
		if err := guard(method, func() error { f(cb); return nil }); err != nil {
			cb.Return(nil, err)
		}
	}()
	<-cb.setupDone
	return cb, nil
}

// early runs a server method that answers through a callback and ends
// its setup before anything else (State, Restart: all but Command), on
// the caller's goroutine: rpccommon admits the next call as soon as such
// a method starts, so a goroutine for it would change nothing but cost
// a thread wake-up.
func early[Out, In any](c *Client, method string, f func(In, service.RPCCallback), in In) (Out, error) {
	var zero Out
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return zero, ErrDetached
	}
	cb := c.callback()
	if err := guard(method, func() error { f(in, cb); return nil }); err != nil {
		return zero, err
	}
	select {
	case a := <-cb.answer:
		return answerOf[Out](method, a)
	default:
		return zero, fmt.Errorf("delve: %s: no answer", method)
	}
}

// wait runs f as start does (for Command, which ends its setup only once
// the target runs) and waits for its answer.
func wait[Out any](c *Client, method string, f func(service.RPCCallback)) (Out, error) {
	cb, err := c.start(method, f)
	if err != nil {
		var zero Out
		return zero, err
	}
	return answerOf[Out](method, <-cb.answer)
}

// answerOf returns the answer of a callback, out of type Out or *Out
// (the zero Out on error).
func answerOf[Out any](method string, a answer) (Out, error) {
	var out Out
	if a.err != nil {
		return out, a.err
	}
	switch v := a.out.(type) {
	case nil:
	case Out:
		out = v
	case *Out:
		if v != nil {
			out = *v
		}
	default:
		return out, fmt.Errorf("delve: %s: answer of type %T, want %T", method, a.out, out)
	}
	return out, nil
}

// command runs a debugger command as rpc2.RPCServer.Command does, with
// Delve's events for it given to events (if not nil) on another
// goroutine, as Delve's client drains them while the command runs; it
// returns when the command has ended and its events are delivered.
func (c *Client) command(cmd api.DebuggerCommand, events func(*api.Event)) (api.DebuggerState, error) {
	cmd.WithEvents = events != nil
	fn, finish := deliver(events)
	out, err := wait[rpc2.CommandOut](c, "Command", c.run(cmd, fn))
	finish()
	ownState(&out.State)
	return out.State, err
}

// run is rpc2.RPCServer.Command for cmd, with Delve's events given to fn.
func (c *Client) run(cmd api.DebuggerCommand, fn func(*proc.Event)) func(service.RPCCallback) {
	return func(cb service.RPCCallback) {
		st, err := c.d.Command(&cmd, cb.SetupDoneChan(), cb.DisconnectChan(), fn)
		if err != nil {
			cb.Return(nil, err)
			return
		}
		cb.Return(rpc2.CommandOut{State: *st}, nil)
	}
}

// deliver starts handing the Delve events of one call to events (nil:
// none). It returns the function Delve is to call with them and one to
// call once the call has returned, which waits until they are handed.
func deliver(events func(*api.Event)) (fn func(*proc.Event), finish func()) {
	if events == nil {
		return nil, func() {}
	}
	evs := make(chan *api.Event, eventBufferSize)
	finished, drained := make(chan struct{}), make(chan struct{})
	go drain(evs, finished, events, drained)
	fn = func(e *proc.Event) {
		ev := api.ConvertEvent(e)
		ownEvent(ev)
		select {
		case evs <- ev:
		default: // as Delve's server, drop events beyond its buffer
		}
	}
	return fn, func() {
		close(finished)
		<-drained
	}
}

// eventBufferSize is Delve's server's buffer of undelivered events.
const eventBufferSize = 100

// drain hands events to fn until a stop (or the end of a download) or,
// once finished is closed, until none is left.
func drain(evs chan *api.Event, finished chan struct{}, fn func(*api.Event), drained chan struct{}) {
	defer close(drained)
	deliver := func(ev *api.Event) bool {
		fn(ev)
		return ev.Kind == api.EventStopped || ev.Kind == api.EventDownloadLibraryInfoDone
	}
	for {
		select {
		case ev := <-evs:
			if deliver(ev) {
				return
			}
		case <-finished:
			for {
				select {
				case ev := <-evs:
					if deliver(ev) {
						return
					}
				default:
					return
				}
			}
		}
	}
}

// options returns what the client sends with each command.
func (c *Client) options() (*api.LoadConfig, func(*api.Event)) {
	c.optMu.Lock()
	defer c.optMu.Unlock()
	if c.retValLoadCfg == nil {
		return nil, c.eventsFn
	}
	cfg := *c.retValLoadCfg
	return &cfg, c.eventsFn
}

// The own* functions give an answer its own copy of what Delve would
// share with its breakpoints and goroutine caches, and clear what the
// wire does not carry.

func ownState(st *api.DebuggerState) {
	if st == nil {
		return
	}
	st.Err = nil
	for _, th := range st.Threads {
		ownThread(th)
	}
	if st.CurrentThread != nil && !slices.Contains(st.Threads, st.CurrentThread) {
		ownThread(st.CurrentThread)
	}
	ownGoroutine(st.SelectedGoroutine)
	for _, bp := range st.WatchOutOfScope {
		ownBreakpoint(bp)
	}
}

func ownThread(th *api.Thread) {
	if th == nil {
		return
	}
	ownBreakpoint(th.Breakpoint)
	if th.BreakpointInfo != nil {
		ownGoroutine(th.BreakpointInfo.Goroutine)
	}
}

func ownGoroutine(g *api.Goroutine) {
	if g == nil {
		return
	}
	if len(g.Labels) == 0 {
		g.Labels = nil
	} else {
		g.Labels = maps.Clone(g.Labels)
	}
}

func ownBreakpoint(bp *api.Breakpoint) {
	if bp == nil {
		return
	}
	bp.Variables = cloneStrings(bp.Variables)
	bp.CustomCommands = cloneStrings(bp.CustomCommands)
	bp.UserData = nil
}

func ownEvent(ev *api.Event) {
	if ev.BreakpointMaterializedEventDetails != nil {
		ownBreakpoint(ev.BreakpointMaterializedEventDetails.Breakpoint)
	}
}

// inBreakpoint is the copy of a caller's breakpoint that Delve keeps.
func inBreakpoint(bp *api.Breakpoint) api.Breakpoint {
	b := *bp
	ownBreakpoint(&b)
	return b
}

func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}
