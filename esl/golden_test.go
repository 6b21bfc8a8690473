package esl

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// goldenCase is one line of testdata/golden.txt.
type goldenCase struct {
	line    int
	prog    Program
	exact   bool // the encoder must write exactly prog.Code for rows
	rows    []Row
	errOff  int64
	errKind error
}

var sentinels = map[string]error{
	"truncated":       cursor.ErrTruncated,
	"corrupt":         cursor.ErrCorrupt,
	"overflow":        cursor.ErrOverflow,
	"unknown-command": ErrUnknownCommand,
}

// readGolden parses testdata/golden.txt:
//
//	# comment
//	@ unit=N addr=A file=F line=L files=N   start of the cases below (defaults: 1 0x1000 0 10 0)
//	[=] HEX | ROWS [! OFFSET SENTINEL]
//
// ROWS is "-" or rows separated by ";", each "ADDR FILE:LINE:COL" and
// then flags (stmt pe eb end dN) as Row.String writes them. A leading "="
// also requires AppendProgram to write exactly HEX for those rows.
func readGolden(t testing.TB) []goldenCase {
	data, err := os.ReadFile("testdata/golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	defaults := Program{PCUnit: 1, Start: Start{Address: 0x1000, Line: 10}}
	cur := defaults
	var cases []goldenCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		fail := func(format string, args ...any) {
			t.Fatalf("golden.txt:%d: %s", n, fmt.Sprintf(format, args...))
		}
		if rest, ok := strings.CutPrefix(text, "@"); ok {
			cur = defaults
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				x, err := strconv.ParseUint(v, 0, 64)
				if err != nil {
					fail("%s: %v", kv, err)
				}
				switch k {
				case "unit":
					cur.PCUnit = int(x)
				case "addr":
					cur.Start.Address = x
				case "file":
					cur.Start.File = uint32(x)
				case "line":
					cur.Start.Line = uint32(x)
				case "files":
					cur.NumFiles = int(x)
				default:
					fail("unknown setting %q", k)
				}
			}
			continue
		}
		c := goldenCase{line: n, prog: cur}
		if rest, ok := strings.CutPrefix(text, "="); ok {
			c.exact, text = true, rest
		}
		hexPart, rowPart, ok := strings.Cut(text, "|")
		if !ok {
			fail("no |")
		}
		c.prog.Code, err = hex.DecodeString(strings.Join(strings.Fields(hexPart), ""))
		if err != nil {
			fail("hex: %v", err)
		}
		rowPart, errPart, hasErr := strings.Cut(rowPart, "!")
		if hasErr {
			f := strings.Fields(errPart)
			if len(f) != 2 || sentinels[f[1]] == nil {
				fail("want ! OFFSET SENTINEL, got %q", errPart)
			}
			c.errOff, err = strconv.ParseInt(f[0], 0, 64)
			if err != nil {
				fail("offset: %v", err)
			}
			c.errKind = sentinels[f[1]]
		}
		if rp := strings.TrimSpace(rowPart); rp != "-" && rp != "" {
			for _, rs := range strings.Split(rp, ";") {
				r, err := parseRow(rs)
				if err != nil {
					fail("row %q: %v", rs, err)
				}
				c.rows = append(c.rows, r)
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// parseRow parses the notation of Row.String.
func parseRow(s string) (Row, error) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return Row{}, errors.New("want ADDR FILE:LINE:COL [flags]")
	}
	var r Row
	var err error
	if r.Address, err = strconv.ParseUint(f[0], 0, 64); err != nil {
		return r, err
	}
	pos := strings.Split(f[1], ":")
	if len(pos) != 3 {
		return r, errors.New("want FILE:LINE:COL")
	}
	var v [3]uint64
	for i, p := range pos {
		if v[i], err = strconv.ParseUint(p, 10, 32); err != nil {
			return r, err
		}
	}
	r.File, r.Line, r.Column = uint32(v[0]), uint32(v[1]), uint32(v[2])
	for _, fl := range f[2:] {
		switch {
		case fl == "stmt":
			r.IsStmt = true
		case fl == "pe":
			r.PrologueEnd = true
		case fl == "eb":
			r.EpilogueBegin = true
		case fl == "end":
			r.EndSequence = true
		case strings.HasPrefix(fl, "d"):
			d, err := strconv.ParseUint(fl[1:], 10, 32)
			if err != nil {
				return r, err
			}
			r.Discriminator = uint32(d)
		default:
			return r, fmt.Errorf("unknown flag %q", fl)
		}
	}
	return r, nil
}

// TestGolden decodes the hand-written programs of testdata/golden.txt,
// which cover every data mode and command and the errors, and checks that
// the encoder writes the same rows in no more bytes.
func TestGolden(t *testing.T) {
	cases := readGolden(t)
	if len(cases) < 40 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		got, err := decodeAll(c.prog)
		if diff := cmp.Diff(c.rows, got); diff != "" {
			t.Errorf("golden.txt:%d: rows (-want +got):\n%s", c.line, diff)
		}
		if c.errKind != nil {
			var de *cursor.DecodeError
			if !errors.As(err, &de) || !errors.Is(err, c.errKind) || de.Offset != c.errOff || de.Section != DefaultSection {
				t.Errorf("golden.txt:%d: error %v, want %v at %#x", c.line, err, c.errKind, c.errOff)
			}
			continue
		}
		if err != nil {
			t.Errorf("golden.txt:%d: %v", c.line, err)
			continue
		}
		enc, err := AppendProgram(nil, c.prog.PCUnit, c.prog.Start, c.rows)
		if err != nil {
			t.Errorf("golden.txt:%d: encode: %v", c.line, err)
			continue
		}
		if c.exact && !bytes.Equal(enc, c.prog.Code) {
			t.Errorf("golden.txt:%d: encoder wrote % x, want % x", c.line, enc, c.prog.Code)
		}
		if len(enc) > len(c.prog.Code) {
			t.Errorf("golden.txt:%d: encoder wrote %d bytes (% x), the hand-written program has %d", c.line, len(enc), enc, len(c.prog.Code))
		}
		p := c.prog
		p.Code = enc
		if back, err := decodeAll(p); err != nil || !cmp.Equal(back, c.rows) {
			t.Errorf("golden.txt:%d: re-encoded % x decodes to %v, %v", c.line, enc, back, err)
		}
	}
}

// TestGoldenCoverage checks that the golden file uses every command, both
// data modes and every flag combination of a command byte.
func TestGoldenCoverage(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range readGolden(t) {
		for _, s := range shapes(c.prog.Code) {
			for _, w := range strings.Fields(s) {
				name, flags, _ := strings.Cut(w, "|")
				if name != "d1" && name != "d2" {
					name = strings.TrimRight(name, "0123456789?")
				}
				if strings.HasPrefix(name, "set_discriminator_") {
					name = "set_discriminator_N"
				}
				if strings.HasPrefix(name, "esc") {
					name = "esc"
				}
				seen[name] = true
				seen["flags:"+flags] = true
			}
		}
	}
	for _, want := range []string{"d1", "d2", "esc", "add_pc", "add_line", "set_col", "set_file", "set_data_mode",
		"add_pc_line", "add_pc_line_col", "negate_stmt", "prologue_end", "epilogue_begin", "end_sequence",
		"set_discriminator", "set_discriminator_N", "flags:", "flags:R", "flags:M", "flags:R|M"} {
		if !seen[want] {
			t.Errorf("golden.txt never uses %s", want)
		}
	}
}
