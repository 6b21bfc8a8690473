//go:build ignore

// gen.go writes tables.go, the validity tables of package x86scan.
//
// The structure of an instruction (prefixes, opcode maps, ModRM, SIB,
// displacement and immediate sizes) is written by hand in x86scan from the
// Intel SDM and the AMD APM. Which opcodes exist is not: x86scan accepts
// exactly the instructions golang.org/x/arch/x86/x86asm accepts, so that a
// scan with either decoder walks the same instruction boundaries. This
// program asks x86asm.Decode about every opcode under every prefix state
// and every ModRM byte and records the answers:
//
//   - Legacy encodings (one-byte, 0F, 0F 38 and 0F 3A maps), per mode,
//     opcode and prefix state (66, last of F2/F3, 67, REX.W), one row of
//     72 bits: valid for a memory operand, by ModRM.reg, and valid for
//     each register-form ModRM byte (mod = 3).
//   - VEX and EVEX encodings, per map, opcode and (pp, W, L), one row of
//     17 classes (ModRM.mod = 3 or not, by ModRM.reg, and no ModRM byte at
//     all because the code ends after the opcode), each 3 bits: invalid,
//     valid without immediate, valid with an 8-bit immediate, plus whether
//     EVEX.aaa = 0 (no mask) makes it invalid.
//
// The program checks that the answers have that shape (that nothing else
// in the bytes changes them); x86scan's tests check the whole decoder
// against x86asm again.
//
// Usage: go run gen.go [-o tables.go]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"runtime/debug"

	"golang.org/x/arch/x86/x86asm"
)

var out = flag.String("o", "tables.go", "output file")

func main() {
	log.SetFlags(0)
	log.SetPrefix("gen: ")
	flag.Parse()

	var g generator
	g.rowIndex = map[legacyRow]int{}
	g.psIndex = map[[32]uint8]int{}
	g.avxRowIndex = map[uint64]int{}
	g.vexIndex = map[[16]uint8]int{}
	g.evexIndex = map[evexTab]int{}
	g.legacy()
	g.vex()
	g.evex()
	g.write()
}

type legacyRow struct {
	reg uint64 // bit m&63: valid with register-form ModRM byte m
	mem uint8  // bit r: valid with a memory operand and ModRM.reg r
}

type evexTab struct {
	rows [32]uint8 // by pp<<3 | W<<2 | L
	zmm  uint8     // bit pp<<1|W: some form has L = 2 (512 bits)
}

type generator struct {
	legacyOps  [2][1024]uint16
	legacyPS   [][32]uint8
	legacyRows []legacyRow
	rowIndex   map[legacyRow]int
	psIndex    map[[32]uint8]int

	avxRows     []uint64
	avxRowIndex map[uint64]int
	vexOps      [3][256]uint16
	vexTabs     [][16]uint8
	vexIndex    map[[16]uint8]int
	evexOps     [3][256]uint16
	evexTabs    []evexTab
	evexIndex   map[evexTab]int
}

// valid reports whether x86asm decodes src as an instruction.
func valid(src []byte, mode int) (x86asm.Inst, bool) {
	inst, err := x86asm.Decode(src, mode)
	return inst, err == nil && inst.Op != 0
}

// isLegacyPrefix reports whether b is one of the legacy prefixes of
// SDM vol. 2A §2.1.1.
func isLegacyPrefix(b byte) bool {
	switch b {
	case 0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x66, 0x67, 0xF0, 0xF2, 0xF3:
		return true
	}
	return false
}

// opcodeBytes returns the opcode bytes of legacy table index idx
// (map<<8 | opcode), or nil when the index is not an opcode (a prefix or
// an escape byte), which the decoder never looks up.
func opcodeBytes(idx, mode int) []byte {
	op := byte(idx)
	switch idx >> 8 {
	case 0:
		if isLegacyPrefix(op) || op == 0x0F || mode == 64 && op&0xF0 == 0x40 {
			return nil
		}
		return []byte{op}
	case 1:
		if op == 0x38 || op == 0x3A {
			return nil
		}
		return []byte{0x0F, op}
	case 2:
		return []byte{0x0F, 0x38, op}
	default:
		return []byte{0x0F, 0x3A, op}
	}
}

