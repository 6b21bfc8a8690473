// Package adapter makes Delve work in split functions: breakpoints,
// stop locations, backtraces and disassembly in code that an optimizer
// moved away from its function's entry (foo.cold, foo.cold.N,
// foo.__part.N; see DESIGN.md).
//
// It has two parts. A Resolver answers the split-aware questions for a
// debugged process from splitinfo and linetable (the split-procedure
// proposal, seed 003: address_to_procedure, sp_ranges, the logical order
// of a procedure's fragments): the breakpoint addresses of FUNC,
// FILE:LINE and *ADDR, and the logical frame (function, file, line,
// fragment) of any PC. It works in link-time addresses and translates at
// its edges with each image's load bias, taken from Delve: shared
// libraries from ListDynamicLibraries (api.Image.Address is the image's
// static base), the main executable from the entry of a function Delve
// resolves (api.Function.Value), checked against the ELF header in
// memory, because Delve's image list omits the executable.
//
// A Client implements Delve's service.Client over Delve's own client and
// changes only what split functions need; everything else, and every
// answer that involves no moved code, is Delve's own:
//
//   - FindLocation and CreateBreakpoint give one logical breakpoint with
//     an address in every fragment that holds the line (Delve 1.27 finds
//     none in moved code and creates the breakpoint with no address);
//   - stop locations, stack frames, threads and goroutines whose PC lies
//     in a moved fragment carry the logical function, file and line
//     (Delve shows "??? at ?:-1");
//   - where Delve's unwinder loses frames at a moved fragment (in a cgo
//     program it takes a nameless top frame for a system-stack frame and
//     jumps to the goroutine stack), Stacktrace unwinds through the
//     fragment with its own .eh_frame CFI, using registers and memory read
//     over the API, and splices Delve's frames back;
//   - the calls inlined at the PC of a frame in moved code, which Delve
//     shows as frames of their own only where it has a function, are
//     frames of their own too, with their variables (inline.go);
//   - DisassemblePC covers every fragment of the logical function in
//     logical order; ListFunctions lists logical functions;
//   - Next in a split function stops at the statements of every fragment
//     (Delve's refuses in moved code, "no source for PC", and runs
//     through moved code from the entry fragment), and Step also at the
//     start of the functions the line calls; StepOut from moved code
//     returns to the caller the repaired stack shows;
//   - ListFunctionArgs, ListLocalVariables, EvalVariable and Stacktrace
//     with variables read the variables of frames in moved code through
//     package locals (Delve: "unable to find function context"), with the
//     frame's registers, its CFA from the fragment's FDE and memory read
//     over the API; in other frames they read the variables Delve gives
//     up on (DW_OP_entry_value, DW_FORM_loclistx), and all of them in
//     caller frames of C code, whose registers the Client unwinds through
//     every inner frame's CFI (Delve's caller frames lack the registers
//     their callee has not saved, and ListScopeRegisters lists them);
//   - breakpoints with moved addresses are set again after Restart, at
//     the new load bias (Delve drops addresses it was given as a list).
//
// Frame numbers of a repaired stack are translated to Delve's in every
// call that takes an api.EvalScope.
package adapter
