package symbolize

import (
	"io"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// FuzzSymbolizeInput: any input line gets exactly one answer, and
// nothing panics.
func FuzzSymbolizeInput(f *testing.F) {
	bin := testbin.Path(f, "demo")
	for _, s := range []string{"0x1250", "sum+4", "DATA 0x4010", `CODE "x" 0x1`, "BUILDID:ab 1", "FILE:FILE:", "'", "12z"} {
		f.Add(s)
	}
	// One symbolizer per style, its module read once.
	syms := map[string]*Server{}
	for _, style := range []string{"LLVM", "JSON"} {
		cfg, _, _, err := ParseArgs([]string{"--obj=" + bin, "--output-style=" + style}, false)
		if err != nil {
			f.Fatal(err)
		}
		syms[style] = NewServer(cfg, "fuzz", io.Discard)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, line)
		for _, style := range []string{"LLVM", "JSON"} {
			out := string(syms[style].answer(nil, line))
			if style == "JSON" && (strings.Count(out, "\n") != 0 || !strings.HasPrefix(out, "{")) {
				t.Errorf("JSON answer to %q is %q, want one object", line, out)
			}
			if style == "LLVM" && !strings.HasSuffix(out, "\n\n") {
				t.Errorf("LLVM answer to %q is %q, want an answer ending in an empty line", line, out)
			}
		}
	})
}

// TestBudget: reading a file with its own uncompressed DWARF sets the
// memory limit to 32 MiB plus three times the file's size.
func TestBudget(t *testing.T) {
	bin := testbin.Path(t, "demo")
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	cfg, _, _, err := ParseArgs([]string{"--obj=" + bin}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(cfg, "test", io.Discard)
	s.answer(nil, "0x1250")
	if got, want := debug.SetMemoryLimit(-1), 32<<20+3*st.Size(); got != want {
		t.Errorf("memory limit after reading %s: %d, want %d", bin, got, want)
	}
}
