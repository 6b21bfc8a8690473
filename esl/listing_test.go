package esl

import (
	"debug/elf"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestListing(t *testing.T) {
	b, _ := NewBuilder(1)
	b.File("a.c")
	b.File("b.h")
	rows := []Row{{Address: 0x10, File: 0, Line: 3, IsStmt: true}, {Address: 0x14, File: 1, Line: 9}, {Address: 0x18, Line: 9, EndSequence: true}}
	if err := b.Add(0x10, rows); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(0x40, nil); err != nil {
		t.Fatal(err)
	}
	tab, err := Parse("", b.AppendUnit(nil))
	if err != nil {
		t.Fatal(err)
	}
	all, err := tab.List()
	if err != nil {
		t.Fatal(err)
	}
	want := Listing{
		{Entry: 0x10, Rows: []ListedRow{{Addr: 0x10, File: "a.c", Line: 3, IsStmt: true}, {Addr: 0x14, File: "b.h", Line: 9}, {Addr: 0x18, Line: 9, EndSequence: true}}},
		{Entry: 0x40, Rows: []ListedRow{}},
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	one, ok, err := tab.ListEntry(0x40)
	if err != nil || !ok || !cmp.Equal(one, want[1:]) {
		t.Errorf("ListEntry(0x40) = %v, %v, %v", one, ok, err)
	}
	if _, ok, err := tab.ListEntry(0x41); ok || err != nil {
		t.Errorf("ListEntry(0x41) = %v, %v, want not found", ok, err)
	}
	var text strings.Builder
	if err := all.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	wantText := "procedure 0x10\n  0x10  a.c:3:0 stmt\n  0x14  b.h:9:0\n  0x18  end of fragment\nprocedure 0x40\n"
	if text.String() != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), wantText)
	}
	if PCUnit(elf.EM_X86_64) != 1 || PCUnit(elf.EM_AARCH64) != 4 {
		t.Errorf("PCUnit: x86-64 %d, AArch64 %d", PCUnit(elf.EM_X86_64), PCUnit(elf.EM_AARCH64))
	}
}
