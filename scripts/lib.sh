# SPDX-License-Identifier: GPL-2.0
# Shared settings for the mmext scripts; sourced, never run.

MMEXT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MMEXT_BUILD=${MMEXT_BUILD:-$MMEXT_ROOT/build}
# shellcheck source=../kernel/base.conf
. "$MMEXT_ROOT/kernel/base.conf"

KTREE=$MMEXT_BUILD/linux          # git tree: pristine base commit + the queue
KSTOCK=$MMEXT_BUILD/linux-stock   # worktree of the pristine base commit
KOUT=$MMEXT_BUILD/out             # one object dir per build variant
BASE_TAG=mmext-base
QUEUE_BRANCH=mmext

die() { echo "error: $*" >&2; exit 1; }
say() { echo ">>> $*" >&2; }

# A variant is stock or patched, plus -debug when DEBUG=1 (KASAN, kmemleak) or -bench
# when BENCH=1 (no lockdep or DEBUG_VM, -O2: what benchmarks measure).
variant_name() {
	case $1 in stock|patched) ;; *) die "unknown kernel '$1' (stock or patched)";; esac
	[ "${DEBUG:-0}" = 1 ] && [ "${BENCH:-0}" = 1 ] && die "DEBUG=1 and BENCH=1 exclude each other"
	if [ "${DEBUG:-0}" = 1 ]; then echo "$1-debug"
	elif [ "${BENCH:-0}" = 1 ]; then echo "$1-bench"
	else echo "$1"; fi
}
variant_src() { case $1 in stock*) echo "$KSTOCK";; *) echo "$KTREE";; esac; }
