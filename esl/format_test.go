package esl

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The worked example of docs/FORMAT.md: scale (split into scale and
// scale.cold) and sum from testdata/bin/demo.
var (
	scaleRows = []Row{
		{Address: 0x1230, Line: 23, Column: 1, IsStmt: true},
		{Address: 0x1230, Line: 24, Column: 2, IsStmt: true},
		{Address: 0x1230, Line: 23, Column: 1},
		{Address: 0x1231, Line: 23, Column: 1},
		{Address: 0x1233, Line: 24, Column: 5},
		{Address: 0x123b, Line: 28, Column: 2, IsStmt: true},
		{Address: 0x123b, Line: 28, Column: 11},
		{Address: 0x123e, Line: 28, Column: 15},
		{Address: 0x1241, Line: 29, Column: 1},
		{Address: 0x1242, Line: 29, Column: 1},
		{Address: 0x1243, Line: 29, Column: 1, EndSequence: true},
		{Address: 0x1073, Line: 25, Column: 3, IsStmt: true},
		{Address: 0x1075, Line: 25, Column: 3},
		{Address: 0x1081, Line: 26, Column: 3, IsStmt: true},
		{Address: 0x1081, Line: 26, Column: 10},
		{Address: 0x1088, Line: 26, Column: 10, EndSequence: true},
	}
	sumRows = []Row{
		{Address: 0x1250, Line: 33, Column: 1, IsStmt: true},
		{Address: 0x1254, Line: 34, Column: 2},
	}
)

const exampleHex = "45534c01 56000000 01010100 b024 01 0d2e2f64656d6f2f64656d6f2e63 02 0000 202b" +
	" 0128 0017 804502000110 02f08101011205488200 8b030f1301010181 8b41b07cc08302831c83008a87cb 00" +
	" 7e0373756d 0109 0021 80450200011482 00"

func exampleSection(t *testing.T) []byte {
	b, err := NewBuilder(1)
	if err != nil {
		t.Fatal(err)
	}
	b.File("./demo/demo.c")
	if err := b.Add(0x1230, scaleRows); err != nil {
		t.Fatal(err)
	}
	if err := b.AddElement(0x1250, 0x7e, []byte("sum")); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(0x1250, sumRows); err != nil {
		t.Fatal(err)
	}
	return b.AppendUnit(nil)
}

// TestFormatExample checks the worked example of docs/FORMAT.md: the
// Builder writes exactly its bytes, they decode to its rows, and every
// "0xOFF  bytes" line of the document shows the bytes at that offset.
func TestFormatExample(t *testing.T) {
	sec := exampleSection(t)
	want, err := hex.DecodeString(strings.ReplaceAll(exampleHex, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sec, want) {
		t.Fatalf("Builder wrote\n% x\nwant\n% x", sec, want)
	}
	tab, err := Parse("", sec)
	if err != nil {
		t.Fatal(err)
	}
	for entry, rows := range map[uint64][]Row{0x1230: scaleRows, 0x1250: sumRows} {
		p, ok, err := tab.Find(entry)
		if !ok || err != nil {
			t.Fatalf("Find(%#x): %v %v", entry, ok, err)
		}
		got, err := decodeAll(p.Program)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rows, got); diff != "" {
			t.Errorf("%#x: (-want +got):\n%s", entry, diff)
		}
	}

	doc, err := os.ReadFile("../docs/FORMAT.md")
	if err != nil {
		t.Skipf("docs/FORMAT.md: %v", err)
	}
	line := regexp.MustCompile(`^(0x[0-9a-f]+)  ((?:[0-9a-f]{2} )*[0-9a-f]{2})(?:  |$)`)
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		off, _ := strconv.ParseUint(m[1], 0, 64)
		b, _ := hex.DecodeString(strings.ReplaceAll(m[2], " ", ""))
		if int(off)+len(b) > len(sec) || !bytes.Equal(sec[off:int(off)+len(b)], b) {
			t.Errorf("FORMAT.md: %q does not match the section", sc.Text())
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("only %d example lines found in FORMAT.md", checked)
	}
}
