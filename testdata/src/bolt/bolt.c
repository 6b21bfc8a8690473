/*
 * bolt/bolt.c - input program for the BOLT builds.
 *
 * Built twice by testdata/gen.sh with gcc -O2 -g -Wl,--emit-relocs:
 *  - bolt-input: -fno-reorder-blocks-and-partition, so GCC does NOT split;
 *    llvm-bolt (19 and 22) then splits the never-executed blocks of
 *    "tally" and "lookup" into "tally.cold.0" / "lookup.cold.0".
 *  - gcc-split input (default flags): GCC already moves the branches that
 *    call the cold function alarm() to "tally.cold" / "lookup.cold";
 *    BOLT keeps those and adds its own "*.cold.0" fragments, so a function
 *    ends up with three fragments.
 * The BOLT training run uses no argument, so only the hot path runs.
 *
 * Usage:  bolt        hot path only (also the training input)
 *         bolt cold   runs every COLD-LINE once
 */
#include <stdio.h>
#include <string.h>

static int alarms;

__attribute__((cold, noinline)) static void alarm_(const char *what, int v)
{
	alarms++;
	printf("alarm: %s %d\n", what, v);
}

/* Loop with a cold (attribute) branch and a never-run plain branch. */
__attribute__((noinline)) long tally(const int *v, int n)
{
	long sum = 0;
	for (int i = 0; i < n; i++) {
		if (v[i] < 0) {
			alarm_("tally negative", v[i]); /* COLD-LINE: tally-attr */
			continue;
		}
		if (v[i] > 5000) {
			sum -= v[i] / 3; /* COLD-LINE: tally-plain */
			sum ^= 0x55;
		}
		sum += v[i];
	}
	return sum;
}

/* Switch; cases 0-3 are hot, 4 calls the cold function, 5+ is plain. */
__attribute__((noinline)) int lookup(int key)
{
	switch (key) {
	case 0: return 11;
	case 1: return 23;
	case 2: return 37;
	case 3: return 41;
	case 4:
		alarm_("lookup key", key); /* COLD-LINE: lookup-attr */
		return -4;
	default:
		printf("lookup: unknown key %d\n", key); /* COLD-LINE: lookup-plain */
		return key * 1000;
	}
}

int main(int argc, char **argv)
{
	int cold = argc > 1 && strcmp(argv[1], "cold") == 0;
	int v[32];
	long total = 0;

	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 32; i++)
			v[i] = (i * 31 + round) % 1000;
		if (cold && round == 1999) {
			v[3] = -9;
			v[7] = 6000;
		}
		total += tally(v, 32);
		total += lookup(round & 3);
	}
	if (cold)
		total += lookup(4) + lookup(17);
	printf("total=%ld alarms=%d\n", total, alarms);
	return 0;
}
