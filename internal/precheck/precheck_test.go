package precheck

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestAgainstReadelf checks every linked test binary and Debian's glibc
// (with libc6-dbg's debug file when installed): each passes, and the CIEs
// and FDEs counted in .eh_frame and .debug_frame are those GNU readelf
// lists.
func TestAgainstReadelf(t *testing.T) {
	readelf, err := exec.LookPath("readelf")
	if err != nil {
		t.Skip("readelf is not installed (binutils; .ci/run installs it)")
	}
	paths := []string{"/lib/x86_64-linux-gnu/libc.so.6"}
	for _, n := range testbin.Linked(t) {
		paths = append(paths, filepath.Join(testbin.Dir(), n))
	}
	entry := regexp.MustCompile(`(?m)^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ (CIE|FDE)`)
	checked := 0
	for _, p := range paths {
		f, err := elfx.Open(p)
		if err != nil {
			continue // glibc is not on every machine
		}
		if err := Check(f); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		for _, sec := range []string{".eh_frame", ".debug_frame"} {
			data, s, err := f.SectionData(sec)
			if err != nil || s == nil {
				continue
			}
			cies, fdes, err := checkCFI(sec, data, sec == ".eh_frame", 8, f.ByteOrder)
			if err != nil {
				t.Errorf("%s %s: %v", p, sec, err)
			}
			src := p
			if f.Debug != nil && s.Type != elf.SHT_NOBITS && f.File.Section(sec) == nil {
				src = f.Debug.Name
			}
			// readelf exits 1 on glibc, which has no program interpreter,
			// after printing the frames.
			out, err := exec.Command(readelf, "--debug-dump=frames", src).Output()
			if len(out) == 0 {
				t.Fatalf("readelf %s: %v", src, err)
			}
			// readelf lists one section after the other.
			text := string(out)
			if i := strings.Index(text, "Contents of the "+sec+" section"); i >= 0 {
				text = text[i+1:]
				if j := strings.Index(text, "Contents of the "); j >= 0 {
					text = text[:j]
				}
			}
			var wantCIE, wantFDE int
			for _, m := range entry.FindAllStringSubmatch(text, -1) {
				if m[1] == "CIE" {
					wantCIE++
				} else {
					wantFDE++
				}
			}
			if cies != wantCIE || fdes != wantFDE {
				t.Errorf("%s %s: %d CIEs and %d FDEs, readelf lists %d and %d", p, sec, cies, fdes, wantCIE, wantFDE)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no call frame information checked")
	}
}

// cfi builds .eh_frame contents: a CIE with augmentation "zR" (FDE
// addresses pcrel|sdata4), then FDEs that refer to it.
type cfi struct{ b []byte }

func (e *cfi) cie(instrs ...byte) *cfi {
	body := []byte{0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b}
	body = append(body, instrs...)
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(body)))
	e.b = append(e.b, body...)
	return e
}

// fde appends an FDE of the first CIE; n, when not 0, overrides its
// length.
func (e *cfi) fde(n int, instrs ...byte) *cfi {
	ptrAt := len(e.b) + 4
	body := binary.LittleEndian.AppendUint32(nil, uint32(ptrAt))
	body = binary.LittleEndian.AppendUint32(body, 0x1000) // initial location
	body = binary.LittleEndian.AppendUint32(body, 0x20)   // address range
	body = append(body, 0)                                // no augmentation data
	body = append(body, instrs...)
	if n == 0 {
		n = len(body)
	}
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(n))
	e.b = append(e.b, body...)
	return e
}

func (e *cfi) end() []byte { return append(e.b, 0, 0, 0, 0) }

// TestDamagedCFI checks call frame information damaged as in the inputs
// that crash Delve's frame parser: each is an error naming .eh_frame and
// the offset of the fault.
func TestDamagedCFI(t *testing.T) {
	// DW_CFA_def_cfa r7 ofs 8; DW_CFA_offset r16 at cfa-8.
	good := []byte{0x0c, 7, 8, 0x90, 1}
	tests := []struct {
		name string
		data []byte
		want error
		at   int64
		msg  string
	}{
		{"good", new(cfi).cie(good...).fde(0, 0x41, 0x0e, 16).end(), nil, 0, ""},
		// The CIE is 0x16 bytes; the FDE's CIE pointer is at 0x1a, its
		// initial location at 0x1e, its range at 0x22, its instructions
		// from 0x27.
		{"DW_CFA_def_cfa cut short", new(cfi).cie(good...).fde(0, 0x41, 0x0c, 7).end(), cursor.ErrTruncated, 0x28, "instruction 0xc cut short"},
		{"FDE shorter than its fields", new(cfi).cie(good...).fde(8).end(), cursor.ErrTruncated, 0x22, "FDE address range needs 4 bytes, 0 left"},
		{"entry past the section", new(cfi).cie(good...).fde(200).end(), cursor.ErrTruncated, 0x16, "entry of 200 bytes"},
		{"unknown instruction", new(cfi).cie(good...).fde(0, 0x3f).end(), cursor.ErrCorrupt, 0x27, "unknown call frame instruction 0x3f"},
		{"restore_state first", new(cfi).cie(good...).fde(0, 0x0b).end(), cursor.ErrCorrupt, 0x27, "DW_CFA_restore_state"},
		{"remember in the CIE, restore in the FDE", new(cfi).cie(0x0a).fde(0, 0x0b).end(), nil, 0, ""},
		{"expression past the entry", new(cfi).cie(good...).fde(0, 0x0f, 40, 1).end(), cursor.ErrTruncated, 0x27, "expression of 40 bytes"},
		{"CIE pointer outside", func() []byte {
			b := new(cfi).cie(good...).fde(0).end()
			binary.LittleEndian.PutUint32(b[0x1a:], 0x7000)
			return b
		}(), cursor.ErrCorrupt, 0x1a, "outside the section"},
		{"CIE pointer to an FDE", func() []byte {
			b := new(cfi).cie(good...).fde(0).fde(0).end()
			binary.LittleEndian.PutUint32(b[0x2b:], 0x2b-0x16) // the second FDE's, to the first
			return b
		}(), cursor.ErrCorrupt, 0x16, "CIE pointer to an FDE"},
		{"CIE version 9", func() []byte {
			b := new(cfi).cie(good...).end()
			b[8] = 9
			return b
		}(), cursor.ErrUnsupportedVersion, 8, "CIE version 9"},
		{"bad FDE pointer encoding", func() []byte {
			b := new(cfi).cie(good...).fde(0).end()
			b[16] = 0x0e
			return b
		}(), cursor.ErrCorrupt, 16, "pointer encoding 0xe"},
	}
	for _, tt := range tests {
		err := CheckCFI(".eh_frame", tt.data, true, 8, binary.LittleEndian)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		var de *cursor.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, tt.want) || de.Section != ".eh_frame" || de.Offset != tt.at || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v; want %v at .eh_frame+%#x (%q)", tt.name, err, tt.want, tt.at, tt.msg)
		}
	}
}

