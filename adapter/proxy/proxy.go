package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-delve/delve/service/api"
	"github.com/go-delve/delve/service/rpc2"

	"github.com/splitdbg/splitdbg/adapter"
	"github.com/splitdbg/splitdbg/internal/elfx"
)

// Config configures a Proxy.
type Config struct {
	// Upstream is the address (host:port) of the headless Delve, as for
	// "dlv connect".
	Upstream string
	// Executable is the path, on this machine, of the program the
	// upstream Delve debugs.
	Executable string
	// DialTimeout bounds connecting to the upstream Delve and its first
	// answer; 0 means 10 seconds.
	DialTimeout time.Duration
	// Logf, if not nil, gets one line for each client that connects or
	// leaves and for each upstream connection that fails.
	Logf func(format string, args ...any)
}

// Proxy serves Delve's JSON-RPC API v2 to clients and forwards it to an
// upstream headless Delve, answering the calls that involve split
// functions through an adapter.Client. It is safe for concurrent use.
type Proxy struct {
	cfg Config

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	sessions  map[*session]struct{}
	closed    bool
	wg        sync.WaitGroup // running ServeConn calls

	// epoch counts the times any client may have run or changed the
	// target (see fresh).
	epoch atomic.Uint64
}

// New returns a Proxy for the headless Delve at cfg.Upstream debugging
// cfg.Executable. It does not connect: each client connection does.
func New(cfg Config) (*Proxy, error) {
	if cfg.Upstream == "" {
		return nil, errors.New("splitdbg proxy: no upstream Delve address")
	}
	if _, _, err := net.SplitHostPort(cfg.Upstream); err != nil {
		return nil, fmt.Errorf("splitdbg proxy: upstream address %q: %w", cfg.Upstream, err)
	}
	f, err := elfx.Open(cfg.Executable)
	if err != nil {
		return nil, fmt.Errorf("splitdbg proxy: %w", err)
	}
	f.Close()
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	return &Proxy{
		cfg:       cfg,
		listeners: make(map[net.Listener]struct{}),
		sessions:  make(map[*session]struct{}),
	}, nil
}

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("splitdbg proxy: closed")

// Serve accepts client connections on l and serves each until it closes.
// It returns ErrClosed after Close, or the listener's error.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.listeners[l] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.listeners, l)
		p.mu.Unlock()
	}()
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if p.isClosed() {
				return ErrClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of descriptors and the like: wait and try again, as
			// net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			p.logf("accept: %v; retrying in %v", err, backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		go p.ServeConn(c)
	}
}

// ServeConn serves one client connection until the client closes it or
// the Proxy is closed, and closes it.
func (p *Proxy) ServeConn(c net.Conn) {
	s := newSession(p, c)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.sessions[s] = struct{}{}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()
	p.logf("client %s: connected", s.name)
	go s.setup()
	s.serve()
	s.end()
	p.mu.Lock()
	delete(p.sessions, s)
	p.mu.Unlock()
	p.logf("client %s: disconnected", s.name)
}

// Close stops accepting connections, closes every client and upstream
// connection, aborting the calls in progress, and waits for them to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var errs []error
	for l := range p.listeners {
		errs = append(errs, l.Close())
	}
	for s := range p.sessions {
		s.abort()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return errors.Join(errs...)
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *Proxy) logf(format string, args ...any) {
	if p.cfg.Logf != nil {
		p.cfg.Logf(format, args...)
	}
}

// others returns the sessions other than s whose adapter is ready.
func (p *Proxy) others(s *session) []*adapter.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*adapter.Client
	for o := range p.sessions {
		if o == s {
			continue
		}
		if ad, ready := o.adapterNow(); ready && ad != nil {
			out = append(out, ad)
		}
	}
	return out
}

// upstreamConn is the connection to the upstream Delve. It records the
// first read or write error: after it, the upstream is lost for good.
//
// It also answers rpc2's opening SetApiVersion itself: Delve's server
// stores the version in its configuration without a lock, a data race
// with every request of its other connections, and 2 is the only version
// it serves, so the request changes nothing. rpc2.NewClientFromConn sends
// it first, and waits for the answer before anything else is sent.
type upstreamConn struct {
	net.Conn
	addr string
	once sync.Once
	lost chan struct{}
	err  error

	greeted bool        // the first write was seen
	hello   chan []byte // the answer to it; empty if it went to Delve
	pending []byte      // what is left of the answer to read
	heard   atomic.Bool // the answer was read
}

