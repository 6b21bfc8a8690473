package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestAddrBadLines: a line that is no address gets its own answer in its
// place, and the lines before and after it are answered too.
func TestAddrBadLines(t *testing.T) {
	bin := testbin.Path(t, "demo")
	syms := symbolAddrs(t, bin)
	sum, cold := syms["sum"], syms["sum.cold"]
	long := strings.Repeat("1", 70<<10)
	in := hex(cold.Value+2) + "\nzz\n" + long + "\n" + hex(sum.Value) + "\n"
	out, stderr, code := run(t, in, "addr", "-json", bin, "-")
	if code != 1 || !strings.Contains(stderr, "2 line(s) were no address") {
		t.Errorf("exit %d, stderr %q; want 1 and the count of bad lines", code, stderr)
	}
	type answer struct {
		Addr     uint64 `json:"addr"`
		Function string `json:"function"`
		Line     int    `json:"line"`
		Input    string `json:"input"`
		Error    string `json:"error"`
	}
	got := decode[[]answer](t, out)
	want := []answer{
		{Addr: cold.Value + 2, Function: "sum", Line: 37},
		{Line: 2, Input: "zz", Error: "bad address"},
		{Line: 3, Input: long[:64] + "...", Error: "line too long"},
		{Addr: sum.Value, Function: "sum", Line: 35},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("addr -json - (-want +got):\n%s", diff)
	}
	out, _, _ = run(t, hex(cold.Value+2)+"\nzz\n", "addr", bin, "-")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "sum+") || lines[1] != `stdin line 2: bad address: "zz"` {
		t.Errorf("addr - text answers %q, want the address's then the bad line's", lines)
	}
}
