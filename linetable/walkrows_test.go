package linetable_test

import (
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
)

// TestWalkRows: the rows splitdbg lines prints are the walk's, and a
// row's text line carries every field.
func TestWalkRows(t *testing.T) {
	tab, err := linetable.Open(testbin.Path(t, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	p := tab.Procs().ByName("sum")[0]
	rows := tab.WalkRows(p)
	i, cold := 0, false
	for pos := range tab.Walk(p) {
		if i >= len(rows) || rows[i] != (linetable.WalkRow{pos.Addr, pos.File, pos.Line, pos.Column, pos.IsStmt, pos.Frag}) {
			t.Fatalf("row %d: %+v, walk %+v", i, rows[min(i, len(rows)-1)], pos)
		}
		cold = cold || pos.Frag > 0
		i++
	}
	if i != len(rows) || !cold {
		t.Errorf("%d rows, walk %d; a row in the cold fragment: %v", len(rows), i, cold)
	}
	r := linetable.WalkRow{Addr: 0x108a, File: "demo/demo.c", Line: 37, Column: 4, IsStmt: true, Fragment: 1}
	if got, want := string(r.AppendText(nil)), "0x108a  demo/demo.c:37:4  fragment 1 stmt\n"; got != want {
		t.Errorf("AppendText = %q, want %q", got, want)
	}
}
