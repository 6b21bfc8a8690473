package proxy

import (
	"encoding/json"
	"net"
	"sync"
	"sync/atomic"

	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/rpc2"

	"github.com/splitdbg/splitdbg/adapter"
)

// session is one client connection and its upstream connection.
type session struct {
	p    *Proxy
	conn net.Conn
	name string // the client's address, for the log

	wmu sync.Mutex // serializes writes to conn

	// upReady is closed when dialing is over: then rpc and up are set, or
	// upErr says why not.
	upReady chan struct{}
	rpc     *rpc2.RPCClient
	up      *upstreamConn
	upErr   error

	// adReady is closed when the adapter is made; ad is nil when it could
	// not be, and calls are forwarded unchanged (until a restart, see
	// restart).
	adReady chan struct{}
	ad      atomic.Pointer[adapter.Client]
	// seen is the Proxy's epoch the adapter's caches are valid for.
	seen atomic.Uint64

	// cmdMu serializes the commands that run the target and the
	// settings of the upstream client they use (retCfg, withEvents);
	// pending is the state channel of a continue the adapter goes on with
	// (see cont).
	cmdMu       sync.Mutex
	pending     <-chan *api.DebuggerState
	pendingName string
	retCfg      *api.LoadConfig
	withEvents  bool

	ev *events

	// stop is the last state of the stopped target this client got, at
	// the Proxy's epoch stopEpoch (see movedAtTop).
	stopMu    sync.Mutex
	stop      *api.DebuggerState
	stopEpoch uint64

	calls sync.WaitGroup // asynchronous calls in progress
	done  chan struct{}  // closed when the client is gone
}

// method says how the proxy answers one rpc2 method.
type method struct {
	// async: Delve's server runs it concurrently with the connection's
	// other calls (its argument is a service.RPCCallback).
	async bool
	// fn answers the call through the adapter. nil: the call is forwarded
	// unchanged. It runs once the adapter is ready, with its caches fresh,
	// unless own is set: then fn sees to that itself.
	fn  func(s *session, ad *adapter.Client, arg json.RawMessage) (any, error)
	own bool
}

// call answers one request.
func (s *session) call(id json.RawMessage, name string, m method, arg json.RawMessage) {
	res, err := s.answer(name, m, arg)
	if err != nil {
		s.replyError(id, s.errorText(err))
		return
	}
	var out []byte
	if raw, ok := res.(json.RawMessage); ok {
		out = raw
	} else if out, err = json.Marshal(res); err != nil {
		s.replyError(id, "splitdbg proxy: encoding the reply: "+err.Error())
		return
	}
	s.reply(appendResult(make([]byte, 0, len(out)+48), id, out))
}

func (s *session) answer(name string, m method, arg json.RawMessage) (any, error) {
	<-s.upReady
	if s.upErr != nil {
		return nil, s.upErr
	}
	if err := s.up.lostErr(); err != nil {
		return nil, err
	}
	if m.fn == nil {
		return s.forward(name, arg)
	}
	if m.own {
		return m.fn(s, nil, arg)
	}
	ad := s.adapterWait()
	if ad == nil {
		return s.forward(name, arg)
	}
	s.fresh(ad)
	return m.fn(s, ad, arg)
}

// forward sends the call upstream as it came and returns Delve's result
// as it came.
func (s *session) forward(name string, arg json.RawMessage) (json.RawMessage, error) {
	var out json.RawMessage
	err := s.rpc.CallAPI(name, arg, &out)
	return out, err
}

// adapterWait waits for the adapter; nil means there is none.
func (s *session) adapterWait() *adapter.Client {
	<-s.adReady
	return s.ad.Load()
}

// adapterNow returns the adapter if it is ready.
func (s *session) adapterNow() (ad *adapter.Client, ready bool) {
	select {
	case <-s.adReady:
		return s.ad.Load(), true
	default:
		return nil, false
	}
}

// The adapter caches what it learns at a stop (the stop state, repaired
// stacks, the library list) until it runs the target itself. Another
// client of the same Delve may run it meanwhile, so every call that may
// run or change the target advances the Proxy's epoch, and an adapter
// whose caches are older forgets them before its next call.

// moving records that the target may run or change.
func (s *session) moving() { s.p.epoch.Add(1) }

// moved records that s's own adapter saw the target run or change.
func (s *session) moved() { s.seen.Store(s.p.epoch.Add(1)) }

// fresh makes ad forget its caches if another client may have run the
// target since it last saw it stopped.
func (s *session) fresh(ad *adapter.Client) {
	e := s.p.epoch.Load()
	if s.seen.Load() >= e {
		return
	}
	ad.Invalidate()
	s.seen.Store(e)
}

// noteStop records the state of the stopped target a client got.
func (s *session) noteStop(st *api.DebuggerState) {
	if st == nil || st.Running || st.Exited {
		return
	}
	s.stopMu.Lock()
	s.stop, s.stopEpoch = st, s.p.epoch.Load()
	s.stopMu.Unlock()
}
