package splitinfo_test

import (
	"bytes"
	"os"
	"runtime"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// FuzzTable builds Tables from mutated test binaries: no panics, no hangs,
// and allocation bounded by the input size.
func FuzzTable(f *testing.F) {
	for _, name := range []string{"demo", "clang19-mfs", "clang22-bbsections", "gcc-cold-zlib"} {
		data, err := os.ReadFile(testbin.Path(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tab, err := splitinfo.Read("fuzz", bytes.NewReader(data))
		runtime.ReadMemStats(&after)
		// DWARF sections may be compressed, so allow a generous factor,
		// but nothing sized by a corrupt count.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20+uint64(len(data))*256 {
			t.Fatalf("allocated %d bytes for a %d-byte input", alloc, len(data))
		}
		if err != nil {
			return
		}
		for p := range tab.All() {
			for i := range p.Fragments {
				if loc, ok := tab.Lookup(p.Fragments[i].Start); ok {
					_ = loc.Fragment().Kind.String()
				}
			}
			_ = p.Size()
		}
	})
}
