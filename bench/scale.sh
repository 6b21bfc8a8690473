#!/usr/bin/env bash
# scale.sh [BIN...]: the scale run of issue 19 on the inputs of
# bench/gen-scale.sh (default: every bench/out/scale/{gcc,clang}/scale-N,
# smallest first). For each input, bench/scale/main.go checks that
# "splitdbg funcs" finds every generated function split, then runs
# interleaved rounds of
#   bulk    splitdbg funcs -all -json BIN  |  llvm-gsymutil-22 --convert BIN -o X
#   stream  ADDRS (default 1,000,000) addresses, half in .cold fragments, on stdin:
#           splitdbg addr -json BIN -, splitdbg symbolize --obj=BIN --output-style=JSON
#           |  llvm-symbolizer-22 --obj=BIN --output-style=JSON
#   first   one answer from process start: splitdbg addr BIN ADDR, break BIN FUNC,
#           break BIN FILE:LINE, symbolize --obj=BIN ADDR  |  llvm-symbolizer-22 --obj=BIN ADDR
#   debug   splitdbg debug BIN  |  dlv exec BIN, each fed "exit" on stdin
# with RUNS (default 5) rounds, STREAM_RUNS (default 3) for the stream group,
# and records wall time, CPU (user+sys, wait4's rusage) and peak RSS (GNU time's
# %M: wait4's is wrong for a child Go starts, see timed in main.go) of every
# process. MEASURE (default "bulk,stream,first,debug") picks groups; a later
# run merges into the same results. Results: RESULTS (default
# bench/out/scale/results.json)
# (every sample) and results.md (medians, ratios; appended per run), and the
# plot PLOT (default docs/scale.png; drawn by the Go program, no plotting
# package needed). dlv: DLV, or PATH's, or bench/out/dlv, installed with
#   GOBIN=bench/out go install github.com/go-delve/delve/cmd/dlv@v1.27.2
# (the version go.mod pins). Takes long (hours at 300,000 functions on a
# loaded 2-core machine): not for CI.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
out=$here/out/scale
if (($# == 0)); then
	for n in 30000 100000 300000; do
		for cc in gcc clang; do
			[[ -f $out/$cc/scale-$n ]] && set -- "$@" "$out/$cc/scale-$n"
		done
	done
fi
(($# > 0)) || { echo "no inputs: run bench/gen-scale.sh first" >&2; exit 1; }
DLV=${DLV:-$(command -v dlv || true)}
if [[ -z $DLV ]]; then
	[[ -x $here/out/dlv ]] || (cd "$TMP" && GOBIN=$here/out go install github.com/go-delve/delve/cmd/dlv@v1.27.2)
	DLV=$here/out/dlv
fi
build_splitdbg
mkdir -p "$out"
RUNS=${RUNS:-5} STREAM_RUNS=${STREAM_RUNS:-3} ADDRS=${ADDRS:-1000000}
MEASURE=${MEASURE:-bulk,stream,first,debug} PLOT=${PLOT:-$repo/docs/scale.png} RESULTS=${RESULTS:-$out/results.json}
{
	echo
	echo "## scale run $(date -u '+%Y-%m-%d %H:%M UTC'): groups $MEASURE, $RUNS rounds ($STREAM_RUNS of the stream, $ADDRS addresses)"
	echo
	header "$(tool llvm-gsymutil 22)" "$(tool llvm-symbolizer 22)" | grep -v "^- timing"
	echo "- dlv: $("$DLV" version | grep -m1 Version)"
	echo "- timing: bench/scale/main.go, wall clock of each process, CPU from wait4's rusage, peak RSS from GNU time (%M); medians of interleaved rounds"
	echo "- uptime before: $(uptime)"
} | tee -a "$out/results.md"
(cd "$repo" && go run ./bench/scale/main.go ./bench/scale/plot.go -splitdbg "$SPLITDBG" -dlv "$DLV" \
	-gsymutil "$(tool llvm-gsymutil 22)" -symbolizer "$(tool llvm-symbolizer 22)" \
	-runs "$RUNS" -stream-runs "$STREAM_RUNS" -addrs "$ADDRS" -groups "$MEASURE" -tmp "$TMP" \
	-json "$RESULTS" -plot "$PLOT" "$@") | tee -a "$out/results.md"
echo "- uptime after: $(uptime)" | tee -a "$out/results.md"
