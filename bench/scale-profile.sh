#!/usr/bin/env bash
# scale-profile.sh BIN [OUTDIR]: where the time of a first answer goes, on an
# input of bench/gen-scale.sh (issue 19). Runs once each, under
# "perf record -g" (99 % of a run is splitdbg's own Go code, which perf
# symbolizes without help) and GODEBUG=gctrace=1:
#   splitdbg addr BIN ADDR, break BIN FUNC, break BIN FILE:LINE,
#   symbolize --obj=BIN ADDR, and llvm-symbolizer-22 --obj=BIN ADDR (no perf)
# with the middle function of the last copy, as bench/scale/main.go asks.
# Prints per question: wall, CPU, peak RSS (/usr/bin/time), the peak Go heap
# (the largest heap size gctrace reports) and the functions of splitdbg's
# packages that take at least PCT (default 3) % of the samples, inclusive
# (perf report --children). perf.data files and full reports stay in
# OUTDIR (default bench/out/scale/prof). Needs perf (linux-perf) and GNU
# time; perf_event_paranoid must allow user profiling (<= 2).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
(($# >= 1)) || { echo "usage: $0 BIN [OUTDIR]" >&2; exit 2; }
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
outdir=${2:-$here/out/scale/prof}
PCT=${PCT:-3}
command -v perf >/dev/null || { echo "no perf (apt-get install linux-perf)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "no /usr/bin/time (apt-get install time)" >&2; exit 1; }
sym=$(tool llvm-symbolizer 22)
mkdir -p "$outdir"
build_splitdbg

# The question of bench/scale/main.go: KQ<last>_f<mid>, mid of its .cold.
read -r copy mid < <(nm "$bin" | sed -n 's/.* T KQ\([0-9]*\)_f\([0-9]*\)$/\1 \2/p' | sort -n -k1,1 -k2,2 | tail -1 | awk '{print $1, int(($2 + 1) / 2)}')
fn=KQ${copy}_f$mid
read -r lo size < <(nm -S "$bin" | awk -v s="$fn.cold" '$4 == s {print $1, $2}')
addr=$(printf '%#x' $((0x$lo + 0x$size / 2)))
fileline=m_KQ$copy.c:$((7 + 11 * mid + 4))
echo "- $bin: $fn, address $addr (in $fn.cold), $fileline; load $(cut -d' ' -f1-3 /proc/loadavg)"

# prof NAME CMD...: one profiled run.
prof() {
	local name=$1
	shift
	GODEBUG=gctrace=1 /usr/bin/time -o "$outdir/$name.time" -f '%e %U %S %M' \
		perf record -q -F 499 -g -o "$outdir/$name.data" "$@" >"$outdir/$name.out" 2>"$outdir/$name.err"
	perf report -i "$outdir/$name.data" --stdio --children -g none --percent-limit "$PCT" 2>/dev/null >"$outdir/$name.report"
	local heap
	heap=$(grep -o '[0-9]*->[0-9]*->[0-9]* MB' "$outdir/$name.err" | tr -s '>-' '  ' | awk '{m = $1 > m ? $1 : m; m = $2 > m ? $2 : m} END {print m + 0}')
	read -r wall user sys rss <"$outdir/$name.time"
	echo
	echo "### $name: $* "
	echo "wall $wall s, CPU $(awk -v u="$user" -v s="$sys" 'BEGIN{print u + s}') s (user $user, sys $sys), peak RSS $((rss / 1024)) MB, peak Go heap $heap MB"
	echo
	awk '$1 ~ /%$/ && /splitdbg\/splitdbg\// {c = $1; s = $2; sub(/^.*splitdbg\/splitdbg\//, ""); print "- " c " (self " s ") " $0}' "$outdir/$name.report" | head -25
}
prof addr "$SPLITDBG" addr "$bin" "$addr"
prof break-func "$SPLITDBG" break "$bin" "$fn"
prof break-line "$SPLITDBG" break "$bin" "$fileline"
prof symbolize "$SPLITDBG" symbolize --obj="$bin" "$addr"
/usr/bin/time -o "$outdir/llvm.time" -f '%e %U %S %M' "$sym" --obj="$bin" "$addr" >"$outdir/llvm.out"
read -r wall user sys rss <"$outdir/llvm.time"
echo
echo "### llvm-symbolizer-22 --obj=BIN $addr"
echo "wall $wall s, CPU $(awk -v u="$user" -v s="$sys" 'BEGIN{print u + s}') s, peak RSS $((rss / 1024)) MB"
