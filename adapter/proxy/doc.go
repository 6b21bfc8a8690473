// Package proxy serves Delve's JSON-RPC API v2 to any Delve client — the
// stock "dlv connect" terminal, editors, scripts — and forwards it to a
// headless Delve, so that they all get split-function support: a
// breakpoint on a line in moved code (foo.cold, foo.cold.N, foo.__part.N;
// see DESIGN.md) gets an address there, and stops, stack frames,
// backtraces and disassembly in moved code show the logical function.
//
// The protocol is Delve's own (service/rpccommon over net/rpc/jsonrpc):
// JSON-RPC 1.0 requests {"method":"RPCServer.NAME","params":[ARG],"id":ID}
// and responses {"id":ID,"result":OUT,"error":MSG}, one JSON value each,
// with the argument and result types of service/rpc2 (NAMEIn, NAMEOut).
//
// Each client connection gets its own connection to the upstream Delve
// (which must run with --accept-multiclient to serve more than one) and
// its own adapter.Client over it: the rewriting is the adapter's, the
// same code "splitdbg debug" uses. The methods whose answers may involve
// moved code are decoded and answered through the adapter —
// CreateBreakpoint, FindLocation, Stacktrace, State, Command (continue,
// next, step, stepout...), ListFunctions, Disassemble, the breakpoint,
// thread and goroutine listings, Restart, and the calls that take an
// EvalScope, whose frame numbers the adapter translates on a repaired
// stack. Every other method is forwarded as is: the argument goes
// upstream and Delve's result bytes come back unchanged. So do a
// Stacktrace in which no frame needs the adapter and a scope call in
// frame 0, which the adapter would answer with Delve's own result.
//
// Like Delve's server, the proxy answers a connection's synchronous calls
// in order and runs the asynchronous ones (Command, Restart, State,
// GetEvents...) concurrently, so a client can halt a running continue.
// The events of a command that asks for them (DebuggerCommand.WithEvents)
// are drained from Delve by the upstream client and served to the
// client's GetEvents.
//
// Faults stay with the client they concern: a request that is not JSON
// gets an error reply and its connection is closed; a well-formed request
// that is not a usable call gets an error reply and the connection stays.
// When the upstream Delve goes away, every pending and later call of the
// connections it served fails with a LostError that says so; new client
// connections dial it again (a restarted Delve at the same address). A
// client that disconnects in the middle of a call is handled as Delve
// handles it: the call completes upstream and its answer is dropped.
//
// The adapter caches what it learns at a stop. When one client runs or
// changes the target, the proxy makes the other clients' adapters drop
// their caches before their next call, and after one client restarts the
// target it gives the others the executable's new load bias.
package proxy
