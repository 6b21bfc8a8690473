/*
 * clang/split.c - input for the clang-19 / clang-22 split builds.
 *
 * The same source is used twice (see testdata/gen.sh):
 *  - basic-block sections: a cluster file (clang19.clusters /
 *    clang22.clusters) lists which basic blocks of "scan" and "dispatch"
 *    stay with the entry; another listed cluster becomes "foo.__part.N"
 *    and every unlisted block goes to "foo.cold".
 *  - machine function splitting: a -fprofile-instr-generate build is
 *    run with no argument (hot path only); blocks that never ran move
 *    to "foo.cold".
 * No cold attributes are used: the split comes from the cluster file or
 * the profile alone. report() is called only once, so it is split by
 * clang-19's machine function splitter too (clang-19 estimates a count
 * of 1, not 0, for never-run blocks inside scan/dispatch and keeps them).
 *
 * Usage:  split        hot path only (also the training input)
 *         split cold   runs every COLD-LINE once
 */
#include <stdio.h>
#include <string.h>

static int rare_events;

/* A loop with a rarely taken branch. */
__attribute__((noinline)) int scan(const int *v, int n)
{
	int best = 0;
	for (int i = 0; i < n; i++) {
		if (v[i] < 0) {
			rare_events++; /* COLD-LINE: scan */
			printf("scan: negative value %d at %d\n", v[i], i);
			best -= v[i];
			continue;
		}
		if (v[i] > best)
			best = v[i];
	}
	return best;
}

/* A switch; opcode 3 and the default case never run on the hot path. */
__attribute__((noinline)) int dispatch(int op, int a, int b)
{
	switch (op) {
	case 0:
		return a + b;
	case 1:
		return a - b;
	case 2:
		return a * b;
	case 3:
		rare_events++; /* COLD-LINE: dispatch-div */
		printf("dispatch: division %d/%d\n", a, b);
		return b ? a / b : 0;
	default:
		rare_events += 10; /* COLD-LINE: dispatch-default */
		printf("dispatch: bad opcode %d\n", op);
		return -1;
	}
}

/* Called once: with a profile its never-run branch is cold for clang-19 too. */
__attribute__((noinline)) int report(int total, int cold)
{
	if (cold) {
		total += dispatch(3, 100, 7); /* COLD-LINE: report */
		total += dispatch(9, 1, 1);
		printf("report: cold run\n");
	}
	printf("total=%d rare=%d\n", total, rare_events);
	return 0;
}

int main(int argc, char **argv)
{
	int cold = argc > 1 && strcmp(argv[1], "cold") == 0;
	int v[16];
	int total = 0;

	for (int round = 0; round < 20000; round++) {
		for (int i = 0; i < 16; i++)
			v[i] = (i * 13 + round) % 97;
		if (cold && round == 19999)
			v[5] = -4;
		total += scan(v, 16);
		total += dispatch(round % 3, round, 3);
	}
	return report(total, cold);
}
