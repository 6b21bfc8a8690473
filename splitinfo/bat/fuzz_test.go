package bat

import (
	"debug/elf"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// FuzzDecode decodes mutated notes: no panics, allocation bounded by the
// input size, and every decoded table re-encodes (as BOLT would write it)
// to a note that decodes to the same entries.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"bolt22", "bolt19-over-gcc"} {
		ef, err := elf.Open(testbin.Path(f, name))
		if err != nil {
			f.Fatal(err)
		}
		data, err := ef.Section(SectionName).Data()
		ef.Close()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	hot, cold := synthetic()
	f.Add(appendNote(nil, hot, cold))
	f.Add(noteOf(initDesc))
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tab, err := Decode(data)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10+uint64(len(data))*256 {
			t.Fatalf("allocated %d bytes for a %d-byte note", alloc, len(data))
		}
		if err != nil {
			return
		}
		var hot, cold []testFunc
		for fn := range tab.All() {
			tf := testFunc{addr: fn.Addr, hash: fn.Hash, numBlocks: uint64(fn.NumBlocks), entries: fn.Entries, sec: fn.SecondaryEntries}
			if fn.Cold {
				tf.parent = fn.Parent().Index
				cold = append(cold, tf)
			} else {
				hot = append(hot, tf)
			}
			if !slices.Contains(fn.Fragments(), fn) {
				t.Fatalf("function at %#x is not among its own fragments", fn.Addr)
			}
			for i, e := range fn.Entries {
				loc, ok := tab.Translate(fn.Addr+uint64(e.OutputOffset), i%2 == 0)
				if !ok || loc.Function != loc.Fragment.Parent() {
					t.Fatalf("Translate(%#x): %+v, %v", fn.Addr+uint64(e.OutputOffset), loc, ok)
				}
				for range fn.Fallthroughs(fn.Addr, fn.Addr+uint64(e.OutputOffset)+1) {
				}
			}
		}
		again, err := Decode(appendNote(nil, hot, cold))
		if err != nil {
			t.Fatalf("re-encoded note: %v", err)
		}
		opts := cmp.Options{cmpFunc, cmpopts.IgnoreFields(Func{}, "EqualElems", "InputSkew")}
		if diff := cmp.Diff(slices.Collect(tab.All()), slices.Collect(again.All()), opts); diff != "" {
			t.Fatalf("re-encoded note decodes differently (-first +again):\n%s", diff)
		}
	})
}
