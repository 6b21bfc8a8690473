#!/usr/bin/env bash
# gen-bat.sh [OUTDIR]: generate and build OUTDIR/bat/bat-bolt22 (default
# OUTDIR: bench/out, gitignored), a BOLT-22 output with N (default 6000)
# functions, every one of them run by the training input and split by BOLT
# into fI + fI.cold.0, with a BOLT Address Translation note (-enable-bat).
# The benchmarks of splitinfo/bat use it (they skip when it is absent).
#
# Steps: generate C (UNITS units, default 12) into OUTDIR/bat/src; gcc -O2
# -Wl,--emit-relocs (no cold attributes, so GCC splits nothing: BOLT does
# all the splitting); llvm-bolt-22 -instrument; run the instrumented binary
# (hot paths only); llvm-bolt-22 -data -reorder-blocks=ext-tsp
# -split-functions -split-all-cold -enable-bat. OUTDIR/bat/bat-input is the
# input binary. Needs gcc, nm and bolt-22 (/usr/lib/llvm-22/bin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out}
N=${N:-6000} UNITS=${UNITS:-12} JOBS=${JOBS:-$(nproc)} CC=${CC:-gcc}
BOLT=${BOLT:-/usr/lib/llvm-22/bin/llvm-bolt}
[[ -x $BOLT ]] || { echo "gen-bat: $BOLT missing (apt-get install bolt-22)" >&2; exit 1; }
mkdir -p "$out/bat"
dir=$(cd "$out/bat" && pwd)
src=$dir/src
rm -rf "$src" && mkdir -p "$src"
ms() { echo $(( ($2 - $1) / 1000000 )); }

t0=$(date +%s%N)
# Function I: a loop with a switch, a never-taken branch that calls an
# external function (BOLT moves it to fI.cold.0) and a never-taken tail.
cat >"$src/bat.h" <<'EOF'
long report(int id, long x);
EOF
awk -v n="$N" -v units="$UNITS" -v dir="$src" 'BEGIN {
	for (u = 0; u < units; u++) {
		f = sprintf("%s/unit%02d.c", dir, u)
		print "#include \"bat.h\"" > f
		for (i = u; i < n; i += units) {
			printf "__attribute__((noinline)) long f%d(const int *v, int n)\n{\n", i > f
			printf "\tlong s = %d;\n\tfor (int i = 0; i < n; i++) {\n\t\tint x = v[i] ^ %d;\n", i, i % 251 > f
			printf "\t\tif (x < -1000000) {\n\t\t\ts -= report(%d, x);\n\t\t\ts ^= (long)x * %d;\n\t\t\tcontinue;\n\t\t}\n", i, 2 * i + 1 > f
			printf "\t\tswitch ((x + %d) & 3) {\n", i > f
			printf "\t\tcase 0: s += x; break;\n\t\tcase 1: s -= x >> 1; break;\n\t\tcase 2: s ^= x * %d; break;\n\t\tdefault: s += %d; break;\n\t\t}\n\t}\n", i % 7 + 3, i > f
			printf "\tif (s == %d)\n\t\ts += report(-%d, s);\n\treturn s;\n}\n", 123456789 + i, i > f
		}
		close(f)
	}
	f = dir "/main.c"
	print "#include <stdio.h>\n#include <string.h>\n#include \"bat.h\"" > f
	for (i = 0; i < n; i++)
		printf "long f%d(const int *, int);\n", i > f
	print "typedef long (*fn)(const int *, int);\nstatic const fn fns[] = {" > f
	for (i = 0; i < n; i++)
		printf "\tf%d,\n", i > f
	print "};" > f
	print "long report(int id, long x)\n{\n\tprintf(\"report %d %ld\\n\", id, x);\n\treturn x / 3;\n}" > f
	print "int main(int argc, char **argv)\n{\n\tint v[16];\n\tlong total = 0;" > f
	print "\tint cold = argc > 1 && strcmp(argv[1], \"cold\") == 0;" > f
	print "\tfor (int r = 0; r < 4; r++) {\n\t\tfor (int i = 0; i < 16; i++)\n\t\t\tv[i] = i * 37 + r;" > f
	print "\t\tif (cold && r == 3)\n\t\t\tv[5] = -2000000;" > f
	print "\t\tfor (unsigned k = 0; k < sizeof fns / sizeof fns[0]; k++)\n\t\t\ttotal += fns[k](v, 16);\n\t}" > f
	print "\tprintf(\"total=%ld\\n\", total);\n\treturn 0;\n}" > f
}'
t1=$(date +%s%N)
cd "$src"
printf '%s\0' ./*.c | xargs -0 -P "$JOBS" -n 1 "$CC" -O2 -c
"$CC" -O2 -Wl,--emit-relocs -o "$dir/bat-input" ./*.o
t2=$(date +%s%N)
cd "$dir"
"$BOLT" bat-input -instrument -instrumentation-file="$dir/bat.fdata" -o bat-input.inst >inst.log 2>&1 ||
	{ cat inst.log >&2; exit 1; }
rm -f bat.fdata
./bat-input.inst >/dev/null
[[ -s bat.fdata ]] || { echo "gen-bat: the instrumented run wrote no profile" >&2; exit 1; }
t3=$(date +%s%N)
"$BOLT" bat-input -o bat-bolt22 -data=bat.fdata -reorder-blocks=ext-tsp \
	-split-functions -split-all-cold -enable-bat >opt.log 2>&1 || { cat opt.log >&2; exit 1; }
t4=$(date +%s%N)
rm -f bat-input.inst
[[ $(./bat-bolt22) == "$(./bat-input)" ]] || { echo "gen-bat: bat-bolt22 prints something else than its input" >&2; exit 1; }
[[ $(./bat-bolt22 cold) == "$(./bat-input cold)" ]] || { echo "gen-bat: bat-bolt22 cold run differs" >&2; exit 1; }

cold=$(nm bat-bolt22 | grep -c '\.cold\.0$' || true)
echo "generate: $(ms "$t0" "$t1") ms, compile+link (-P$JOBS): $(ms "$t1" "$t2") ms, instrument+train: $(ms "$t2" "$t3") ms, optimize: $(ms "$t3" "$t4") ms"
echo "$dir/bat-bolt22: $(stat -c %s bat-bolt22) bytes, $cold .cold.0 fragments, $(grep -h 'BAT maps' opt.log | sed 's/^BOLT-INFO: //')"
if ((cold < N)); then
	echo "gen-bat: want >= $N split functions, got $cold" >&2
	exit 1
fi
