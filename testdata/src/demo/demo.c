/*
 * demo/demo.c - the smallest useful GCC split binary (embedded into
 * internal/demo as data/demo).
 *
 * gcc -O2 -g moves each branch that calls the cold function warn()
 * into a separate fragment, so this file yields two split functions:
 *   scale  -> scale + scale.cold
 *   sum    -> sum   + sum.cold
 *
 * Usage:  demo        hot path only
 *         demo cold   runs both cold lines
 */
#include <stdio.h>
#include <string.h>

__attribute__((cold, noinline)) static void warn(const char *msg, int v)
{
	printf("warning: %s (%d)\n", msg, v);
}

/* Split function #1: one cold block. */
__attribute__((noinline)) int scale(int x, int k)
{
	if (k == 0) {
		warn("scale by zero", x); /* COLD-LINE: scale */
		return x;
	}
	return x * k + 1;
}

/* Split function #2: cold block inside a loop. */
__attribute__((noinline)) int sum(const int *v, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++) {
		if (v[i] < 0) {
			warn("negative element", v[i]); /* COLD-LINE: sum */
			continue;
		}
		s += v[i];
	}
	return s;
}

int main(int argc, char **argv)
{
	int cold = argc > 1 && strcmp(argv[1], "cold") == 0;
	int v[4] = { 1, 2, cold ? -3 : 3, 4 };
	int s = sum(v, 4);
	int r = scale(s, cold ? 0 : 2);
	printf("sum=%d scale=%d\n", s, r);
	return 0;
}
