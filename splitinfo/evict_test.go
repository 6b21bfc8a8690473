package splitinfo_test

import (
	"debug/elf"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// TestOpenLetsPagesGo checks that Open, which owns its file, lets go of
// the resident pages of the sections a whole-file build is done with
// (.symtab, .debug_*, the code), and that FromELF, whose file others
// share, leaves them: the mapping's resident size after FromELF less the
// one after Open is most of those sections' size.
func TestOpenLetsPagesGo(t *testing.T) {
	path := testbin.Path(t, "cgo")
	// A first build faults in the pages it reads and keeps (.strtab,
	// the compressed DWARF, data its decoders read): not measured.
	if _, err := splitinfo.Open(path); err != nil {
		t.Fatal(err)
	}
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evictable, sum int
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_COMPRESSED != 0 ||
			!(s.Type == elf.SHT_SYMTAB || strings.HasPrefix(s.Name, ".debug_") || s.Flags&elf.SHF_EXECINSTR != 0) {
			continue
		}
		d, err := f.Data(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d { // make every page resident
			sum += int(c)
		}
		evictable += len(d)
	}
	t.Logf("%d KiB of .symtab, .debug_* and code read (byte sum %d)", evictable/1024, sum)
	shared, err := splitinfo.FromELF(f)
	if err != nil {
		t.Fatal(err)
	}
	withPages, ok := testbin.MappedRss(path)
	if !ok {
		t.Skip("no /proc/self/smaps entry for the mapping")
	}
	owned, err := splitinfo.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	without, _ := testbin.MappedRss(path)
	if dropped := withPages - without; dropped < evictable/1024/2 {
		t.Errorf("Open let go of %d KiB of the mapping (%d KiB resident after FromELF, %d after Open); the sections it is done with take %d KiB",
			dropped, withPages, without, evictable/1024)
	}
	if shared.Len() != owned.Len() || shared.Len() == 0 {
		t.Errorf("FromELF found %d procedures, Open %d", shared.Len(), owned.Len())
	}
}