// prefixBytes returns the prefixes for prefix state ps (bit 0: 66, bits
// 1-2: the last of F3 (1) or F2 (2), bit 3: 67, bit 4: REX.W), or false if
// ps does not exist in mode. seg adds a segment override, which changes no
// decoding but keeps C4, C5 and 62 from being read as VEX or EVEX.
func prefixBytes(ps, mode int, seg bool) ([]byte, bool) {
	rep := ps >> 1 & 3
	if rep == 3 || mode == 32 && ps&16 != 0 {
		return nil, false
	}
	var p []byte
	if ps&1 != 0 {
		p = append(p, 0x66)
	}
	switch rep {
	case 1:
		p = append(p, 0xF3)
	case 2:
		p = append(p, 0xF2)
	}
	if ps&8 != 0 {
		p = append(p, 0x67)
	}
	if seg {
		p = append(p, 0x2E)
	}
	if ps&16 != 0 {
		p = append(p, 0x48)
	}
	return p, true
}

func (g *generator) legacy() {
	fillers := [][]byte{bytes.Repeat([]byte{0}, 16), bytes.Repeat([]byte{0xFF}, 16)}
	for mi, mode := range []int{32, 64} {
		for idx := 0; idx < 1024; idx++ {
			opb := opcodeBytes(idx, mode)
			if opb == nil {
				// A prefix or escape byte reached as an opcode: after
				// REX, a legacy prefix or another REX is invalid.
				invalid := g.legacyRow(legacyRow{})
				var tab [32]uint8
				for ps := range tab {
					tab[ps] = invalid
				}
				g.legacyOps[mi][idx] = uint16(g.psTable(tab))
				continue
			}
			op := opb[0]
			seg := len(opb) == 1 && (op == 0xC4 || op == 0xC5 || op == 0x62)
			var tab [32]uint8
			for ps := 0; ps < 32; ps++ {
				pfx, ok := prefixBytes(ps, mode, seg)
				if !ok {
					continue
				}
				var row legacyRow
				var memSeen [8]int // 0 unseen, 1 valid, 2 invalid
				for m := 0; m < 256; m++ {
					var res [2]bool
					for fi, fill := range fillers {
						src := append(append(append([]byte{}, pfx...), opb...), byte(m))
						src = append(src, fill...)
						_, res[fi] = valid(src, mode)
					}
					if res[0] != res[1] {
						log.Fatalf("mode %d % x %02x: validity depends on the bytes after ModRM", mode, append(pfx, opb...), m)
					}
					ok := res[0]
					if m>>6 == 3 {
						if ok {
							row.reg |= 1 << (m & 63)
						}
						continue
					}
					r := m >> 3 & 7
					v := 2
					if ok {
						v = 1
					}
					if memSeen[r] == 0 {
						memSeen[r] = v
					} else if memSeen[r] != v {
						log.Fatalf("mode %d % x %02x: memory-operand validity depends on more than ModRM.reg", mode, append(pfx, opb...), m)
					}
					if ok {
						row.mem |= 1 << r
					}
				}
				tab[ps] = g.legacyRow(row)
			}
			if mode == 32 {
				// REX.W does not exist; fill those states for uniformity.
				for ps := 16; ps < 32; ps++ {
					tab[ps] = tab[ps-16]
				}
			}
			for ps := 0; ps < 32; ps++ {
				if ps>>1&3 == 3 {
					tab[ps] = tab[ps&^6] // never looked up
				}
			}
			g.legacyOps[mi][idx] = uint16(g.psTable(tab))
		}
	}
}

func (g *generator) legacyRow(r legacyRow) uint8 {
	if i, ok := g.rowIndex[r]; ok {
		return uint8(i)
	}
	i := len(g.legacyRows)
	if i > 255 {
		log.Fatal("more than 256 legacy validity rows")
	}
	g.legacyRows = append(g.legacyRows, r)
	g.rowIndex[r] = i
	return uint8(i)
}

func (g *generator) psTable(t [32]uint8) int {
	if i, ok := g.psIndex[t]; ok {
		return i
	}
	i := len(g.legacyPS)
	g.legacyPS = append(g.legacyPS, t)
	g.psIndex[t] = i
	return i
}

// modrmBase returns the bytes of ModRM, SIB and displacement for ModRM
// byte m followed by a zero SIB byte, with 32- or 64-bit addressing.
func modrmBase(m byte) int {
	mod, rm := m>>6, m&7
	n := 1
	if mod != 3 && rm == 4 {
		n++ // SIB 00: base EAX, no displacement of its own
	}
	switch {
	case mod == 0 && rm == 5, mod == 2:
		n += 4
	case mod == 1:
		n++
	}
	return n
}

