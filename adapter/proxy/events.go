package proxy

import (
	"sync"

	"github.com/go-delve/delve/service/api"
)

// Delve generates events for a command whose DebuggerCommand.WithEvents
// is set, and the client must call GetEvents until it sees EventStopped.
// When a client's command asks for events, the proxy's upstream client
// asks for them too and drains them itself (rpc2.RPCClient does, for each
// command it sends with an events function set); they are queued here and
// served to the client's GetEvents. So a client waiting for EventStopped
// always gets one, even when the adapter ran several commands, or none,
// for its request.

// maxEvents bounds the queue, as Delve bounds its own (eventBufferSize).
const maxEvents = 100

// events is a session's queue of events for the client.
type events struct {
	mu      sync.Mutex
	want    bool // the current command asked for events
	stopped bool // an EventStopped was queued for it
	q       []api.Event
	ready   chan struct{} // closed and replaced when q becomes non-empty
}

func newEvents() *events { return &events{ready: make(chan struct{})} }

// begin starts a command; want says whether it asked for events.
func (e *events) begin(want bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.want, e.stopped = want, false
	e.q = e.q[:0]
}

// end finishes a command: if it asked for events and Delve sent no
// EventStopped (the command failed before running the target), one is
// queued so that the client stops waiting.
func (e *events) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.want && !e.stopped {
		e.pushLocked(&api.Event{Kind: api.EventStopped})
	}
	e.want = false
}

// push queues an event from Delve if the current command wants events.
func (e *events) push(ev *api.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.want {
		e.pushLocked(ev)
	}
}

func (e *events) pushLocked(ev *api.Event) {
	if ev.Kind == api.EventStopped || ev.Kind == api.EventDownloadLibraryInfoDone {
		e.stopped = true
	}
	if len(e.q) >= maxEvents {
		e.q = append(e.q[:0], e.q[1:]...)
	}
	e.q = append(e.q, *ev)
	if len(e.q) == 1 {
		close(e.ready)
		e.ready = make(chan struct{})
	}
}

// take waits for at least one event and returns all queued, or returns
// nil when done or lost is closed first.
func (e *events) take(done, lost <-chan struct{}) []api.Event {
	for {
		e.mu.Lock()
		if len(e.q) > 0 {
			out := append([]api.Event(nil), e.q...)
			e.q = e.q[:0]
			e.mu.Unlock()
			return out
		}
		ready := e.ready
		e.mu.Unlock()
		select {
		case <-ready:
		case <-done:
			return nil
		case <-lost:
			return nil
		}
	}
}
