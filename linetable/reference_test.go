package linetable_test

import (
	"debug/elf"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
)

var (
	ddDirRe  = regexp.MustCompile(`^include_directories\[\s*(\d+)\] = "(.*)"`)
	ddFileRe = regexp.MustCompile(`^file_names\[\s*(\d+)\]:`)
	ddNameRe = regexp.MustCompile(`^\s+name: "(.*)"`)
	ddDirIdx = regexp.MustCompile(`^\s+dir_index: (\d+)`)
	ddRowRe  = regexp.MustCompile(`^0x([0-9a-f]{16})\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s*(.*)$`)
)

// dwarfdumpRows parses llvm-dwarfdump --debug-line: every row of every
// unit, with the file as the directory-relative path.
func dwarfdumpRows(out string) [][]linetable.Row {
	var seqs [][]linetable.Row
	var cur []linetable.Row
	dirs := map[int]string{}
	type file struct {
		name string
		dir  int
	}
	files := map[int]*file{}
	var last *file
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "debug_line["):
			dirs, files, last = map[int]string{}, map[int]*file{}, nil
		case ddDirRe.MatchString(line):
			m := ddDirRe.FindStringSubmatch(line)
			i, _ := strconv.Atoi(m[1])
			dirs[i] = m[2]
		case ddFileRe.MatchString(line):
			i, _ := strconv.Atoi(ddFileRe.FindStringSubmatch(line)[1])
			last = &file{}
			files[i] = last
		case last != nil && ddNameRe.MatchString(line):
			last.name = ddNameRe.FindStringSubmatch(line)[1]
		case last != nil && ddDirIdx.MatchString(line):
			last.dir, _ = strconv.Atoi(ddDirIdx.FindStringSubmatch(line)[1])
		case ddRowRe.MatchString(line):
			m := ddRowRe.FindStringSubmatch(line)
			addr, _ := strconv.ParseUint(m[1], 16, 64)
			ln, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			fi, _ := strconv.Atoi(m[4])
			flags := strings.Fields(m[5])
			r := linetable.Row{Addr: addr, Line: ln, Column: col,
				IsStmt: slices.Contains(flags, "is_stmt"), PrologueEnd: slices.Contains(flags, "prologue_end"),
				EndSequence: slices.Contains(flags, "end_sequence")}
			if r.EndSequence { // ours carry no file at a sequence end
				cur = append(cur, r)
				seqs = append(seqs, cur)
				cur = nil
				continue
			}
			if f := files[fi]; f != nil {
				d := dirs[f.dir]
				if f.dir == 0 || path.IsAbs(f.name) {
					d = ""
				}
				r.File = path.Clean(path.Join(d, f.name))
			}
			cur = append(cur, r)
		}
	}
	return seqs
}

// TestAgainstDwarfdump compares every row of every test binary with
// llvm-dwarfdump --debug-line: address, line, column, file, is_stmt,
// prologue_end, end_sequence.
func TestAgainstDwarfdump(t *testing.T) {
	dd := testbin.Tool(t, "llvm-dwarfdump-22", "llvm-dwarfdump-19", "llvm-dwarfdump")
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			tab, err := linetable.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			ef := testbin.OpenELF(t, bin)
			isCode := func(a uint64) bool {
				for _, s := range ef.Sections {
					if s.Flags&elf.SHF_EXECINSTR != 0 && a >= s.Addr && a < s.Addr+s.Size {
						return true
					}
				}
				return false
			}
			var want []linetable.Row
			seqs := dwarfdumpRows(testbin.Run(t, dd, "--debug-line", bin))
			seqs = slices.DeleteFunc(seqs, func(s []linetable.Row) bool { return len(s) < 2 || !isCode(s[0].Addr) })
			slices.SortStableFunc(seqs, func(a, b []linetable.Row) int {
				switch {
				case a[0].Addr < b[0].Addr:
					return -1
				case a[0].Addr > b[0].Addr:
					return 1
				}
				return 0
			})
			for _, s := range seqs {
				want = append(want, s...)
			}
			got := slices.Collect(tab.Rows())
			if len(want) == 0 {
				t.Fatal("llvm-dwarfdump gave no rows")
			}
			if len(got) != len(want) {
				t.Errorf("%d rows, llvm-dwarfdump has %d", len(got), len(want))
			}
			bad := 0
			for i := range min(len(got), len(want)) {
				g, w := got[i], want[i]
				// Files: ours carry the compile directory where DWARF says
				// it; dwarfdump's are directory-relative.
				if w.File != "" && (g.File == w.File || strings.HasSuffix(g.File, "/"+w.File)) {
					g.File = w.File
				}
				if diff := cmp.Diff(w, g); diff != "" {
					if bad++; bad <= 5 {
						t.Errorf("row %d (-dwarfdump +ours):\n%s", i, diff)
					}
				}
			}
			if bad > 5 {
				t.Errorf("... %d rows differ", bad)
			}
			t.Logf("%d rows compared", len(want))
		})
	}
}
