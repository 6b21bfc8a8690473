// Package addrindex is the one address search splitdbg's tables use: a
// sorted slice of start addresses with a page directory that narrows each
// binary search to the few starts of one page, so that a lookup in a
// million-entry table touches a handful of cache lines and never
// allocates.
package addrindex

import "math/bits"

// Index finds, for an address, the last start at or below it.
type Index struct {
	starts []uint64
	// Page k covers [base + k<<shift, base + (k+1)<<shift); pages[k] is
	// the index of the first start at or after the page. There are about
	// half as many pages as starts.
	pages []uint32
	base  uint64
	shift uint
}

// New indexes starts, which must be sorted in ascending order (equal
// values are allowed) and fewer than 1<<32. The Index keeps starts.
func New(starts []uint64) Index {
	x := Index{starts: starts}
	n := len(starts)
	if n == 0 {
		return x
	}
	x.base = starts[0]
	extent := starts[n-1] - x.base
	x.shift = uint(bits.Len64(extent / uint64(n/2+1)))
	x.pages = make([]uint32, int(extent>>x.shift)+2)
	i := 0
	for k := range x.pages {
		pageStart := x.base + uint64(k)<<x.shift
		for i < n && starts[i] < pageStart {
			i++
		}
		x.pages[k] = uint32(i)
	}
	return x
}

// Len returns the number of starts.
func (x *Index) Len() int { return len(x.starts) }

// Start returns the i'th start.
func (x *Index) Start(i int) uint64 { return x.starts[i] }

// Find returns the index of the last start that is at most addr, or -1 if
// every start is above addr. It does not allocate.
func (x *Index) Find(addr uint64) int {
	if len(x.starts) == 0 || addr < x.base {
		return -1
	}
	// The first start above addr lies in addr's page or is the first
	// start of the next page.
	var lo, hi int
	if k := (addr - x.base) >> x.shift; k < uint64(len(x.pages)-1) {
		lo, hi = int(x.pages[k]), int(x.pages[k+1])
	} else {
		lo, hi = int(x.pages[len(x.pages)-1]), len(x.starts)
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.starts[m] <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// Bytes returns the memory the index holds.
func (x *Index) Bytes() int { return len(x.starts)*8 + len(x.pages)*4 }
