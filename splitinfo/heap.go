package splitinfo

import (
	"debug/elf"
	"strings"

	"github.com/splitdbg/splitdbg/internal/elfx"
)

// HeapLimit is a soft limit for the Go heap (debug.SetMemoryLimit) while
// the whole file's table is built from f (Open, FromOwnELF), such that
// peak RSS stays within 1.5 times the bytes of the sections a
// whole-file pass reads (code, .symtab, .strtab, .debug_*). The build
// reads the sections from the file's mapping and lets go of each one's
// pages when it is done with it, but the code (while its branches are
// found) and .strtab (the symbol names point into it) stay resident, and
// so does the program itself (heapReserve): the heap gets the rest, at
// least minHeap, plus what the compressed sections take once
// decompressed, which is in the heap. A file whose tables need more
// gets it, at the cost of more collections.
func HeapLimit(f *elfx.File) int64 {
	read, resident, inflated := passBytes(f)
	return max(minHeap, read/2*3-resident-heapReserve) + inflated
}

const (
	heapReserve = 16 << 20 // the program's own pages and runtime
	minHeap     = 32 << 20
	// maxInflate is deflate's largest ratio of decompressed to compressed
	// bytes (RFC 1951: 258 bytes from a code of at most 2 bits, a ratio
	// of about 1032): a compressed section that claims more is counted
	// at it. The claim is the header's, unchecked until the section is
	// decompressed; a zstd section beyond it gets more collections, not
	// less memory.
	maxInflate = 1032
	// maxPass bounds each of passBytes' sums, so that the limit's
	// arithmetic cannot overflow: more than any file holds.
	maxPass = 1 << 60
)

// passBytes returns the bytes of the sections of f (and of its debug
// file) that a whole-file pass reads, of those the code and .strtab, and
// the bytes that its compressed sections take once decompressed, which
// are in the heap, not in the mapping (distributions compress their
// debug files). Only sections inside their file count: the others' sizes
// are claims that the pass finds false.
func passBytes(f *elfx.File) (read, resident, inflated int64) {
	add := func(sum *int64, n uint64) { *sum = int64(min(uint64(*sum)+min(n, maxPass), maxPass)) }
	seen := make(map[string]bool)
	for o := f; o != nil; o = o.Debug {
		for _, s := range o.Sections {
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			s = f.Section(s.Name) // the one with contents, of the two files
			if s == nil || s.Type == elf.SHT_NOBITS || !f.InFile(s) {
				continue
			}
			size := s.FileSize
			if s.Flags&elf.SHF_COMPRESSED != 0 || strings.HasPrefix(s.Name, ".zdebug") {
				// debug/elf gives an SHF_COMPRESSED section's
				// decompressed size; a .zdebug section's is in its
				// contents, which this does not read: count it twice.
				add(&inflated, min(max(s.Size, 2*size), min(size, maxPass/maxInflate)*maxInflate))
			}
			switch {
			case s.Flags&elf.SHF_EXECINSTR != 0, s.Name == ".strtab":
				add(&read, size)
				add(&resident, size)
			case s.Type == elf.SHT_SYMTAB, strings.HasPrefix(s.Name, ".debug_"), strings.HasPrefix(s.Name, ".zdebug_"):
				add(&read, size)
			}
		}
	}
	return read, resident, inflated
}
