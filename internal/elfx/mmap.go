package elfx

import (
	"debug/elf"
	"os"
	"sync"
	"syscall"
)

// A mapping is a file mapped read-only into memory. Section contents
// and code are slices of it, so that only the pages a reader touches
// become resident, and only once (as page cache: clean, reclaimable).
//
// A mapping is never unmapped: the tables built from a file (line
// rows' names, ESL containers, DWARF data read lazily) keep slices of
// its sections after the File is closed. Opening the same file again
// (the same device, inode, size and modification time) reuses its
// mapping, so a process that opens one file many times holds it once.
//
// A file that shrinks while it is mapped makes a read of a page past its
// new end fault (SIGBUS). Sections are checked against the file's size
// when it is opened (checkInFile); a file truncated after that, while
// splitdbg reads it, ends the process, as it ends llvm-symbolizer's,
// which maps files the same way. Turning such a fault into an error
// would need debug.SetPanicOnFault and a recover on every goroutine that
// reads section data, which the project's rule against recover as
// validation excludes; linkers write a new file and rename it over the
// old, which leaves the mapping intact.
type mappingKey struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

var mappings struct {
	mu sync.Mutex
	m  map[mappingKey][]byte
}

// mapFile maps the open file m, of size bytes, read-only; nil when it
// cannot be mapped (an empty or special file), which callers read with
// positioned reads instead.
func mapFile(m *os.File, st os.FileInfo) []byte {
	size := st.Size()
	if size <= 0 || !st.Mode().IsRegular() || int64(int(size)) != size {
		return nil
	}
	var key mappingKey
	sys, ok := st.Sys().(*syscall.Stat_t)
	if ok {
		key = mappingKey{uint64(sys.Dev), sys.Ino, size, st.ModTime().UnixNano()}
		mappings.mu.Lock()
		defer mappings.mu.Unlock()
		if b, ok := mappings.m[key]; ok {
			return b
		}
	}
	b, err := syscall.Mmap(int(m.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	if ok {
		if mappings.m == nil {
			mappings.m = make(map[mappingKey][]byte)
		}
		mappings.m[key] = b
	}
	return b
}

// EvictSection drops from the process's resident set the pages of
// f's mapping (or its debug file's) that lie wholly inside the contents
// of section s in the file: for a compressed section, the compressed
// bytes, which Data has decompressed into the heap. The pages stay in the
// page cache: a later read of the section faults them in again from it,
// with the same bytes. A pass over the whole file calls it for the
// sections it is done with, so that its peak RSS does not hold every
// page it has read. It reads nothing: a file that is not mapped (read
// through a reader, or given to NewBytes) and a section whose contents
// are not in the file are left alone, and so is every page on systems
// other than Linux.
func (f *File) EvictSection(s *elf.Section) {
	o := f.owner(s)
	if !o.mapped || s.Type == elf.SHT_NOBITS || o.checkInFile(s) != nil {
		return
	}
	// A mapping starts on a page: keep the pages the section shares with
	// its neighbours.
	page := uint64(os.Getpagesize())
	lo := (s.Offset + page - 1) &^ (page - 1)
	hi := (s.Offset + s.FileSize) &^ (page - 1)
	if lo < hi {
		dropPages(o.mem[lo:hi])
	}
}
