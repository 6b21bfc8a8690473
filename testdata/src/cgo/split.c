/*
 * cgo/split.c - C code compiled by cgo with plain -O2 -g (CGO_CFLAGS).
 *
 * GCC's hot/cold partitioning is on by default at -O2 and splits every
 * branch that calls the cold function c_report(), so the binary contains
 * c_classify + c_classify.cold and c_accumulate + c_accumulate.cold next
 * to Go code (and Go's own runtime/cgo x_cgo_munmap.cold).
 */
#include <stdio.h>
#include "split.h"

static int c_reports;

__attribute__((cold, noinline)) static void c_report(const char *what, int v)
{
	c_reports++;
	printf("c: cold %s %d\n", what, v);
	fflush(stdout); /* keep ordering with Go's unbuffered stdout */
}

/* Split: the negative branch is cold. */
int c_classify(int x)
{
	if (x < 0) {
		c_report("classify", x); /* COLD-LINE: c_classify */
		return -1;
	}
	return x % 3;
}

/* Split: a loop with a cold branch inside. */
long c_accumulate(int n, int cold)
{
	long s = 0;
	for (int i = 0; i < n; i++) {
		if (cold && i == n - 1) {
			c_report("accumulate", i); /* COLD-LINE: c_accumulate */
			s = -s;
		}
		s += (long)i * c_classify(i);
	}
	return s + c_reports;
}
