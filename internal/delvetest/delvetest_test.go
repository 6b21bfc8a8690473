package delvetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

func TestColdLine(t *testing.T) {
	base, line := ColdLine(t, "demo/demo.c", "scale")
	data, err := os.ReadFile(filepath.Join(testbin.Dir(), "..", "src", "demo", "demo.c"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if base != "demo.c" || line < 1 || line > len(lines) || !strings.Contains(lines[line-1], "/* COLD-LINE: scale */") {
		t.Errorf("ColdLine(demo/demo.c, scale) = %s:%d", base, line)
	}
}

func TestFrames(t *testing.T) {
	frames := []api.Stackframe{
		{Location: api.Location{PC: 0x10, File: "a.c", Line: 3, Function: &api.Function{Name_: "C.f"}}},
		{Location: api.Location{PC: 0x20, File: "a.c", Line: 9, Function: &api.Function{Name_: "C.main"}}},
		{Location: api.Location{PC: 0, File: "?", Line: -1}},
	}
	if got, want := FormatFrames(frames[:2]), "  0 0x10 C.f a.c:3\n  1 0x20 C.main a.c:9\n"; got != want {
		t.Errorf("FormatFrames = %q; want %q", got, want)
	}
	if got := RealFrames(frames); len(got) != 2 {
		t.Errorf("RealFrames: %d frames; want 2", len(got))
	}
	CheckCallers(t, frames, []string{"main"})
	CheckBtCallers(t, "0  0x10 in C.f\n1  0x20 in C.main\n", []string{"C.main"})
}
