package esl

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

func TestTableProcs(t *testing.T) {
	sec := exampleSection(t)
	// A second unit, as a linker concatenating two inputs would make it,
	// with a procedure that has no ESL element and a wide index.
	b, _ := NewBuilder(4)
	b.File("b.c")
	b.File("b.h")
	if err := b.AddElement(0x40_0000_0000, 9, nil); err != nil {
		t.Fatal(err)
	}
	rows := []Row{{Address: 0x2000, File: 1, Line: 7, IsStmt: true}, {Address: 0x2010, File: 0, Line: 3}}
	if err := b.Add(0x2000, rows); err != nil {
		t.Fatal(err)
	}
	sec = b.AppendUnit(sec)

	tab, err := Parse(SectionName, sec)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 4 {
		t.Fatalf("Len = %d, want 4", tab.Len())
	}
	type procSum struct {
		Entry  uint64
		PCUnit int
		Files  []string
		Rows   int
	}
	var got []procSum
	for p, err := range tab.Procs() {
		if err != nil {
			t.Fatal(err)
		}
		rs, err := decodeAll(p.Program)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, procSum{p.Entry(), p.PCUnit, p.Files, len(rs)})
	}
	want := []procSum{
		{0x1230, 1, []string{"./demo/demo.c"}, 16},
		{0x1250, 1, []string{"./demo/demo.c"}, 2},
		{0x2000, 4, []string{"b.c", "b.h"}, 2},
		{0x40_0000_0000, 4, []string{"b.c", "b.h"}, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Procs (-want +got):\n%s", diff)
	}
	p, ok, err := tab.Find(0x2000)
	if !ok || err != nil {
		t.Fatalf("Find(0x2000) = %v, %v", ok, err)
	}
	if rs, _ := decodeAll(p.Program); !cmp.Equal(rs, rows) {
		t.Errorf("rows of 0x2000: %v", rs)
	}
	for _, missing := range []uint64{0, 0x1231, 0x1fff, 0x2004, math.MaxUint64} {
		if _, ok, err := tab.Find(missing); ok || err != nil {
			t.Errorf("Find(%#x) = %v, %v; want not found", missing, ok, err)
		}
	}
	// Stopping early.
	n := 0
	for range tab.Procs() {
		n++
		break
	}
	if n != 1 {
		t.Errorf("break did not stop Procs")
	}
}

func TestParseEmpty(t *testing.T) {
	tab, err := Parse("", nil)
	if err != nil || tab.Len() != 0 {
		t.Fatalf("Parse(nil) = %v, %v", tab, err)
	}
	b, _ := NewBuilder(1)
	tab, err = Parse("", b.AppendUnit(nil))
	if err != nil || tab.Len() != 0 {
		t.Fatalf("empty unit: %v, %v", tab, err)
	}
	// A procedure with no rows needs no file table.
	b.Add(0x10, nil)
	tab, err = Parse("", b.AppendUnit(nil))
	if err != nil || tab.Len() != 1 {
		t.Fatalf("empty program: %v, %v", tab, err)
	}
	p, ok, err := tab.Find(0x10)
	if rs, derr := decodeAll(p.Program); !ok || err != nil || derr != nil || len(rs) != 0 {
		t.Fatalf("empty program: %v %v %v %v", ok, err, rs, derr)
	}
}

