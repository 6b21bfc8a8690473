package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/rpc"
	"net/rpc/jsonrpc"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRequestReader reads a stream of requests and values that are not
// requests: each is a request, an error with the stream still in step,
// or the end.
func TestRequestReader(t *testing.T) {
	type result struct {
		Method, Params, ID string
		Err                string // "bad", "stream", "eof" or ""
	}
	tests := []struct {
		name, in string
		want     []result
	}{
		{"jsonrpc", `{"method":"RPCServer.State","params":[{"NonBlocking":true}],"id":3}`,
			[]result{{"RPCServer.State", `[{"NonBlocking":true}]`, "3", ""}, {Err: "eof"}}},
		{"several, spaces", " {\"id\": 1, \"method\": \"A\"}\n\t{\"method\":\"B\",\"params\":null,\"id\":\"x\"} ",
			[]result{{"A", "", "1", ""}, {"B", "null", `"x"`, ""}, {Err: "eof"}}},
		{"wrong type, then fine", `{"method":7,"id":2}{"method":"C","id":3}`,
			[]result{{"", "", "2", "bad"}, {"C", "", "3", ""}, {Err: "eof"}}},
		{"not an object", `[1,2] "s" 3 null {"method":"D"}`,
			[]result{{Err: "bad"}, {Err: "bad"}, {Err: "bad"}, {Err: "bad"}, {"D", "", "", ""}, {Err: "eof"}}},
		{"no method", `{"params":[1],"id":9}`, []result{{"", "[1]", "9", "bad"}, {Err: "eof"}}},
		{"syntax", `{"method":"E","id":1}{"method":}`, []result{{"E", "", "1", ""}, {Err: "stream"}}},
		{"cut short", `{"method":"F","params":[{`, []result{{Err: "stream"}}},
		{"garbage", "\x00\xff", []result{{Err: "stream"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rd := newRequestReader(strings.NewReader(tc.in))
			var got []result
			for len(got) < 10 {
				var req request
				err := rd.next(&req)
				r := result{Method: req.Method, Params: string(req.Params), ID: string(req.ID)}
				var bad *badRequest
				var se *streamError
				switch {
				case err == nil:
				case errors.As(err, &bad):
					r = result{Method: req.Method, Params: string(req.Params), ID: string(bad.id), Err: "bad"}
				case errors.As(err, &se):
					r = result{Err: "stream"}
				case errors.Is(err, io.EOF):
					r = result{Err: "eof"}
				default:
					t.Fatalf("error %v", err)
				}
				got = append(got, r)
				if r.Err == "stream" || r.Err == "eof" {
					break
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestArg(t *testing.T) {
	tests := []struct{ params, arg, err string }{
		{``, `null`, ""},
		{`null`, `null`, ""},
		{`[]`, `null`, ""},
		{`[{"A":1}]`, `{"A":1}`, ""},
		{` [ {"A":1} , 2 ] `, `{"A":1}`, ""},
		{`{}`, "", `"params" is not an array`},
		{`"x"`, "", `"params" is not an array`},
	}
	for _, tc := range tests {
		req := request{Params: json.RawMessage(tc.params)}
		arg, err := req.arg()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("arg(%s) = %s, %v; want error %q", tc.params, arg, err, tc.err)
			}
			continue
		}
		if err != nil || string(arg) != tc.arg {
			t.Errorf("arg(%s) = %s, %v; want %s", tc.params, arg, err, tc.arg)
		}
	}
}

// TestResponses checks the responses against net/rpc/jsonrpc's: the
// bytes its server writes, and what its client reads from ours.
func TestResponses(t *testing.T) {
	for _, tc := range []struct {
		id, result, err, want string
	}{
		{"1", `{"Pid":7}`, "", `{"id":1,"result":{"Pid":7},"error":null}` + "\n"},
		{`"a"`, "", "", `{"id":"a","result":null,"error":null}` + "\n"},
		{"", `{}`, "", `{"id":null,"result":{},"error":null}` + "\n"},
		{"2", "", `no "x" <here> & there`, `{"id":2,"result":null,"error":"no \"x\" \u003chere\u003e \u0026 there"}` + "\n"},
	} {
		var got []byte
		if tc.err != "" {
			got = appendError(nil, json.RawMessage(tc.id), tc.err)
		} else {
			got = appendResult(nil, json.RawMessage(tc.id), json.RawMessage(tc.result))
		}
		if string(got) != tc.want {
			t.Errorf("response %s\nwant     %s", got, tc.want)
		}
	}

	// net/rpc/jsonrpc's server writes the same bytes.
	type Out struct{ Pid int }
	srv := rpc.NewServer()
	if err := srv.RegisterName("RPCServer", new(echo)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  string
		want []byte
	}{
		{`{"method":"RPCServer.Pid","params":[{}],"id":5}`, appendResult(nil, json.RawMessage("5"), json.RawMessage(`{"Pid":7}`))},
		{`{"method":"RPCServer.Fail","params":[{}],"id":6}`, appendError(nil, json.RawMessage("6"), `no "x" <here>`)},
	} {
		var out bytes.Buffer
		srv.ServeRequest(jsonrpc.NewServerCodec(rwc{strings.NewReader(tc.req), &out}))
		if !bytes.Equal(out.Bytes(), tc.want) {
			t.Errorf("net/rpc/jsonrpc writes %s\nthe proxy          %s", out.Bytes(), tc.want)
		}
	}

	// net/rpc/jsonrpc's client reads ours.
	c, s := net.Pipe()
	defer c.Close()
	go func() {
		defer s.Close()
		rd := newRequestReader(s)
		for {
			var req request
			if rd.next(&req) != nil {
				return
			}
			if req.Method == "RPCServer.Fail" {
				s.Write(appendError(nil, req.ID, "it failed"))
			} else {
				s.Write(appendResult(nil, req.ID, json.RawMessage(`{"Pid":7}`)))
			}
		}
	}()
	client := jsonrpc.NewClient(c)
	var out Out
	if err := client.Call("RPCServer.Pid", struct{}{}, &out); err != nil || out.Pid != 7 {
		t.Errorf("Pid: %+v, %v", out, err)
	}
	if err := client.Call("RPCServer.Fail", struct{}{}, &out); err == nil || err.Error() != "it failed" {
		t.Errorf("Fail: %v", err)
	}
}

type echo struct{}

func (echo) Pid(_ struct{}, out *struct{ Pid int }) error { out.Pid = 7; return nil }

func (echo) Fail(_ struct{}, _ *struct{}) error { return errors.New(`no "x" <here>`) }

type rwc struct {
	io.Reader
	io.Writer
}

func (rwc) Close() error { return nil }

// FuzzRequestReader reads arbitrary bytes as a request stream: no panic,
// every request has a method and an argument that is JSON, and every
// response the proxy would write is one JSON value on one line.
func FuzzRequestReader(f *testing.F) {
	for _, s := range []string{
		`{"method":"RPCServer.State","params":[{"NonBlocking":true}],"id":3}`,
		`{"method":"RPCServer.Command","params":[{"name":"continue","ReturnInfoLoadConfig":{"MaxStringLen":64},"WithEvents":true}],"id":1}{"method":"RPCServer.GetEvents","params":[{}],"id":2}`,
		`{"method":7,"id":2}{"method":"C","id":[3]}`,
		`[1,2] "s" 3 null {"method":"D","params":{}}`,
		`{"method":"E","id":1}{"method":}`,
		"\x00\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := newRequestReader(bytes.NewReader(in))
		for range 100 {
			var req request
			err := rd.next(&req)
			var bad *badRequest
			var id json.RawMessage
			switch {
			case err == nil:
				if req.Method == "" {
					t.Fatalf("request with no method: %+v", req)
				}
				id = req.ID
				if arg, err := req.arg(); err == nil && !json.Valid(arg) {
					t.Fatalf("arg %q of %q is not JSON", arg, req.Params)
				}
			case errors.As(err, &bad):
				id = bad.id
			default:
				return
			}
			for _, resp := range [][]byte{appendResult(nil, id, json.RawMessage(`{"x":1}`)), appendError(nil, id, string(in))} {
				if !json.Valid(resp) || bytes.Count(resp, []byte("\n")) != 1 {
					t.Fatalf("response %q is not one JSON line", resp)
				}
			}
		}
	})
}
