package x86scan

import (
	"flag"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// checker compares Decode with reference on many inputs and reports the
// first few differences.
type checker struct {
	t        *testing.T
	rng      *rand.Rand
	n, fails int
}

func (c *checker) check(code []byte, mode int) {
	c.n++
	pc := uint64(0x400000 + c.rng.IntN(1<<20))
	if mode == 64 && c.rng.IntN(4) == 0 {
		pc = 0x7fff_0000_0000 + uint64(c.rng.IntN(1<<20))
	}
	got := Decode(code, pc, mode)
	want := reference(code, pc, mode)
	if got != want {
		c.fails++
		if c.fails <= 20 {
			c.t.Errorf("mode %d: %s\n\tgot  %+v\n\twant %+v", mode, describe(code, mode), got, want)
		}
	}
	// Decode reads code of 16 bytes or more in place, shorter code from
	// a copy; bytes past the 15th change nothing.
	if len(code) == 15 {
		long := append(code[:15:15], byte(c.rng.Uint32()), byte(c.rng.Uint32()))
		if got := Decode(long, pc, mode); got != want {
			c.fails++
			if c.fails <= 20 {
				c.t.Errorf("mode %d, %d bytes: %s\n\tgot  %+v\n\twant %+v", mode, len(long), describe(code, mode), got, want)
			}
		}
	}
	// The same bytes cut short must agree too.
	if k := c.rng.IntN(len(code)); k > 0 && k < 15 {
		got, want := Decode(code[:k], pc, mode), reference(code[:k], pc, mode)
		if got != want {
			c.fails++
			if c.fails <= 20 {
				c.t.Errorf("mode %d, cut to %d bytes: %s\n\tgot  %+v\n\twant %+v", mode, k, describe(code[:k], mode), got, want)
			}
		}
	}
}

func (c *checker) fill(b []byte) []byte {
	for len(b) < 15 {
		b = append(b, byte(c.rng.Uint32()))
	}
	return b
}

// decorate returns the legacy prefixes of prefix state ps, shuffled, with
// prefixes that change nothing (LOCK, segment overrides, repeats) added at
// random, and in 64-bit mode the REX prefix (with REX.W as ps says and
// random R, X, B bits).
func (c *checker) decorate(ps, mode int) []byte {
	var p []byte
	if ps&ps66 != 0 {
		p = append(p, 0x66)
	}
	if ps&ps67 != 0 {
		p = append(p, 0x67)
	}
	for range c.rng.IntN(3) {
		p = append(p, []byte{0xF0, 0x2E, 0x3E, 0x26, 0x36, 0x64, 0x65, 0x66, 0x67}[c.rng.IntN(9)])
		if p[len(p)-1] == 0x66 && ps&ps66 == 0 || p[len(p)-1] == 0x67 && ps&ps67 == 0 {
			p = p[:len(p)-1]
		}
	}
	c.rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	// The last of F2 and F3 decides; an earlier one of the other kind is
	// allowed.
	var rep byte
	switch ps & psRep {
	case psF3:
		rep = 0xF3
	case psF2:
		rep = 0xF2
	}
	if rep != 0 {
		if c.rng.IntN(4) == 0 {
			i := c.rng.IntN(len(p) + 1)
			p = append(p[:i], append([]byte{rep ^ 1}, p[i:]...)...)
		}
		i := len(p)
		if i > 0 && c.rng.IntN(2) == 0 {
			// Before some prefixes that are not F2 or F3.
			i = c.rng.IntN(len(p) + 1)
			for _, b := range p[i:] {
				if b == 0xF2 || b == 0xF3 {
					i = len(p)
					break
				}
			}
		}
		p = append(p[:i], append([]byte{rep}, p[i:]...)...)
	}
	if mode == 64 && (ps&psW != 0 || c.rng.IntN(2) == 0) {
		rex := byte(0x40 | c.rng.IntN(8))
		if ps&psW != 0 {
			rex |= 8
		}
		p = append(p, rex)
	}
	return p
}

var opcodePrefixes = [][]byte{{}, {0x0F}, {0x0F, 0x38}, {0x0F, 0x3A}}

var exhaustive = flag.Bool("exhaustive", false, "compare all 256 ModR/M bytes in TestExhaustive*, not one of each class")

// modrms returns the ModR/M bytes to try after an opcode: all of them with
// -exhaustive, else every register form for legacy opcodes (whose
// validity may depend on the whole byte) and one random memory form for
// each ModR/M.reg, and for VEX and EVEX one of each (mod = 3, reg) class.
func (c *checker) modrms(avx bool) []byte {
	var ms []byte
	if *exhaustive {
		for m := 0; m < 256; m++ {
			ms = append(ms, byte(m))
		}
		return ms
	}
	for reg := 0; reg < 8; reg++ {
		ms = append(ms, byte(c.rng.IntN(3)<<6|reg<<3|c.rng.IntN(8)))
		if avx {
			ms = append(ms, byte(0xC0|reg<<3|c.rng.IntN(8)))
			continue
		}
		for rm := 0; rm < 8; rm++ {
			ms = append(ms, byte(0xC0|reg<<3|rm))
		}
	}
	return ms
}

// TestExhaustiveLegacy compares every legacy opcode under every prefix
// state with ModR/M bytes of every validity class (every byte with
// -exhaustive), followed by random bytes, to x86asm.
func TestExhaustiveLegacy(t *testing.T) {
	c := &checker{t: t, rng: rand.New(rand.NewPCG(1, 2))}
	for _, mode := range []int{64, 32} {
		for ps := 0; ps < 32; ps++ {
			if ps&psRep == psRep || mode == 32 && ps&psW != 0 {
				continue
			}
			for mp, esc := range opcodePrefixes {
				for op := 0; op < 256; op++ {
					if testing.Short() && op%7 != ps%7 {
						continue
					}
					if mp == 0 && (op == 0x0F || legacyPrefix[op] != 0) {
						continue
					}
					for _, m := range c.modrms(false) {
						b := append(c.decorate(ps, mode), esc...)
						b = append(b, byte(op), m)
						c.check(c.fill(b), mode)
					}
				}
			}
		}
	}
	t.Logf("%d instructions compared, %d differences", c.n, c.fails)
}

// TestExhaustiveAVX compares every VEX and EVEX opcode in every map with
// every pp, W, L (and for EVEX, b and a zero or nonzero aaa), with ModR/M
// bytes of every validity class (every byte with -exhaustive) and random
// other bits, to x86asm.
func TestExhaustiveAVX(t *testing.T) {
	c := &checker{t: t, rng: rand.New(rand.NewPCG(3, 4))}
	rnd := func(mask int) byte { return byte(c.rng.IntN(256) & mask) }
	for _, mode := range []int{64, 32} {
		// In 32-bit mode the bits that would be ModR/M.mod must be 11.
		rx := 0xFF
		if mode == 32 {
			rx = 0x3F
		}
		for op := 0; op < 256; op++ {
			if testing.Short() && op%5 != 0 {
				continue
			}
			for _, m := range c.modrms(true) {
				for pp := 0; pp < 4; pp++ {
					for l := 0; l < 2; l++ {
						// C5 [R vvvv L pp]
						b := []byte{0xC5, byte(rnd(0xF8&rx)|0xC0&^byte(rx)) | byte(l<<2|pp), byte(op), byte(m)}
						c.check(c.fill(b), mode)
						for mp := 0; mp < 4; mp++ {
							for w := 0; w < 2; w++ {
								// C4 [R X B mmmmm] [W vvvv L pp]
								mm := mp
								if mp == 0 {
									mm = c.rng.IntN(32)
								}
								b := []byte{0xC4, rnd(0xE0&rx) | 0xC0&^byte(rx) | byte(mm), byte(w<<7|l<<2|pp) | rnd(0x78), byte(op), byte(m)}
								c.check(c.fill(b), mode)
							}
						}
					}
					for mp := 0; mp < 4; mp++ {
						for w := 0; w < 2; w++ {
							for l := 0; l < 4; l++ {
								for bz := 0; bz < 4; bz++ {
									// 62 [R X B R' 0 0 m m] [W vvvv 1 pp] [z L'L b V' aaa]
									aaa := 0
									if bz&2 != 0 {
										aaa = 1 + c.rng.IntN(7)
									}
									p0 := rnd(0xFC&rx) | 0xC0&^byte(rx) | byte(mp)
									p1 := byte(w<<7|pp) | rnd(0x7C)
									p2 := byte(l<<5|(bz&1)<<4|aaa) | rnd(0x88)
									c.check(c.fill([]byte{0x62, p0, p1, p2, byte(op), byte(m)}), mode)
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d instructions compared, %d differences", c.n, c.fails)
}

// TestExhaustiveSIB compares the memory forms of the opcodes Decode
// classifies by their operand (LEA, JMP r/m) and of those whose length
// depends on ModR/M.reg (F6, F7, C7) with every SIB byte.
func TestExhaustiveSIB(t *testing.T) {
	c := &checker{t: t, rng: rand.New(rand.NewPCG(5, 6))}
	for _, mode := range []int{64, 32} {
		for ps := 0; ps < 32; ps++ {
			if ps&psRep == psRep || mode == 32 && ps&psW != 0 {
				continue
			}
			for _, op := range []byte{0x8D, 0xFF, 0xF6, 0xF7, 0xC7} {
				for m := 0; m < 0xC0; m++ {
					if m&7 != 4 || op != 0xFF && m&0x38 != 0x20 && c.rng.IntN(4) != 0 {
						continue
					}
					for sib := 0; sib < 256; sib++ {
						b := append(c.decorate(ps, mode), op, byte(m), byte(sib))
						c.check(c.fill(b), mode)
					}
				}
			}
		}
	}
	t.Logf("%d instructions compared, %d differences", c.n, c.fails)
}

// TestTablesVersion checks that tables.go was generated from the x86asm
// the tests build with, found from the module cache path of its source.
func TestTablesVersion(t *testing.T) {
	file, _ := runtime.FuncForPC(reflect.ValueOf(x86asm.Decode).Pointer()).FileLine(reflect.ValueOf(x86asm.Decode).Pointer())
	_, after, ok := strings.Cut(file, "golang.org/x/arch@")
	if !ok {
		t.Skipf("no module version in the path of x86asm's source %q", file)
	}
	version, _, _ := strings.Cut(after, "/")
	if version != x86asmVersion {
		t.Errorf("tables.go was generated from x86asm %s, the tests build with %s: run go generate", x86asmVersion, version)
	}
}
