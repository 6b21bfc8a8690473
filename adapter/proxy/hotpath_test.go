package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/adapter"
)

// hotCase is a binary run on its hot path and a function it calls.
type hotCase struct {
	bin, fn string
	line    string // FILE:LINE of a hot line
	unsplit string // a function that is not split, to disassemble
}

var hotCases = []hotCase{
	{"gcc-cold", "C.validate", "main.c:61", "C.main"},
	{"demo", "C.sum", "demo.c:35", "C.main"},
	{"bolt22", "C.tally", "bolt.c:41", "C.alarm_"},
	{"cgo", "main.main", "split.c:40", "main.main"},
}

// TestHotPath checks that where no moved code is involved a client of the
// proxy gets exactly what a client of Delve gets: the same breakpoint,
// stop, stack, variables and code, through the rewritten methods and the
// forwarded ones, on the same Delve at the same stop; and the responses
// of forwarded methods (and of rewritten ones, here) are the same bytes.
func TestHotPath(t *testing.T) {
	for _, tc := range hotCases {
		t.Run(tc.bin, func(t *testing.T) {
			up := startDelve(t, tc.bin)
			_, addr := startProxy(t, up)
			c := dialRPC(t, addr)
			defer c.Disconnect(false)
			d := up.direct

			db, err := d.CreateBreakpoint(&api.Breakpoint{FunctionName: tc.fn})
			if err != nil {
				t.Fatalf("plain CreateBreakpoint(%s): %v", tc.fn, err)
			}
			if _, err := d.ClearBreakpoint(db.ID); err != nil {
				t.Fatal(err)
			}
			pb, err := c.CreateBreakpoint(&api.Breakpoint{FunctionName: tc.fn})
			if err != nil {
				t.Fatalf("CreateBreakpoint(%s): %v", tc.fn, err)
			}
			if diff := cmp.Diff(db, pb, cmpopts.IgnoreFields(api.Breakpoint{}, "ID")); diff != "" {
				t.Errorf("CreateBreakpoint(%s) (-plain +proxy):\n%s", tc.fn, diff)
			}
			st := <-c.Continue()
			if st.Err != nil || st.CurrentThread == nil || st.CurrentThread.Function.Name() != tc.fn {
				t.Fatalf("Continue: %+v", st)
			}
			d.ListDynamicLibraries() // see TestColdLine

			same := func(what string, plain, proxy any, perr, err error, opts ...cmp.Option) {
				t.Helper()
				if (perr == nil) != (err == nil) || perr != nil && perr.Error() != err.Error() {
					t.Errorf("%s: error %v, plain %v", what, err, perr)
				}
				if diff := cmp.Diff(plain, proxy, opts...); diff != "" {
					t.Errorf("%s (-plain +proxy):\n%s", what, diff)
				}
			}
			ps, perr := d.GetState()
			cs, err := c.GetState()
			sortThreads(ps, cs)
			same("GetState", ps, cs, perr, err)
			pf, perr := d.Stacktrace(-1, 50, 0, api.StacktraceReadDefers, nil)
			cf, err := c.Stacktrace(-1, 50, 0, api.StacktraceReadDefers, nil)
			same("Stacktrace", realFrames(pf), realFrames(cf), perr, err)
			if len(realFrames(cf)) < 2 {
				t.Errorf("short stack:\n%s", formatFrames(cf))
			}
			cfg := api.LoadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 64, MaxArrayValues: 64, MaxStructFields: -1}
			for frame := range 2 {
				scope := api.EvalScope{GoroutineID: -1, Frame: frame}
				pv, perr := d.ListLocalVariables(scope, cfg)
				cv, err := c.ListLocalVariables(scope, cfg)
				pa, perr2 := d.ListFunctionArgs(scope, cfg)
				ca, err2 := c.ListFunctionArgs(scope, cfg)
				if frame > 0 && len(cf) > frame && strings.HasPrefix(cf[frame].Function.Name(), "C.") {
					// A caller frame of C code: the adapter reads its
					// registers through CFI and its variables itself, where
					// Delve lacks the registers the callee had not saved
					// (adapter's TestCallerVariablesAsGDB compares them with
					// gdb). The same variables.
					same(fmt.Sprintf("local variables (frame %d)", frame), varNames(pv), varNames(cv), perr, err)
					same(fmt.Sprintf("arguments (frame %d)", frame), varNames(pa), varNames(ca), perr2, err2)
				} else {
					same(fmt.Sprintf("ListLocalVariables(frame %d)", frame), repaired(pv, cv), cv, perr, err)
					same(fmt.Sprintf("ListFunctionArgs(frame %d)", frame), repaired(pa, ca), ca, perr2, err2)
					pr, perr := d.ListScopeRegisters(scope, false)
					cr, err := c.ListScopeRegisters(scope, false)
					same(fmt.Sprintf("ListScopeRegisters(frame %d)", frame), pr, cr, perr, err)
				}
				pe, perr := d.EvalVariable(scope, "1+2", cfg)
				ce, err := c.EvalVariable(scope, "1+2", cfg)
				same("EvalVariable", pe, ce, perr, err, cmpopts.EquateEmpty())
			}
			pt, perr := d.ListThreads()
			ct, err := c.ListThreads()
			same("ListThreads", sortedThreads(pt), sortedThreads(ct), perr, err)
			pth, perr := d.GetThread(st.CurrentThread.ID)
			cth, err := c.GetThread(st.CurrentThread.ID)
			same("GetThread", pth, cth, perr, err)
			pg, _, perr := d.ListGoroutines(0, 10)
			cg, _, err := c.ListGoroutines(0, 10)
			same("ListGoroutines", pg, cg, perr, err)
			pbs, perr := d.ListBreakpoints(true)
			cbs, err := c.ListBreakpoints(true)
			same("ListBreakpoints", normBreakpoints(pbs), normBreakpoints(cbs), perr, err)
			for _, loc := range []string{tc.line, tc.fn, "+1", "*" + fmt.Sprint(st.CurrentThread.PC)} {
				pl, _, perr := d.FindLocation(curScope, loc, true, nil)
				cl, _, err := c.FindLocation(curScope, loc, true, nil)
				same("FindLocation("+loc+")", pl, cl, perr, err)
			}
			pfn, perr := d.ListFunctions("^"+tc.unsplit+"$", 0)
			cfn, err := c.ListFunctions("^"+tc.unsplit+"$", 0)
			same("ListFunctions", pfn, cfn, perr, err)
			if loc, _, err := d.FindLocation(curScope, tc.unsplit, true, nil); err == nil && len(loc) == 1 {
				pd, perr := d.DisassemblePC(curScope, loc[0].PC, api.GNUFlavour)
				cd, err := c.DisassemblePC(curScope, loc[0].PC, api.GNUFlavour)
				same("DisassemblePC("+tc.unsplit+")", pd, cd, perr, err)
			} else {
				t.Errorf("FindLocation(%s): %v", tc.unsplit, err)
			}

			// Byte for byte: forwarded methods, and rewritten ones whose
			// answers involve no moved code.
			raw := []struct{ method, params string }{
				{"ProcessPid", `{}`},
				{"BuildID", `{}`},
				{"LastModified", `{}`},
				{"IsMulticlient", `{}`},
				{"AttachedToExistingProcess", `{}`},
				{"Recorded", `{}`},
				{"GetVersion", `{}`},
				{"ListSources", `{"Filter":"split|main|demo|bolt"}`},
				{"ListTypes", `{"Filter":"^int$"}`},
				{"ListDynamicLibraries", `{}`},
				{"ExamineMemory", fmt.Sprintf(`{"Address":%d,"Length":64}`, st.CurrentThread.PC)},
				{"ListRegisters", fmt.Sprintf(`{"ThreadID":%d}`, st.CurrentThread.ID)},
				{"ListTargets", `{}`},
				{"FollowExecEnabled", `{}`},
				{"DebugInfoDirectories", `{}`},
				{"ListCheckpoints", `{}`},
				{"GetBufferedTracepoints", `{}`},
				{"NoSuchMethod", `{}`},
				{"GetBreakpoint", `{"Id":999}`},
				{"Eval", `{"Scope":{"GoroutineID":-1},"Expr":"1+"}`},
				{"GetBreakpoint", fmt.Sprintf(`{"Id":%d}`, pb.ID)},
				{"Stacktrace", `{"Id":-1,"Depth":1}`},
				{"FindLocation", fmt.Sprintf(`{"Scope":{"GoroutineID":-1},"Loc":%q}`, tc.line)},
				{"Disassemble", fmt.Sprintf(`{"Scope":{"GoroutineID":-1},"StartPC":%d,"EndPC":%d}`, st.CurrentThread.PC, st.CurrentThread.PC+16)},
			}
			if tc.bin != "cgo" {
				// One thread: Delve lists a Go program's in map order.
				raw = append(raw, struct{ method, params string }{"State", `{"NonBlocking":true}`})
			} else {
				raw = append(raw, struct{ method, params string }{"ListPackageVars", `{"Filter":"^main\\.","Cfg":{"MaxStringLen":8}}`},
					struct{ method, params string }{"ListPackagesBuildInfo", `{"IncludeFiles":false}`})
			}
			pc := dialRaw(t, up.addr)
			cc := dialRaw(t, addr)
			for _, r := range raw {
				want := pc.call(t, r.method, r.params)
				got := cc.call(t, r.method, r.params)
				if !bytes.Equal(want, got) {
					t.Errorf("%s(%s): response\n%s\nplain Delve's\n%s", r.method, r.params, got, want)
				}
			}

			// The program finishes the same.
			if _, err := c.ClearBreakpoint(pb.ID); err != nil {
				t.Fatal(err)
			}
			if st := <-c.Continue(); !st.Exited || st.ExitStatus != 0 {
				t.Errorf("final continue: %+v", st)
			}
		})
	}
}

