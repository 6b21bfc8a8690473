#!/usr/bin/env bash
# gen-large.sh [OUTDIR]: generate and build OUTDIR/large, a PIE with N
# (default 20000) GCC-split functions fI + fI.cold over UNITS (default 20)
# compile units, plus static split functions local_K with the same names in
# every unit. Sources go to OUTDIR/src. Compiles with gcc -O2 -g, -j2.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
out=${1:-$here/out}
N=${N:-20000} UNITS=${UNITS:-20} JOBS=${JOBS:-$(nproc)} CC=${CC:-gcc}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/src
rm -rf "$src" && mkdir -p "$src"

t0=$(date +%s%N)
(cd "$repo" && go run ./bench/genlarge/main.go -n "$N" -units "$UNITS" -o "$src")
t1=$(date +%s%N)
cd "$src"
printf '%s\0' ./*.c | xargs -0 -P "$JOBS" -n 1 "$CC" -O2 -g -c
t2=$(date +%s%N)
"$CC" -O2 -g -o "$out/large" ./*.o
t3=$(date +%s%N)

ms() { echo $(( ($2 - $1) / 1000000 )); }
cold=$(nm "$out/large" | grep -c '\.cold$' || true)
echo "generate: $(ms "$t0" "$t1") ms, compile (-P$JOBS): $(ms "$t1" "$t2") ms, link: $(ms "$t2" "$t3") ms"
echo "$out/large: $(stat -c %s "$out/large") bytes, $cold .cold symbols ($CC $("$CC" -dumpfullversion))"
if (( cold < N )); then
	echo "gen-large: want >= $N .cold symbols, got $cold" >&2
	exit 1
fi
"$out/large" 16 || true # smoke run; exit status is data-dependent