func TestParseErrors(t *testing.T) {
	good := exampleSection(t)
	mod := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	setLen := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
		return b
	}
	cases := []struct {
		name string
		sec  []byte
		off  int64
		want error
	}{
		{"short header", good[:6], 4, cursor.ErrTruncated},
		{"magic", mod(func(b []byte) []byte { b[0] = 'X'; return b }), 0, cursor.ErrCorrupt},
		{"version", mod(func(b []byte) []byte { b[3] = 2; return b }), 3, cursor.ErrUnsupportedVersion},
		{"unit_length", good[:len(good)-1], 4, cursor.ErrTruncated},
		{"pc_unit", mod(func(b []byte) []byte { b[8] = 0; return b }), 8, cursor.ErrCorrupt},
		{"addr_width", mod(func(b []byte) []byte { b[9] = 9; return b }), 9, cursor.ErrCorrupt},
		{"offset_width", mod(func(b []byte) []byte { b[10] = 0; return b }), 10, cursor.ErrCorrupt},
		{"flags", mod(func(b []byte) []byte { b[11] = 1; return b }), 11, cursor.ErrUnsupported},
		{"file count", mod(func(b []byte) []byte { b[0x0e] = 0x7f; return b }), 0x0e, cursor.ErrCorrupt},
		{"file name", mod(func(b []byte) []byte { b[0x0f] = 0x7f; return b }), 0x0f, cursor.ErrTruncated},
		{"proc count", mod(func(b []byte) []byte { b[0x1d] = 0x7f; return b }), 0x1d, cursor.ErrCorrupt},
		{"index order", mod(func(b []byte) []byte { b[0x20] = 0; return b }), 0x20, cursor.ErrCorrupt},
		{"index offset", mod(func(b []byte) []byte { b[0x21] = 0x40; return b }), 0x21, cursor.ErrCorrupt},
		{"overflowing base", mod(func(b []byte) []byte {
			return setLen(append(b[:0x0c:0x0c], append([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, b[0x0e:]...)...))
		}), 0x0c, cursor.ErrOverflow},
	}
	for _, c := range cases {
		_, err := Parse("", c.sec)
		var de *cursor.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, c.want) || de.Offset != c.off || de.Section != DefaultSection {
			t.Errorf("%s: %v, want %v at %#x", c.name, err, c.want, c.off)
		}
	}

	// Errors in a procedure's chain come from Find and Procs.
	chain := []struct {
		name string
		sec  []byte
		off  int64
		want error
	}{
		{"element length", mod(func(b []byte) []byte { b[0x23] = 0x7f; return b }), 0x23, cursor.ErrTruncated},
		{"initial file", mod(func(b []byte) []byte { b[0x24] = 1; return b }), 0x24, cursor.ErrCorrupt},
		{"initial line", mod(func(b []byte) []byte {
			copy(b[0x24:], []byte{0x00, 0x80, 0x80, 0x80, 0x80, 0x10})
			return b
		}), 0x25, cursor.ErrCorrupt},
		{"unknown tag length", mod(func(b []byte) []byte { b[0x4e] = 0x7f; return b }), 0x4e, cursor.ErrTruncated},
	}
	for _, c := range chain {
		tab, err := Parse(SectionName, c.sec)
		if err != nil {
			t.Errorf("%s: Parse: %v", c.name, err)
			continue
		}
		var perr error
		for _, err := range tab.Procs() {
			if err != nil {
				perr = err
			}
		}
		var de *cursor.DecodeError
		if !errors.As(perr, &de) || !errors.Is(perr, c.want) || de.Offset != c.off || de.Section != SectionName {
			t.Errorf("%s: %v, want %v at %#x", c.name, perr, c.want, c.off)
		}
	}

	// A malformed program reports section offsets.
	bad := mod(func(b []byte) []byte { b[0x27] = 0x0d; return b })
	tab, _ := Parse("", bad)
	p, _, _ := tab.Find(0x1230)
	_, err := decodeAll(p.Program)
	var de *cursor.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrUnknownCommand) || de.Offset != 0x27 {
		t.Errorf("program error: %v, want unknown command at 0x27", err)
	}
}

func TestBuilderErrors(t *testing.T) {
	if _, err := NewBuilder(0); !errors.Is(err, ErrUnencodable) {
		t.Errorf("NewBuilder(0): %v", err)
	}
	b, _ := NewBuilder(1)
	if i, j := b.File("a.c"), b.File("a.c"); i != 0 || j != 0 || b.File("b.c") != 1 {
		t.Errorf("File does not reuse entries")
	}
	if err := b.Add(0x10, []Row{{Address: 0x10, File: 2}}); !errors.Is(err, ErrUnencodable) {
		t.Errorf("file out of the table: %v", err)
	}
	if err := b.Add(0x10, []Row{{Address: 0x10, File: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(0x10, nil); !errors.Is(err, ErrUnencodable) {
		t.Errorf("second ESL element: %v", err)
	}
	for _, tag := range []uint64{TagEnd, TagESL} {
		if err := b.AddElement(0x10, tag, nil); !errors.Is(err, ErrUnencodable) {
			t.Errorf("AddElement tag %d: %v", tag, err)
		}
	}
	b4, _ := NewBuilder(4)
	b4.File("x")
	if err := b4.Add(0x10, []Row{{Address: 0x12}}); !errors.Is(err, ErrUnencodable) {
		t.Errorf("unaligned row: %v", err)
	}
}

func TestCommandString(t *testing.T) {
	for c, want := range map[Command]string{CmdAddPC: "add_pc", CmdSetDiscrim: "set_discriminator",
		CmdSetDiscrimShort + 7: "set_discriminator_7", 0: "command(0x00)", 0x1f: "command(0x1f)"} {
		if got := c.String(); got != want {
			t.Errorf("%#x: %q, want %q", uint8(c), got, want)
		}
	}
}
