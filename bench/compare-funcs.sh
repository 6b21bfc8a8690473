#!/usr/bin/env bash
# compare-funcs.sh BIN...: wall-clock median (RUNS, default 7) of
# "splitdbg funcs -all -json BIN >/dev/null" against
# "llvm-gsymutil --convert BIN --out-file X" (LLVM 22 and 19, default
# threads). Ratio = splitdbg / gsymutil; the goal is <= 0.5.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
(($# > 0)) || { echo "usage: $0 BIN..." >&2; exit 2; }
RUNS=${RUNS:-7}
g22=$(tool llvm-gsymutil 22) g19=$(tool llvm-gsymutil 19)
build_splitdbg
header "$g22" "$g19"
echo
echo "| binary | size | functions (all/split) | gsym funcs | splitdbg ms (cpu) | gsymutil-22 ms (cpu) | gsymutil-19 ms (cpu) | ratio vs 22 | ratio vs 19 |"
echo "|---|---|---|---|---|---|---|---|---|"
for bin in "$@"; do
	all=$("$SPLITDBG" funcs -all -json "$bin" | grep -c '^    "name"' || true)
	split=$("$SPLITDBG" funcs -json "$bin" | grep -c '^    "name"' || true)
	read -r s sc < <(time_ms "$RUNS" "'$SPLITDBG' funcs -all -json '$bin'")
	gf=- a=- ac=- b=- bc=-
	if [[ -n $g22 ]]; then
		gf=$("$g22" --convert "$bin" --out-file "$TMP/x.gsym" 2>&1 | sed -n 's/.*ended with \([0-9]*\) total.*/\1/p')
		read -r a ac < <(time_ms "$RUNS" "'$g22' --convert '$bin' --out-file '$TMP/x.gsym'")
	fi
	[[ -n $g19 ]] && read -r b bc < <(time_ms "$RUNS" "'$g19' --convert '$bin' --out-file '$TMP/y.gsym'")
	echo "| $(basename "$bin") | $(mib "$bin") | $all/$split | ${gf:--} | $s ($sc) | $a ($ac) | $b ($bc) | $(ratio "$s" "$a") | $(ratio "$s" "$b") |"
done
