package jsonw

import (
	"encoding/json"
	"testing"
)

// TestMatchesEncodingJSON: every appender writes what encoding/json
// writes for the same value.
func TestMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "a<b>&c\"d\\e\n\r\t\b\f\x01\x1f\u2028\u2029\xffé\U0001F600", "\xe2\x80"} {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
	}
	type rec struct {
		A string   `json:"a"`
		B uint64   `json:"b"`
		C int64    `json:"c"`
		D bool     `json:"d"`
		E []uint32 `json:"e"`
	}
	v := rec{"x<", 1<<64 - 1, -1 << 63, true, []uint32{0, 7, 1<<32 - 1}}
	want, _ := json.Marshal(v)
	b := Str(nil, `{"a":`, v.A)
	b = Uint(b, `,"b":`, v.B)
	b = Int(b, `,"c":`, v.C)
	b = Bool(b, `,"d":`, v.D)
	b = append(Uints(b, `,"e":`, v.E), '}')
	if string(b) != string(want) {
		t.Errorf("got %s, want %s", b, want)
	}
}

func FuzzString(f *testing.F) {
	f.Add("a<\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestArray(t *testing.T) {
	for n := range 3 {
		var a Array
		var b []byte
		want := make([]int, n)
		for i := range n {
			b = Int(append(a.Elem(b), '\n'), "", int64(i))
			want[i] = i
		}
		b = a.End(b)
		var got []int
		if err := json.Unmarshal(b, &got); err != nil || len(got) != n || a.Len() != n {
			t.Errorf("%d elements: %q, %v (Len %d)", n, b, err, a.Len())
		}
		if n == 0 && string(b) != "[]" || n == 2 && string(b) != "[\n0,\n1\n]" {
			t.Errorf("%d elements: %q", n, b)
		}
	}
}
