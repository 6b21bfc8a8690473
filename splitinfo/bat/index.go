package bat

import "github.com/splitdbg/splitdbg/internal/addrindex"

// span is a fragment in the address index: everything a translation needs
// in one 32-byte struct.
type span struct {
	start  uint64
	size   uint32 // 0: unknown (clamped to 4 GiB - 1)
	fn     int32  // index in Table.funcs
	parent int32  // index in Table.funcs of the hot fragment
	lo, n  uint32 // the fragment's keys in Table.keys
}

// spanIndex finds the last span starting at or below an address with the
// page directory of internal/addrindex over the spans themselves: on a
// table too big for the caches a translation then reads one line of the
// directory and one span, not a directory line, a start and a span.
type spanIndex struct {
	spans []span // sorted by start, starts distinct
	dir   addrindex.Dir
}

func newSpanIndex(spans []span) spanIndex {
	x := spanIndex{spans: spans}
	x.dir = addrindex.NewDir(len(spans), x.start)
	return x
}

// find returns the index of the last span starting at or below addr, or
// -1.
func (x *spanIndex) find(addr uint64) int { return x.dir.Find(addr, x.start) }

func (x *spanIndex) start(i int) uint64 { return x.spans[i].start }
