// Package splitdbg makes split functions first-class for debuggers and
// profilers.
//
// Optimizers split one source function into fragments: a hot part at the
// entry and moved parts elsewhere in the text — foo + foo.cold from GCC
// hot/cold partitioning (on by default at -O2), foo.cold and
// foo.__part.N from clang machine-function splitting and basic-block
// sections, foo.cold.N from BOLT. Tools that assume one function is one
// address range break: Delve drops breakpoints on lines in moved code and
// shows ??? frames there, gdb places some of those breakpoints in the
// wrong function, profilers charge cold samples to foo.cold instead of
// foo.
//
// splitdbg rebuilds each logical function (a procedure) from every source
// of evidence an ELF file carries and answers address and name questions
// about it. The packages:
//
//   - splitinfo: the procedures and their fragments, merged from ELF
//     symbols and DWARF; address→procedure in any fragment, size and
//     ranges in logical order (the split-procedure proposal's sp_init,
//     sp_size, sp_ranges and address_to_procedure).
//   - cmd/splitdbg: the command line (funcs, addr, demo).
//
// A short example:
//
//	t, err := splitinfo.Open("a.out")
//	if err != nil {
//		log.Fatal(err)
//	}
//	if loc, ok := t.Lookup(0x401136); ok {
//		// loc.Proc.Name is "foo" even when 0x401136 is in foo.cold.
//		fmt.Println(loc.Proc.Name, loc.Fragment().Kind, loc.Offset)
//	}
//	for p := range t.Split() {
//		fmt.Println(p.Name, p.Size(), len(p.Fragments))
//	}
//
// Malformed input never panics: decoders return a *DecodeError naming
// the section and offset, wrapping one of the sentinel errors below.
package splitdbg

import "github.com/splitdbg/splitdbg/internal/cursor"

// DecodeError reports malformed input: the section, the byte offset
// within it, and the cause, which wraps one of the sentinel errors.
type DecodeError = cursor.DecodeError

// Sentinel errors for errors.Is on a DecodeError.
var (
	ErrTruncated          = cursor.ErrTruncated
	ErrCorrupt            = cursor.ErrCorrupt
	ErrOverflow           = cursor.ErrOverflow
	ErrUnsupportedVersion = cursor.ErrUnsupportedVersion
	ErrUnsupported        = cursor.ErrUnsupported
)
