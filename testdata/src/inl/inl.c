/*
 * inl/inl.c - static helpers inlined into code the optimizer moves out of
 * its function, for inlined frames in moved code: a tiny statement checker
 * whose error path (GCC: a branch that calls a cold function; clang:
 * machine function splitting trained on the hot path) runs the inlined
 * helpers syntax_error and kind_name (kind_name inlined into
 * syntax_error), and a table indexed by a field (kinds[op->p5 - 1]).
 * GCC describes isView, in step's entry fragment, as a byte of the frame
 * (DW_OP_fbreg N, DW_OP_deref_size 1, DW_OP_stack_value).
 *
 * Usage:  inl        hot path only
 *         inl cold   two statements fail: "drop" (kind 4, UNIQUE) and
 *                    "alter" (kind 2, INT), each reported on stderr
 */
#include <stdio.h>
#include <string.h>

struct op {
	const char *name;
	int p1;
	unsigned char p5; /* 1-based index into kinds */
};

static const char *const kinds[] = { "NONE", "INT", "TEXT", "UNIQUE" };
int nerrors;

__attribute__((cold, noinline)) static void report(const char *msg, const char *what, int code)
{
	fprintf(stderr, "error %d: %s near %s\n", code, msg, what);
	nerrors++;
}

static inline const char *kind_name(const struct op *op)
{
	const char *k = kinds[op->p5 - 1]; /* COLD-LINE: kind_name */
	return k;
}

static inline int syntax_error(const struct op *op, int at)
{
	int code = op->p1 * 100 + at;
	report(kind_name(op), op->name, code); /* COLD-LINE: syntax_error */
	return code;
}

__attribute__((noinline)) int step(struct op *ops, int n, int at)
{
	unsigned char flags[8];
	memset(flags, 0, sizeof flags);
	for (int i = 0; i < n; i++)
		flags[i & 7] |= ops[i].p5;
	int isView = flags[2];
	struct op *op = &ops[at];
	int extra = isView > 2 ? flags[at & 7] : 0; /* HOT-LINE: isView */
	if (op->p1 < 0)
		return syntax_error(op, at);
	return op->p1 + extra;
}

int main(int argc, char **argv)
{
	int cold = argc > 1 && strcmp(argv[1], "cold") == 0;
	struct op prog[4] = {
		{ "select", 1, 1 },
		{ "drop", cold ? -3 : 3, 4 },
		{ "insert", 2, 3 },
		{ "alter", cold ? -7 : 7, 2 },
	};
	int sum = 0;
	for (int at = 0; at < 4; at++)
		sum += step(prog, 4, at);
	printf("sum=%d errors=%d\n", sum, nerrors);
	return 0;
}
