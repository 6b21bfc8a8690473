/*
 * pgo/pgo.c - GCC profile-guided hot/cold splitting WITHOUT any cold
 * attribute or __builtin_expect.
 *
 * gen.sh compiles this with -fprofile-generate, runs the training input
 * (no argument: hot path only), then recompiles with -fprofile-use.
 * Blocks that never ran during training move to the ".cold" fragment,
 * e.g. checksum -> checksum + checksum.cold, classify -> classify.cold.
 *
 * Usage:  pgo        hot path (this is also the training input)
 *         pgo cold   takes the paths that never ran during training
 */
#include <stdio.h>
#include <string.h>

static int errors;

/* Rolling checksum; the overflow branch never runs in training. */
__attribute__((noinline, noclone)) unsigned checksum(const unsigned char *p, int n)
{
	unsigned h = 2166136261u;
	for (int i = 0; i < n; i++) {
		if (p[i] == 0xff) {
			errors++; /* COLD-LINE: checksum */
			printf("checksum: escape byte at %d\n", i);
			h = (h << 7) | (h >> 25);
			continue;
		}
		h = (h ^ p[i]) * 16777619u;
	}
	return h;
}

/* Classification with a switch; only cases 0-2 run in training. */
__attribute__((noinline, noclone)) int classify(int x)
{
	switch (x % 5) {
	case 0:
		return x / 5;
	case 1:
		return x * 3;
	case 2:
		return x - 7;
	default:
		errors += 2; /* COLD-LINE: classify */
		printf("classify: unusual value %d\n", x);
		return -x;
	}
}

int main(int argc, char **argv)
{
	int cold = argc > 1 && strcmp(argv[1], "cold") == 0;
	unsigned char buf[64];
	unsigned h = 0;
	int c = 0;

	/* Enough iterations that the profile clearly marks the hot path. */
	for (int round = 0; round < 1000; round++) {
		for (int i = 0; i < 64; i++)
			buf[i] = (unsigned char)((i * 7 + round) % 200);
		if (cold && round == 999)
			buf[10] = 0xff;
		else
			buf[10] = 1;
		h ^= checksum(buf, 64);
		int x = (round % 3) * 5 + (round % 3); /* 0, 6, 12: x%5 in {0,1,2} */
		c += classify(cold && round == 999 ? 8 : x);
	}
	printf("checksum=%08x classify=%d errors=%d\n", h, c, errors);
	return 0;
}
