package esl

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeAll runs p and returns its rows, or the first error.
func decodeAll(p Program) ([]Row, error) {
	var rows []Row
	for r, err := range p.Rows() {
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// randomRows returns n rows shaped like compiler output: mostly small
// forward steps, some jumps back and forth between fragments, columns,
// files, flags.
func randomRows(rng *rand.Rand, n int, unit uint64) []Row {
	rows := make([]Row, 0, n)
	r := Row{Address: 0x1000, Line: 10, IsStmt: true}
	for range n {
		switch k := rng.IntN(100); {
		case k < 60:
			r.Address += unit * uint64(rng.IntN(17))
		case k < 70:
			r.Address += unit * uint64(rng.IntN(5000))
		case k < 75:
			r.Address -= unit * uint64(rng.IntN(5000))
		}
		switch k := rng.IntN(100); {
		case k < 50:
			r.Line = uint32(int64(r.Line) + int64(rng.IntN(15)) - 7)
		case k < 60:
			r.Line = uint32(rng.IntN(100000))
		case k < 61:
			r.Line = math.MaxUint32 - uint32(rng.IntN(3))
		}
		if rng.IntN(3) == 0 {
			r.Column = uint32(rng.IntN(140))
		}
		if rng.IntN(50) == 0 {
			r.Column = rng.Uint32()
		}
		if rng.IntN(20) == 0 {
			r.File = uint32(rng.IntN(200))
		}
		if rng.IntN(3) == 0 {
			r.IsStmt = !r.IsStmt
		}
		r.Discriminator = 0
		if rng.IntN(5) == 0 {
			r.Discriminator = uint32(rng.IntN(300))
		}
		r.PrologueEnd = rng.IntN(20) == 0
		r.EpilogueBegin = rng.IntN(20) == 0
		r.EndSequence = rng.IntN(20) == 0
		rows = append(rows, r)
	}
	return rows
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, unit := range []int{1, 2, 4, 3} {
		for i := range 200 {
			rows := randomRows(rng, rng.IntN(300), uint64(unit))
			start := Start{Address: 0x1000, File: 0, Line: 10}
			if len(rows) > 0 && i%2 == 0 {
				start.File, start.Line = rows[0].File, rows[0].Line
			}
			code, err := AppendProgram(nil, unit, start, rows)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeAll(Program{Start: start, PCUnit: unit, Code: code})
			if err != nil {
				t.Fatalf("unit %d case %d: %v\ncode % x", unit, i, err, code)
			}
			if !slices.Equal(rows, got) && len(rows)+len(got) > 0 {
				t.Fatalf("unit %d case %d: rows differ (-want +got):\n%s", unit, i, cmp.Diff(rows, got))
			}
		}
	}
}

func TestRoundTripEdges(t *testing.T) {
	start := Start{Address: 0x1000, Line: 1}
	cases := map[string][]Row{
		"empty":       nil,
		"entry row":   {{Address: 0x1000, Line: 1, IsStmt: true}},
		"duplicate":   {{Address: 0x1000, Line: 1, IsStmt: true}, {Address: 0x1000, Line: 1, IsStmt: true}},
		"max address": {{Address: math.MaxUint64, Line: 1, IsStmt: true}, {Address: 0, Line: 1}},
		"max fields":  {{Address: 0x1000, File: math.MaxUint32, Line: math.MaxUint32, Column: math.MaxUint32, Discriminator: math.MaxUint32}},
		"line zero":   {{Address: 0x1001, Line: 0, IsStmt: true}, {Address: 0x1002, Line: 7}},
		"backwards":   {{Address: 0x1000, Line: 5, IsStmt: true}, {Address: 0x900, Line: 6, IsStmt: true}, {Address: 0x910, Line: 6, EndSequence: true}, {Address: 0x1010, Line: 7}},
	}
	for name, rows := range cases {
		code, err := AppendProgram(nil, 1, start, rows)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := decodeAll(Program{Start: start, PCUnit: 1, Code: code})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(rows, got); len(rows)+len(got) > 0 && diff != "" {
			t.Errorf("%s: (-want +got):\n%s", name, diff)
		}
	}
}

func TestAppendProgramErrors(t *testing.T) {
	if _, err := AppendProgram(nil, 0, Start{}, nil); !errors.Is(err, ErrUnencodable) {
		t.Errorf("pc unit 0: %v", err)
	}
	_, err := AppendProgram(nil, 4, Start{Address: 0x1000}, []Row{{Address: 0x1002}})
	if !errors.Is(err, ErrUnencodable) {
		t.Errorf("unaligned: %v", err)
	}
}

func TestUnitsOf(t *testing.T) {
	for _, unit := range []uint64{1, 2, 3, 4, 5, 6, 12, 255} {
		for _, d := range []uint64{0, 1, 2, 3, 4, 8, 12, 255 * 7, 1 << 63, math.MaxUint64, math.MaxUint64 - 4, 0x9d3a74e9d3a74f58} {
			k, ok := unitsOf(d, unit)
			tz := uint64(1)<<bits.TrailingZeros64(unit) - 1
			if ok != (d&tz == 0) {
				t.Errorf("unitsOf(%#x, %d) ok = %v", d, unit, ok)
			}
			if ok && uint64(k)*unit != d {
				t.Errorf("unitsOf(%#x, %d) = %d: %d × %d = %#x", d, unit, k, k, unit, uint64(k)*unit)
			}
		}
	}
	if k, _ := unitsOf(math.MaxUint64-2, 3); k != -1 {
		t.Errorf("unitsOf(-3, 3) = %d, want -1", k)
	}
}
