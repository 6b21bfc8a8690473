package esl

import (
	"debug/dwarf"
	"debug/elf"
	"io"
	"testing"
	"time"
)

// The benchmark binaries: small test binaries from each producer and the
// generated large one (bench/gen-large.sh; skipped when absent).
var benchBinaries = []string{"gcc-cold", "clang19-mfs", "bolt22", "cgo", largeBinary}

func benchName(p string) string {
	if p == largeBinary {
		return "large"
	}
	return p
}

// BenchmarkDecode decodes every row of every procedure of the ESL section
// converted from a binary's .debug_line (one program per procedure), and
// reports rows per second, bytes per row and the section's size relative
// to .debug_line.
func BenchmarkDecode(b *testing.B) {
	for _, name := range benchBinaries {
		b.Run(benchName(name), func(b *testing.B) {
			dl := readDWARF(b, binPath(b, name))
			progs, _ := dl.byProcedure()
			sec := build(b, dl.files, progs)
			tab, err := Parse(SectionName, sec)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var rows int
			var r Reader
			var row Row
			for b.Loop() {
				for p, err := range tab.Procs() {
					if err != nil {
						b.Fatal(err)
					}
					r.Reset(p.Program)
					for {
						if err := r.Next(&row); err != nil {
							if err != io.EOF {
								b.Fatal(err)
							}
							break
						}
						rows++
					}
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(len(sec))*float64(b.N)/float64(rows), "B/row")
			b.ReportMetric(float64(len(sec))/float64(dl.lineSize), "x-debug_line")
		})
	}
}

// BenchmarkDWARFLineReader reads the same binaries' rows with Go's
// debug/dwarf LineReader, for comparison with BenchmarkDecode.
func BenchmarkDWARFLineReader(b *testing.B) {
	for _, name := range benchBinaries {
		b.Run(benchName(name), func(b *testing.B) {
			f, err := elf.Open(binPath(b, name))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			d, err := f.DWARF()
			if err != nil {
				b.Fatal(err)
			}
			var cus []*dwarf.Entry
			for r := d.Reader(); ; {
				e, err := r.Next()
				if err != nil {
					b.Fatal(err)
				}
				if e == nil {
					break
				}
				if e.Tag == dwarf.TagCompileUnit {
					cus = append(cus, e)
				}
				r.SkipChildren()
			}
			var size int
			if s := f.Section(".debug_line"); s != nil {
				size = int(s.Size)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var rows int
			var le dwarf.LineEntry
			for b.Loop() {
				for _, cu := range cus {
					lr, err := d.LineReader(cu)
					if err != nil {
						b.Fatal(err)
					}
					if lr == nil {
						continue
					}
					for {
						if err := lr.Next(&le); err != nil {
							if err != io.EOF {
								b.Fatal(err)
							}
							break
						}
						rows++
					}
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			if size > 0 {
				b.ReportMetric(float64(size)*float64(b.N)/float64(rows), "B/row")
			}
		})
	}
}

// BenchmarkEncode encodes the same procedures' rows.
func BenchmarkEncode(b *testing.B) {
	for _, name := range benchBinaries {
		b.Run(benchName(name), func(b *testing.B) {
			dl := readDWARF(b, binPath(b, name))
			progs, _ := dl.byProcedure()
			b.ReportAllocs()
			b.ResetTimer()
			var rows int
			var buf []byte
			for b.Loop() {
				for _, p := range progs {
					var err error
					buf, err = AppendProgram(buf[:0], 1, Start{Address: p.entry}, p.rows)
					if err != nil {
						b.Fatal(err)
					}
					rows += len(p.rows)
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// dwarfCUs opens a binary's DWARF and lists its compile units.
func dwarfCUs(b *testing.B, path string) (*dwarf.Data, []*dwarf.Entry) {
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	d, err := f.DWARF()
	if err != nil {
		b.Fatal(err)
	}
	var cus []*dwarf.Entry
	for r := d.Reader(); ; {
		e, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if e == nil {
			return d, cus
		}
		if e.Tag == dwarf.TagCompileUnit {
			cus = append(cus, e)
		}
		r.SkipChildren()
	}
}

// BenchmarkDecodeVsDWARF times, in each iteration, one pass over every
// row with esl (Procs, Reader.Next) and one with debug/dwarf's LineReader
// over the same binary, and reports the fastest pass of each, per row,
// and their ratio. Taking the fastest of many short interleaved passes
// keeps the comparison fair on a shared, loaded machine, where a long run
// mostly measures the other processes.
func BenchmarkDecodeVsDWARF(b *testing.B) {
	for _, name := range benchBinaries {
		b.Run(benchName(name), func(b *testing.B) {
			path := binPath(b, name)
			dl := readDWARF(b, path)
			progs, _ := dl.byProcedure()
			tab, err := Parse(SectionName, build(b, dl.files, progs))
			if err != nil {
				b.Fatal(err)
			}
			d, cus := dwarfCUs(b, path)
			bestE, bestD := time.Duration(1<<62), time.Duration(1<<62)
			var rowsE, rowsD int
			var r Reader
			var row Row
			var le dwarf.LineEntry
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				rowsE = 0
				for p, err := range tab.Procs() {
					if err != nil {
						b.Fatal(err)
					}
					r.Reset(p.Program)
					for r.Next(&row) == nil {
						rowsE++
					}
				}
				t1 := time.Now()
				rowsD = 0
				for _, cu := range cus {
					lr, err := d.LineReader(cu)
					if err != nil {
						b.Fatal(err)
					}
					for lr != nil && lr.Next(&le) == nil {
						rowsD++
					}
				}
				t2 := time.Now()
				bestE, bestD = min(bestE, t1.Sub(t0)), min(bestD, t2.Sub(t1))
			}
			e := float64(bestE.Nanoseconds()) / float64(rowsE)
			dw := float64(bestD.Nanoseconds()) / float64(rowsD)
			b.ReportMetric(e, "esl-ns/row")
			b.ReportMetric(dw, "dwarf-ns/row")
			b.ReportMetric(dw/e, "speedup")
		})
	}
}
