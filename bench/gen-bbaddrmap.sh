#!/usr/bin/env bash
# gen-bbaddrmap.sh [OUTDIR]: generate and build OUTDIR/bbaddrmap (default
# bench/out/bbaddrmap), the benchmark input of splitinfo/bbaddrmap: an
# executable with a large .llvm_bb_addr_map from clang-22
# -fbasic-block-address-map (map version 5). N (default 20000) functions
# over UNITS (default 20) compile units; each is a switch of CASES
# (default 30) cases that call different external functions, so that
# every case stays a basic block (about 29 blocks per function, 580,000
# with the defaults). Sources go to OUTDIR/bbaddrmap-src. Compiles with
# -O2, JOBS (default nproc) at a time: about 3 CPU-minutes.
#
#   bench/gen-bbaddrmap.sh && go test -run '^$' -bench . ./splitinfo/bbaddrmap/
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out}
N=${N:-20000} UNITS=${UNITS:-20} CASES=${CASES:-30} JOBS=${JOBS:-$(nproc)}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
READOBJ=${READOBJ:-/usr/lib/llvm-22/bin/llvm-readobj}
[[ -x $CLANG ]] || { echo "gen-bbaddrmap: $CLANG missing (apt-get install clang-22 llvm-22)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/bbaddrmap-src
rm -rf "$src" && mkdir -p "$src"

t0=$(date +%s%N)
# sinks.c: the external functions the cases call (noinline, in their own
# unit, so no case can be folded into another or into a table).
awk -v cases="$CASES" 'BEGIN {
	for (k = 0; k < cases; k++)
		printf "__attribute__((noinline)) int sink%d(int v) { return v * %d + %d; }\n", k, k + 3, k
}' >"$src/sinks.c"
# uK.c: functions f(K*per) .. f(K*per+per-1), each a switch whose cases
# call different sinks (a jump table and CASES blocks, each with a call).
awk -v n="$N" -v units="$UNITS" -v cases="$CASES" -v dir="$src" 'BEGIN {
	per = int((n + units - 1) / units)
	for (u = 0; u < units; u++) {
		file = dir "/u" u ".c"
		for (k = 0; k < cases; k++)
			printf "int sink%d(int);\n", k > file
		for (i = u * per; i < (u + 1) * per && i < n; i++) {
			printf "int f%d(int x, int *p) {\n\tint r = %d;\n\tswitch ((x * %d) %% %d) {\n", i, i, i % 7 + 1, cases > file
			for (k = 0; k < cases; k++)
				printf "\tcase %d: r += sink%d(x + p[%d]); break;\n", k, (k + i) % cases, k % 4 > file
			printf "\tdefault: r ^= p[x & 3];\n\t}\n\tif (r < 0)\n\t\tp[0] = r;\n\treturn r;\n}\n" > file
		}
		close(file)
	}
	# main.c: calls every function through a table, so none is dropped.
	file = dir "/main.c"
	for (i = 0; i < n; i++)
		printf "int f%d(int, int *);\n", i > file
	printf "typedef int (*fn)(int, int *);\nstatic fn table[] = {\n" > file
	for (i = 0; i < n; i++)
		printf "\tf%d,\n", i > file
	printf "};\nint main(int argc, char **argv) {\n\tint p[4] = {1, 2, 3, 4}, r = 0;\n\t(void)argv;\n" > file
	printf "\tfor (unsigned i = 0; i < sizeof table / sizeof table[0]; i++)\n\t\tr += table[i](argc, p);\n\treturn r & 1;\n}\n" > file
}'
t1=$(date +%s%N)
cd "$src"
printf '%s\0' ./*.c | xargs -0 -P "$JOBS" -n 1 "$CLANG" -O2 -fbasic-block-address-map -c
t2=$(date +%s%N)
"$CLANG" -o "$out/bbaddrmap" ./*.o
t3=$(date +%s%N)

ms() { echo $((($2 - $1) / 1000000)); }
echo "generate: $(ms "$t0" "$t1") ms, compile (-P$JOBS): $(ms "$t1" "$t2") ms, link: $(ms "$t2" "$t3") ms"
size=$((16#$(readelf -SW "$out/bbaddrmap" | awk '$2 == ".llvm_bb_addr_map" { print $6 }')))
echo "$out/bbaddrmap: $(stat -c %s "$out/bbaddrmap") bytes, .llvm_bb_addr_map $size bytes ($("$CLANG" --version | head -1))"
if [[ -x $READOBJ ]]; then
	"$READOBJ" --bb-addr-map "$out/bbaddrmap" 2>/dev/null |
		awk '/^  Function \{/ { f++ } /^ +ID: / { b++ } END { printf "%d functions, %d blocks (llvm-readobj)\n", f, b }'
fi
"$out/bbaddrmap" >/dev/null || true # smoke run; the exit status is data-dependent
