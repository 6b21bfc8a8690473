package linetable_test

import (
	"debug/elf"
	"runtime"
	"testing"

	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// dwarfWithLine returns bin's .debug_line and a constructor of bin's
// DWARF with .debug_line replaced.
func dwarfWithLine(tb testing.TB, bin string) (orig []byte, build func(line []byte) (*dies.Data, *dwarfline.Sections), procs *splitinfo.Table) {
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
	// The units are read as FromELF reads them (dies): only the line
	// programs are mutated.
	d, err := dies.New(bin, dies.Sections{Info: sec(".debug_info"), Abbrev: sec(".debug_abbrev"), Str: sec(".debug_str"),
		LineStr: sec(".debug_line_str"), StrOffsets: sec(".debug_str_offsets"), Addr: sec(".debug_addr"),
		Ranges: sec(".debug_ranges"), Rnglists: sec(".debug_rnglists"), ByteOrder: f.ByteOrder})
	if err != nil {
		tb.Fatal(err)
	}
	procs, err = splitinfo.Open(testbin.Path(tb, bin))
	if err != nil {
		tb.Fatal(err)
	}
	lineStr, str := sec(".debug_line_str"), sec(".debug_str")
	return sec(".debug_line"), func(line []byte) (*dies.Data, *dwarfline.Sections) {
		return d, &dwarfline.Sections{Line: line, LineStr: lineStr, Str: str}
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
		d, secs := build(line)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tab, err := linetable.New(procs, linetable.NewUnitsSource(d, secs), nil)
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
