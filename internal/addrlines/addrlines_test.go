package addrlines

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]uint64{"0x10": 16, "0XfF": 255, "42": 42, "0xffffffffffffffff": 1<<64 - 1} {
		if v, ok := Parse([]byte(in)); !ok || v != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, v, ok, want)
		}
	}
	for _, in := range []string{"", "0x", "0x10000000000000000", "18446744073709551616", "12a", "-1", "+1", "0x1g"} {
		if v, ok := Parse([]byte(in)); ok {
			t.Errorf("Parse(%q) = %d, want no address", in, v)
		}
	}
}

// TestRead: blank lines are skipped, a bad or too long line is handed on
// with its line number and reason, and every line is handed on once.
func TestRead(t *testing.T) {
	in := "0x10\n\n  7  \nzz\n" + strings.Repeat("1", 70<<10) + "\n0x20"
	var got []Line
	flushes := 0
	err := Read(strings.NewReader(in), 2, func(b []Line) error {
		if len(b) > 2 {
			t.Errorf("batch of %d lines, want at most 2", len(b))
		}
		got = append(got, b...)
		return nil
	}, func() error { flushes++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []Line{{Addr: 16, LineNo: 1}, {Addr: 7, LineNo: 3}, {LineNo: 4, Input: "zz", Bad: "bad address"},
		{LineNo: 5, Input: strings.Repeat("1", 64) + "...", Bad: "line too long"}, {Addr: 32, LineNo: 6}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
