# SPDX-License-Identifier: GPL-2.0
# Shared settings for the mmext scripts; sourced, never run.

MMEXT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MMEXT_BUILD=${MMEXT_BUILD:-$MMEXT_ROOT/build}
# Who commits the queue in the kernel trees: a placeholder, not a person (scripts/upstream.sh).
MMEXT_QUEUE_NAME="mmext developers" MMEXT_QUEUE_EMAIL="devel@mmext.invalid"

die() { echo "error: $*" >&2; exit 1; }
say() { echo ">>> $*" >&2; }

# usage [STATUS]: print the running script's usage, which is its header comment (the
# comment lines after the SPDX line, up to the first line that is not a comment), and
# exit STATUS: 0 (asked for, to stdout) or by default 2 (a bad call, to stderr). The
# header is the only copy of the usage text, so the two cannot drift apart.
usage() {
	local st=${1:-2}
	awk 'NR > 1 && !/^#/ {exit} NR > 1 && !/SPDX-License-Identifier/ {sub(/^# ?/, ""); print}' \
		"$0" >&"$((st == 0 ? 1 : 2))"
	exit "$st"
}

# The kernel base: 6.12 (Debian's LTS, the default) or mainline 7.3 (MMEXT_BASE=7.3, or
# --base 7.3 where a script takes it). Each base is a directory of kernel/ with a
# base.conf: its queue (series, patches/, covers/), its config fragments (config/, merged
# after the shared ones of kernel/config/) and its selftest baselines. base.conf pins the
# base's source and says what the scripts make of it (MMEXT_BASE_DEFAULT, _MAINLINE,
# _TCG_CPU; their meaning: kernel/6.12/base.conf): scripts read those, never a base's name.
base_queue() {
	case $1 in ''|*/*) die "unknown base '$1'" ;; esac
	[ -f "$MMEXT_ROOT/kernel/$1/base.conf" ] ||
		die "unknown base '$1' (a directory of kernel/ with a base.conf: $(all_bases | xargs))"
	echo "$MMEXT_ROOT/kernel/$1"
}
# all_bases: every base, one a line, oldest first.
all_bases() {
	local f
	for f in "$MMEXT_ROOT"/kernel/*/base.conf; do
		[ -f "$f" ] && basename "$(dirname "$f")"
	done | sort -V
}
# base_conf BASE NAME: NAME's value in BASE's base.conf, or the default lib.sh gives it.
base_conf() {
	(
		MMEXT_BASE_DEFAULT=0 MMEXT_BASE_MAINLINE=0 MMEXT_BASE_TCG_CPU=max
		# shellcheck source=../kernel/6.12/base.conf
		. "$(base_queue "$1")/base.conf" && echo "${!2:-}"
	)
}
# default_base: the one base whose base.conf says MMEXT_BASE_DEFAULT=1.
default_base() {
	local b d=()
	for b in $(all_bases); do
		[ "$(base_conf "$b" MMEXT_BASE_DEFAULT)" = 1 ] && d+=("$b")
	done
	[ ${#d[@]} = 1 ] ||
		die "exactly one kernel/*/base.conf must say MMEXT_BASE_DEFAULT=1, not ${#d[@]} (${d[*]})"
	echo "${d[0]}"
}
# The only map from a base to its build directory: the default base builds in build/,
# any other base in build/<base>/ (its trees, objects, selftests, initramfs and logs).
base_build() {
	case $(base_conf "$1" MMEXT_BASE_DEFAULT) in
	1) echo "$MMEXT_BUILD" ;;
	'') exit 1 ;;
	*) echo "$MMEXT_BUILD/$1" ;;
	esac
}
if [ -z "${MMEXT_BASE:-}" ]; then
	MMEXT_BASE=$(default_base) || exit 1
fi
BASE_QUEUE=$(base_queue "$MMEXT_BASE") || exit 1
BASE_BUILD=$(base_build "$MMEXT_BASE") || exit 1
MMEXT_BASE_DEFAULT=0 MMEXT_BASE_MAINLINE=0 MMEXT_BASE_TCG_CPU=max
# shellcheck source=../kernel/6.12/base.conf
. "$BASE_QUEUE/base.conf"

KTREE=$BASE_BUILD/linux          # git tree: pristine base commit + the queue
KSTOCK=$BASE_BUILD/linux-stock   # worktree of the pristine base commit
KOUT=$BASE_BUILD/out             # one object dir per build variant
BASE_TAG=mmext-base
QUEUE_BRANCH=mmext