func sortedThreads(ths []*api.Thread) []*api.Thread {
	st := &api.DebuggerState{Threads: ths}
	sortThreads(st)
	return st.Threads
}

// rawConn is a JSON-RPC connection that sends and reads bytes.
type rawConn struct {
	conn net.Conn
	rd   *bufio.Reader
	id   int
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawConn{conn: conn, rd: bufio.NewReader(conn)}
}

// call sends RPCServer.method with params and returns the response line.
func (c *rawConn) call(t testing.TB, method, params string) []byte {
	t.Helper()
	c.id++
	c.send(t, fmt.Sprintf(`{"method":"RPCServer.%s","params":[%s],"id":%d}`, method, params, c.id))
	return c.read(t)
}

func (c *rawConn) send(t testing.TB, s string) {
	t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.conn.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// read returns the next response line, failing after 30 seconds.
func (c *rawConn) read(t testing.TB) []byte {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := c.rd.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading a response: %v (got %q)", err, line)
	}
	return line
}

// response is a decoded JSON-RPC response.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *string         `json:"error"`
}

func decodeResponse(t testing.TB, line []byte) response {
	t.Helper()
	var r response
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("response %q: %v", line, err)
	}
	if !strings.HasSuffix(string(line), "}\n") {
		t.Errorf("response %q is not one line", line)
	}
	return r
}

// repaired is Delve's variables with those it gave up on (DW_OP_entry_value,
// DW_FORM_loclistx) replaced by the proxy's readable ones of the same name:
// the adapter reads those.
func varNames(vs []api.Variable) []string {
	names := make([]string, len(vs))
	for i := range vs {
		names[i] = vs[i].Name
	}
	return names
}

func repaired(plain, proxy []api.Variable) []api.Variable {
	out := slices.Clone(plain)
	for i, v := range out {
		if !adapter.DelveGaveUp(v.Unreadable) {
			continue
		}
		if j := slices.IndexFunc(proxy, func(p api.Variable) bool { return p.Name == v.Name && p.Unreadable == "" }); j >= 0 {
			out[i] = proxy[j]
		}
	}
	return out
}
