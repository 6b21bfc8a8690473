package symbolize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPlainPrefix compares plainPrefix's eight bytes at a time with a
// byte at a time, for every byte value at every position of strings of
// up to 24 plain bytes, and for two bytes that need escaping.
func TestPlainPrefix(t *testing.T) {
	slow := func(s string) int {
		i := 0
		for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
			i++
		}
		return i
	}
	for n := 0; n <= 24; n++ {
		plain := strings.Repeat("a/~ _", 5)[:n]
		if got := plainPrefix(plain); got != n {
			t.Fatalf("plainPrefix(%q) = %d, want %d", plain, got, n)
		}
		for pos := 0; pos < n; pos++ {
			for c := range 256 {
				b := []byte(plain)
				b[pos] = byte(c)
				for _, second := range []int{-1, 0x1f, '\\', 0xff} {
					if second >= 0 && pos+1 < n {
						b[n-1] = byte(second)
					}
					if got, want := plainPrefix(string(b)), slow(string(b)); got != want {
						t.Fatalf("plainPrefix(%q) = %d, want %d", b, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkAppendJSONString: the strings of a frame, a path of
// bench/out/mfs and a function name.
func BenchmarkAppendJSONString(b *testing.B) {
	strs := []string{"/work/wt/sym/bench/out/mfs-src/./u6.c", "mix", "f_17234_compute_checksum"}
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = buf[:0]
		for _, s := range strs {
			buf = appendJSONString(buf, s)
		}
	}
}
