/*
 * vars/vars.c - a split function whose moved code has locals of many C
 * types, for reading variables in moved frames (adapter/locals).
 *
 * gcc -O2 -g moves the branch that calls the cold function note() into
 * inspect.cold. Every local escapes to the opaque sink(), so its value is
 * in memory at the cold line; the arguments stay in registers or are
 * known from the call site (DW_OP_entry_value).
 *
 * Usage:  vars        hot path only
 *         vars cold   runs the cold line
 */
#include <stdio.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE };

struct point {
	int x, y;
	double weight;
	const char *label;
	enum color color;
	unsigned char tag;
};

typedef struct point point_t;

__attribute__((noinline)) void sink(const void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((cold, noinline)) static void note(const char *what, int n)
{
	printf("note: %s %d\n", what, n);
}

__attribute__((noinline)) int inspect(int n, const char *name, const point_t *pt)
{
	point_t local = *pt;
	int arr[4] = { n, n + 1, n + 2, n + 3 };
	float ratio = (float)n / 4;
	unsigned long big = 1ul << 40;
	enum color col = BLUE;
	const char *msg = "moved";
	sink(&local), sink(arr), sink(&ratio), sink(&big), sink(&col), sink(&msg);
	if (n > 100) {
		note(msg, local.x + arr[3]); /* COLD-LINE: inspect */
		sink(&local);
		return local.y;
	}
	return local.x + arr[2] + (int)ratio + (int)big + col;
}

int main(int argc, char **argv)
{
	int cold = argc > 1 && strcmp(argv[1], "cold") == 0;
	point_t p = { 3, -4, 2.5, "origin", GREEN, 200 };
	int r = inspect(cold ? 123 : 7, "first", &p);
	printf("inspect=%d\n", r);
	return 0;
}