func newUpstreamConn(c net.Conn, addr string) *upstreamConn {
	return &upstreamConn{Conn: c, addr: addr, lost: make(chan struct{}), hello: make(chan []byte, 1)}
}

func (c *upstreamConn) Read(b []byte) (int, error) {
	if !c.heard.Load() {
		if c.pending == nil {
			c.pending = <-c.hello
		}
		if len(c.pending) > 0 {
			n := copy(b, c.pending)
			c.pending = c.pending[n:]
			if len(c.pending) == 0 {
				c.heard.Store(true)
			}
			return n, nil
		}
		c.heard.Store(true)
	}
	n, err := c.Conn.Read(b)
	if err != nil {
		c.fail(err)
	}
	return n, err
}

func (c *upstreamConn) Write(b []byte) (int, error) {
	if !c.greeted {
		c.greeted = true
		var req request
		if json.Unmarshal(b, &req) == nil && req.Method == "RPCServer.SetApiVersion" {
			arg, err := req.arg()
			if in, derr := decode[api.SetAPIVersionIn](arg); err == nil && derr == nil && in.APIVersion == 2 {
				c.hello <- appendResult(nil, req.ID, json.RawMessage(`{}`))
				return len(b), nil
			}
		}
		c.hello <- []byte{}
	}
	n, err := c.Conn.Write(b)
	if err != nil {
		c.fail(err)
	}
	return n, err
}

func (c *upstreamConn) fail(err error) {
	c.once.Do(func() {
		c.err = &LostError{Addr: c.addr, Err: err}
		close(c.lost)
	})
}

// lostErr returns the *LostError once the connection failed, nil before.
func (c *upstreamConn) lostErr() error {
	select {
	case <-c.lost:
		return c.err
	default:
		return nil
	}
}

// LostError is the error every call of a client gets once the proxy lost
// its connection to the upstream Delve.
type LostError struct {
	Addr string // the upstream address
	Err  error  // the connection's error
}

func (e *LostError) Error() string {
	why := e.Err.Error()
	if errors.Is(e.Err, io.EOF) {
		why = "it closed the connection"
	}
	return fmt.Sprintf("splitdbg proxy: lost the connection to the upstream Delve at %s (%s): it exited, restarted or dropped this client; connect again", e.Addr, why)
}

func (e *LostError) Unwrap() error { return e.Err }

// DialError is the error every call of a client gets when the proxy
// could not connect to the upstream Delve for it.
type DialError struct {
	Addr string
	Err  error
}

func (e *DialError) Error() string {
	hint := ""
	if errors.Is(e.Err, syscall.ECONNREFUSED) {
		hint = " (is it running, as dlv exec --headless --accept-multiclient?)"
	}
	return fmt.Sprintf("splitdbg proxy: cannot connect to the upstream Delve at %s: %v%s", e.Addr, e.Err, hint)
}

func (e *DialError) Unwrap() error { return e.Err }

// errorText is the message a client gets for err from a call: Delve's own
// message when Delve answered with an error, the LostError when the
// upstream connection failed.
func (s *session) errorText(err error) string {
	if se, ok := err.(rpc.ServerError); ok {
		return string(se)
	}
	if s.up != nil {
		if lost := s.up.lostErr(); lost != nil {
			return lost.Error()
		}
	}
	return err.Error()
}

// dial connects to the upstream Delve and checks that it answers.
func (s *session) dial() error {
	addr, timeout := s.p.cfg.Upstream, s.p.cfg.DialTimeout
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return &DialError{Addr: addr, Err: err}
	}
	up := newUpstreamConn(c, addr)
	rpc := rpc2.NewClientFromConn(up)
	// A first question that never waits for the target, under a
	// deadline: the server must answer, as Delve.
	c.SetDeadline(time.Now().Add(timeout))
	var out rpc2.IsMulticlientOut
	if err := rpc.CallAPI("IsMulticlient", rpc2.IsMulticlientIn{}, &out); err != nil {
		c.Close()
		if lost := up.lostErr(); lost != nil {
			err = errors.Unwrap(lost)
		}
		return &DialError{Addr: addr, Err: fmt.Errorf("no answer from Delve: %w", err)}
	}
	c.SetDeadline(time.Time{})
	s.rpc, s.up = rpc, up
	return nil
}

