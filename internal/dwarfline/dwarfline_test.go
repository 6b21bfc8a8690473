package dwarfline

import (
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// v4Program is a hand-assembled DWARF 4 line program: one include
// directory, one file, and rows made by special opcodes, standard opcodes
// and DW_LNE_define_file.
func v4Program() []byte {
	body := []byte{
		4, 0, // version
		0, 0, 0, 0, // header_length, patched below
		1,                                  // minimum_instruction_length
		1,                                  // maximum_operations_per_instruction
		1,                                  // default_is_stmt
		0xfb,                               // line_base -5
		14,                                 // line_range
		13,                                 // opcode_base
		0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, // standard_opcode_lengths
		's', 'r', 'c', 0, 0, // include_directories
		'a', '.', 'c', 0, 1, 0, 0, 0, // file_names
	}
	hdrEnd := len(body)
	body = append(body,
		0, 9, 2, 0x00, 0x10, 0, 0, 0, 0, 0, 0, // DW_LNE_set_address 0x1000
		5, 3, // DW_LNS_set_column 3
		10,        // DW_LNS_set_prologue_end
		1,         // DW_LNS_copy: row 0x1000 line 1
		13+5+14*4, // special: line += 0, addr += 4
		3, 10,     // DW_LNS_advance_line 10
		6,    // DW_LNS_negate_stmt
		2, 2, // DW_LNS_advance_pc 2
		1,                            // copy: 0x1006 line 11, not stmt
		0, 6, 3, 'b', '.', 'h', 0, 0, // DW_LNE_define_file "b.h" (dir 0), mtime, len follow
	)
	// define_file needs mtime and length too: fix its length to 8.
	body = body[:len(body)-8]
	body = append(body, 0, 8, 3, 'b', '.', 'h', 0, 0, 0, 0,
		4, 2, // DW_LNS_set_file 2
		1,       // copy
		0, 1, 1, // DW_LNE_end_sequence
	)
	hl := hdrEnd - 6
	body[2] = byte(hl)
	return append([]byte{byte(len(body)), 0, 0, 0}, body...)
}

func TestV4Program(t *testing.T) {
	p, err := New(&Sections{Line: v4Program()}, 0, "/cd", 8)
	if err != nil {
		t.Fatal(err)
	}
	var got []Row
	var r Row
	for err = p.Next(&r); err == nil; err = p.Next(&r) {
		got = append(got, r)
	}
	if err != io.EOF {
		t.Fatal(err)
	}
	want := []Row{
		{Addr: 0x1000, File: 1, Line: 1, Column: 3, IsStmt: true, PrologueEnd: true},
		{Addr: 0x1004, File: 1, Line: 1, Column: 3, IsStmt: true},
		{Addr: 0x1006, File: 1, Line: 11, Column: 3},
		{Addr: 0x1006, File: 2, Line: 11, Column: 3},
		{Addr: 0x1006, File: 2, Line: 11, Column: 3, EndSequence: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", "/cd/src/a.c", "/cd/b.h"}, p.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestRejects(t *testing.T) {
	good := v4Program()
	tests := []struct {
		name   string
		mutate func([]byte) []byte
		want   error
	}{
		{"truncated length", func(b []byte) []byte { return b[:2] }, cursor.ErrTruncated},
		{"unit past end", func(b []byte) []byte { b[0] = 0xff; return b }, cursor.ErrTruncated},
		{"version 1", func(b []byte) []byte { b[4] = 1; return b }, cursor.ErrUnsupportedVersion},
		{"line_range 0", func(b []byte) []byte { b[14] = 0; return b }, cursor.ErrCorrupt},
		{"file dir out of range", func(b []byte) []byte { b[37] = 7; return b }, cursor.ErrCorrupt},
	}
	for _, tt := range tests {
		b := tt.mutate(append([]byte(nil), good...))
		_, err := New(&Sections{Line: b}, 0, "", 8)
		var de *cursor.DecodeError
		if !errors.Is(err, tt.want) || !errors.As(err, &de) || de.Section != ".debug_line" {
			t.Errorf("%s: err %v, want a .debug_line DecodeError wrapping %v", tt.name, err, tt.want)
		}
	}
}

// FuzzProgram decodes arbitrary bytes as a line program: no panics, no
// hangs, allocations bounded by the input.
func FuzzProgram(f *testing.F) {
	f.Add(v4Program())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := New(&Sections{Line: data, LineStr: data, Str: data}, 0, ".", 8)
		if err != nil {
			return
		}
		var r Row
		n := 0
		for err = p.Next(&r); err == nil; err = p.Next(&r) {
			if n++; n > len(data) {
				t.Fatalf("%d rows from %d bytes", n, len(data))
			}
		}
		var de *cursor.DecodeError
		if err != io.EOF && !errors.As(err, &de) {
			t.Fatalf("error %v is neither io.EOF nor a *DecodeError", err)
		}
	})
}
