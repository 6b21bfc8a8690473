// Package precheck validates, with splitdbg's own decoders, the sections
// that a debugger's DWARF readers trust: the call frame information of
// .eh_frame (LSB 5.0, "Exception Frames") and .debug_frame (DWARF 5,
// section 6.4) and the line programs of .debug_line (DWARF 5, section
// 6.2). Delve's pkg/dwarf/frame and pkg/dwarf/line panic on some damaged
// entries (an FDE shorter than its fields, a DW_CFA_def_cfa cut short, a
// DWARF 5 file table cut short); Check lets a caller refuse such a binary
// with an error naming the section and offset before handing it over.
package precheck

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/internal/elfx"
)

// Check validates f's .eh_frame, .debug_frame and .debug_line (those it
// has, its separate debug file's included). The error names the file and
// wraps a *cursor.DecodeError naming the section and offset.
func Check(f *elfx.File) error {
	ptrSize := 8
	if f.Class == elf.ELFCLASS32 {
		ptrSize = 4
	}
	for _, x := range []struct {
		name string
		eh   bool
	}{{".eh_frame", true}, {".debug_frame", false}} {
		data, s, err := f.SectionData(x.name)
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		if err := CheckCFI(x.name, data, x.eh, ptrSize, f.ByteOrder); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	secs, err := dwarfline.Load(f)
	if err != nil {
		return err
	}
	if err := CheckLines(secs, ptrSize); err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	return nil
}

// CheckLines reads every line program of secs.Line, one unit after
// another, to its end.
func CheckLines(secs *dwarfline.Sections, addrSize int) error {
	c := cursor.New(".debug_line", 0, secs.Line)
	var row dwarfline.Row
	for !c.Done() {
		off := c.Offset()
		n := uint64(c.U32())
		if n == 0xffffffff {
			n = c.U64()
		}
		if c.Err() != nil {
			break
		}
		p, err := dwarfline.New(secs, uint64(off), "", addrSize)
		if err != nil {
			return err
		}
		for {
			err := p.Next(&row)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
		}
		c.Skip(int(min(n, uint64(c.Len())))) // New checked that n fits
	}
	return c.Err()
}
