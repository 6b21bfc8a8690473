package adapter

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/frame"

	"github.com/splitdbg/splitdbg/adapter/locals"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/precheck"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// image is one ELF file mapped into the debugged process: the executable
// or a shared library. Its file stays mapped; its tables are built on
// first use.
type image struct {
	path string
	f    *elfx.File
	// bias is the load bias: runtime address = link-time address + bias.
	bias uint64
	// segs are the link-time ranges of its PT_LOAD segments; ro those of
	// the read-only ones, as far as the file backs them.
	segs, ro []splitinfo.Range

	once sync.Once
	tab  *tables
	err  error
}

// tables are the split-aware tables of one ELF file.
type tables struct {
	f     *elfx.File
	procs *splitinfo.Table
	lines *linetable.Table

	cfiOnce sync.Once
	cfi     frame.FrameDescriptionEntries
	cfiErr  error

	varsOnce sync.Once
	vars     *locals.Reader
	varsErr  error
}

// openImage maps path and reads its program headers; its tables wait for
// load.
func openImage(path string, bias uint64) (*image, error) {
	f, err := elfx.Open(path)
	if err != nil {
		return nil, fmt.Errorf("adapter: image: %w", err)
	}
	im := &image{path: path, f: f, bias: bias}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Memsz > 0 {
			im.segs = append(im.segs, splitinfo.Range{Start: p.Vaddr, End: p.Vaddr + p.Memsz})
			if p.Flags&elf.PF_W == 0 {
				im.ro = append(im.ro, splitinfo.Range{Start: p.Vaddr, End: p.Vaddr + p.Filesz})
			}
		}
	}
	return im, nil
}

// load returns the image's tables, building them on first use.
func (im *image) load() (*tables, error) {
	im.once.Do(func() {
		procs, err := splitinfo.FromELF(im.f)
		if err != nil {
			im.err = fmt.Errorf("adapter: procedures of %s: %w", im.path, err)
			return
		}
		lines, err := linetable.FromELF(im.f, procs)
		if err != nil {
			im.err = fmt.Errorf("adapter: line table of %s: %w", im.path, err)
			return
		}
		im.tab = &tables{f: im.f, procs: procs, lines: lines}
	})
	return im.tab, im.err
}

// close releases the file mapping.
func (im *image) close() error { return im.f.Close() }

// contains reports whether the runtime address pc lies in one of the
// image's segments.
func (im *image) contains(pc uint64) bool {
	link := pc - im.bias
	for _, s := range im.segs {
		if s.Contains(link) {
			return true
		}
	}
	return false
}

// readOnly reads n bytes at the link-time address link from the file,
// when they lie in a read-only segment: what the process holds there is
// the file's contents for its whole life (string literals, constants).
func (im *image) readOnly(link uint64, n int) ([]byte, bool) {
	if n <= 0 || link+uint64(n) < link {
		return nil, false
	}
	for _, r := range im.ro {
		if r.Start <= link && link+uint64(n) <= r.End {
			b, err := im.f.ReadVA(link, uint64(n))
			return b, err == nil && len(b) == n
		}
	}
	return nil, false
}

// frames returns the image's .eh_frame call frame information, parsed by
// Delve's pkg/dwarf/frame in link-time addresses. Only .eh_frame is read:
// it is what the C ABI unwinds with, and the Go code of a cgo program is
// not in it, which is where Stacktrace hands back to Delve's unwinder.
func (t *tables) frames() (frame.FrameDescriptionEntries, error) {
	t.cfiOnce.Do(func() {
		data, sec, err := t.f.SectionData(".eh_frame")
		if err != nil || sec == nil {
			t.cfiErr = err
			return
		}
		fdes, err := parseCFI(data, t.f.ByteOrder, sec.Addr)
		if err != nil {
			t.cfiErr = fmt.Errorf("adapter: %s: %w", t.f.Name, err)
			return
		}
		// FDEForPC needs entries sorted by address; Append sorts.
		t.cfi = frame.FrameDescriptionEntries(nil).Append(fdes)
	})
	return t.cfi, t.cfiErr
}

// parseCFI parses .eh_frame section data at link-time address addr with
// Delve's pkg/dwarf/frame, which panics on some damaged entries: they are
// checked with splitdbg's own decoder first, and Delve is given only what
// it reads as the LSB says: the entries before the zero terminator (it
// reads on past it), and no CIE of GCC 2's "eh" augmentation (it reads
// augmentation data the FDEs of such a CIE do not have).
func parseCFI(data []byte, bo binary.ByteOrder, addr uint64) (frame.FrameDescriptionEntries, error) {
	if err := precheck.CheckCFI(".eh_frame", data, true, 8, bo); err != nil {
		return nil, err
	}
	// The entries are checked: their lengths are in bounds.
	for off := 0; off+4 <= len(data); {
		n := uint64(bo.Uint32(data[off:]))
		body := off + 4
		if n == 0 {
			data = data[:off]
			break
		}
		if n == 0xffffffff {
			n, body = bo.Uint64(data[off+4:]), off+12
		}
		if bo.Uint32(data[body:]) == 0 { // a CIE: id 0, version, augmentation
			aug := data[body+5:]
			if i := bytes.IndexByte(aug, 0); i > 0 && aug[0] != 'z' {
				return nil, fmt.Errorf(".eh_frame+%#x: CIE augmentation %q, which Delve's reader misreads", off, aug[:i])
			}
		}
		off = body + int(n)
	}
	return frame.Parse(data, bo, 0, 8, addr)
}

// variables returns the reader of the image's variables, built on first
// use.
func (t *tables) variables() (*locals.Reader, error) {
	t.varsOnce.Do(func() { t.vars, t.varsErr = locals.New(t.f) })
	return t.vars, t.varsErr
}
