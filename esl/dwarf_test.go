package esl

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// The esl package imports nothing of the project's, so its tests find the
// test binaries themselves.
var testBinDir = filepath.Join("..", "testdata", "bin")

// largeBinary is the generated benchmark binary (bench/gen-large.sh).
var largeBinary = filepath.Join("..", "bench", "out", "large")

func testBinaries(tb testing.TB) []string {
	ents, err := os.ReadDir(testBinDir)
	if err != nil {
		tb.Skipf("no test binaries in %s (testdata/gen.sh builds them): %v", testBinDir, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || filepath.Ext(e.Name()) == ".o" || e.Name()[0] == '.' {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}

func binPath(tb testing.TB, name string) string {
	p := name
	if !filepath.IsAbs(p) && filepath.Dir(p) == "." {
		p = filepath.Join(testBinDir, name)
	}
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("%s missing: %v", p, err)
	}
	return p
}

// dwarfLines is the line-table view of one binary as Go's debug/dwarf
// reads it.
type dwarfLines struct {
	files    []string      // global file table, by name
	seqs     [][]Row       // each DWARF sequence, its end row included
	subprogs [][][2]uint64 // code ranges of each subprogram, entry range first
	lineSize int           // bytes of .debug_line (decompressed)
}

func readDWARF(tb testing.TB, path string) *dwarfLines {
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		tb.Skipf("%s: no DWARF: %v", path, err)
	}
	dl := &dwarfLines{}
	if s := f.Section(".debug_line"); s != nil {
		b, err := s.Data()
		if err != nil {
			tb.Fatal(err)
		}
		dl.lineSize = len(b)
	}
	fileIx := map[string]uint32{}
	file := func(lf *dwarf.LineFile) uint32 {
		name := ""
		if lf != nil {
			name = lf.Name
		}
		i, ok := fileIx[name]
		if !ok {
			i = uint32(len(dl.files))
			fileIx[name] = i
			dl.files = append(dl.files, name)
		}
		return i
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			tb.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag == dwarf.TagSubprogram {
			if rs, err := d.Ranges(e); err == nil && len(rs) > 0 {
				dl.subprogs = append(dl.subprogs, rs)
			}
			continue
		}
		if e.Tag != dwarf.TagCompileUnit {
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil {
			tb.Fatal(err)
		}
		if lr == nil {
			continue
		}
		var seq []Row
		for {
			var le dwarf.LineEntry
			if err := lr.Next(&le); err == io.EOF {
				break
			} else if err != nil {
				tb.Fatal(err)
			}
			seq = append(seq, Row{
				Address:       le.Address,
				File:          file(le.File),
				Line:          uint32(le.Line),
				Column:        uint32(le.Column),
				Discriminator: uint32(le.Discriminator),
				IsStmt:        le.IsStmt,
				PrologueEnd:   le.PrologueEnd,
				EpilogueBegin: le.EpilogueBegin,
				EndSequence:   le.EndSequence,
			})
			if le.EndSequence {
				dl.seqs = append(dl.seqs, seq)
				seq = nil
			}
		}
		if len(seq) > 0 {
			dl.seqs = append(dl.seqs, seq)
		}
	}
	return dl
}

// program is one procedure's rows as a converter lays them out.
type program struct {
	entry uint64
	rows  []Row
}

// bySequence lays out one program per DWARF sequence, keyed by its first
// address; sequences that start at the same address share a program.
func (dl *dwarfLines) bySequence() []program {
	var out []program
	ix := map[uint64]int{}
	for _, s := range dl.seqs {
		i, ok := ix[s[0].Address]
		if !ok {
			i = len(out)
			ix[s[0].Address] = i
			out = append(out, program{entry: s[0].Address})
		}
		out[i].rows = append(out[i].rows, s...)
	}
	return out
}

// byProcedure lays out one program per subprogram as a producer of ESL
// does: the rows of each of its fragments (entry range first), each
// fragment closed by an end_sequence row at its end. Rows outside every
// subprogram are kept per sequence. It also returns, for checking, the
// DWARF rows it carries (every row but the sequences' own end rows).
func (dl *dwarfLines) byProcedure() (progs []program, carried int) {
	type frag struct {
		lo, hi uint64
		proc   int
		rank   int
	}
	var frags []frag
	seen := map[uint64]bool{}
	for _, rs := range dl.subprogs {
		if seen[rs[0][0]] || rs[0][0] == 0 {
			continue // inlined/abstract duplicates and discarded code
		}
		seen[rs[0][0]] = true
		p := len(progs)
		progs = append(progs, program{entry: rs[0][0]})
		for k, r := range rs {
			frags = append(frags, frag{r[0], r[1], p, k})
		}
	}
	sort.Slice(frags, func(i, j int) bool { return frags[i].lo < frags[j].lo })
	find := func(a uint64) int {
		i := sort.Search(len(frags), func(i int) bool { return frags[i].hi > a })
		if i < len(frags) && frags[i].lo <= a {
			return i
		}
		return -1
	}
	perFrag := make([][]Row, len(frags))
	used := map[uint64]bool{}
	for _, p := range progs {
		used[p.entry] = true
	}
	for _, s := range dl.seqs {
		var orphans []Row
		for _, r := range s {
			if r.EndSequence {
				continue
			}
			carried++
			if i := find(r.Address); i >= 0 {
				perFrag[i] = append(perFrag[i], r)
			} else {
				orphans = append(orphans, r)
			}
		}
		if len(orphans) > 0 {
			e := orphans[0].Address
			for used[e] {
				e++ // keep entries unique; the rows keep their addresses
			}
			used[e] = true
			progs = append(progs, program{entry: e, rows: orphans})
		}
	}
	order := make([]int, len(frags))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return frags[order[a]].rank < frags[order[b]].rank })
	for _, i := range order {
		f, rows := frags[i], perFrag[i]
		if len(rows) == 0 {
			continue
		}
		end := rows[len(rows)-1]
		end.Address, end.EndSequence = f.hi, true
		end.PrologueEnd, end.EpilogueBegin, end.Discriminator = false, false, 0
		progs[f.proc].rows = append(progs[f.proc].rows, append(rows, end)...)
	}
	return progs, carried
}

