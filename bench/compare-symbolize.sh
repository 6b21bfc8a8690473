#!/usr/bin/env bash
# compare-symbolize.sh [BIN] [COUNT]: COUNT (default 1000000) addresses in
# BIN's function symbols (default bench/out/mfs from gen-mfs.sh), half in
# .cold fragments, sent on standard input to
#   splitdbg symbolize   --obj=BIN --inlining --output-style=JSON
#   llvm-symbolizer-22   --obj=BIN --inlining --output-style=JSON
# (pprof's options, demangling left on), timed (median of RUNS, default 3)
# with the peak RSS of each. Ratio = llvm-symbolizer / splitdbg; the goal
# is >= 10. Then compares the answers line by line: equal, or different
# only in the outermost frame's FunctionName and StartAddress of an
# address in a .cold fragment (splitdbg: the function and its entry).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
bin=${1:-$here/out/mfs} count=${2:-1000000} RUNS=${RUNS:-3} SEED=${SEED:-1}
[[ -f $bin ]] || { echo "no $bin: run bench/gen-mfs.sh first" >&2; exit 1; }
sym=$(tool llvm-symbolizer 22)
[[ -n $sym ]] || { echo "no llvm-symbolizer 22" >&2; exit 1; }
build_splitdbg
header "$sym"

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
read -r s sc < <(time_ms "$RUNS" "$sdcmd")
read -r l lc < <(time_ms "$RUNS" "$lscmd")
# One more run each under /usr/bin/time: peak RSS and CPU (user + sys).
usage() { /usr/bin/time -f '%M %U %S' bash -c "$1" 2>&1 >/dev/null | tail -1 | awk '{printf "%d %.0f\n", $1, ($2 + $3) * 1000}'; }
read -r srss scpu < <(usage "$sdcmd")
read -r lrss lcpu < <(usage "$lscmd")
echo
echo "| | splitdbg symbolize | llvm-symbolizer-22 | ratio |"
echo "|---|---|---|---|"
echo "| wall ms, median of $RUNS | $s | $l | $(ratio "$l" "$s")x |"
echo "| CPU ms (user + sys), one run | $scpu | $lcpu | $(ratio "$lcpu" "$scpu")x |"
echo "| peak RSS KiB | $srss | $lrss | $(ratio "$lrss" "$srss")x |"
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
