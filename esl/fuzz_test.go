package esl

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

func addGoldenSeeds(f *testing.F) {
	for _, c := range readGolden(f) {
		f.Add(append([]byte{byte(c.prog.PCUnit)}, c.prog.Code...))
	}
}

// FuzzDecode feeds arbitrary bytes to the decoders, as a program (the
// first byte picks the pc unit and file count) and as a section. Nothing
// may panic; every program's rows must survive re-encoding.
func FuzzDecode(f *testing.F) {
	addGoldenSeeds(f)
	ex, _ := hex.DecodeString(strings.ReplaceAll(exampleHex, " ", ""))
	f.Add(ex)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		p := Program{PCUnit: int(data[0]&7) + 1, NumFiles: int(data[0] >> 4), Code: data[1:],
			Start: Start{Address: 0x1000, Line: 10}}
		rows, err := decodeAll(p)
		if len(rows) > len(p.Code) {
			t.Fatalf("%d rows from %d bytes", len(rows), len(p.Code))
		}
		if err == nil {
			checkRoundTrip(t, p.PCUnit, p.Start, rows)
		} else if _, ok := err.(*cursor.DecodeError); !ok {
			t.Fatalf("error %v is not a *cursor.DecodeError", err)
		}

		tab, err := Parse("", data)
		if err != nil {
			if _, ok := err.(*cursor.DecodeError); !ok {
				t.Fatalf("error %v is not a *cursor.DecodeError", err)
			}
			return
		}
		for p, err := range tab.Procs() {
			if err != nil {
				break
			}
			rows, err := decodeAll(p.Program)
			if err == nil && len(rows) > 0 {
				for _, r := range rows {
					_ = p.Files[r.File] // must be in range
				}
			}
			if q, ok, err := tab.Find(p.Entry()); !ok || err != nil || q.Offset != p.Offset {
				t.Fatalf("Find(%#x) = %v, %v, %v", p.Entry(), q.Offset, ok, err)
			}
		}
	})
}

func checkRoundTrip(t *testing.T, unit int, start Start, rows []Row) {
	t.Helper()
	code, err := AppendProgram(nil, unit, start, rows)
	if err != nil {
		t.Fatalf("AppendProgram: %v", err)
	}
	got, err := decodeAll(Program{PCUnit: unit, Start: start, Code: code})
	if err != nil {
		t.Fatalf("re-encoded program % x: %v", code, err)
	}
	if !slices.Equal(rows, got) {
		t.Fatalf("round trip of %v gave %v (% x)", rows, got, code)
	}
}

// FuzzRoundTrip makes rows from arbitrary bytes, encodes them as a program
// and as a unit and checks that they decode to the same rows.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{1, 0x10, 0x20, 0x30, 0x40})
	f.Add([]byte{4, 0xff, 0x80, 0x01, 0x7f, 0x00, 0x00, 0x13, 0x37, 0x42, 0x99})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		unit := int(data[0]%4) + 1
		data = data[1:]
		var rows []Row
		r := Row{Address: 0x4000, Line: 1, IsStmt: true}
		for len(data) >= 4 {
			op, a, b, c := data[0], data[1], data[2], data[3]
			data = data[4:]
			switch op & 3 {
			case 0:
				r.Address += uint64(a) * uint64(unit)
			case 1:
				r.Address -= uint64(binary.LittleEndian.Uint16([]byte{a, b})) * uint64(unit)
			case 2:
				r.Address += uint64(a) << (b % 64) * uint64(unit)
			}
			switch op >> 2 & 3 {
			case 0:
				r.Line = uint32(int32(r.Line) + int32(int8(b))%8)
			case 1:
				r.Line += uint32(int8(b))
			case 2:
				r.Line = uint32(b) << (c % 32)
			}
			if op&0x10 != 0 {
				r.Column = uint32(c) << (a % 25)
			}
			if op&0x20 != 0 {
				r.File = uint32(a % 4)
			}
			r.IsStmt = r.IsStmt != (c&1 != 0)
			r.PrologueEnd, r.EpilogueBegin, r.EndSequence = c&2 != 0, c&4 != 0, c&8 != 0
			if op&0x40 != 0 {
				r.Discriminator = uint32(c) >> (b % 8)
			}
			if op&0x80 != 0 {
				r.Discriminator = 0
			}
			rows = append(rows, r)
		}
		start := Start{Address: 0x4000, Line: 1}
		checkRoundTrip(t, unit, start, rows)

		b, err := NewBuilder(unit)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"a", "b", "c", "d"} {
			b.File(n)
		}
		if err := b.Add(0x4000, rows); err != nil {
			t.Fatal(err)
		}
		tab, err := Parse("", b.AppendUnit(nil))
		if err != nil {
			t.Fatal(err)
		}
		p, ok, err := tab.Find(0x4000)
		if !ok || err != nil {
			t.Fatalf("Find: %v %v", ok, err)
		}
		got, err := decodeAll(p.Program)
		if err != nil || !slices.Equal(got, rows) {
			t.Fatalf("unit round trip: %v, %v", got, err)
		}
	})
}