// build writes progs as one ESL unit.
func build(tb testing.TB, files []string, progs []program) []byte {
	b, err := NewBuilder(1)
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range files {
		b.File(f)
	}
	for _, p := range progs {
		if err := b.Add(p.entry, p.rows); err != nil {
			tb.Fatal(err)
		}
	}
	return b.AppendUnit(nil)
}

// checkTable decodes every program of sec and compares it with progs.
func checkTable(t *testing.T, files []string, progs []program, sec []byte) {
	t.Helper()
	tab, err := Parse(SectionName, sec)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != len(progs) {
		t.Fatalf("%d procedures, want %d", tab.Len(), len(progs))
	}
	for _, p := range progs {
		proc, ok, err := tab.Find(p.entry)
		if err != nil || !ok {
			t.Fatalf("Find(%#x) = %v, %v", p.entry, ok, err)
		}
		got, err := decodeAll(proc.Program)
		if err != nil {
			t.Fatalf("procedure %#x: %v", p.entry, err)
		}
		if !slices.Equal(got, p.rows) {
			t.Fatalf("procedure %#x: rows differ (-dwarf +esl):\n%s", p.entry, gocmp.Diff(p.rows, got))
		}
		for _, r := range got {
			if proc.Files[r.File] != files[r.File] {
				t.Fatalf("file %d is %q, want %q", r.File, proc.Files[r.File], files[r.File])
			}
		}
	}
}

// TestDWARFRoundTrip converts the .debug_line rows of every test binary
// to ESL and back: every field of every row must survive, in both
// layouts (a program per DWARF sequence, a program per procedure with its
// fragments in order).
func TestDWARFRoundTrip(t *testing.T) {
	for _, name := range append(testBinaries(t), largeBinary) {
		t.Run(benchName(name), func(t *testing.T) {
			if name == largeBinary && testing.Short() {
				t.Skip("the large binary takes seconds; not in -short")
			}
			dl := readDWARF(t, binPath(t, name))
			total := 0
			for _, s := range dl.seqs {
				total += len(s)
			}
			if total == 0 {
				t.Skip("no line rows")
			}
			seqs := dl.bySequence()
			checkTable(t, dl.files, seqs, build(t, dl.files, seqs))

			procs, carried := dl.byProcedure()
			sec := build(t, dl.files, procs)
			checkTable(t, dl.files, procs, sec)
			// Every DWARF row but the sequence ends is carried once.
			var want, got []Row
			for _, s := range dl.seqs {
				for _, r := range s {
					if !r.EndSequence {
						want = append(want, r)
					}
				}
			}
			for _, p := range procs {
				n := 0
				for _, r := range p.rows {
					if !r.EndSequence || n == len(p.rows)-1 && false {
						got = append(got, r)
					}
					n++
				}
			}
			if len(want) != carried {
				t.Fatalf("carried %d rows, want %d", carried, len(want))
			}
			cmpRow := func(a, b Row) int {
				return cmpRows(a, b)
			}
			slices.SortFunc(want, cmpRow)
			slices.SortFunc(got, cmpRow)
			if !slices.Equal(want, got) {
				t.Fatalf("procedure layout lost rows: %d DWARF rows, %d carried", len(want), len(got))
			}
			t.Logf("%d rows, %d sequences, %d procedures: .debug_line %d bytes, ESL %d bytes per procedure (%.2fx)",
				total, len(dl.seqs), len(procs), dl.lineSize, len(sec), float64(len(sec))/float64(dl.lineSize))
		})
	}
}

func cmpRows(a, b Row) int {
	if c := cmp.Compare(a.Address, b.Address); c != 0 {
		return c
	}
	return strings.Compare(a.String(), b.String())
}
