/*
 * gcccold/a.c - defines a *static* split function "helper".
 * b.c defines another static function with the same name; both get a
 * "helper.cold" fragment, and a debugger must keep the two apart
 * (they differ by compile unit: a.c vs b.c).
 */
#include <stdio.h>

__attribute__((cold, noinline)) static void a_cold(int x)
{
	printf("cold: a.c helper %d\n", x);
}

/* noinline+noclone keep the name "helper" (no helper.constprop.0 clone). */
__attribute__((noinline, noclone)) static int helper(int x)
{
	int r = x * 3;
	if (x < 0) {
		a_cold(x); /* COLD-LINE: a-helper */
		r = -r;
	}
	return r + 1;
}

int a_entry(int x)
{
	return helper(x) + helper(x + 1);
}
