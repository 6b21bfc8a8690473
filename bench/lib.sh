# shellcheck shell=bash disable=SC2034 # SPLITDBG is used by the sourcing scripts
# Sourced by the compare-*.sh scripts: repo paths, tool lookup, timing.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/splitdbg-bench.XXXXXX")
if [[ -n ${KEEP:-} ]]; then echo "- keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi

# tool NAME VER: the LLVM tool NAME of version VER, or nothing.
tool() {
	local p
	for p in "/usr/lib/llvm-$2/bin/$1" "$(command -v "$1-$2" || true)"; do
		[[ -n $p && -x $p ]] && { echo "$p"; return; }
	done
}

build_splitdbg() {
	(cd "$repo" && go build -o "$TMP/splitdbg" ./cmd/splitdbg)
	SPLITDBG=$TMP/splitdbg
}

header() {
	echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), load average $(cut -d" " -f1-3 /proc/loadavg)"
	echo "- splitdbg: $(cd "$repo" && git describe --always --dirty 2>/dev/null || echo '?'), $(go version | cut -d' ' -f3-)"
	local t
	for t in "$@"; do
		[[ -n $t ]] && echo "- $t: $("$t" --version 2>&1 | grep -m1 -i 'version' | sed 's/^ *//')"
	done
	if [[ -z ${NO_HYPERFINE:-} ]] && command -v hyperfine >/dev/null; then
		echo "- timing: $(hyperfine --version), wall-clock median"
	else
		echo "- timing: bash loop (date +%s%N), wall-clock median"
	fi
}

# time_ms RUNS CMD: runs the shell command CMD once to warm up, then RUNS
# times, and prints "MEDIAN_MS CPU_MS" (CPU = mean user+sys, "-" if unknown).
# Output is discarded unless CMD redirects it. Uses hyperfine when it is
# installed, unless NO_HYPERFINE is set, else a bash loop.
time_ms() {
	local runs=$1 cmd=$2
	if [[ -z ${NO_HYPERFINE:-} ]] && command -v hyperfine >/dev/null; then
		local shell=-N # no shell: nothing to subtract for short runs
		[[ $cmd == *[\<\>]* ]] && shell=--shell=bash
		hyperfine "$shell" --style=none --warmup 1 --runs "$runs" \
			--export-json "$TMP/hf.json" "$cmd" >/dev/null 2>"$TMP/hf.err" ||
			{ cat "$TMP/hf.err" >&2; echo "- -"; return; }
		awk -F'[:,]' '/"median"/{m=$2} /"user"/{u=$2} /"system"/{s=$2}
			END{printf "%.0f %.0f\n", m*1000, (u+s)*1000}' "$TMP/hf.json"
		return
	fi
	local i t0 ts=()
	bash -c "$cmd" >/dev/null 2>&1 || { echo "- -"; return; }
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		bash -c "$cmd" >/dev/null 2>&1
		ts+=($((($(date +%s%N) - t0) / 1000000)))
	done
	printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END{m = NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; print m, "-"}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a+0 > 0 && b+0 > 0) printf "%.2f", a/b; else printf "-" }'; }
mib() { awk -v b="$(stat -c %s "$1")" 'BEGIN{printf "%.1f MiB", b/1048576}'; }