// avxRow asks x86asm about opcode op after the VEX or EVEX header hdr
// (with EVEX.aaa = 1 when aaa1 is set; the caller also asks with aaa = 0
// to find the forms that need a mask) and returns the row of 17 classes.
func avxRow(hdr []byte, op byte) uint64 {
	var row uint64
	classify := func(src []byte, m int) uint64 {
		inst, ok := valid(src, 64)
		if !ok {
			return 0
		}
		base := len(hdr) + 1
		if m >= 0 {
			base += modrmBase(byte(m))
		}
		switch inst.Len - base {
		case 0:
			return 1
		case 1:
			return 2
		}
		log.Fatalf("% x %02x %02x: unexpected length %d", hdr, op, m, inst.Len)
		return 0
	}
	var seen [16]int
	for m := 0; m < 256; m++ {
		src := append(append(append([]byte{}, hdr...), op, byte(m)), make([]byte, 10)...)
		v := classify(src, m)
		c := m >> 3 & 7
		if m>>6 == 3 {
			c |= 8
		}
		if seen[c] == 0 {
			seen[c] = int(v) + 1
			row |= v << (3 * c)
		} else if seen[c] != int(v)+1 {
			log.Fatalf("% x %02x %02x: validity depends on more than ModRM.mod = 3 and ModRM.reg", hdr, op, m)
		}
	}
	src := append(append([]byte{}, hdr...), op)
	row |= classify(src, -1) << (3 * 16)
	return row
}

func (g *generator) avxRowID(r uint64) uint8 {
	if i, ok := g.avxRowIndex[r]; ok {
		return uint8(i)
	}
	i := len(g.avxRows)
	if i > 255 {
		log.Fatal("more than 256 AVX validity rows")
	}
	g.avxRows = append(g.avxRows, r)
	g.avxRowIndex[r] = i
	return uint8(i)
}

// knot0 marks in row the classes that are valid in row but not in row0,
// the same forms without an EVEX mask register.
func knot0(row, row0 uint64) uint64 {
	for c := 0; c < 17; c++ {
		v, v0 := row>>(3*c)&3, row0>>(3*c)&3
		switch {
		case v == v0:
		case v != 0 && v0 == 0:
			row |= 4 << (3 * c)
		default:
			log.Fatalf("EVEX.aaa = 0 changes class %d from %d to %d", c, v, v0)
		}
	}
	return row
}

func (g *generator) vex() {
	for mp := 1; mp <= 3; mp++ {
		for op := 0; op < 256; op++ {
			var tab [16]uint8
			for pp := 0; pp < 4; pp++ {
				for w := 0; w < 2; w++ {
					for l := 0; l < 2; l++ {
						hdr := []byte{0xC4, byte(0xE0 | mp), byte(w<<7 | 0x78 | l<<2 | pp)}
						tab[pp<<2|w<<1|l] = g.avxRowID(avxRow(hdr, byte(op)))
					}
				}
			}
			i, ok := g.vexIndex[tab]
			if !ok {
				i = len(g.vexTabs)
				g.vexTabs = append(g.vexTabs, tab)
				g.vexIndex[tab] = i
			}
			g.vexOps[mp-1][op] = uint16(i)
		}
	}
}

func (g *generator) evex() {
	for mp := 1; mp <= 3; mp++ {
		for op := 0; op < 256; op++ {
			var tab evexTab
			for pp := 0; pp < 4; pp++ {
				for w := 0; w < 2; w++ {
					for l := 0; l < 4; l++ {
						hdr := func(aaa int) []byte {
							return []byte{0x62, byte(0xF0 | mp), byte(w<<7 | 0x7C | pp), byte(l<<5 | 0x08 | aaa)}
						}
						row := knot0(avxRow(hdr(1), byte(op)), avxRow(hdr(0), byte(op)))
						if l == 2 && row&(1<<51-1) != 0 {
							tab.zmm |= 1 << (pp<<1 | w)
						}
						tab.rows[pp<<3|w<<2|l] = g.avxRowID(row)
					}
				}
			}
			i, ok := g.evexIndex[tab]
			if !ok {
				i = len(g.evexTabs)
				g.evexTabs = append(g.evexTabs, tab)
				g.evexIndex[tab] = i
			}
			g.evexOps[mp-1][op] = uint16(i)
		}
	}
}

