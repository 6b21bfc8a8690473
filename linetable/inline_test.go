package linetable

import (
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestInnermost: for every piece of every test binary's inline
// partition, Innermost is the first scope ChainOf yields, and Touch
// walks the chain from it.
func TestInnermost(t *testing.T) {
	for _, name := range testbin.Linked(t) {
		f, err := elfx.Open(testbin.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		x, err := NewInlines(f, nil)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		scoped := 0
		for i := -1; i < x.Pieces(); i++ {
			var first *Scope
			depth := 0
			x.ChainOf(i, func(s *Scope) bool {
				if first == nil {
					first = s
				}
				depth++
				return true
			})
			if got := x.Innermost(i); got != first {
				t.Errorf("%s: piece %d: Innermost %p, ChainOf's first %p", name, i, got, first)
			}
			if first != nil {
				scoped++
				x.Touch(first)
			}
		}
		if scoped == 0 && x.Pieces() > 1 {
			t.Errorf("%s: no piece of %d has a scope", name, x.Pieces())
		}
	}
}