// newSession returns the session of client connection c.
func newSession(p *Proxy, c net.Conn) *session {
	return &session{
		p:       p,
		conn:    c,
		name:    c.RemoteAddr().String(),
		upReady: make(chan struct{}),
		adReady: make(chan struct{}),
		done:    make(chan struct{}),
		ev:      newEvents(),
	}
}

// setup connects to the upstream Delve, then makes the adapter over that
// connection. The adapter asks Delve for the executable's load bias,
// which waits while the target runs; calls that need no adapter go on
// meanwhile.
func (s *session) setup() {
	defer close(s.adReady)
	if err := s.dial(); err != nil {
		s.upErr = err
		close(s.upReady)
		s.p.logf("client %s: %v", s.name, err)
		return
	}
	close(s.upReady)
	go func() {
		select {
		case <-s.up.lost:
			select {
			case <-s.done: // closed by the proxy as the client left
			default:
				s.p.logf("client %s: %v", s.name, s.up.err)
			}
		case <-s.done:
		}
	}()
	s.newAdapter()
}

// newAdapter makes the session's adapter. When it cannot (the process
// exited, BIN is not the program Delve debugs...), calls are forwarded
// unchanged.
func (s *session) newAdapter() {
	s.seen.Store(s.p.epoch.Load())
	ad, err := adapter.New(s.rpc, s.p.cfg.Executable)
	if err != nil {
		if s.up.lostErr() == nil {
			s.p.logf("client %s: no split-function support, forwarding unchanged: %v", s.name, err)
		}
		return
	}
	s.ad.Store(ad)
}

// serve reads the client's requests until the connection ends.
func (s *session) serve() {
	rd := newRequestReader(s.conn)
	for {
		var req request
		err := rd.next(&req)
		var bad *badRequest
		var se *streamError
		switch {
		case err == nil:
			s.dispatch(&req)
		case errors.As(err, &bad):
			s.replyError(bad.id, "splitdbg proxy: "+bad.Error())
		case errors.As(err, &se):
			s.replyError(nil, "splitdbg proxy: "+se.Error()+"; closing the connection")
			return
		default:
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.p.logf("client %s: %v", s.name, err)
			}
			return
		}
	}
}

// end finishes the session after the client left: calls in progress
// complete upstream, as in Delve, and their answers are dropped; then the
// upstream connection is closed.
func (s *session) end() {
	close(s.done)
	s.conn.Close()
	s.calls.Wait()
	<-s.upReady
	if s.up != nil {
		s.up.Close()
	}
	<-s.adReady
	if ad := s.ad.Load(); ad != nil {
		ad.Close()
	}
	s.cmdMu.Lock()
	if s.pending != nil {
		drain(s.pending)
		s.pending = nil
	}
	s.cmdMu.Unlock()
}

// abort closes the client and upstream connections, so that every call
// in progress fails and the session ends.
func (s *session) abort() {
	s.conn.Close()
	select {
	case <-s.upReady:
		if s.up != nil {
			s.up.Close()
		}
	default:
		go func() {
			<-s.upReady
			if s.up != nil {
				s.up.Close()
			}
		}()
	}
}

// reply writes a response to the client. A write error means the client
// is gone, which the reader sees.
func (s *session) reply(b []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.conn.Write(b)
}

func (s *session) replyError(id []byte, msg string) {
	s.reply(appendError(nil, id, msg))
}

// unknownMethod is Delve's answer to a method it does not serve.
func unknownMethod(m string) string { return "unknown method: " + m }

// dispatch runs one request: synchronous methods before the next request
// is read, asynchronous ones concurrently, as Delve's server does.
func (s *session) dispatch(req *request) {
	name, ok := strings.CutPrefix(req.Method, "RPCServer.")
	if !ok {
		s.replyError(req.ID, unknownMethod(req.Method))
		return
	}
	arg, err := req.arg()
	if err != nil {
		s.replyError(req.ID, "malformed request body: "+err.Error())
		return
	}
	m := methods[name]
	if !m.async {
		s.call(req.ID, name, m, arg)
		return
	}
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		s.call(req.ID, name, m, arg)
	}()
}