func (g *generator) write() {
	var b bytes.Buffer
	version := "(unknown version)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "golang.org/x/arch" {
				version = d.Version
			}
		}
	}
	fmt.Fprintf(&b, "// Code generated by gen.go from golang.org/x/arch/x86/x86asm %s; DO NOT EDIT.\n\n", version)
	fmt.Fprintf(&b, "package x86scan\n\n")
	fmt.Fprintf(&b, "// x86asmVersion is the x86asm release the tables were generated from.\n")
	fmt.Fprintf(&b, "const x86asmVersion = %q\n\n", version)

	fmt.Fprintf(&b, "// legacyOps indexes legacyPS by mode (0: 32-bit, 1: 64-bit) and map<<8|opcode.\n")
	fmt.Fprintf(&b, "var legacyOps = [2][1024]uint16{\n")
	for mi := range g.legacyOps {
		fmt.Fprintf(&b, "{\n")
		writeInts(&b, g.legacyOps[mi][:])
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "}\n\n")

	fmt.Fprintf(&b, "// legacyPS indexes legacyRows by prefix state (see prefixState).\n")
	fmt.Fprintf(&b, "var legacyPS = [%d][32]uint8{\n", len(g.legacyPS))
	for _, t := range g.legacyPS {
		fmt.Fprintf(&b, "{")
		writeInts(&b, t[:])
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "}\n\n")

	fmt.Fprintf(&b, "// legacyRows holds the distinct validity rows of legacy encodings.\n")
	fmt.Fprintf(&b, "var legacyRows = [%d]validRow{\n", len(g.legacyRows))
	for _, r := range g.legacyRows {
		fmt.Fprintf(&b, "{reg: %#016x, mem: %#02x},\n", r.reg, r.mem)
	}
	fmt.Fprintf(&b, "}\n\n")

	fmt.Fprintf(&b, "// vexOps indexes vexTabs by map-1 and opcode.\n")
	fmt.Fprintf(&b, "var vexOps = [3][256]uint16{\n")
	for mi := range g.vexOps {
		fmt.Fprintf(&b, "{\n")
		writeInts(&b, g.vexOps[mi][:])
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "}\n\n")

	fmt.Fprintf(&b, "// vexTabs indexes avxRows by pp<<2 | W<<1 | L.\n")
	fmt.Fprintf(&b, "var vexTabs = [%d][16]uint8{\n", len(g.vexTabs))
	for _, t := range g.vexTabs {
		fmt.Fprintf(&b, "{")
		writeInts(&b, t[:])
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "}\n\n")

	fmt.Fprintf(&b, "// evexOps indexes evexTabs by map-1 and opcode.\n")
	fmt.Fprintf(&b, "var evexOps = [3][256]uint16{\n")
	for mi := range g.evexOps {
		fmt.Fprintf(&b, "{\n")
		writeInts(&b, g.evexOps[mi][:])
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "}\n\n")

	fmt.Fprintf(&b, "// evexTabs indexes avxRows by pp<<3 | W<<2 | L'L.\n")
	fmt.Fprintf(&b, "var evexTabs = [%d]evexTab{\n", len(g.evexTabs))
	for _, t := range g.evexTabs {
		fmt.Fprintf(&b, "{zmm: %#02x, rows: [32]uint8{", t.zmm)
		writeInts(&b, t.rows[:])
		fmt.Fprintf(&b, "}},\n")
	}
	fmt.Fprintf(&b, "}\n\n")

	fmt.Fprintf(&b, "// avxRows holds the distinct validity rows of VEX and EVEX encodings.\n")
	fmt.Fprintf(&b, "var avxRows = [%d]uint64{\n", len(g.avxRows))
	for i, r := range g.avxRows {
		fmt.Fprintf(&b, "%#014x,", r)
		if i%6 == 5 {
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "\n}\n")

	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d legacy rows, %d prefix tables, %d AVX rows, %d VEX tables, %d EVEX tables",
		len(g.legacyRows), len(g.legacyPS), len(g.avxRows), len(g.vexTabs), len(g.evexTabs))
}

func writeInts[T uint8 | uint16](b *bytes.Buffer, v []T) {
	for i, x := range v {
		fmt.Fprintf(b, "%d,", x)
		if i%16 == 15 && i != len(v)-1 {
			b.WriteByte('\n')
		}
	}
}
