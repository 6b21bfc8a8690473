/*
 * inv/inv.c - a small inventory for debugging inside moved code: three
 * functions whose error paths GCC (a branch that calls a cold function)
 * and clang (machine function splitting trained on the hot path) move
 * into X.cold, with globals, a file static, a function static and a
 * struct pointer to look at from there.
 *
 * Usage:  inv        hot path only
 *         inv cold   every error path; withdraw's runs four times, with
 *                    shortfalls 3, 1, 4 and 6 (each printed on stderr)
 */
#include <stdio.h>
#include <string.h>

struct item {
	const char *name;
	int qty;
	int price;
};

struct item stock[4] = {
	{ "bolt", 10, 3 },
	{ "nut", 2, 1 },
	{ "gear", 0, 40 },
	{ "cog", 5, 12 },
};
int nstock = 4;
int backorder;
static int failures;

__attribute__((cold, noinline)) static void complain(const char *what, const struct item *it, int n)
{
	fprintf(stderr, "cannot %s: %s short by %d\n", what, it->name, n);
	failures++;
}

__attribute__((noinline)) int withdraw(int idx, int n)
{
	struct item *it = &stock[idx];
	if (it->qty < n) {
		int shortfall = n - it->qty;
		complain("withdraw", it, shortfall); /* COLD-LINE: withdraw */
		backorder += shortfall;
		return -shortfall;
	}
	it->qty -= n;
	return n;
}

__attribute__((noinline)) int value(int idx)
{
	static int calls;
	const struct item *it = &stock[idx];
	calls++;
	if (it->qty <= 0) {
		complain("value", it, calls); /* COLD-LINE: value */
		return 0;
	}
	return it->qty * it->price;
}

__attribute__((noinline)) int audit(int from, int to)
{
	int total = 0;
	for (int i = from; i < to; i++) {
		int v = value(i);
		total += v;
	}
	return total;
}

int main(int argc, char **argv)
{
	int cold = argc > 1 && strcmp(argv[1], "cold") == 0;
	int got = 0;
	got += withdraw(0, 1);
	got += withdraw(1, 1);
	got += withdraw(3, 2);
	if (cold) {
		got += withdraw(1, 4); /* nut: 1 left, short by 3 */
		got += withdraw(2, 1); /* gear: none, short by 1 */
		got += withdraw(3, 7); /* cog: 3 left, short by 4 */
		got += withdraw(0, 15); /* bolt: 9 left, short by 6 */
	}
	int worth = cold ? audit(0, nstock) : audit(0, 2) + value(3);
	printf("got=%d worth=%d failures=%d backorder=%d\n", got, worth, failures, backorder);
	return 0;
}
