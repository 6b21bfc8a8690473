#!/usr/bin/env bash
# gen-mfs.sh [OUTDIR]: generate and build OUTDIR/mfs (default bench/out/mfs),
# the symbolizer benchmark's input: a clang-22 executable whose N (default
# 30000) functions machine-function splitting cut into fI + fI.cold, over
# UNITS (default 20) compile units. Each function calls a static inline
# helper on its hot path and on its cold one, so that the helper's inlined
# copies have ranges in both fragments. Built with the profile of a
# training run that never takes the cold branch:
#   clang -O2 -g -fprofile-instr-generate, run, llvm-profdata merge,
#   clang -O2 -g -fprofile-instr-use -fsplit-machine-functions.
# Sources go to OUTDIR/mfs-src; JOBS (default nproc) compiles at a time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out}
N=${N:-30000} UNITS=${UNITS:-20} JOBS=${JOBS:-$(nproc)}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
PROFDATA=${PROFDATA:-/usr/lib/llvm-22/bin/llvm-profdata}
[[ -x $CLANG && -x $PROFDATA ]] || { echo "gen-mfs: need clang-22 and llvm-profdata-22 (apt-get install clang-22 llvm-22)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/mfs-src
rm -rf "$src" && mkdir -p "$src"

t0=$(date +%s%N)
awk -v n="$N" -v units="$UNITS" -v dir="$src" 'BEGIN {
	per = int((n + units - 1) / units)
	print "__attribute__((noinline)) int sink(int v) { return v * 7 + 1; }" > (dir "/sink.c")
	for (u = 0; u < units; u++) {
		file = dir "/u" u ".c"
		print "int sink(int);" > file
		printf "static inline __attribute__((always_inline)) int mix(int x, int k) {\n\tint y = x * k + (x >> 3);\n\treturn y ^ (k << 2);\n}\n" > file
		for (i = u * per; i < (u + 1) * per && i < n; i++) {
			printf "int f%d(int x, int *p) {\n\tint r = mix(x, %d);\n", i, i % 97 + 3 > file
			printf "\tif (x < 0) {\n\t\tr += mix(r, %d) * p[1];\n\t\tp[0] = sink(r ^ %d);\n\t\tr = sink(p[0] + mix(p[2], %d));\n\t\tp[3] = r;\n\t}\n", i % 89 + 5, i, i % 13 + 1 > file
			printf "\treturn r * 3 + p[x & 3];\n}\n" > file
		}
		close(file)
	}
	file = dir "/main.c"
	print "#include <stdlib.h>" > file
	for (i = 0; i < n; i++)
		printf "int f%d(int, int *);\n", i > file
	printf "int (*const table[])(int, int *) = {\n" > file
	for (i = 0; i < n; i++)
		printf "\tf%d,\n", i > file
	printf "};\nint main(int argc, char **argv) {\n\tint p[4] = {1, 2, 3, 4}, s = 0;\n\tint x = argc > 1 ? atoi(argv[1]) : 1;\n" > file
	printf "\tfor (unsigned i = 0; i < sizeof table / sizeof table[0]; i++)\n\t\ts += table[i](x + (int)(i & 7), p);\n\treturn s == 42;\n}\n" > file
}'
cd "$src"
build() { # build FLAGS... -> ./mfs
	printf '%s\0' ./*.c | xargs -0 -P "$JOBS" -I{} sh -c '"$0" "$@" -c {} -o {}.o' "$CLANG" -O2 -g "$@"
	"$CLANG" -O2 -g "$@" -o mfs ./*.o
}
build -fprofile-instr-generate
t1=$(date +%s%N)
LLVM_PROFILE_FILE=$src/train.profraw ./mfs 1 || true
"$PROFDATA" merge -o train.profdata train.profraw
build -fprofile-instr-use="$src/train.profdata" -fsplit-machine-functions
cp mfs "$out/mfs"
t2=$(date +%s%N)
cold=$(nm "$out/mfs" | grep -c '\.cold$' || true)
echo "gen-mfs: instrumented build $(((t1 - t0) / 1000000)) ms, training and split build $(((t2 - t1) / 1000000)) ms"
echo "$out/mfs: $(stat -c %s "$out/mfs") bytes, $cold .cold symbols ($("$CLANG" --version | head -1))"
if ((cold < N)); then
	echo "gen-mfs: want >= $N .cold symbols, got $cold" >&2
	exit 1
fi
