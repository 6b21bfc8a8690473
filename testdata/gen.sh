#!/usr/bin/env bash
# testdata/gen.sh - rebuild the split-function test binaries in testdata/bin
# (and internal/demo/data/demo and clang) from the sources in testdata/src.
#
# Usage:  testdata/gen.sh            rebuild everything
#         testdata/gen.sh TARGET...  rebuild only these targets
#         testdata/gen.sh -l         list the targets
#
# Needs: gcc (12), go (1.26), and clang, llvm and bolt 19 and 22 from Debian
# (apt-get install clang-19 llvm-19 bolt-19 clang-22 llvm-22 bolt-22), which
# are looked up in /usr/lib/llvm-19/bin and /usr/lib/llvm-22/bin.
#
# Everything is compiled from inside testdata/src with relative source paths
# and -fdebug-prefix-map=$PWD=., so the DWARF holds no machine-specific paths.
# Intermediates (.o, .gcda, .profraw, .profdata, .fdata, instrumented
# binaries) go to a temporary directory that is removed on exit.
# See testdata/README.md for what each binary contains.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$HERE/src
OUT=$HERE/bin
DEMO_COPY=$HERE/../internal/demo/data/demo
LLVM19=/usr/lib/llvm-19/bin
LLVM22=/usr/lib/llvm-22/bin

TARGETS=(demo vars inv inl gcc-cold gcc-cold-nopie gcc-cold-dwarf4 gcc-cold-zlib gcc-cold-zstd
	gcc-pgo clang19-bbsections clang22-bbsections clang19-mfs clang22-mfs
	bolt cgo clang19-bbaddrmap clang22-bbaddrmap bbaddrmap-yaml mip)

die() {
	echo "gen.sh: $*" >&2
	exit 1
}

