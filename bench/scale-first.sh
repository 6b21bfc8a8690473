#!/usr/bin/env bash
# scale-first.sh REV BIN...: the first answers of bench/scale.sh (issue 19)
# by splitdbg at git revision REV ("before") and at the worktree ("after"),
# against llvm-symbolizer-22, in one run: RUNS (default 5) rounds, each
# running every process once, one after the other, on each input (made by
# bench/gen-scale.sh). The questions are
# bench/scale-profile.sh's: the middle function of the last copy,
#   addr BIN ADDR (in its .cold), break BIN FUNC, break BIN FILE:LINE,
#   symbolize --obj=BIN ADDR  |  llvm-symbolizer-22 --obj=BIN ADDR
# BULK=1 times the whole-binary command instead: splitdbg funcs -all -json BIN
# | llvm-gsymutil-22 --convert BIN (as bench/scale.sh's bulk group).
# Prints per input and question the medians of wall s, CPU s (perf stat's
# task-clock, to the microsecond; GNU time's user + sys are in 10 ms steps)
# and peak RSS MiB (GNU time's %M), before and after, and after / llvm-symbolizer,
# with uptime before and after each input.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
(($# >= 1)) || { echo "usage: $0 REV BIN..." >&2; exit 2; }
rev=$1
shift
(($# > 0)) || { echo "usage: $0 REV BIN..." >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "no /usr/bin/time (apt-get install time)" >&2; exit 1; }
command -v perf >/dev/null || { echo "no perf (apt-get install linux-perf)" >&2; exit 1; }
RUNS=${RUNS:-5}
sym=$(tool llvm-symbolizer 22)
gsym=$(tool llvm-gsymutil 22)
ref=llvm-symbolizer qs="addr break-func break-line symbolize"
[[ -z ${BULK:-} ]] || ref=llvm-gsymutil qs=funcs
build_splitdbg
after=$SPLITDBG
before=$TMP/splitdbg-before
git -C "$repo" worktree add -q --detach "$TMP/before" "$rev"
trap 'git -C "$repo" worktree remove --force "$TMP/before"; rm -rf "$TMP"' EXIT
(cd "$TMP/before" && go build -o "$before" ./cmd/splitdbg)
echo "- before: $rev ($(git -C "$repo" rev-parse --short "$rev")), after: the worktree at $(git -C "$repo" rev-parse --short HEAD); RUNS=$RUNS"

# run KEY CMD...: one timed process, appended to $TMP/samples as "KEY wall cpu rssKiB".
run() {
	local key=$1
	shift
	perf stat -x, -e task-clock -o "$TMP/p" /usr/bin/time -o "$TMP/t" -f '%e %M' "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
	read -r w m <"$TMP/t"
	echo "$key $w $(awk -F, '$3 == "task-clock" {print $1 / 1000}' "$TMP/p") $m" >>"$TMP/samples"
}
for bin in "$@"; do
	read -r copy mid < <(nm "$bin" | sed -n 's/.* T KQ\([0-9]*\)_f\([0-9]*\)$/\1 \2/p' | sort -n -k1,1 -k2,2 | tail -1 | awk '{print $1, int(($2 + 1) / 2)}')
	fn=KQ${copy}_f$mid
	read -r lo size < <(nm -S "$bin" | awk -v s="$fn.cold" '$4 == s {print $1, $2}')
	addr=$(printf '%#x' $((0x$lo + 0x$size / 2)))
	fileline=m_KQ$copy.c:$((7 + 11 * mid + 4))
	if [[ -n ${BULK:-} ]]; then
		cmp -s <("$before" funcs -all -json "$bin") <("$after" funcs -all -json "$bin") || { echo "funcs answers differ on $bin" >&2; exit 1; }
	else
	cmp -s <("$before" addr "$bin" "$addr") <("$after" addr "$bin" "$addr") || { echo "addr answers differ on $bin" >&2; exit 1; }
	cmp -s <("$before" break "$bin" "$fileline") <("$after" break "$bin" "$fileline") || { echo "break answers differ on $bin" >&2; exit 1; }
	cmp -s <("$before" symbolize --obj="$bin" "$addr") <("$after" symbolize --obj="$bin" "$addr") || { echo "symbolize answers differ on $bin" >&2; exit 1; }
	fi
	echo
	echo "### $bin: $fn, $addr, $fileline"
	echo "- uptime before: $(uptime)"
	: >"$TMP/samples"
	for ((r = 0; r < RUNS; r++)); do
		if [[ -n ${BULK:-} ]]; then
			for v in before after; do
				run "$v:funcs" "${!v}" funcs -all -json "$bin"
			done
			run ref "$gsym" --convert "$bin" -o "$TMP/out.gsym"
			continue
		fi
		for v in before after; do
			run "$v:addr" "${!v}" addr "$bin" "$addr"
			run "$v:break-func" "${!v}" break "$bin" "$fn"
			run "$v:break-line" "${!v}" break "$bin" "$fileline"
			run "$v:symbolize" "${!v}" symbolize --obj="$bin" "$addr"
		done
		run ref "$sym" --obj="$bin" "$addr"
	done
	echo "- uptime after: $(uptime)"
	echo
	echo "| question | before wall / CPU s / RSS MiB | after wall / CPU s / RSS MiB | after / $ref (wall, CPU, RSS) |"
	echo "|---|---|---|---|"
	med() { # med KEY FIELD: the median of a field (2 wall, 3 CPU, 4 RSS KiB)
		awk -v k="$1" -v f="$2" '$1 == k {print $f}' "$TMP/samples" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
	}
	lw=$(med ref 2) lc=$(med ref 3) lm=$(med ref 4)
	for q in $qs; do
		bw=$(med "before:$q" 2) bc=$(med "before:$q" 3) bm=$(med "before:$q" 4)
		aw=$(med "after:$q" 2) ac=$(med "after:$q" 3) am=$(med "after:$q" 4)
		awk -v q="$q" -v bw="$bw" -v bc="$bc" -v bm="$bm" -v aw="$aw" -v ac="$ac" -v am="$am" -v lw="$lw" -v lc="$lc" -v lm="$lm" \
			'BEGIN {printf "| %s | %.3f / %.3f / %.0f | %.3f / %.3f / %.0f | %.2f, %.2f, %.2f |\n", q, bw, bc, bm / 1024, aw, ac, am / 1024, aw / lw, ac / lc, am / lm}'
	done
	awk -v r="$ref" -v lw="$lw" -v lc="$lc" -v lm="$lm" 'BEGIN {printf "| %s | %.3f / %.3f / %.0f | | |\n", r, lw, lc, lm / 1024}'
done
