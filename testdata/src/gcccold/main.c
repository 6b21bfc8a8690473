/*
 * gcccold/main.c - GCC hot/cold partitioning across several compile units.
 *
 * Built with gcc -O2 -g (see testdata/gen.sh) from main.c, a.c and b.c.
 * Without a profile GCC only moves a branch into the ".cold" fragment when
 * the branch calls a function declared __attribute__((cold)), so every
 * rarely-taken path below calls note_cold().
 *
 * Split functions in this file:
 *   process  - global, a loop around a switch; one switch case is cold.
 *   validate - global, two separate cold blocks (both end up in validate.cold).
 * a.c and b.c each add a *static* split function named helper.
 *
 * Usage:  prog          hot path only
 *         prog cold     every cold line below is executed once
 */
#include <stdio.h>
#include <string.h>

int a_entry(int x); /* a.c */
int b_entry(int x); /* b.c */

static int cold_count;

/* The cold attribute is what makes GCC split the callers' branches. */
__attribute__((cold, noinline)) static void note_cold(const char *what, int v)
{
	cold_count++;
	printf("cold: %s %d\n", what, v);
}

/* Global split function with a loop and a switch. */
__attribute__((noinline)) int process(const int *v, int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++) {
		switch (v[i] & 3) {
		case 0:
			sum += v[i];
			break;
		case 1:
			sum -= 1;
			break;
		case 2:
			sum = sum * 2 + 1;
			break;
		default:
			if (v[i] > 1000) {
				note_cold("process big", v[i]); /* COLD-LINE: process */
				sum = -sum;
			}
			sum ^= v[i];
			break;
		}
	}
	return sum;
}

/* One function, two distinct cold blocks. */
__attribute__((noinline)) int validate(int x, int y)
{
	int r = x + y;
	if (x < 0) {
		note_cold("validate x", x); /* COLD-LINE: validate-x */
		r = 0;
	}
	r *= 3;
	if (y > 1000) {
		note_cold("validate y", y); /* COLD-LINE: validate-y */
		r = -1;
	}
	return r + 1;
}

int main(int argc, char **argv)
{
	int cold = argc > 1 && strcmp(argv[1], "cold") == 0;
	int hot_in[] = { 4, 5, 6, 7, 8, 9, 10, 11 };
	int cold_in[] = { 4, 5, 6, 7, 1003, 9, 10, 11 };

	int p = process(cold ? cold_in : hot_in, 8);
	int v = cold ? validate(-2, 2000) : validate(2, 3);
	int a = a_entry(cold ? -7 : 7);
	int b = b_entry(cold ? 500 : 5);
	printf("process=%d validate=%d a=%d b=%d cold_count=%d\n", p, v, a, b,
	       cold_count);
	return 0;
}
