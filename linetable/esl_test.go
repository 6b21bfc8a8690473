package linetable_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/esl"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/linetable"
)

// TestESLSource: a line table read from ESL alone answers every address
// and every cold-line breakpoint exactly as the one read from DWARF.
func TestESLSource(t *testing.T) {
	want, _ := coldLineExpectations()
	lines := coldLines(t)
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) {
			dw, err := linetable.Open(testbin.Path(t, name))
			if err != nil {
				t.Fatal(err)
			}
			data, err := dw.AppendESL(nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			et, err := esl.Parse(esl.SectionName, data)
			if err != nil {
				t.Fatal(err)
			}
			src, err := linetable.NewESLSource(et)
			if err != nil {
				t.Fatal(err)
			}
			el, err := linetable.New(dw.Procs(), src, nil)
			if err != nil {
				t.Fatal(err)
			}
			type pos struct {
				File         string
				Line, Column int
				IsStmt       bool
				Proc         string
				Frag         int
			}
			conv := func(p linetable.Position, ok bool) pos {
				if !ok {
					return pos{}
				}
				out := pos{File: p.File, Line: p.Line, Column: p.Column, IsStmt: p.IsStmt, Frag: p.Frag}
				if p.Proc != nil {
					out.Proc = p.Proc.Name
				}
				return out
			}
			n := 0
			for r := range dw.Rows() {
				if r.EndSequence {
					continue
				}
				if _, ok := dw.Procs().Lookup(r.Addr); !ok {
					continue // ESL holds procedures' rows only
				}
				if diff := cmp.Diff(conv(dw.PC(r.Addr)), conv(el.PC(r.Addr))); diff != "" {
					t.Fatalf("PC(%#x) (-DWARF +ESL):\n%s", r.Addr, diff)
				}
				n++
			}
			for marker := range want[name] {
				loc := lines[marker]
				spec := loc[strings.LastIndexByte(loc, '/')+1:]
				a, errA := dw.Resolve(spec)
				b, errB := el.Resolve(spec)
				if (errA == nil) != (errB == nil) {
					t.Fatalf("%s: DWARF %v, ESL %v", spec, errA, errB)
				}
				addrs := func(b linetable.Breakpoint) []uint64 {
					var out []uint64
					for _, l := range b.Locs {
						out = append(out, l.Addr)
					}
					return out
				}
				if !slices.Equal(addrs(a), addrs(b)) {
					t.Errorf("break %s: DWARF %#x, ESL %#x", spec, addrs(a), addrs(b))
				}
			}
			t.Logf("%d addresses agree; ESL %d bytes", n, len(data))
		})
	}
}
