/*
 * mip/main.c - the driver of the MIP test program: for each argument it
 * calls the instrumented functions of instrumented.S and prints what they
 * return, so a test can run it with chosen inputs and compare the coverage
 * in the raw profile with the blocks those inputs take.
 *
 * Usage:  mip ARG...      for each ARG: classify(atoi(ARG)),
 *                         sum_to(atoi(ARG)), count_digits(ARG)
 * With no argument nothing instrumented runs. unused() is never called.
 * At exit mipruntime.c writes the raw profile to $MIP_RAW_FILE
 * (default.mipraw when unset).
 */
#include <stdio.h>
#include <stdlib.h>

int classify(int x);
int sum_to(int n);
int count_digits(const char *s);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		int v = atoi(argv[i]);
		int c = classify(v);
		int s = sum_to(v);
		int d = count_digits(argv[i]);
		printf("%s: classify=%d sum_to=%d count_digits=%d\n", argv[i], c, s, d);
	}
	return 0;
}
