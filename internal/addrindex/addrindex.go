// Package addrindex is the one address search splitdbg's tables use: a
// page directory over sorted start addresses that narrows each binary
// search to the few starts of one page, so that a lookup in a
// million-entry table touches a handful of cache lines and never
// allocates.
//
// Dir is the directory alone, for tables that keep their starts inside
// their own records (one cache line fewer per lookup); Index is a Dir
// with its own slice of starts.
package addrindex

import "math/bits"

// Dir is a page directory over n sorted starts. Page k covers [base +
// k<<shift, base + (k+1)<<shift); pages[k] is the index of the first
// start at or after the page. There are about half as many pages as
// starts.
type Dir struct {
	pages []uint32
	base  uint64
	shift uint
	n     int
}

// NewDir builds the directory of n starts, ascending (equal values
// allowed), read through start; n must be below 1<<32.
func NewDir(n int, start func(i int) uint64) Dir {
	d := Dir{n: n}
	if n == 0 {
		return d
	}
	d.base = start(0)
	extent := start(n-1) - d.base
	d.shift = uint(bits.Len64(extent / uint64(n/2+1)))
	d.pages = make([]uint32, int(extent>>d.shift)+2)
	i := 0
	for k := range d.pages {
		pageStart := d.base + uint64(k)<<d.shift
		for i < n && start(i) < pageStart {
			i++
		}
		d.pages[k] = uint32(i)
	}
	return d
}

// Bounds returns the index range [lo, hi) holding the first start above
// addr (hi itself when none in the range is): the last start at or below
// addr is then the one before it. ok is false when every start is above
// addr or there are none.
func (d *Dir) Bounds(addr uint64) (lo, hi int, ok bool) {
	if d.n == 0 || addr < d.base {
		return 0, 0, false
	}
	if k := (addr - d.base) >> d.shift; k < uint64(len(d.pages)-1) {
		return int(d.pages[k]), int(d.pages[k+1]), true
	}
	return int(d.pages[len(d.pages)-1]), d.n, true
}

// Find returns the index of the last start at or below addr, reading the
// starts through start, or -1 if every start is above addr. It does not
// allocate.
func (d *Dir) Find(addr uint64, start func(i int) uint64) int {
	lo, hi, ok := d.Bounds(addr)
	if !ok {
		return -1
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if start(m) <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// Bytes returns the memory the directory holds.
func (d *Dir) Bytes() int { return len(d.pages) * 4 }

// Index finds, for an address, the last start at or below it.
type Index struct {
	starts []uint64
	dir    Dir
}

// New indexes starts, which must be sorted in ascending order (equal
// values are allowed) and fewer than 1<<32. The Index keeps starts.
func New(starts []uint64) Index {
	x := Index{starts: starts}
	x.dir = NewDir(len(starts), x.start)
	return x
}

// Len returns the number of starts.
func (x *Index) Len() int { return len(x.starts) }

// Start returns the i'th start.
func (x *Index) Start(i int) uint64 { return x.starts[i] }

// Find returns the index of the last start that is at most addr, or -1 if
// every start is above addr. It does not allocate.
func (x *Index) Find(addr uint64) int { return x.dir.Find(addr, x.start) }

// Touch reads the first start Find(addr) reads, and returns it: a
// caller that looks up many addresses touches all of them before
// searching any, so that the cache misses overlap.
func (x *Index) Touch(addr uint64) uint64 {
	lo, hi, ok := x.dir.Bounds(addr)
	if !ok || lo >= hi {
		return 0
	}
	return x.starts[lo]
}

func (x *Index) start(i int) uint64 { return x.starts[i] }

// Bytes returns the memory the index holds.
func (x *Index) Bytes() int { return len(x.starts)*8 + x.dir.Bytes() }
