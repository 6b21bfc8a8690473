#!/usr/bin/env bash
# compare-symbolize.sh [BIN] [COUNT]: COUNT (default 1000000) addresses in
# BIN's function symbols (default bench/out/mfs from gen-mfs.sh), half in
# .cold fragments, sent on standard input to
#   splitdbg symbolize   --obj=BIN --inlining --output-style=JSON
#   llvm-symbolizer-22   --obj=BIN --inlining --output-style=JSON
# (pprof's options, demangling left on), the two alternating, RUNS times
# each (default 5): medians of wall time, CPU time and peak RSS. With
# BASE=PATH, a splitdbg binary built from an earlier commit runs third in
# the alternation, for a before/after ratio under the same load.
# Ratio = llvm-symbolizer / splitdbg; the goal is >= 10. Then compares the answers line by line: equal, or different
# only in the outermost frame's FunctionName and StartAddress of an
# address in a .cold fragment (splitdbg: the function and its entry).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
bin=${1:-$here/out/mfs} count=${2:-1000000} RUNS=${RUNS:-5} SEED=${SEED:-1}
[[ -f $bin ]] || { echo "no $bin: run bench/gen-mfs.sh first" >&2; exit 1; }
sym=$(tool llvm-symbolizer 22)
[[ -n $sym ]] || { echo "no llvm-symbolizer 22" >&2; exit 1; }
build_splitdbg
header "$sym" | grep -v "^- timing" # each run is timed by /usr/bin/time below

nm -nS --defined-only "$bin" | awk -v n="$count" -v seed="$SEED" -v out="$TMP/addrs" '
	BEGIN { nc = nh = 0 }
	function hex(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	NF == 4 && $3 ~ /^[tTwW]$/ && $2 !~ /^0+$/ {
		if ($4 ~ /\.cold$/) { cs[nc] = hex($1); cz[nc++] = hex($2) } else { hs[nh] = hex($1); hz[nh++] = hex($2) }
	}
	END {
		srand(seed)
		for (i = 0; i < n; i++) {
			if (nc > 0 && i % 2) { j = int(rand() * nc); a = cs[j] + int(rand() * cz[j]) }
			else { j = int(rand() * nh); a = hs[j] + int(rand() * hz[j]) }
			printf "0x%x\n", a > out
		}
		printf "%d sized function symbols, %d of them .cold\n", nh + nc, nc > (out ".syms")
	}'
echo "- input: $(basename "$bin"), $(stat -c %s "$bin") bytes; $count addresses, half in .cold fragments, seed $SEED, from $(cat "$TMP/addrs.syms")"
opts=(--inlining --output-style=JSON)
sdcmd="'$SPLITDBG' symbolize --obj='$bin' ${opts[*]} < '$TMP/addrs' > '$TMP/sd.out'"
lscmd="'$sym' --obj='$bin' ${opts[*]} < '$TMP/addrs' > '$TMP/ls.out'"
BASE=${BASE:-}
basecmd="'$BASE' symbolize --obj='$bin' ${opts[*]} < '$TMP/addrs' > '$TMP/base.out'"
[[ -z $BASE ]] || echo "- base: $BASE, run third in the alternation"
# The two commands alternate, RUNS times each after one warm-up run of
# each, so that both meet the same load; each run under /usr/bin/time
# gives its wall time, CPU (user + sys) and peak RSS; medians are printed.
measure() { /usr/bin/time -f '%e %U %S %M' bash -c "$1" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f %.0f %d\n", $1 * 1000, ($2 + $3) * 1000, $4}'; }
median() { sort -n | awk '{a[NR]=$1} END{print NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "- runs: /usr/bin/time per run, $RUNS of each, alternating, after one warm-up run of each"
measure "$sdcmd" >/dev/null
measure "$lscmd" >/dev/null
[[ -z $BASE ]] || measure "$basecmd" >/dev/null
: >"$TMP/sd.runs"
: >"$TMP/ls.runs"
: >"$TMP/base.runs"
for ((i = 0; i < RUNS; i++)); do
	measure "$sdcmd" >>"$TMP/sd.runs"
	measure "$lscmd" >>"$TMP/ls.runs"
	[[ -z $BASE ]] || measure "$basecmd" >>"$TMP/base.runs"
done
col() { awk -v c="$2" '{print $c}' "$TMP/$1.runs" | median; }
s=$(col sd 1) l=$(col ls 1) scpu=$(col sd 2) lcpu=$(col ls 2) srss=$(col sd 3) lrss=$(col ls 3)
echo "- load average after the runs: $(cut -d" " -f1-3 /proc/loadavg)"
echo "- splitdbg runs (wall ms, CPU ms, RSS KiB): $(tr '\n' ';' <"$TMP/sd.runs")"
echo "- llvm-symbolizer runs: $(tr '\n' ';' <"$TMP/ls.runs")"
echo
echo "| median of $RUNS alternating runs | splitdbg symbolize | llvm-symbolizer-22 | ratio |"
echo "|---|---|---|---|"
echo "| wall ms | $s | $l | $(ratio "$l" "$s")x |"
echo "| CPU ms (user + sys) | $scpu | $lcpu | $(ratio "$lcpu" "$scpu")x |"
echo "| peak RSS KiB | $srss | $lrss | $(ratio "$lrss" "$srss")x |"
if [[ -n $BASE ]]; then
	b=$(col base 1) bcpu=$(col base 2) brss=$(col base 3)
	echo
	echo "base runs: $(tr '\n' ';' <"$TMP/base.runs")"
	echo "base medians: wall $b ms ($(ratio "$l" "$b")x), CPU $bcpu ms ($(ratio "$lcpu" "$bcpu")x), RSS $brss KiB; base answers equal to splitdbg's: $(cmp -s "$TMP/base.out" "$TMP/sd.out" && echo yes || echo NO)"
fi
echo
python3 - "$TMP/sd.out" "$TMP/ls.out" <<'PY'
import json, sys
same = logical = other = 0
with open(sys.argv[1]) as a, open(sys.argv[2]) as b:
    for x, y in zip(a, b):
        if x == y:
            same += 1
            continue
        u, v = json.loads(x), json.loads(y)
        fu, fv = u["Symbol"][-1], v["Symbol"][-1]
        if fv["FunctionName"].endswith(".cold") and fu["FunctionName"] == fv["FunctionName"][:-5]:
            fu2 = dict(fu, FunctionName=fv["FunctionName"], StartAddress=fv["StartAddress"])
            if dict(u, Symbol=u["Symbol"][:-1] + [fu2]) == v:
                logical += 1
                continue
        other += 1
        if other <= 3:
            print("differs:", x.strip(), "\n   llvm:", y.strip())
print(f"answers: {same} equal, {logical} differ only by the logical name of a .cold fragment, {other} otherwise")
PY
