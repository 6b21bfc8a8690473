package linetable_test

import (
	"debug/dwarf"
	"debug/elf"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/line"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// benchBinary is bench/out/large (bench/gen-large.sh: 20,000 split
// functions in 20 units), else the cgo test binary.
func benchBinary(b *testing.B) string {
	p := filepath.Join(testbin.Dir(), "..", "..", "bench", "out", "large")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	b.Log("bench/out/large missing (bench/gen-large.sh builds it): using testdata/bin/cgo")
	return testbin.Path(b, "cgo")
}

// lineBench holds one binary read three ways: splitdbg's table, Delve's
// pkg/dwarf/line, and Go's debug/dwarf; and queries drawn from its rows.
type lineBench struct {
	tab   *linetable.Table
	delve line.DebugLines
	dw    *dwarf.Data
	cus   []*dwarf.Entry
	// queries
	lines []fileLine
	pcs   []pcQuery
}

type fileLine struct {
	file string
	line int
	cu   int // index into delve
	dcu  int // index into cus
}

type pcQuery struct {
	pc, base uint64 // base: where Delve's PCToLine starts: the fragment start
	cu       int    // index into delve
	dcu      int    // index into cus
}

func newLineBench(b *testing.B) *lineBench {
	bin := benchBinary(b)
	lb := &lineBench{}
	var err error
	if lb.tab, err = linetable.Open(bin); err != nil {
		b.Fatal(err)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	defer ef.Close()
	if lb.dw, err = ef.DWARF(); err != nil {
		b.Fatal(err)
	}
	lineSec, _ := ef.Section(".debug_line").Data()
	var lineStr []byte
	if s := ef.Section(".debug_line_str"); s != nil {
		lineStr, _ = s.Data()
	}
	lb.delve = line.ParseAll(lineSec, lineStr, nil, 0, false, 8)
	// Compile units in .debug_info order, as Delve's ParseAll has them.
	r := lb.dw.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit {
			lb.cus = append(lb.cus, e)
		}
		r.SkipChildren()
	}
	cuByOff := map[int64]int{}
	for i, cu := range lb.cus {
		if off, ok := cu.Val(dwarf.AttrStmtList).(int64); ok {
			cuByOff[off] = i
		}
	}
	delveByOff := map[int64]int{}
	off := 0
	for i := range lb.delve {
		delveByOff[int64(off)] = i
		off += int(lb.delve[i].Prologue.UnitLength) + 4
	}
	// Queries: lines and addresses of the procedures, each with its unit.
	rng := rand.New(rand.NewPCG(1, 2))
	procs := lb.tab.Procs()
	for len(lb.pcs) < 1000 {
		p := procs.Proc(rng.IntN(procs.Len()))
		f := &p.Fragments[rng.IntN(len(p.Fragments))]
		pc := f.Start + uint64(rng.Int64N(int64(f.Len())))
		pos, ok := lb.tab.PC(pc)
		if !ok || pos.Line == 0 {
			continue
		}
		cuEntry, err := lb.dw.Reader().SeekPC(pc)
		if err != nil {
			continue
		}
		stmt, _ := cuEntry.Val(dwarf.AttrStmtList).(int64)
		cu, ok := delveByOff[stmt]
		if !ok {
			continue
		}
		// Delve passes the function entry, and panics when a cold
		// fragment lies below it: start from the fragment instead.
		lb.pcs = append(lb.pcs, pcQuery{pc: pc, base: f.Start, cu: cu, dcu: cuByOff[stmt]})
		lb.lines = append(lb.lines, fileLine{file: pos.File, line: pos.Line, cu: cu, dcu: cuByOff[stmt]})
	}
	return lb
}

// BenchmarkLineToAddrs: FILE:LINE → breakpoint addresses.
func BenchmarkLineToAddrs(b *testing.B) {
	lb := newLineBench(b)
	b.Run("splitdbg", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q := lb.lines[i%len(lb.lines)]
			if _, err := lb.tab.LineAddrs(q.file, q.line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("delve", func(b *testing.B) {
		// Delve runs the unit's line program for every query.
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q := lb.lines[i%len(lb.lines)]
			lb.delve[q.cu].LineToPCs(q.file, q.line)
		}
	})
	b.Run("debug-dwarf", func(b *testing.B) {
		// Go's debug/dwarf has no line index: read the unit's rows.
		b.ReportAllocs()
		var e dwarf.LineEntry
		for i := 0; b.Loop(); i++ {
			q := lb.lines[i%len(lb.lines)]
			lr, err := lb.dw.LineReader(lb.cus[q.dcu])
			if err != nil || lr == nil {
				b.Fatal(err)
			}
			var pcs []uint64
			for lr.Next(&e) == nil {
				if e.Line == q.line && e.File != nil && path.Clean(e.File.Name) == q.file && e.IsStmt {
					pcs = append(pcs, e.Address)
				}
			}
		}
	})
}

// BenchmarkPCToLine: address → source position.
func BenchmarkPCToLine(b *testing.B) {
	lb := newLineBench(b)
	b.Run("splitdbg", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, ok := lb.tab.PC(lb.pcs[i%len(lb.pcs)].pc); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("delve", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q := lb.pcs[i%len(lb.pcs)]
			lb.delve[q.cu].PCToLine(q.base, q.pc)
		}
	})
	b.Run("debug-dwarf", func(b *testing.B) {
		readers := make([]*dwarf.LineReader, len(lb.cus))
		for i, cu := range lb.cus {
			readers[i], _ = lb.dw.LineReader(cu)
		}
		b.ReportAllocs()
		b.ResetTimer()
		// SeekPC assumes a unit's rows ascend: it reports ErrUnknownPC
		// for the addresses of GCC's cold sequences, which follow the hot
		// ones in the program but lie below them.
		var e dwarf.LineEntry
		misses, n := 0, 0
		for i := 0; b.Loop(); i++ {
			q := lb.pcs[i%len(lb.pcs)]
			if readers[q.dcu].SeekPC(q.pc, &e) != nil {
				misses++
			}
			n++
		}
		b.ReportMetric(100*float64(misses)/float64(n), "%unknown-pc")
	})
}

// BenchmarkBuild reads every line program: splitdbg runs them all and
// builds its index (joined to procedures built beforehand); Delve parses
// every unit's header and leaves the programs to each query; debug/dwarf
// reads every row.
func BenchmarkBuild(b *testing.B) {
	bin := benchBinary(b)
	ef, err := elf.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	defer ef.Close()
	b.Run("splitdbg", func(b *testing.B) {
		procs, err := splitinfo.Open(bin)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		var tab *linetable.Table
		for b.Loop() {
			// A fresh file each time: sections are read once per file.
			f, err := elfx.Open(bin)
			if err != nil {
				b.Fatal(err)
			}
			if tab, err = linetable.FromELF(f, procs); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		b.ReportMetric(float64(tab.Len()), "rows")
		b.ReportMetric(float64(tab.IndexBytes())/float64(tab.Len()), "index-B/row")
	})
	b.Run("delve", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, _ := ef.Section(".debug_line").Data()
			var lineStr []byte
			if s := ef.Section(".debug_line_str"); s != nil {
				lineStr, _ = s.Data()
			}
			line.ParseAll(data, lineStr, nil, 0, false, 8)
		}
	})
	b.Run("debug-dwarf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := ef.DWARF()
			if err != nil {
				b.Fatal(err)
			}
			r := d.Reader()
			var e dwarf.LineEntry
			for {
				cu, err := r.Next()
				if err != nil || cu == nil {
					break
				}
				r.SkipChildren()
				if lr, _ := d.LineReader(cu); lr != nil {
					for lr.Next(&e) == nil {
					}
				}
			}
		}
	})
}

// BenchmarkNewInlines builds the inline index of bench/out/mfs
// (bench/gen-mfs.sh: 30,000 functions split by clang 22, symbolize's
// benchmark) if it has been generated, else of the benchmark binary,
// from a freshly opened file (sections are read once per file).
func BenchmarkNewInlines(b *testing.B) {
	bin := filepath.Join(testbin.Dir(), "..", "..", "bench", "out", "mfs")
	if _, err := os.Stat(bin); err != nil {
		bin = benchBinary(b)
	}
	b.ReportAllocs()
	for b.Loop() {
		f, err := elfx.Open(bin)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := linetable.NewInlines(f, nil); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
