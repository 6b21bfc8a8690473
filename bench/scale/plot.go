//go:build ignore

// The plot of the scale run: CPU time and peak RSS against the number of
// functions, log-log, one panel pair per compiler, drawn with the standard
// library only (image/png and a 3x5 pixel font below) so that the bench
// needs no plotting package.

package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"sort"
	"strings"
)

// font3x5: each glyph is 5 rows of 3 pixels, '#' set.
var font3x5 = map[rune]string{
	'0': "###|#.#|#.#|#.#|###", '1': ".#.|##.|.#.|.#.|###", '2': "###|..#|###|#..|###",
	'3': "###|..#|.##|..#|###", '4': "#.#|#.#|###|..#|..#", '5': "###|#..|###|..#|###",
	'6': "###|#..|###|#.#|###", '7': "###|..#|.#.|.#.|.#.", '8': "###|#.#|###|#.#|###",
	'9': "###|#.#|###|..#|###", 'a': ".#.|#.#|###|#.#|#.#", 'b': "##.|#.#|##.|#.#|##.",
	'c': ".##|#..|#..|#..|.##", 'd': "##.|#.#|#.#|#.#|##.", 'e': "###|#..|##.|#..|###",
	'f': "###|#..|##.|#..|#..", 'g': ".##|#..|#.#|#.#|.##", 'h': "#.#|#.#|###|#.#|#.#",
	'i': "###|.#.|.#.|.#.|###", 'j': "..#|..#|..#|#.#|.#.", 'k': "#.#|#.#|##.|#.#|#.#",
	'l': "#..|#..|#..|#..|###", 'm': "#.#|###|###|#.#|#.#", 'n': "##.|#.#|#.#|#.#|#.#",
	'o': ".#.|#.#|#.#|#.#|.#.", 'p': "##.|#.#|##.|#..|#..", 'q': ".#.|#.#|#.#|##.|.##",
	'r': "##.|#.#|##.|#.#|#.#", 's': ".##|#..|.#.|..#|##.", 't': "###|.#.|.#.|.#.|.#.",
	'u': "#.#|#.#|#.#|#.#|###", 'v': "#.#|#.#|#.#|#.#|.#.", 'w': "#.#|#.#|###|###|#.#",
	'x': "#.#|#.#|.#.|#.#|#.#", 'y': "#.#|#.#|.#.|.#.|.#.", 'z': "###|..#|.#.|#..|###",
	' ': "...|...|...|...|...", '.': "...|...|...|...|.#.", ',': "...|...|...|.#.|#..",
	'-': "...|...|###|...|...", ':': "...|.#.|...|.#.|...", '/': "..#|..#|.#.|#..|#..",
	'(': ".#.|#..|#..|#..|.#.", ')': ".#.|..#|..#|..#|.#.", '%': "#.#|..#|.#.|#..|#.#",
	'=': "...|###|...|###|...", '_': "...|...|...|...|###", '*': "...|#.#|.#.|#.#|...",
}

// text draws s at (x, y), the top left, with pixels of scale sc.
func text(img *image.RGBA, x, y, sc int, s string, c color.Color) {
	for _, r := range strings.ToLower(s) {
		g, ok := font3x5[r]
		if !ok {
			g = font3x5['*']
		}
		for row, line := range strings.Split(g, "|") {
			for col, p := range line {
				if p == '#' {
					fill(img, x+col*sc, y+row*sc, sc, sc, c)
				}
			}
		}
		x += 4 * sc
	}
}

func fill(img *image.RGBA, x, y, w, h int, c color.Color) {
	for i := x; i < x+w; i++ {
		for j := y; j < y+h; j++ {
			img.Set(i, j, c)
		}
	}
}

// line draws from (x0, y0) to (x1, y1), w pixels wide, dashed if dash > 0.
func line(img *image.RGBA, x0, y0, x1, y1 float64, w int, dash int, c color.Color) {
	n := int(math.Max(math.Abs(x1-x0), math.Abs(y1-y0))) + 1
	for i := 0; i <= n; i++ {
		if dash > 0 && (i/dash)%2 == 1 {
			continue
		}
		t := float64(i) / float64(n)
		fill(img, int(x0+t*(x1-x0))-w/2, int(y0+t*(y1-y0))-w/2, w, w, c)
	}
}

var palette = []color.RGBA{
	{0xd6, 0x27, 0x28, 255}, {0x1f, 0x77, 0xb4, 255}, {0x2c, 0xa0, 0x2c, 255}, {0xff, 0x7f, 0x0e, 255},
	{0x94, 0x67, 0xbd, 255}, {0x8c, 0x56, 0x4b, 255}, {0xe3, 0x77, 0xc2, 255}, {0x17, 0xbe, 0xcf, 255},
	{0x7f, 0x7f, 0x7f, 255}, {0xbc, 0xbd, 0x22, 255}, {0x00, 0x00, 0x00, 255}, {0x55, 0x55, 0xff, 255},
}