// TestGarbledFDE garbles the instructions of one FDE of a split test
// binary, as in the binary that crashes dlv exec in
// pkg/dwarf/frame.parseFDE: Check names .eh_frame and the instruction.
func TestGarbledFDE(t *testing.T) {
	f, err := elfx.Open(testbin.Path(t, "gcc-cold"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, _, err := f.SectionData(".eh_frame")
	if err != nil {
		t.Fatal(err)
	}
	// The first FDE: its length, CIE pointer, pcrel sdata4 location and
	// range, augmentation length 0, then instructions.
	b := append([]byte(nil), data...)
	off := 4 + int(binary.LittleEndian.Uint32(b)) // past the first CIE
	for binary.LittleEndian.Uint32(b[off+4:]) == 0 {
		off += 4 + int(binary.LittleEndian.Uint32(b[off:]))
	}
	n := int(binary.LittleEndian.Uint32(b[off:]))
	instr := off + 4 + 4 + 8 + 1
	if n < 4+8+1+2 {
		t.Fatalf("first FDE at %#x is %d bytes", off, n)
	}
	for i := instr; i < off+4+n; i++ {
		b[i] = 0x0c // DW_CFA_def_cfa with operands running out
	}
	err = CheckCFI(".eh_frame", b, true, 8, binary.LittleEndian)
	var de *cursor.DecodeError
	if !errors.As(err, &de) || de.Section != ".eh_frame" || de.Offset < int64(instr) || de.Offset >= int64(off+4+n) {
		t.Errorf("garbled FDE at %#x: %v; want an error inside its instructions [%#x,%#x)", off, err, instr, off+4+n)
	}
}

// TestDamagedLines checks that a line program cut short inside its DWARF
// 5 file table, where Delve's line.parseFileEntries5 panics, is an error
// naming .debug_line.
func TestDamagedLines(t *testing.T) {
	f, err := elfx.Open(testbin.Path(t, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	secs, err := dwarfline.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLines(secs, 8); err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(secs.Line[4:]); v != 5 {
		t.Skipf("demo's line table is version %d", v)
	}
	// The unit length and header length shrunk to end inside the file
	// name table (header: length 4, version 2, address and segment sizes
	// 2, header length 4, 6 fixed bytes and 12 opcode lengths, then the
	// directory and file tables).
	cut := *secs
	cut.Line = append([]byte(nil), secs.Line...)
	const tables = 4 + 2 + 2 + 4 + 6 + 12
	binary.LittleEndian.PutUint32(cut.Line, tables+6-4)
	binary.LittleEndian.PutUint32(cut.Line[8:], tables+6-12)
	err = CheckLines(&cut, 8)
	var de *cursor.DecodeError
	if !errors.As(err, &de) || de.Section != ".debug_line" {
		t.Errorf("line program cut in its file table: %v; want a .debug_line DecodeError", err)
	}
}

// FuzzCheckCFI checks arbitrary .eh_frame and .debug_frame contents:
// never a panic, and every error a DecodeError of the section.
func FuzzCheckCFI(f *testing.F) {
	f.Add(new(cfi).cie(0x0c, 7, 8, 0x90, 1).fde(0, 0x41, 0x0e, 16).end(), true)
	f.Add(new(cfi).cie(0x0a).fde(0, 0x0b, 0x0f, 1, 0).end(), false)
	f.Fuzz(func(t *testing.T, data []byte, eh bool) {
		name := ".debug_frame"
		if eh {
			name = ".eh_frame"
		}
		err := CheckCFI(name, data, eh, 8, binary.LittleEndian)
		var de *cursor.DecodeError
		if err != nil && (!errors.As(err, &de) || de.Section != name) {
			t.Errorf("%v is not a %s DecodeError", err, name)
		}
	})
}

// FuzzCheckLines checks arbitrary .debug_line contents.
func FuzzCheckLines(f *testing.F) {
	ef, err := elfx.Open(testbin.Path(f, "demo"))
	if err != nil {
		f.Fatal(err)
	}
	secs, err := dwarfline.Load(ef)
	ef.Close()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(secs.Line)
	f.Fuzz(func(t *testing.T, line []byte) {
		s := *secs
		s.Line = line
		err := CheckLines(&s, 8)
		var de *cursor.DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Errorf("%v is not a DecodeError", err)
		}
	})
}
