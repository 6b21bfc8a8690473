#!/usr/bin/env bash
# compare-bbaddrmap.sh [BIN]: wall-clock median (RUNS, default 9) of
# "splitdbg bbaddrmap -json BIN" against "llvm-readobj-22 --bb-addr-map
# --elf-output-style=JSON BIN", output discarded. Ratio = splitdbg /
# llvm-readobj; the goal is <= 0.33. BIN defaults to bench/out/bbaddrmap
# (bench/gen-bbaddrmap.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
bin=${1:-$here/out/bbaddrmap}
RUNS=${RUNS:-9}
readobj=$(tool llvm-readobj 22)
[[ -n $readobj ]] || { echo "compare-bbaddrmap: llvm-readobj 22 missing (apt-get install llvm-22)" >&2; exit 1; }
build_splitdbg
header "$readobj"
echo
read -r s sc < <(time_ms "$RUNS" "'$SPLITDBG' bbaddrmap -json '$bin'")
read -r r rc < <(time_ms "$RUNS" "'$readobj' --bb-addr-map --elf-output-style=JSON '$bin'")
echo "| binary | splitdbg \`bbaddrmap -json\` ms (cpu) | llvm-readobj-22 JSON ms (cpu) | ratio |"
echo "|---|---|---|---|"
echo "| $(basename "$bin") | $s ($sc) | $r ($rc) | $(ratio "$s" "$r") |"
