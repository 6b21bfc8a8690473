package splitinfo

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestPreferred checks which of the symbols at one address names it, on
// alias sets from Debian's glibc 2.36 (readelf -s of libc6-dbg's debug
// file, versions removed) and a GCC identical-code-folding pair.
func TestPreferred(t *testing.T) {
	sym := func(name string, bind elf.SymBind, size uint64) elfx.Symbol {
		return elfx.Symbol{Name: name, Bind: bind, Size: size, Type: elf.STT_FUNC}
	}
	L, G, W := elf.STB_LOCAL, elf.STB_GLOBAL, elf.STB_WEAK
	tests := []struct {
		syms []elfx.Symbol
		want string
	}{
		// fclose@@GLIBC_2.2.5 and _IO_fclose@@GLIBC_2.2.5 are exported.
		{[]elfx.Symbol{sym("_IO_new_fclose", L, 498), sym("__new_fclose", L, 498), sym("fclose", G, 498), sym("_IO_fclose", G, 498)}, "fclose"},
		// Only copysign is exported.
		{[]elfx.Symbol{sym("__copysign", L, 29), sym("copysignf64", L, 29), sym("copysignf32x", L, 29), sym("copysign", W, 29)}, "copysign"},
		{[]elfx.Symbol{sym("__libc_start_main_alias_2", L, 321), sym("__libc_start_main_impl", L, 321), sym("__libc_start_main", G, 321),
			sym("__libc_start_main", G, 321)}, "__libc_start_main"},
		// Static functions folded by GCC's -fipa-icf: gdb and
		// llvm-symbolizer print the one last by name.
		{[]elfx.Symbol{sym("selectDelete", L, 36), sym("selectDeleteGeneric", L, 36)}, "selectDeleteGeneric"},
		// A sized symbol over a zero-sized one, whatever the names.
		{[]elfx.Symbol{sym("zz_label", G, 0), sym("aa_func", L, 12)}, "aa_func"},
		{[]elfx.Symbol{sym("zz_label", L, 0), sym("aa_label", L, 0)}, "zz_label"},
		// A fragment name only when there is nothing else.
		{[]elfx.Symbol{sym("foo.cold", G, 8), sym("bar", L, 8)}, "bar"},
		{[]elfx.Symbol{sym("foo.cold", L, 8), sym("foo.cold.1", L, 8)}, "foo.cold.1"},
	}
	for _, tt := range tests {
		if got := tt.syms[preferred(tt.syms)].Name; got != tt.want {
			t.Errorf("%v: %s, want %s", tt.syms, got, tt.want)
		}
	}
}

// TestZeroSizedSymbols checks addresses at and after zero-sized function
// symbols (_init, deregister_tm_clones, hand-written assembly) against
// llvm-symbolizer 22, which names every address up to the next symbol by
// them: each such address is found, in a procedure of that name.
func TestZeroSizedSymbols(t *testing.T) {
	sym := testbin.LLVMTool(t, "llvm-symbolizer", 22)
	checked := 0
	for _, name := range testbin.Linked(t) {
		path := filepath.Join(testbin.Dir(), name)
		ef := testbin.OpenELF(t, path)
		syms, err := ef.Symbols()
		if err != nil {
			continue
		}
		var addrs []uint64
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size == 0 && s.Section != elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE && s.Value != 0 {
				addrs = append(addrs, s.Value, s.Value+1)
			}
		}
		if len(addrs) == 0 {
			continue
		}
		tab, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"--obj=" + path, "--no-inlines", "--functions=linkage"}
		for _, a := range addrs {
			args = append(args, fmt.Sprintf("%#x", a))
		}
		out := testbin.Run(t, sym, args...)
		lines := strings.Split(strings.TrimSpace(out), "\n\n")
		if len(lines) != len(addrs) {
			t.Fatalf("%s: llvm-symbolizer answered %d of %d addresses", name, len(lines), len(addrs))
		}
		for i, a := range addrs {
			want := strings.SplitN(lines[i], "\n", 2)[0]
			if want == "??" {
				continue
			}
			loc, ok := tab.Lookup(a)
			if !ok {
				t.Errorf("%s %#x: not found; llvm-symbolizer says %s", name, a, want)
				continue
			}
			if got := loc.Proc.Fragments[loc.Frag].Symbol; got != want && loc.Proc.Name != want && !loc.Proc.HasName(want) {
				t.Errorf("%s %#x: in %s (%s), llvm-symbolizer says %s", name, a, loc.Proc.Name, got, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no zero-sized function symbols in the test binaries")
	}
}
