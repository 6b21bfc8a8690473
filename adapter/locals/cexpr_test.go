package locals

import (
	"go/parser"
	"slices"
	"testing"
)

// TestCSyntax: what cSyntax makes of C's syntax, and that Go's parser
// takes it; string and character literals pass untouched.
func TestCSyntax(t *testing.T) {
	typedefs := func(name string) bool { return name == "count_t" || name == "point_t" }
	for _, tc := range []struct {
		in, out string
		casts   []cast
	}{
		{"it->qty", "it . qty ", nil},
		{"a->b->c[i-1]", "a . b . c [ i - 1 ] ", nil},
		{`"a->b"`, `"a->b" `, nil},
		{"'-' > x", "'-' > x ", nil},
		{"(struct item *)it", castPrefix + "0(it ) ", []cast{{"struct item", 1}}},
		{"((struct item *)it)->name", "( " + castPrefix + "0(it ) ) . name ", []cast{{"struct item", 1}}},
		{"(unsigned long)x + 1", castPrefix + "0(x ) + 1 ", []cast{{"long unsigned", 0}}},
		{"(int)(char)-p->q", castPrefix + "1(" + castPrefix + "0(- p . q ) ) ", []cast{{"char", 0}, {"int", 0}}},
		{"(count_t)-1", castPrefix + "0(- 1 ) ", []cast{{"count_t", 0}}},
		{"(count) - 1", "( count ) - 1 ", nil}, // not a type: a subtraction
		{"(const point_t **)pp[2]", castPrefix + "0(pp [ 2 ] ) ", []cast{{"point_t", 2}}},
		{"(void *)p", castPrefix + "0(p ) ", []cast{{"void", 1}}},
		{"sizeof(struct item) * 2", sizeofPrefix + "0() * 2 ", []cast{{"struct item", 0}}},
		{"sizeof stock[1]", sizeofPrefix + "(stock [ 1 ] ) ", nil},
		{"~x", "^ x ", nil},
		{"p->type", "p . " + keywordPrefix + "type ", nil},
	} {
		out, casts, err := cSyntax(tc.in, typedefs)
		if err != nil || out != tc.out || !slices.Equal(casts, tc.casts) {
			t.Errorf("cSyntax(%q) = %q, %v, %v; want %q, %v", tc.in, out, casts, err, tc.out, tc.casts)
			continue
		}
		if _, err := parser.ParseExpr(out); err != nil {
			t.Errorf("cSyntax(%q) = %q: %v", tc.in, out, err)
		}
	}
	for _, bad := range []string{"sizeof", "(int)(x", "`"} {
		if out, _, err := cSyntax(bad, typedefs); err == nil {
			if _, perr := parser.ParseExpr(out); perr == nil {
				t.Errorf("cSyntax(%q) = %q, parsed; want an error", bad, out)
			}
		}
	}
}
