#!/usr/bin/env bash
# gen-scale.sh [OUTDIR]: the scale run's inputs (issue 19), cheaply: one
# module of M (default 2500) split functions is compiled ONCE per compiler
# and linked K times under new names, for every size in SIZES (default
# "30000 100000 300000" split functions; K = size / M).
#
# The module m_KQ000.c defines KQ000_f0 .. KQ000_f{M-1}. Each function has
# a hot path and an error path (x < 0) that calls the cold, noinline
# sink_fail() and an always_inline helper, so it is split in two and the
# helper has inlined copies in both fragments:
#   gcc:   gcc -O2 -g (hot/cold partitioning; the call to a cold function
#          makes the branch cold, no profile needed) -> KQ000_fI + KQ000_fI.cold
#   clang: clang-22 -O2 -g -fprofile-instr-generate, a training run that
#          never takes the error path, llvm-profdata merge, then clang-22
#          -O2 -g -fprofile-instr-use -fsplit-machine-functions (machine
#          function splitting, as bench/gen-mfs.sh) -> KQ000_fI + KQ000_fI.cold
# Copy k of the object (k = 0 .. K-1) is the compiled object with every
# occurrence of the 5 bytes "KQ000" replaced by "KQ" and k in 3 digits:
# the replacement has the same length, so no offset moves, and it renames
# the ELF symbols (.strtab) AND the DWARF strings (DW_AT_name of every
# function, the unit's name, the line table's file name in .debug_str /
# .debug_line_str) alike: copy k is what compiling m_KQk.c would give,
# except for the code bytes, which are the same in every copy (the script
# checks that the sections holding code and data are byte-identical to the
# original's, i.e. that the marker only occurred in strings). objcopy
# --prefix-symbols would rename the symbols only, leaving K functions per
# DWARF name and K units with one file name (FILE:LINE would resolve to K
# places, and addr / llvm-symbolizer would answer the same name for K
# functions); the byte rename avoids that.
# The program: main.c (main returns 0; nothing calls the copies, and
# nothing drops them either: no --gc-sections), sink.c (sink_fail), and the
# K copies, linked with the compiler's default linker (GNU ld), DWARF 5
# (both compilers' default). OUTDIR/scale/CC/scale-SIZE is the binary;
# OUTDIR/scale/CC/scale-SIZE.info what it is.
#
# CCS (default "gcc clang") picks the compilers. A module compiled before
# with the same M is reused unless REBUILD is set. Checks: the copies differ
# from the compiled object in string sections only, and nm counts K*M
# ".cold" symbols in each binary (bench/scale.sh then checks with splitdbg
# funcs that every function is found split).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out}
M=${M:-2500} SIZES=${SIZES:-"30000 100000 300000"} CCS=${CCS:-"gcc clang"}
GCC=${GCC:-gcc}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
PROFDATA=${PROFDATA:-/usr/lib/llvm-22/bin/llvm-profdata}
DWARFDUMP=${DWARFDUMP:-/usr/lib/llvm-22/bin/llvm-dwarfdump}
mkdir -p "$out/scale"
out=$(cd "$out/scale" && pwd)
ms() { echo $((($2 - $1) / 1000000)); }

# Sources, shared by both compilers.
src=$out/src
rm -rf "$src" && mkdir -p "$src"
awk -v m="$M" -v dir="$src" 'BEGIN {
	file = dir "/m_KQ000.c"
	print "void sink_fail(int id, int v) __attribute__((cold, noinline));" > file
	print "int sink(int v) __attribute__((noinline));" > file
	printf "static inline __attribute__((always_inline)) int mix(int x, int k) {\n\tint y = x * k + (x >> 3);\n\treturn y ^ (k << 2);\n}\n" > file
	for (i = 0; i < m; i++) {
		printf "int KQ000_f%d(int x, int *p) {\n\tint r = mix(x, %d);\n", i, i % 97 + 3 > file
		printf "\tif (x < 0) {\n\t\tr += mix(r, %d) * p[1];\n\t\tsink_fail(%d, r);\n\t\tp[0] = sink(r ^ %d);\n\t\tr = sink(p[0] + mix(p[2], %d));\n\t\tp[3] = r;\n\t}\n", i % 89 + 5, i, i, i % 13 + 1 > file
		printf "\treturn r * 3 + p[x & 3];\n}\n" > file
	}
	close(file)
	file = dir "/sink.c"
	print "volatile int sink_count;" > file
	print "__attribute__((cold, noinline)) void sink_fail(int id, int v) { sink_count += id ^ v; }" > file
	print "__attribute__((noinline)) int sink(int v) { return v * 7 + 1; }" > file
	close(file)
	file = dir "/main.c"
	print "int main(void) { return 0; }" > file
	close(file)
	# The training run (clang): every function, the error path never.
	file = dir "/train.c"
	for (i = 0; i < m; i++)
		printf "int KQ000_f%d(int, int *);\n", i > file
	printf "int (*const table[])(int, int *) = {\n" > file
	for (i = 0; i < m; i++)
		printf "\tKQ000_f%d,\n", i > file
	printf "};\nint main(int argc, char **argv) {\n\tint p[4] = {1, 2, 3, 4}, s = 0;\n" > file
	printf "\tfor (unsigned i = 0; i < sizeof table / sizeof table[0]; i++)\n\t\ts += table[i](argc + (int)(i & 7), p);\n\treturn s == 42;\n}\n" > file
}'