// plot writes a PNG with, per compiler, CPU seconds and peak RSS (MB)
// against generated functions, log-log: splitdbg's commands solid, the
// reference tools' dashed.
func plot(all []*Input, out string) error {
	var compilers []string
	names := []string{}
	seen := map[string]bool{}
	for _, in := range all {
		if !seen["cc "+in.Compiler] {
			seen["cc "+in.Compiler] = true
			compilers = append(compilers, in.Compiler)
		}
		for _, c := range in.Cmds {
			if !seen[c.Name] && len(c.Samples) > 0 {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
	}
	sort.Strings(compilers)
	const pw, ph, sc = 620, 420, 2
	legendH := 14 * sc * ((len(names) + 1) / 2)
	W, H := 2*pw, len(compilers)*ph+legendH+40
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	fill(img, 0, 0, W, H, color.White)
	colorOf := map[string]color.RGBA{}
	ref := map[string]bool{}
	for i, n := range names {
		colorOf[n] = palette[i%len(palette)]
	}
	for _, in := range all {
		for _, c := range in.Cmds {
			ref[c.Name] = c.Tool != "splitdbg"
		}
	}
	for ci, cc := range compilers {
		var ins []*Input
		for _, in := range all {
			if in.Compiler == cc {
				ins = append(ins, in)
			}
		}
		sort.Slice(ins, func(i, j int) bool { return ins[i].Functions < ins[j].Functions })
		for pi, what := range []string{"cpu s", "peak rss mb"} {
			x0, y0 := pi*pw+70, ci*ph+40
			w, h := pw-100, ph-90
			get := func(s Sample) float64 {
				if pi == 0 {
					return s.CPU
				}
				return float64(s.RSS) / 1024
			}
			// Ranges over all series of this compiler.
			fmin, fmax, vmin, vmax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
			for _, in := range ins {
				fmin, fmax = math.Min(fmin, float64(in.Functions)), math.Max(fmax, float64(in.Functions))
				for _, c := range in.Cmds {
					if v := get(Median(c.Samples)); v > 0 {
						vmin, vmax = math.Min(vmin, v), math.Max(vmax, v)
					}
				}
			}
			if math.IsInf(vmin, 0) || fmin == fmax {
				continue
			}
			lvmin, lvmax := math.Floor(math.Log10(vmin)), math.Ceil(math.Log10(vmax))
			if lvmin == lvmax {
				lvmax++
			}
			lfmin, lfmax := math.Log10(fmin)-0.05, math.Log10(fmax)+0.05
			px := func(f float64) float64 { return float64(x0) + (math.Log10(f)-lfmin)/(lfmax-lfmin)*float64(w) }
			py := func(v float64) float64 { return float64(y0+h) - (math.Log10(v)-lvmin)/(lvmax-lvmin)*float64(h) }
			grey := color.RGBA{0xdd, 0xdd, 0xdd, 255}
			for e := lvmin; e <= lvmax; e++ {
				y := py(math.Pow(10, e))
				line(img, float64(x0), y, float64(x0+w), y, 1, 0, grey)
				text(img, x0-60, int(y)-5, sc, trim(math.Pow(10, e)), color.Black)
			}
			for _, in := range ins {
				x := px(float64(in.Functions))
				line(img, x, float64(y0), x, float64(y0+h), 1, 0, grey)
				text(img, int(x)-12, y0+h+8, sc, fmt.Sprintf("%dk", in.Functions/1000), color.Black)
			}
			line(img, float64(x0), float64(y0+h), float64(x0+w), float64(y0+h), 2, 0, color.Black)
			line(img, float64(x0), float64(y0), float64(x0), float64(y0+h), 2, 0, color.Black)
			text(img, x0, y0-22, sc, fmt.Sprintf("%s: %s, median, against functions", cc, what), color.Black)
			for _, n := range names {
				var prevX, prevY float64
				first := true
				for _, in := range ins {
					for _, c := range in.Cmds {
						if c.Name != n {
							continue
						}
						v := get(Median(c.Samples))
						if v <= 0 {
							continue
						}
						x, y := px(float64(in.Functions)), py(v)
						fill(img, int(x)-4, int(y)-4, 8, 8, colorOf[n])
						if !first {
							dash := 0
							if ref[n] {
								dash = 8
							}
							line(img, prevX, prevY, x, y, 3, dash, colorOf[n])
						}
						prevX, prevY, first = x, y, false
					}
				}
			}
		}
	}
	// Legend.
	y := len(compilers)*ph + 10
	for i, n := range names {
		x := (i % 2) * pw
		yy := y + (i/2)*14*sc
		dash := 0
		if ref[n] {
			dash = 8
		}
		line(img, float64(x+20), float64(yy+5), float64(x+70), float64(yy+5), 3, dash, colorOf[n])
		tool := "splitdbg "
		if ref[n] {
			tool = ""
		}
		text(img, x+80, yy, sc, tool+n, color.Black)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func trim(v float64) string {
	s := fmt.Sprintf("%g", v)
	return strings.TrimSuffix(s, ".0")
}
