package linetable_test

import (
	"debug/dwarf"
	"debug/elf"
	"runtime"
	"testing"

	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// dwarfWithLine returns a constructor of bin's DWARF with .debug_line
// replaced.
func dwarfWithLine(tb testing.TB, bin string) (orig []byte, build func(line []byte) (*dwarf.Data, *dwarfline.Sections, error), procs *splitinfo.Table) {
	f, err := elf.Open(testbin.Path(tb, bin))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sec := func(name string) []byte {
		s := f.Section(name)
		if s == nil {
			return nil
		}
		d, err := s.Data()
		if err != nil {
			tb.Fatal(err)
		}
		return d
	}
	abbrev, info, str, ranges := sec(".debug_abbrev"), sec(".debug_info"), sec(".debug_str"), sec(".debug_ranges")
	extra := map[string][]byte{}
	for _, n := range []string{".debug_line_str", ".debug_rnglists", ".debug_str_offsets", ".debug_addr", ".debug_loclists"} {
		if d := sec(n); d != nil {
			extra[n] = d
		}
	}
	procs, err = splitinfo.Open(testbin.Path(tb, bin))
	if err != nil {
		tb.Fatal(err)
	}
	lineStr, origLine := sec(".debug_line_str"), sec(".debug_line")
	return origLine, func(line []byte) (*dwarf.Data, *dwarfline.Sections, error) {
		// debug/dwarf gets the original .debug_line: only ours reads the
		// mutated one.
		d, err := dwarf.New(abbrev, nil, nil, info, origLine, nil, ranges, str)
		if err != nil {
			return nil, nil, err
		}
		for n, b := range extra {
			if err := d.AddSection(n, b); err != nil {
				return nil, nil, err
			}
		}
		return d, &dwarfline.Sections{Line: line, LineStr: lineStr, Str: str}, nil
	}, procs
}

// FuzzLineTable builds line tables from mutated .debug_line sections:
// no panics, no hangs, allocation bounded by the section size.
func FuzzLineTable(f *testing.F) {
	orig, build, procs := dwarfWithLine(f, "demo")
	f.Add(orig)
	orig4, _, _ := dwarfWithLine(f, "gcc-cold-dwarf4")
	f.Add(orig4)
	f.Fuzz(func(t *testing.T, line []byte) {
		d, secs, err := build(line)
		if err != nil {
			return
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tab, err := linetable.New(procs, linetable.NewDWARFSource(d, secs.Line, secs.LineStr, secs.Str), nil)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20+uint64(len(line))*256 {
			t.Fatalf("allocated %d bytes for a %d-byte .debug_line", alloc, len(line))
		}
		if err != nil {
			return
		}
		for r := range tab.Rows() {
			tab.PC(r.Addr)
			if r.Line > 0 && r.File != "" {
				tab.LineAddrs(r.File, r.Line)
			}
		}
		for p := range procs.Split() {
			for range tab.Walk(p) {
			}
			tab.FuncStart(p)
		}
	})
}
