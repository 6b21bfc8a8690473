package adapter

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// TestLibcColdFragmentNamed stops the demo program (which calls printf,
// so the C library is loaded), takes Delve's image list, and asks the
// client for the frame of an address in the cold fragment of the C
// library's puts (__GI__IO_puts.cold) at its load address: the stripped
// /lib/x86_64-linux-gnu/libc.so.6 is read with libc6-dbg's separate
// debug file, so the frame is puts's, with its source line, where Delve
// alone has no function there.
func TestLibcColdFragmentNamed(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	f, err := elfx.Open(libc)
	if err != nil {
		t.Skipf("no Debian glibc: %v", err)
	}
	hasDebug := f.Debug != nil
	procs, err := splitinfo.FromELF(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !hasDebug {
		t.Skip("glibc's separate debug file is missing (apt-get install libc6-dbg; .ci/run installs it)")
	}
	var cold *splitinfo.Fragment
	for _, p := range procs.ByName("puts") {
		if len(p.Fragments) > 1 {
			cold = &p.Fragments[1]
		}
	}
	if cold == nil {
		t.Skip("this glibc's puts is not split")
	}
	s := startDelve(t, "demo")
	c := s.client
	if _, err := c.CreateBreakpoint(&api.Breakpoint{FunctionName: "C.sum"}); err != nil {
		t.Fatal(err)
	}
	if st := <-c.Continue(); st.Err != nil || st.Exited {
		t.Fatalf("continue: %+v", st)
	}
	imgs, _, err := c.ListDynamicLibraries()
	if err != nil {
		t.Fatal(err)
	}
	var bias uint64
	for _, im := range imgs {
		if p, _ := filepath.EvalSymlinks(im.Path); p == libc || im.Path == libc || strings.HasSuffix(im.Path, "/libc.so.6") {
			bias = im.Address
		}
	}
	if bias == 0 {
		t.Fatalf("libc is not among Delve's images %+v", imgs)
	}
	pc := cold.Start + 4 + bias
	fr, ok := c.frame(pc, false) // as a stop or a stack frame there is named
	// glibc's DWARF names puts _IO_puts, as gdb shows it.
	if !ok || fr.Function != "C._IO_puts" || fr.Frag != 1 || fr.Line <= 0 || fr.File == "" {
		t.Errorf("frame at %#x in %s: %+v, want C._IO_puts, fragment 1, with a source line", pc, cold.Symbol, fr)
	}
}
