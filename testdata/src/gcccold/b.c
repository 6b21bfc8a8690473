/*
 * gcccold/b.c - a second *static* split function named "helper"
 * (same name as the one in a.c, different body and cold condition).
 */
#include <stdio.h>

__attribute__((cold, noinline)) static void b_cold(int x)
{
	printf("cold: b.c helper %d\n", x);
}

__attribute__((noinline, noclone)) static int helper(int x)
{
	int r = x + 100;
	if (x > 100) {
		b_cold(x); /* COLD-LINE: b-helper */
		r = 0;
	}
	return r * 2;
}

int b_entry(int x)
{
	return helper(x) - 1;
}
