//go:build ignore

// genlarge writes C sources for a large benchmark binary: -n distinct
// global functions fI that GCC -O2 splits into fI + fI.cold (each calls the
// cold sink_fail on an unlikely path; some on two paths), spread over -units
// compile units, plus -statics static split functions per unit that share
// their names across units, and a main.c that calls every function through
// function-pointer tables so nothing is dropped.
//
//	go run bench/genlarge/main.go -n 20000 -units 20 -o DIR
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

func main() {
	n := flag.Int("n", 20000, "global split functions")
	units := flag.Int("units", 20, "compile units")
	statics := flag.Int("statics", 10, "static split functions per unit, same names in every unit")
	out := flag.String("o", "", "output directory")
	flag.Parse()
	if *out == "" || *n < 1 || *units < 1 {
		log.Fatal("usage: genlarge [-n N] [-units U] [-statics S] -o DIR")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	const proto = "int %s(int *a, int n)"
	write := func(name string, body func(w *bufio.Writer)) {
		f, err := os.Create(filepath.Join(*out, name))
		if err != nil {
			log.Fatal(err)
		}
		w := bufio.NewWriter(f)
		body(w)
		if err := w.Flush(); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
	write("common.h", func(w *bufio.Writer) {
		fmt.Fprintln(w, "extern void sink_fail(int id, int v) __attribute__((cold, noinline));")
		fmt.Fprintln(w, "extern volatile int sink_count;")
		fmt.Fprintln(w, "typedef int (*fn_t)(int *, int);")
	})
	write("sink.c", func(w *bufio.Writer) {
		fmt.Fprintln(w, "#include <stdio.h>\n#include \"common.h\"\nvolatile int sink_count;")
		w.WriteString("void sink_fail(int id, int v) { sink_count++; if (v == 123456789) fprintf(stderr, \"fail %d\\n\", id); }\n")
	})
	for u := 0; u < *units; u++ {
		write(fmt.Sprintf("unit%02d.c", u), func(w *bufio.Writer) {
			fmt.Fprintln(w, "#include \"common.h\"")
			for s := 0; s < *statics; s++ {
				fmt.Fprintf(w, "static __attribute__((noinline)) "+proto+" {\n", fmt.Sprintf("local_%d", s))
				body(w, u*1000+s, s)
			}
			fmt.Fprintf(w, "fn_t unit%02d_locals[] = {", u)
			for s := 0; s < *statics; s++ {
				fmt.Fprintf(w, "local_%d, ", s)
			}
			fmt.Fprintln(w, "0};")
			for i := u; i < *n; i += *units {
				fmt.Fprintf(w, proto+" {\n", fmt.Sprintf("f%d", i))
				body(w, i, i / *units)
			}
		})
	}
	write("main.c", func(w *bufio.Writer) {
		fmt.Fprintln(w, "#include <stdlib.h>\n#include \"common.h\"")
		for i := 0; i < *n; i++ {
			fmt.Fprintf(w, proto+";\n", fmt.Sprintf("f%d", i))
		}
		for u := 0; u < *units; u++ {
			fmt.Fprintf(w, "extern fn_t unit%02d_locals[];\n", u)
		}
		fmt.Fprintln(w, "static const fn_t tab[] = {")
		for i := 0; i < *n; i++ {
			fmt.Fprintf(w, "f%d,\n", i)
		}
		fmt.Fprintln(w, "};\nstatic fn_t *const locals[] = {")
		for u := 0; u < *units; u++ {
			fmt.Fprintf(w, "unit%02d_locals,\n", u)
		}
		fmt.Fprintln(w, `};
int main(int argc, char **argv) {
  int a[64], n = argc > 1 ? atoi(argv[1]) : 16;
  long s = 0;
  if (n > 64) n = 64;
  for (int i = 0; i < 64; i++) a[i] = i * 3 - argc;
  for (unsigned i = 0; i < sizeof tab / sizeof tab[0]; i++) s += tab[i](a, n);
  for (unsigned u = 0; u < sizeof locals / sizeof locals[0]; u++)
    for (fn_t *p = locals[u]; *p; p++) s += (*p)(a, n);
  return (int)(s & 1) + sink_count;
}`)
	})
}

// body writes the rest of a function (after its opening brace) whose
// shape is picked by v and whose constants come from id, so that no two
// functions are identical (GCC's -fipa-icf would fold them). Every shape
// calls sink_fail on an unlikely path; shapes 2 and 4 on two paths.
func body(w *bufio.Writer, id, v int) {
	k := id%97 + 3
	switch v % 5 {
	case 0: // loop, one cold site
		fmt.Fprintf(w, `  int s = %d;
  for (int j = 0; j < n; j++) {
    if (a[j] < -%d) { sink_fail(%d, a[j]); s -= %d; }
    s += (a[j] * %d) ^ (s >> 2);
  }
  return s;
}
`, id, k, id, k, k*2+1)
	case 1: // switch, cold case
		fmt.Fprintf(w, `  switch ((n + %d) & 7) {
  case 0: return a[0] + %d;
  case 1: return a[1] * %d;
  case 2: return a[0] ^ %d;
  case 3: if (a[2] > %d) { sink_fail(%d, a[2]); return -1; } return a[2] - %d;
  case 5: return a[3] + a[4] * %d;
  default: return n * %d;
  }
}
`, id, id, k, id*7, 1000+k, id, k, k, id%13+2)
	case 2: // guard plus loop: two cold sites
		fmt.Fprintf(w, `  long s = %d;
  if (n > 1000 + %d) { sink_fail(%d, n); return 0; }
  for (int j = 0; j < n; j++) {
    s = s * %d + a[j];
    if (s > %dL * 1000000L) { sink_fail(%d, (int)s); s = 0; }
  }
  return (int)s;
}
`, id, k, id, k, k, id)
	case 3: // nested loops, cold site in the inner loop
		fmt.Fprintf(w, `  int s = 0;
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j += %d) {
      s += a[i] * a[j] + %d;
      if (a[j] == %d) sink_fail(%d, i);
    }
  return s;
}
`, k%4+1, id, -1000-k, id)
	case 4: // while loop with a switch, two cold sites
		fmt.Fprintf(w, `  int s = %d, j = 0;
  while (j < n) {
    switch (a[j] & 3) {
    case 0: s += %d; break;
    case 1: s ^= a[j]; break;
    case 2: if (a[j] > %d) sink_fail(%d, a[j]); s -= 1; break;
    default: s *= 3;
    }
    j++;
  }
  if (s == %d) sink_fail(%d, s);
  return s;
}
`, id, k, 5000+k, id, -7777-id, id)
	}
}