# need TOOL... - fail with a clear message when a tool is missing.
need() {
	local t
	for t in "$@"; do
		if [[ $t == */* ]]; then
			[[ -x $t ]] || die "missing tool $t (apt-get install clang-19 llvm-19 bolt-19 clang-22 llvm-22 bolt-22)"
		else
			command -v "$t" >/dev/null 2>&1 || die "missing tool $t"
		fi
	done
}

# expect_syms BIN SYM... - fail unless every SYM is a symbol of BIN.
expect_syms() {
	local bin=$1 s syms
	shift
	syms=$(nm "$bin" | awk '{print $NF}') # not piped into grep -q: SIGPIPE + pipefail
	for s in "$@"; do
		grep -qxF -- "$s" <<<"$syms" ||
			die "$(basename "$bin"): expected symbol $s is missing (did the compiler stop splitting?)"
	done
}

# run_both BIN - run the hot path (no argument) and the cold path ("cold");
# both must succeed. Prints the combined output for comparisons.
run_both() {
	"$1" >"$TMP/hot.out" || die "$(basename "$1") failed on the hot path"
	"$1" cold >"$TMP/cold.out" || die "$(basename "$1") failed on the cold path"
	cat "$TMP/hot.out" "$TMP/cold.out"
}

note() { printf '== %-20s %s\n' "$1" "$2"; }

# ---------------------------------------------------------------- GCC -----
GCCFLAGS=(-O2 -g -fdebug-prefix-map="$SRC"=.)

# gcc_cold NAME COMPILE-FLAGS... -- LINK-FLAGS...
gcc_cold() {
	need gcc nm
	local name=$1 cflags=() lflags=() f
	shift
	while (($#)) && [[ $1 != -- ]]; do cflags+=("$1"); shift; done
	(($#)) && shift
	lflags=("$@")
	local d=$TMP/$name
	mkdir -p "$d"
	for f in main a b; do
		gcc "${GCCFLAGS[@]}" ${cflags[@]+"${cflags[@]}"} -c gcccold/$f.c -o "$d/$f.o"
	done
	gcc ${cflags[@]+"${cflags[@]}"} ${lflags[@]+"${lflags[@]}"} "$d/main.o" "$d/a.o" "$d/b.o" -o "$OUT/$name"
	expect_syms "$OUT/$name" process process.cold validate validate.cold helper.cold
	[[ $(nm "$OUT/$name" | grep -c ' t helper\.cold$') == 2 ]] || die "$name: expected two helper.cold symbols"
	run_both "$OUT/$name" >/dev/null
	note "$name" "ok"
}

build_demo() {
	need gcc nm
	gcc "${GCCFLAGS[@]}" -c demo/demo.c -o "$TMP/demo.o"
	gcc "$TMP/demo.o" -o "$OUT/demo"
	expect_syms "$OUT/demo" scale scale.cold sum sum.cold
	run_both "$OUT/demo" >/dev/null
	mkdir -p "$(dirname "$DEMO_COPY")"
	cp "$OUT/demo" "$DEMO_COPY"
	note demo "ok (copied to internal/demo/data/demo)"
}

# Locals of many C types in moved code, for adapter/locals.
build_vars() {
	need gcc nm
	gcc "${GCCFLAGS[@]}" -c vars/vars.c -o "$TMP/vars.o"
	gcc "$TMP/vars.o" -o "$OUT/vars"
	expect_syms "$OUT/vars" inspect inspect.cold
	run_both "$OUT/vars" >/dev/null
	note vars "ok"
}

# A small inventory whose error paths GCC and clang-22 (machine function
# splitting trained on the hot path) move to X.cold, for the debugger's
# conditions, globals and stepping in moved code.
build_inv() { gcc_clang22 inv withdraw withdraw.cold value value.cold; }

# Static helpers inlined into moved code (syntax_error, and kind_name inside
# it, in step.cold), for inlined frames and their variables in moved code.
build_inl() { gcc_clang22 inl step step.cold; }

# gcc_clang22 NAME SYM... builds NAME/NAME.c with GCC (gcc-NAME) and with
# clang-22's machine function splitting (clang22-NAME), checks that each
# has the symbols SYM and runs both ways.
gcc_clang22() {
	local name=$1 b
	shift
	need gcc nm
	gcc "${GCCFLAGS[@]}" -c "$name/$name.c" -o "$TMP/$name.o"
	gcc "$TMP/$name.o" -o "$OUT/gcc-$name"
	mfs_build 22 "$name/$name.c" "$OUT/clang22-$name"
	for b in "gcc-$name" "clang22-$name"; do
		expect_syms "$OUT/$b" "$@"
		run_both "$OUT/$b" >/dev/null
		note "$b" "ok"
	done
}

build_gcc_cold() { gcc_cold gcc-cold; }
build_gcc_cold_nopie() { gcc_cold gcc-cold-nopie -fno-pie -- -no-pie; }
build_gcc_cold_dwarf4() { gcc_cold gcc-cold-dwarf4 -gdwarf-4; }
# -gz=zlib makes gcc compress the objects' debug sections and makes the
# driver pass --compress-debug-sections=zlib to ld.
build_gcc_cold_zlib() {
	gcc_cold gcc-cold-zlib -gz=zlib
	readelf -SW "$OUT/gcc-cold-zlib" | grep -E '\.debug_info .* C ' >/dev/null ||
		die "gcc-cold-zlib: .debug_info is not SHF_COMPRESSED"
}
# gcc 12 rejects -gz=zstd (valid: none, zlib, zlib-gnu), but ld 2.40 accepts
# --compress-debug-sections=zstd, so only the linked file is zstd-compressed.
build_gcc_cold_zstd() {
	gcc_cold gcc-cold-zstd -- -Wl,--compress-debug-sections=zstd
	readelf -SW "$OUT/gcc-cold-zstd" | grep -E '\.debug_info .* C ' >/dev/null ||
		die "gcc-cold-zstd: .debug_info is not SHF_COMPRESSED"
}

# GCC PGO: no cold attributes; the profile alone makes GCC split. Compile and
# link are separate steps so the .gcda name matches between the two compiles.
build_gcc_pgo() {
	need gcc nm
	local d=$TMP/pgo
	mkdir -p "$d"
	gcc "${GCCFLAGS[@]}" -fprofile-generate -c pgo/pgo.c -o "$d/pgo.o"
	gcc -fprofile-generate "$d/pgo.o" -o "$d/pgo.gen"
	"$d/pgo.gen" >/dev/null # training input: hot path only, writes $d/pgo.gcda
	[[ -f $d/pgo.gcda ]] || die "gcc-pgo: training run wrote no pgo.gcda"
	gcc "${GCCFLAGS[@]}" -fprofile-use -Werror=missing-profile -c pgo/pgo.c -o "$d/pgo.o"
	gcc "$d/pgo.o" -o "$OUT/gcc-pgo"
	expect_syms "$OUT/gcc-pgo" checksum checksum.cold classify classify.cold
	run_both "$OUT/gcc-pgo" >/dev/null
	note gcc-pgo "ok"
}

# -------------------------------------------------------------- clang -----
# Basic-block sections from a cluster file. The block IDs in
# clang/clang{19,22}.clusters were read from `llvm-readobj --bb-addr-map` of
# an unsplit -fbasic-block-address-map build (built here too, as a check).
clang_bbsections() {
	local v=$1 B
	B=/usr/lib/llvm-$v/bin
	need "$B/clang" "$B/llvm-readobj" nm
	local name=clang$v-bbsections d=$TMP/clang$v-bbs
	mkdir -p "$d"
	# Unsplit reference build: the cluster files name these block IDs.
	"$B/clang" -O2 -g -fdebug-prefix-map="$SRC"=. -fbasic-block-address-map clang/split.c -o "$d/unsplit"
	"$B/llvm-readobj" --bb-addr-map "$d/unsplit" >"$d/unsplit.bbaddrmap.txt"
	check_clusters "clang/clang$v.clusters" "$d/unsplit.bbaddrmap.txt"
	"$B/clang" -O2 -g -fdebug-prefix-map="$SRC"=. \
		-fbasic-block-sections=list=clang/clang$v.clusters -fbasic-block-address-map \
		-c clang/split.c -o "$OUT/$name.o"
	"$B/clang" "$OUT/$name.o" -o "$OUT/$name"
	expect_syms "$OUT/$name" scan scan.__part.1 scan.cold dispatch dispatch.__part.1 dispatch.cold
	run_both "$OUT/$name" >/dev/null
	note "$name" "ok (+ $name.o)"
}
# check_clusters CLUSTERS BBADDRMAP-DUMP - every block ID named in the
# cluster file must exist for that function in the unsplit build's map.
check_clusters() {
	local bad
	bad=$(awk '
		FNR == NR {
			if ($1 == "Name:") fn = $2
			if ($1 == "ID:") have[fn " " $2] = 1
			next
		}
		/^#/ || NF == 0 { next }
		/^!!/ { sub(/^!!/, ""); for (i = 1; i <= NF; i++) if (!((fn " " $i) in have)) print fn ":" $i; next }
		/^!/ { fn = substr($1, 2); next }
		$1 == "f" { fn = $2; next }
		$1 == "c" { for (i = 2; i <= NF; i++) if (!((fn " " $i) in have)) print fn ":" $i }
	' "$2" "$1")
	[[ -z $bad ]] || die "$1: block IDs not in the unsplit build: $bad (re-derive them, see the file header)"
}

build_clang19_bbsections() { clang_bbsections 19; }
build_clang22_bbsections() { clang_bbsections 22; }

# Machine function splitting with an instrumentation profile of the hot path.
clang_mfs() {
	local v=$1
	local name=clang$v-mfs
	shift
	mfs_build "$v" clang/split.c "$OUT/$name" -fbasic-block-address-map
	expect_syms "$OUT/$name" "$@"
	run_both "$OUT/$name" >/dev/null
	note "$name" "ok"
}

# mfs_build V SRC OUT [FLAGS...] - clang-V with machine function splitting
# and an instrumentation profile of SRC's hot path (run with no argument).
mfs_build() {
	local v=$1 src=$2 out=$3 B
	B=/usr/lib/llvm-$v/bin
	need "$B/clang" "$B/llvm-profdata" nm
	shift 3
	local d
	d=$TMP/mfs-$(basename "$out")
	mkdir -p "$d"
	"$B/clang" -O2 -g -fdebug-prefix-map="$SRC"=. -fprofile-instr-generate -c "$src" -o "$d/gen.o"
	"$B/clang" -fprofile-instr-generate "$d/gen.o" -o "$d/gen"
	LLVM_PROFILE_FILE=$d/train.profraw "$d/gen" >/dev/null # training: hot path only
	"$B/llvm-profdata" merge -o "$d/train.profdata" "$d/train.profraw"
	"$B/clang" -O2 -g -fdebug-prefix-map="$SRC"=. -fprofile-instr-use="$d/train.profdata" \
		-fsplit-machine-functions "$@" -c "$src" -o "$d/split.o"
	"$B/clang" "$d/split.o" -o "$out"
}
# clang-19 estimates a count of 1 (not 0) for never-run blocks in functions
# that run often, so it only splits main and report (called once).
build_clang19_mfs() { clang_mfs 19 main.cold report.cold; }
build_clang22_mfs() {
	clang_mfs 22 main.cold scan.cold dispatch.cold
	cp "$OUT/clang22-mfs" "$HERE/../internal/demo/data/clang"
}

# --------------------------------------------------------------- BOLT -----
# bolt_one V IN OUT [EXTRA-FLAGS...] - instrument IN, train on the hot path,
# optimize with splitting and BAT, check OUT behaves exactly like IN.
# llvm-bolt records its command line in .note.bolt_info, so the optimizing
# step runs inside the work directory with relative file names only.
bolt_one() {
	local v=$1 in=$2 out=$3 B
	shift 3
	B=/usr/lib/llvm-$v/bin
	need "$B/llvm-bolt"
	local d=$TMP/$out base
	base=$(basename "$in")
	mkdir -p "$d"
	cp "$in" "$d/$base"
	(
		cd "$d"
		"$B/llvm-bolt" "$base" -instrument -instrumentation-file="$d/$out.fdata" -o "$base.inst" >inst.log 2>&1 ||
			{ cat inst.log >&2; die "$out: llvm-bolt -instrument failed"; }
		"./$base.inst" >/dev/null # training input: hot path only
		[[ -s $out.fdata ]] || die "$out: instrumented run wrote no profile"
		"$B/llvm-bolt" "$base" -o "$out" -data="$out.fdata" -reorder-blocks=ext-tsp \
			-split-functions -split-all-cold -enable-bat -update-debug-sections "$@" >opt.log 2>&1 ||
			{ cat opt.log >&2; die "$out: llvm-bolt failed"; }
	)
	mv "$d/$out" "$OUT/$out"
	[[ $(run_both "$OUT/$out") == "$(run_both "$in")" ]] || die "$out: output differs from its input binary"
}

build_bolt() {
	need gcc nm readelf
	# Input NOT split by GCC (BOLT does all the splitting); relocations kept.
	gcc "${GCCFLAGS[@]}" -fno-reorder-blocks-and-partition -c bolt/bolt.c -o "$TMP/bolt-input.o"
	gcc -Wl,--emit-relocs "$TMP/bolt-input.o" -o "$OUT/bolt-input"
	[[ $(nm "$OUT/bolt-input") != *.cold* ]] || die "bolt-input: unexpectedly split by GCC"
	# Input already split by GCC (tally.cold, lookup.cold).
	gcc "${GCCFLAGS[@]}" -c bolt/bolt.c -o "$TMP/bolt-gcc-input.o"
	gcc -Wl,--emit-relocs "$TMP/bolt-gcc-input.o" -o "$OUT/bolt-gcc-input"
	expect_syms "$OUT/bolt-gcc-input" tally.cold lookup.cold

	local v
	for v in 19 22; do
		# Default layout: new .text in a 2 MiB-aligned segment (~4 MB file).
		bolt_one $v "$OUT/bolt-input" bolt$v
		expect_syms "$OUT/bolt$v" tally tally.cold.0 lookup lookup.cold.0
		[[ $(readelf -n "$OUT/bolt$v") == *BOLT* ]] || die "bolt$v: no BAT note"
		note bolt$v "ok"
		# --no-huge-pages keeps these small (4 KiB-aligned new segment).
		bolt_one $v "$OUT/bolt-gcc-input" bolt$v-over-gcc --no-huge-pages
		expect_syms "$OUT/bolt$v-over-gcc" tally tally.cold tally.cold.0 lookup lookup.cold
		note bolt$v-over-gcc "ok"
	done
}

# ---------------------------------------------------------------- cgo -----
# C code split by plain -O2 (cold attribute); default external linking keeps
# the C compile units' DWARF (-linkmode=internal would drop it).
build_cgo() {
	need go gcc nm
	(cd cgo && GOWORK=off GOFLAGS= GOTOOLCHAIN=local CGO_ENABLED=1 CC=gcc CGO_CFLAGS="-O2 -g" \
		go build -trimpath -o "$OUT/cgo" .)
	expect_syms "$OUT/cgo" c_classify c_classify.cold c_accumulate c_accumulate.cold
	run_both "$OUT/cgo" >/dev/null
	note cgo "ok"
}

# ---------------------------------------------------- BB address maps -----
# Inputs of splitinfo/bbaddrmap's tests. The clang builds go to
# testdata/bin/bbaddrmap/, not testdata/bin: some are not split, and
# splitinfo's reference tests expect every binary in testdata/bin to be.
BBMAP_OUT=$OUT/bbaddrmap

# clang_bbaddrmap V - clang-V builds of clang/split.c with
# -fbasic-block-address-map (map version 2 from clang-19, 5 from clang-22):
#   clangV-bbaddrmap, .o   unsplit, no profile (clang-22: callsite offsets)
#   clangV-pgo, .o         machine function splitting with a profile of the
#                          hot path, plus the PGO analysis map (entry count,
#                          block frequencies, branch probabilities); clang-22
#                          also hashes blocks (-emit-bb-hash, version 4+)
#   clang19-pgo-zstd,      clangV-pgo with the map SHF_COMPRESSED by
#   clang22-pgo-zlib       llvm-objcopy-22 --compress-sections
#   clang22-bbaddrmap.so   the unsplit build as a shared object
#   clang22-omit.o         -basic-block-address-map-skip-bb-entries
#                          (OmitBBEntries) with the entry count only
#   clang22-pgo-crel.o     clang22-pgo.o with CREL relocations (-Wa,--crel)
clang_bbaddrmap() {
	local v=$1 B
	B=/usr/lib/llvm-$v/bin
	need "$B/clang" "$B/llvm-profdata" "$B/llvm-readobj" "$LLVM22/llvm-objcopy" nm
	local d=$TMP/bbaddrmap$v p=$BBMAP_OUT/clang$v
	local cflags=(-O2 -g -fdebug-prefix-map="$SRC"=. -fbasic-block-address-map)
	local pgo=(-mllvm "-pgo-analysis-map=func-entry-count,bb-freq,br-prob")
	((v >= 22)) && pgo+=(-mllvm -emit-bb-hash)
	mkdir -p "$d" "$BBMAP_OUT"
	"$B/clang" "${cflags[@]}" -c clang/split.c -o "$p-bbaddrmap.o"
	"$B/clang" "$p-bbaddrmap.o" -o "$p-bbaddrmap"
	run_both "$p-bbaddrmap" >/dev/null
	# Training run of the hot path, as for clangV-mfs.
	"$B/clang" -O2 -g -fdebug-prefix-map="$SRC"=. -fprofile-instr-generate -c clang/split.c -o "$d/gen.o"
	"$B/clang" -fprofile-instr-generate "$d/gen.o" -o "$d/gen"
	LLVM_PROFILE_FILE=$d/split.profraw "$d/gen" >/dev/null
	"$B/llvm-profdata" merge -o "$d/split.profdata" "$d/split.profraw"
	local use=(-fprofile-instr-use="$d/split.profdata")
	"$B/clang" "${cflags[@]}" "${use[@]}" -fsplit-machine-functions "${pgo[@]}" -c clang/split.c -o "$p-pgo.o"
	"$B/clang" "$p-pgo.o" -o "$p-pgo"
	expect_syms "$p-pgo" main.cold
	run_both "$p-pgo" >/dev/null
	local z=zstd
	((v >= 22)) && z=zlib
	"$LLVM22/llvm-objcopy" --compress-sections=".llvm_bb_addr_map=$z" "$p-pgo" "$p-pgo-$z"
	readelf -SW "$p-pgo-$z" | grep -E '\.llvm_bb_addr_map .* LC ' >/dev/null ||
		die "clang$v-pgo-$z: .llvm_bb_addr_map is not SHF_COMPRESSED"
	run_both "$p-pgo-$z" >/dev/null
	local made="bbaddrmap(.o) pgo(.o) pgo-$z"
	if ((v >= 22)); then
		"$B/clang" "${cflags[@]}" -fPIC -shared clang/split.c -o "$p-bbaddrmap.so"
		"$B/clang" "${cflags[@]}" "${use[@]}" -mllvm -pgo-analysis-map=func-entry-count \
			-mllvm -basic-block-address-map-skip-bb-entries -c clang/split.c -o "$p-omit.o"
		"$B/clang" "${cflags[@]}" "${use[@]}" -fsplit-machine-functions "${pgo[@]}" \
			-Wa,--crel,--allow-experimental-crel -c clang/split.c -o "$p-pgo-crel.o"
		readelf -SW "$p-pgo-crel.o" | grep -E '\.crel\.llvm_bb_addr_map' >/dev/null ||
			die "clang$v-pgo-crel.o: no CREL relocations for the map"
		made+=" bbaddrmap.so omit.o pgo-crel.o"
	fi
	# Every map must be readable by the version's own llvm-readobj.
	local f
	for f in "$p"-*; do
		[[ $f == *-zstd ]] && continue # llvm-readobj-19 does not decompress maps
		"$B/llvm-readobj" --bb-addr-map "$f" 2>&1 >/dev/null | grep -v 'could not identify function symbol' | grep . >&2 &&
			die "$(basename "$f"): llvm-readobj-$v warns about the map"
	done
	note "clang$v-bbaddrmap" "ok (bbaddrmap/clang$v-{${made// /,}})"
}
build_clang19_bbaddrmap() { clang_bbaddrmap 19; }
build_clang22_bbaddrmap() { clang_bbaddrmap 22; }

# yaml2obj objects from bbaddrmap/*.yaml, written for the map decoder's
# tests to cover every version, feature bit, ELF class and byte order, and
# relocation kind: testdata/bin/bbaddrmap-NAME.o. yaml2obj-14 writes the
# LLVM 14 layout (v0type.yaml), yaml2obj-19 versions 0 to 2, yaml2obj-22
# versions 2 to 5; each YAML file names its reference llvm-readobj. Two
# copies get their map SHF_COMPRESSED by llvm-objcopy-22.
build_bbaddrmap_yaml() {
	need /usr/lib/llvm-14/bin/yaml2obj "$LLVM19/yaml2obj" "$LLVM22/yaml2obj" "$LLVM22/llvm-objcopy"
	local y name tool yamls=(bbaddrmap/*.yaml)
	for y in "${yamls[@]}"; do
		name=$(basename "$y" .yaml)
		case $name in
		v0type) tool=/usr/lib/llvm-14/bin/yaml2obj ;;
		v0 | v1 | v2) tool=$LLVM19/yaml2obj ;;
		*) tool=$LLVM22/yaml2obj ;;
		esac
		"$tool" "$y" -o "$OUT/bbaddrmap-$name.o"
	done
	"$LLVM22/llvm-objcopy" --compress-sections='.llvm_bb_addr_map=zlib' "$OUT/bbaddrmap-v5.o" "$OUT/bbaddrmap-v5-zlib.o"
	"$LLVM22/llvm-objcopy" --compress-sections='.llvm_bb_addr_map=zstd' "$OUT/bbaddrmap-elf32.o" "$OUT/bbaddrmap-elf32-zstd.o"
	note bbaddrmap-yaml "ok (${#yamls[@]} objects + 2 compressed)"
}

# ---------------------------------------------------------------- MIP -----
# Machine IR Profile (seed 002), which no released compiler emits: the
# driver mip/main.c, the functions of mip/instrumented.S, written by hand
# with the __llvm_mipmap and __llvm_mipraw records and headers exactly as
# the MIP patch's llc emits them (.Lref-relative .long fields, comdat
# groups) and instrumented to mark their own coverage, and the runtime
# mip/mipruntime.c, which writes __llvm_mipraw to $MIP_RAW_FILE at exit.
# Outputs go to testdata/bin/mip/ (splitinfo's reference tests read only
# the files directly in testdata/bin):
#   mip          profile type 0x3: function and block coverage
#   mip-counts   -DMIP_COUNTS, profile type 0xf: also call counts and
#                first-call timestamps
build_mip() {
	need gcc nm readelf od
	local d=$TMP/mip name flags
	mkdir -p "$d" "$OUT/mip"
	gcc "${GCCFLAGS[@]}" -c mip/main.c -o "$d/main.o"
	gcc "${GCCFLAGS[@]}" -c mip/mipruntime.c -o "$d/mipruntime.o"
	for name in mip mip-counts; do
		flags=()
		[[ $name == mip-counts ]] && flags=(-DMIP_COUNTS)
		gcc "${GCCFLAGS[@]}" ${flags[@]+"${flags[@]}"} -c mip/instrumented.S -o "$d/$name.o"
		gcc "$d/main.o" "$d/$name.o" "$d/mipruntime.o" -o "$OUT/mip/$name"
		expect_syms "$OUT/mip/$name" classify classify.cold sum_to count_digits unused \
			'classify$RAW' __start___llvm_mipraw __stop___llvm_mipraw
		# The map is kept in the file but not loaded (no A flag).
		readelf -SW "$OUT/mip/$name" | grep -E ' __llvm_mipmap +NOTE .* Wo ' >/dev/null ||
			die "$name: no non-alloc __llvm_mipmap section"
		MIP_RAW_FILE=$d/$name.mipraw "$OUT/mip/$name" 5 -3 x12 >"$d/$name.out" || die "$name failed"
		grep -qxF '5: classify=1 sum_to=15 count_digits=1' "$d/$name.out" || die "$name: wrong output"
		[[ $(od -An -tx1 -N4 "$d/$name.mipraw" | tr -d ' ') == fb4d4950 ]] ||
			die "$name: the raw profile written at exit does not start with the MIP magic"
		note "$name" "ok (mip/$name)"
	done
}

# ---------------------------------------------------------------- main ----
if [[ ${1:-} == -l ]]; then
	printf '%s\n' "${TARGETS[@]}"
	exit 0
fi
want=("$@")
((${#want[@]})) || want=("${TARGETS[@]}")
for t in "${want[@]}"; do
	[[ " ${TARGETS[*]} " == *" $t "* ]] || die "unknown target $t (try: gen.sh -l)"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/splitdbg-gen.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
cd "$SRC"
for t in "${want[@]}"; do
	"build_${t//-/_}"
done
if ((${#want[@]} == ${#TARGETS[@]})); then
	echo "== total: $(du -sh --apparent-size "$OUT" | cut -f1) in testdata/bin ($(du -sh "$OUT" | cut -f1) on disk: BOLT outputs are sparse)"
fi
