#!/usr/bin/env bash
# compare-addr.sh BIN [COUNT]: COUNT (default 1000000) addresses in BIN's
# function symbols (nm -nS), half inside .cold fragments, timed (median of
# RUNS, default 3) through "splitdbg addr -json BIN -" and
# "llvm-symbolizer --obj=BIN" (LLVM 22; default options: --functions=linkage,
# inlining on). Ratio = llvm-symbolizer / splitdbg; the goal is >= 10.
# Then checks that splitdbg names the logical function (the fragment symbol
# without ".cold") for every cold address, and counts the llvm-symbolizer
# answers that name a ".cold" symbol.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
(($# >= 1)) || { echo "usage: $0 BIN [COUNT]" >&2; exit 2; }
bin=$1 count=${2:-1000000} RUNS=${RUNS:-3} SEED=${SEED:-1}
sym=$(tool llvm-symbolizer 22)
[[ -n $sym ]] || { echo "no llvm-symbolizer 22" >&2; exit 1; }
build_splitdbg
header "$sym"

# kinds: one line per address, "c NAME" (in NAME.cold) or "h NAME".
nm -nS --defined-only "$bin" | awk -v n="$count" -v seed="$SEED" -v out="$TMP/addrs" -v kinds="$TMP/kinds" '
	BEGIN { nc = nh = 0 }
	function hex(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	NF == 4 && $3 ~ /^[tTwW]$/ && $2 !~ /^0+$/ {
		if ($4 ~ /\.cold$/) { cs[nc] = hex($1); cz[nc] = hex($2); cn[nc++] = substr($4, 1, length($4) - 5) }
		else { hs[nh] = hex($1); hz[nh] = hex($2); hn[nh++] = $4 }
	}
	END {
		srand(seed)
		if (nh == 0) { print "no sized function symbols" > "/dev/stderr"; exit 1 }
		for (i = 0; i < n; i++) {
			if (nc > 0 && i % 2) { j = int(rand() * nc); a = cs[j] + int(rand() * cz[j]); k = "c " cn[j] }
			else { j = int(rand() * nh); a = hs[j] + int(rand() * hz[j]); k = "h " hn[j] }
			printf "0x%x\n", a > out; print k > kinds
		}
		printf "%d sized function symbols, %d of them .cold\n", nh + nc, nc > (out ".syms")
	}'
ncold=$(grep -c '^c ' "$TMP/kinds" || true)
echo "- addresses: $count ($ncold in .cold fragments), seed $SEED, from $(cat "$TMP/addrs.syms")"
echo

read -r s sc < <(time_ms "$RUNS" "'$SPLITDBG' addr -json '$bin' - < '$TMP/addrs' > '$TMP/sd.out'")
read -r l lc < <(time_ms "$RUNS" "'$sym' --obj='$bin' < '$TMP/addrs' > '$TMP/ls.out'")
echo "| binary | addresses | splitdbg ms (cpu) | llvm-symbolizer-22 ms (cpu) | speedup |"
echo "|---|---|---|---|---|"
echo "| $(basename "$bin") | $count | $s ($sc) | $l ($lc) | $(ratio "$l" "$s")x |"
echo

# splitdbg: one JSON object per line, in input order, between "[" and "]".
sed '1d;$d' "$TMP/sd.out" | paste -d'\t' "$TMP/kinds" - | awk -F'\t' '
	{ split($1, k, " "); fn = ""; if (match($2, /"function":"[^"]*"/)) fn = substr($2, RSTART + 12, RLENGTH - 13) }
	k[1] == "c" { nc++; if ($2 !~ /"found":true/) nf++; else if (fn ~ /\.cold/) bad++; else if (fn != k[2]) other++ }
	END { printf "splitdbg, cold addresses: %d, not found %d, \"function\" with .cold %d, other name than the fragment symbol minus .cold %d\n", nc, nf, bad, other }'
# llvm-symbolizer: a block per address (frames: function, file:line), a
# blank line between; the last function line is the outermost frame.
awk -v RS= -F'\n' '{ print $(NF - 1) }' "$TMP/ls.out" | paste -d' ' "$TMP/kinds" - | awk '
	$1 == "c" { nc++; if ($3 ~ /\.cold$/) cc++; else if ($3 == $2) logical++ }
	$1 == "h" && $3 ~ /\.cold$/ { hc++ }
	$3 == "??" { unk++ }
	END { printf "llvm-symbolizer, cold addresses: %d, answered with the .cold symbol %d, with the logical name %d; other addresses answered with a .cold name %d; \"??\" %d\n", nc, cc, logical, hc, unk }'