# compile CC DIR: DIR/m_KQ000.o, DIR/sink.o, DIR/main.o.
compile() {
	local cc=$1 dir=$2
	rm -rf "$dir" && mkdir -p "$dir"
	cd "$src"
	case $cc in
	gcc)
		"$GCC" -O2 -g -c m_KQ000.c -o "$dir/m_KQ000.o"
		"$GCC" -O2 -g -c sink.c -o "$dir/sink.o"
		"$GCC" -O2 -g -c main.c -o "$dir/main.o"
		;;
	clang)
		[[ -x $CLANG && -x $PROFDATA ]] || { echo "gen-scale: need clang-22 and llvm-profdata-22" >&2; exit 1; }
		local t=$dir/train
		mkdir -p "$t"
		"$CLANG" -O2 -g -fprofile-instr-generate -c m_KQ000.c -o "$t/m.o"
		"$CLANG" -O2 -g -fprofile-instr-generate -c sink.c -o "$t/sink.o"
		"$CLANG" -O2 -g -fprofile-instr-generate -c train.c -o "$t/train.o"
		"$CLANG" -fprofile-instr-generate -o "$t/train" "$t"/*.o
		LLVM_PROFILE_FILE=$t/train.profraw "$t/train" || true
		"$PROFDATA" merge -o "$t/train.profdata" "$t/train.profraw"
		"$CLANG" -O2 -g -fprofile-instr-use="$t/train.profdata" -fsplit-machine-functions -c m_KQ000.c -o "$dir/m_KQ000.o"
		"$CLANG" -O2 -g -c sink.c -o "$dir/sink.o"
		"$CLANG" -O2 -g -c main.c -o "$dir/main.o"
		;;
	esac
	cd - >/dev/null
}

# same_code A B: the bytes where objects A and B differ all lie in string
# sections (.strtab, .debug_str, .debug_line_str): code, data, relocations,
# symbols and the other DWARF sections are byte-identical.
same_code() {
	{ cmp -l "$1" "$2" || true; } | awk -v f="$2" '
		function hex(s,  i, v) { v = 0; s = tolower(s); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
		BEGIN { n = 0 }
		NR == FNR { if ($1 ~ /^\.(strtab|debug_str|debug_line_str)$/) { off[n] = hex($4); size[n++] = hex($5) }; next }
		{
			o = $1 - 1; in_str = 0
			for (i = 0; i < n; i++)
				if (o >= off[i] && o < off[i] + size[i]) in_str = 1
			if (!in_str) { printf "gen-scale: %s differs at offset %d outside the string sections: the marker occurred elsewhere\n", f, o > "/dev/stderr"; bad = 1; exit 1 }
			d++
		}
		END { if (!bad) printf "gen-scale: %d differing bytes, all in string sections\n", d }' <(readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\]//') -
}

for cc in $CCS; do
	dir=$out/$cc
	t0=$(date +%s%N)
	how="reused the module of $M functions compiled before"
	if [[ -n ${REBUILD:-} || ! -f $dir/m_KQ000.o || $(cat "$dir/M" 2>/dev/null) != "$M" ]]; then
		compile "$cc" "$dir"
		echo "$M" >"$dir/M"
		how="compiled $M functions in $(($(date +%s%N) / 1000000 - t0 / 1000000)) ms"
	fi
	marks=$(grep -a -o KQ000 "$dir/m_KQ000.o" | wc -l)
	echo "gen-scale: $cc: $how; marker in $marks places of m_KQ000.o"
	maxk=0
	for size in $SIZES; do ((size / M > maxk)) && maxk=$((size / M)); done
	for ((k = 1; k < maxk; k++)); do
		id=$(printf 'KQ%03d' "$k")
		[[ -f $dir/m_$id.o ]] && continue
		perl -0777 -pe "s/KQ000/$id/g" "$dir/m_KQ000.o" >"$dir/m_$id.o"
	done
	same_code "$dir/m_KQ000.o" "$dir/m_KQ001.o"
	ld=$GCC
	[[ $cc == clang ]] && ld=$CLANG
	for size in $SIZES; do
		k=$((size / M))
		bin=$dir/scale-$size
		objs=()
		for ((i = 0; i < k; i++)); do objs+=("$dir/$(printf 'm_KQ%03d.o' "$i")"); done
		t2=$(date +%s%N)
		"$ld" -o "$bin" "$dir/main.o" "$dir/sink.o" "${objs[@]}"
		t3=$(date +%s%N)
		"$bin"
		cold=$(nm "$bin" | grep -c '\.cold$' || true)
		{
			echo "$bin: $(stat -c %s "$bin") bytes, $k copies of $M functions = $((k * M)) functions, $cold .cold symbols"
			echo "compiler: $("${ld}" --version | head -1)"
			echo "DWARF: $("$DWARFDUMP" -r 0 --debug-info "$bin" | sed -n 's/.*Compile Unit:.*version = 0x0*\([0-9a-f]*\).*/version \1/p' | sort | uniq -c | awk '{printf "%s%d units of %s %s", s, $1, $2, $3; s = ", "}')"
			echo "sections: $(readelf -SW "$bin" | sed 's/^ *\[ *[0-9]*\]//' | awk 'function hex(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
				$1 ~ /^\.(text|debug_|symtab|strtab|eh_frame)/ {printf "%s %d, ", $1, hex($5)}')"
			echo "link: $(ms "$t2" "$t3") ms"
		} >"$bin.info"
		cat "$bin.info"
		((cold >= k * M)) || { echo "gen-scale: want >= $((k * M)) .cold symbols in $bin, got $cold" >&2; exit 1; }
	done
done
