package splitinfo_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
	"github.com/splitdbg/splitdbg/splitinfo/mip"
)

// TestMIPSource: in the MIP test programs every function of the map is a
// procedure whose entry fragment is the map's range, and classify's block
// in classify.cold puts that fragment in classify by the map too.
func TestMIPSource(t *testing.T) {
	for _, name := range []string{"mip/mip", "mip/mip-counts"} {
		path := testbin.Path(t, name)
		tab, err := splitinfo.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		bin, err := mip.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range bin.Map.Funcs {
			fn := &bin.Map.Funcs[i]
			entry := bin.Addr(fn)
			loc, ok := tab.Lookup(entry)
			if !ok || loc.Frag != 0 || loc.Proc.Entry != entry || loc.Proc.Name != fn.Name {
				t.Errorf("%s: %s at %#x is not a procedure entry: %+v", name, fn.Name, entry, loc)
				continue
			}
			p := loc.Proc
			if p.Sources&splitinfo.FromMIP == 0 || p.Fragments[0].Sources&splitinfo.FromMIP == 0 {
				t.Errorf("%s: %s: sources %v, entry fragment %v lack mip", name, fn.Name, p.Sources, p.Fragments[0].Sources)
			}
			if got := p.Fragments[0].Len(); got != uint64(fn.Size) {
				t.Errorf("%s: %s: entry fragment of %d bytes, map size %d", name, fn.Name, got, fn.Size)
			}
			for k, off := range fn.BlockOffsets {
				blk := mip.BlockAddr(entry, off)
				if bl, ok := tab.Lookup(blk); !ok || bl.Proc != p {
					t.Errorf("%s: %s block %d at %#x is not in the procedure", name, fn.Name, k+1, blk)
				}
			}
		}
		cls := tab.ByName("classify")
		if len(cls) != 1 {
			t.Fatalf("%s: %d procedures named classify", name, len(cls))
		}
		var got []string
		for _, f := range cls[0].Fragments {
			got = append(got, f.Symbol+" "+f.Sources.String())
		}
		if diff := cmp.Diff([]string{"classify symbols+dwarf+mip", "classify.cold symbols+dwarf+mip"}, got); diff != "" {
			t.Errorf("%s: classify's fragments (-want +got):\n%s", name, diff)
		}
	}
}

// TestMIPSourceStripped: without symbols and DWARF, the map alone makes
// the procedures.
func TestMIPSourceStripped(t *testing.T) {
	objcopy := testbin.Tool(t, "objcopy", "llvm-objcopy")
	stripped := filepath.Join(t.TempDir(), "mip-stripped")
	if out, err := exec.Command(objcopy, "--strip-all", testbin.Path(t, "mip/mip"), stripped).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", objcopy, err, out)
	}
	tab, err := splitinfo.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p := range tab.All() {
		got = append(got, p.Name+" "+p.Sources.String())
	}
	want := []string{"classify mip", "sum_to mip", "count_digits mip", "unused mip"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("procedures (-want +got):\n%s", diff)
	}
}
