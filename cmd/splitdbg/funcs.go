package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
)

var funcsCmd = &command{
	name:    "funcs",
	args:    "[-all] [-json] BIN",
	summary: "list the split functions of BIN with all their fragments",
	help: `
Lists the logical functions of the ELF file BIN that are split into several
fragments (all functions with -all). Fragments are in logical order, the
entry fragment first; for each moved fragment, branch_addrs lists every
direct branch in the other fragments that reaches it, and branch_addr the
one through which the flow first reaches it (the split record's
branch_addr). "sources" says which evidence placed the function
(symbols, dwarf, ...) and "conflicts" where the sources disagree.

Addresses are link-time virtual addresses, JSON numbers.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		all := fs.Bool("all", false, "list every function, not only split ones")
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) != 1 {
				return usagef("want one BIN, got %d arguments", len(args))
			}
			// One open for the bound and the table: opening may ask
			// debuginfod servers for the debug file.
			t, err := elfx.OpenWith(args[0], func(f *elfx.File) (*splitinfo.Table, error) {
				boundHeap(f)
				return splitinfo.FromOwnELF(f)
			})
			if err != nil {
				return err
			}
			if err := t.Write(c.stdout, *all, *asJSON); err != nil {
				return err
			}
			noteEmpty(c.stderr, args[0], t, *all)
			return nil
		}
	},
}

// boundHeap sets a soft limit on the Go heap for a command that builds
// the whole file's tables, from issue 19's goal for them: a peak RSS of
// at most 1.5 times the bytes of the sections a whole-file pass reads
// (code, .symtab, .strtab, .debug_*). The table is built from the file's
// mapping and lets go of each section's pages when it is done with it,
// but the code (while its branches are found) and .strtab (the symbol
// names point into it) stay resident, and so does the program itself
// (heapReserve): the heap gets the rest, and at least minHeap. The limit
// is soft: a file whose tables need more gets it, at the cost of more
// collections.
func boundHeap(f *elfx.File) { debug.SetMemoryLimit(heapLimit(f)) }

// heapLimit is the limit boundHeap sets.
func heapLimit(f *elfx.File) int64 {
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

// noteEmpty says on w why funcs listed nothing: the file has no functions
// splitdbg can see, or none of them is split.
func noteEmpty(w io.Writer, name string, t *splitinfo.Table, all bool) {
	switch {
	case t.Len() == 0:
		fmt.Fprintf(w, "splitdbg funcs: %s: no functions found: no defined function symbols (.symtab, .dynsym) and no DWARF, in it or in a separate debug file\n", name)
	case !all:
		for range t.Split() {
			return
		}
		fmt.Fprintf(w, "splitdbg funcs: %s: none of its %d functions is split (-all lists them)\n", name, t.Len())
	}
}

func orNone(s string) string {
	if s == "" {
		return "(no symbol)"
	}
	return s
}
