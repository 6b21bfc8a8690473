// A heap overflow in the cold fragment of a split function, for the
// sanitizer test of "splitdbg symbolize" (cmd/splitdbg/asan_test.go):
// GCC -O2 moves the branch that calls the cold function report into
// sum_or_report.cold, and the read past the buffer happens there.
#include <stdio.h>
#include <stdlib.h>

__attribute__((cold, noinline)) void report(const char *what, int n)
{
	fprintf(stderr, "%s: %d\n", what, n);
}

__attribute__((noinline)) long sum_or_report(const int *v, int n)
{
	long s = 0;
	if (n < 0) {
		report("negative count", n);
		return v[-n];
	}
	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	int *v = malloc(4 * sizeof *v);
	for (int i = 0; i < 4; i++)
		v[i] = i + 1;
	printf("%ld\n", sum_or_report(v, n));
	free(v);
	return 0;
}
