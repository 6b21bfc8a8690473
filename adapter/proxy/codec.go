package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// request is one JSON-RPC 1.0 request as net/rpc/jsonrpc writes it:
// {"method":"RPCServer.NAME","params":[ARG],"id":ID}.
type request struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	ID     json.RawMessage `json:"id"`
}

// badRequest is a JSON value that is not a usable request. The stream
// stays in step: the next value can be read.
type badRequest struct {
	id  json.RawMessage
	err error
}

func (e *badRequest) Error() string { return "malformed request: " + e.err.Error() }

// streamError is input that is not JSON: the stream cannot be resumed.
type streamError struct{ err error }

func (e *streamError) Error() string { return "malformed JSON-RPC stream: " + e.err.Error() }

func (e *streamError) Unwrap() error { return e.err }

// requestReader reads requests off a client connection.
type requestReader struct{ dec *json.Decoder }

func newRequestReader(r io.Reader) *requestReader {
	return &requestReader{dec: json.NewDecoder(r)}
}

// next reads the next request into req. It returns io.EOF at the end of
// the stream, a *badRequest for a JSON value that is not a request, a
// *streamError for input that is not JSON, and the connection's error
// otherwise.
func (r *requestReader) next(req *request) error {
	*req = request{}
	// The decoder reads a whole value before it decodes it, so after a
	// value of the wrong shape the stream is still in step, and fields
	// of the right type are filled (the reply can carry the ID).
	err := r.dec.Decode(req)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
	case errors.As(err, &te):
		return &badRequest{id: req.ID, err: err}
	case errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF):
		return &streamError{err}
	default:
		return err
	}
	if req.Method == "" {
		return &badRequest{id: req.ID, err: errors.New(`no "method"`)}
	}
	return nil
}

var jsonNull = json.RawMessage("null")

// arg returns the request's argument: the first element of "params" (the
// argument net/rpc/jsonrpc sends), null when there is none.
func (req *request) arg() (json.RawMessage, error) {
	p := bytes.TrimSpace(req.Params)
	if len(p) == 0 || bytes.Equal(p, jsonNull) {
		return jsonNull, nil
	}
	if p[0] != '[' {
		return nil, fmt.Errorf(`"params" is not an array: %.40s`, p)
	}
	var ps []json.RawMessage
	if err := json.Unmarshal(p, &ps); err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return jsonNull, nil
	}
	return ps[0], nil
}

// appendResult appends the response to request id with the encoded
// result, as net/rpc/jsonrpc writes it.
func appendResult(dst []byte, id, result json.RawMessage) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	if len(result) == 0 {
		result = jsonNull
	}
	dst = append(dst, result...)
	return append(dst, ",\"error\":null}\n"...)
}

// appendError appends the error response to request id.
func appendError(dst []byte, id json.RawMessage, msg string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":null,"error":`...)
	m, err := json.Marshal(msg)
	if err != nil {
		m = []byte(strconv.Quote(msg))
	}
	dst = append(dst, m...)
	return append(dst, "}\n"...)
}

func appendID(dst []byte, id json.RawMessage) []byte {
	if len(id) == 0 {
		return append(dst, jsonNull...)
	}
	return append(dst, id...)
}
