// Package dap is splitdbg's Debug Adapter Protocol door: a DAP server
// (https://microsoft.github.io/debug-adapter-protocol/specification) over
// the split-aware debugger core (package adapter), a drop-in for
// "dlv dap" as VS Code, nvim-dap and other editors start it.
//
// It translates DAP requests into core calls and back, and nothing else:
// breakpoints on lines in moved code, frames named by their logical
// function, variables of moved frames and disassembly across fragments
// come from the core, as they do for the terminal and the proxy. Threads
// are goroutines in Go programs, as in "dlv dap", and the OS threads of
// programs without goroutines (C, C++), where "dlv dap" shows one dummy
// thread and no stack.
//
// Messages follow the protocol's base framing (Content-Length headers,
// JSON bodies) read and written with github.com/google/go-dap. A
// malformed frame or body gets an error response and the server reads on.
package dap

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-dap"
)

// maxContent bounds a message body; a larger Content-Length is refused
// without reading the body into memory.
const maxContent = 64 << 20

// Error ids, as "dlv dap" numbers them (service/dap/error_ids.go) where
// the meaning is the same, so clients that look at them see the same.
const (
	errFailedToLaunch      = 3000
	errFailedToAttach      = 3001
	errUnableToDisplay     = 2002
	errUnableToEvaluate    = 2009
	errUnableToSetVariable = 2012
	errUnableToDisassemble = 2013
	errUnableToStackTrace  = 2004
	errUnableToListLocals  = 2005
	errUnableToStep        = 2011
	errUnableToReadMemory  = 2015
	errUnsupported         = 9999
	errInternal            = 8888
	errNotYetLaunched      = 2020
)

// Options configure a Server.
type Options struct {
	// Logf, when set, receives a line per request and per failure.
	Logf func(format string, args ...any)
}

// Server serves one DAP client over one connection: one debug session,
// as "dlv dap" does.
type Server struct {
	opts Options
	conn io.ReadWriteCloser

	wmu sync.Mutex // guards w and seq
	w   *bufio.Writer
	seq int

	mu  sync.Mutex // guards everything below
	dbg *debuggee
	// variableTypes: the client shows variables' types.
	variableTypes bool
}

// New returns a Server for one client connection.
func New(conn io.ReadWriteCloser, opts Options) *Server {
	return &Server{opts: opts, conn: conn, w: bufio.NewWriter(conn)}
}

// Serve reads requests until the client disconnects or the connection
// fails, and answers each. When it returns the debuggee is gone: a
// launched program is killed, an attached process detached (unless the
// client's disconnect request said otherwise).
func (s *Server) Serve() error {
	defer s.conn.Close()
	defer s.shutdown(false)
	r := bufio.NewReader(s.conn)
	for {
		body, err := readFrame(r)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			var fe *frameError
			if errors.As(err, &fe) {
				s.logf("bad frame: %v", err)
				s.sendInternalError(0, err.Error())
				continue
			}
			return err
		}
		msg, err := dap.DecodeProtocolMessage(body)
		if err != nil {
			s.logf("bad message: %v", err)
			var fe *dap.DecodeProtocolMessageFieldError
			seq, cmd := peekRequest(body)
			if errors.As(err, &fe) && fe.SubType == "Request" && fe.FieldName == "command" {
				s.sendError(seq, cmd, errUnsupported, "Unsupported command", fmt.Sprintf("cannot process %q request", cmd))
				continue
			}
			s.sendError(seq, cmd, errInternal, "Internal Error", "malformed message: "+err.Error())
			continue
		}
		req, ok := msg.(dap.RequestMessage)
		if !ok {
			s.sendInternalError(msg.GetSeq(), fmt.Sprintf("a client sends requests, not %T", msg))
			continue
		}
		if done := s.handle(req); done {
			return nil
		}
	}
}

// frameError is a frame whose header the server cannot use; the reader
// has skipped past it.
type frameError struct{ msg string }

func (e *frameError) Error() string { return e.msg }

// readFrame reads one base-protocol message: header lines up to an empty
// line, of which Content-Length is required, then that many bytes. A
// frame with a bad header is skipped (up to the next blank line) and
// reported as a *frameError, so one bad frame does not end the session.
func readFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	var bad string
	lines := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if line != "" && err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if lines == 0 {
				continue // blank lines between frames are tolerated
			}
			break
		}
		lines++
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			bad = fmt.Sprintf("malformed header line %q", line)
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			switch {
			case err != nil || n < 0:
				bad = fmt.Sprintf("bad Content-Length %q", strings.TrimSpace(value))
				length = -2
			case n > maxContent:
				bad = fmt.Sprintf("Content-Length %d exceeds the limit of %d bytes", n, maxContent)
				length = -2
			default:
				length = n
			}
		}
	}
	if bad != "" {
		return nil, &frameError{bad}
	}
	if length < 0 {
		return nil, &frameError{"frame without Content-Length header"}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
}

// peekRequest returns what can be read of a request's seq and command
// from a body the codec refused.
func peekRequest(body []byte) (int, string) {
	var m struct {
		Seq     int    `json:"seq"`
		Command string `json:"command"`
	}
	json.Unmarshal(body, &m)
	return m.Seq, m.Command
}

// send writes one message; safe for concurrent use.
func (s *Server) send(m dap.Message) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.seq++
	switch m := m.(type) {
	case dap.ResponseMessage:
		m.GetResponse().Seq = s.seq
	case dap.EventMessage:
		m.GetEvent().Seq = s.seq
	}
	b, err := json.Marshal(m)
	if err != nil {
		s.logf("encoding %T: %v", m, err)
		return
	}
	if err := dap.WriteBaseMessage(s.w, b); err == nil {
		s.w.Flush()
	}
}

// response returns a success response header for req.
func response(req *dap.Request) dap.Response {
	return dap.Response{
		ProtocolMessage: dap.ProtocolMessage{Type: "response"},
		Command:         req.Command,
		RequestSeq:      req.Seq,
		Success:         true,
	}
}

// event returns an event header.
func event(name string) dap.Event {
	return dap.Event{ProtocolMessage: dap.ProtocolMessage{Type: "event"}, Event: name}
}

// sendError answers request seq (command cmd) with an error.
func (s *Server) sendError(seq int, cmd string, id int, summary, details string) {
	er := &dap.ErrorResponse{Response: dap.Response{
		ProtocolMessage: dap.ProtocolMessage{Type: "response"},
		Command:         cmd,
		RequestSeq:      seq,
		Message:         summary,
	}}
	er.Body.Error = &dap.ErrorMessage{Id: id, Format: fmt.Sprintf("%s: %s", summary, details), ShowUser: true}
	s.logf("%s %d: %s: %s", cmd, seq, summary, details)
	s.send(er)
}

// fail answers req with an error.
func (s *Server) fail(req *dap.Request, id int, summary string, err error) {
	s.sendError(req.Seq, req.Command, id, summary, err.Error())
}

func (s *Server) sendInternalError(seq int, details string) {
	s.sendError(seq, "", errInternal, "Internal Error", details)
}

// output sends text to the client's debug console.
func (s *Server) output(category, text string) {
	s.send(&dap.OutputEvent{Event: event("output"), Body: dap.OutputEventBody{Category: category, Output: text}})
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}
