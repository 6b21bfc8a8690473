package symbolize

import (
	"slices"
	"strings"
	"testing"
)

// FuzzTokenizeGNU: any response file splits without a panic into
// non-empty arguments that, each written back with every byte escaped,
// split into the same arguments again.
func FuzzTokenizeGNU(f *testing.F) {
	for _, s := range []string{`a 'b c' "d\"e" f\ g`, "x\n\ny", `''`, `"unterminated`, `\`, `a\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		args := tokenizeGNU(src)
		var b strings.Builder
		for _, a := range args {
			if a == "" {
				t.Fatalf("tokenizeGNU(%q) gives an empty argument", src)
			}
			for i := 0; i < len(a); i++ {
				b.WriteByte('\\')
				b.WriteByte(a[i])
			}
			b.WriteByte(' ')
		}
		if again := tokenizeGNU(b.String()); !slices.Equal(again, args) {
			t.Errorf("tokenizeGNU(%q) = %q; written back and split again: %q", src, args, again)
		}
	})
}