# A variant is stock or patched, plus -distro when DISTRO=1 (Debian's own configuration
# instead of tinyconfig), then one of: -debug when DEBUG=1 (KASAN, kmemleak; with DISTRO=1
# also lockdep, DEBUG_VM), -bench when BENCH=1 (no lockdep or DEBUG_VM, -O2: what
# benchmarks measure), -fuzz when FUZZ=1 (the debug kernel with KCOV, for syzkaller),
# -kcsan when KCSAN=1 (the data-race detector instead of KASAN).
variant_name() {
	local v=$1 f n=0 suffix=""
	case $1 in stock|patched) ;; *) die "unknown kernel '$1' (stock or patched)";; esac
	for f in DEBUG BENCH FUZZ KCSAN; do
		[ "${!f:-0}" = 1 ] || continue
		n=$((n + 1)) suffix=-${f,,}
	done
	[ $n -le 1 ] || die "DEBUG=1, BENCH=1, FUZZ=1 and KCSAN=1 exclude each other"
	if [ "${DISTRO:-0}" = 1 ]; then
		case $suffix in -bench|-fuzz|-kcsan) die "DISTRO=1 and ${suffix#-}=1 exclude each other" ;; esac
		v=$v-distro
	fi
	echo "$v$suffix"
}
variant_src() { case $1 in stock*) echo "$KSTOCK";; *) echo "$KTREE";; esac; }
# The only map from a kernel (stock or patched) to its build directory, in the variant
# DEBUG and BENCH select; the build, its .config and its bzImage live there. Scripts
# call these; other programs ask 'scripts/kernel.sh outdir|image KERNEL'.
variant_dir() {
	local v
	v=$(variant_name "$1") || exit 1
	echo "$KOUT/$v"
}
variant_image() {
	local d
	d=$(variant_dir "$1") || exit 1
	echo "$d/arch/x86/boot/bzImage"
}

# tcg_accel CONFIG: QEMU's TCG options for a kernel of that .config. A kernel with jump
# labels rewrites its own text while other CPUs run it, and multi-threaded TCG (QEMU 7.2
# and 10.0 alike) can then run a stale translation of the text-patching int3 after the
# kernel has dropped it ("Oops: int3"; tests/distro/textpoke.c shows it within seconds
# on stock 6.12 and 7.3 with jump labels): such kernels get one TCG thread for all vCPUs.
tcg_accel() {
	local thread=multi
	grep -q '^CONFIG_JUMP_LABEL=y' "$1" 2>/dev/null && thread=single
	echo "-accel tcg,thread=$thread -cpu $MMEXT_BASE_TCG_CPU"
}

# checkpatch_allowed BASE/PATCH TYPE: tests/checkpatch-allow.txt has a line "GLOB TYPE"
# matching (PATCH is the file name, e.g. 7.3/0010-mm-share-....patch).
checkpatch_allowed() {
	local glob type
	while read -r glob type; do
		case $glob in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2254
		case $1 in $glob) [ "$type" = "$2" ] && return 0 ;; esac
	done < "$MMEXT_ROOT/tests/checkpatch-allow.txt"
	return 1
}

# A series' cover letter, covers/<series>.txt beside the base's series file, is the
# [PATCH 0/N] mail: a header block, a blank line, then the text sent. The headers are
# "Subject: [PATCH 0/N] area: summary" and "Series: RANGE...", the queue's patches the
# series holds (RANGE: 0013-0026, or one number), and an optional "Cc: ADDRESSES" that
# scripts/upstream.sh adds to get_maintainer.pl's; only the subject is sent.

# cover_header COVER NAME: the value of header NAME.
cover_header() {
	sed -n "/^\$/q; s/^$2: *//p" "$1" | head -n1
}
# cover_body COVER: the text after the header block.
cover_body() {
	sed '1,/^$/d' "$1"
}
# cover_patches COVER SERIESFILE: the patch files of SERIESFILE that the cover's Series
# header names, in the series' order.
cover_patches() {
	local r a b p n
	local -a ranges
	read -ra ranges <<< "$(cover_header "$1" Series | tr ',' ' ')"
	[ ${#ranges[@]} -gt 0 ] || return 1
	while read -r p; do
		n=$((10#${p%%-*}))
		for r in "${ranges[@]}"; do
			a=$((10#${r%-*})) b=$((10#${r#*-}))
			[ "$n" -ge "$a" ] && [ "$n" -le "$b" ] && { echo "$p"; break; }
		done
	done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$2")
}
