#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# AFL++ on a target that populates MiB of memory before its deferred fork server starts
# (./afl_target), plain fork against COW page tables, in a Debian guest (vm.sh
# --rootfs): Debian's afl-fuzz runs for a fixed time as is and under ./cowrun, in pairs
# (ABBA), with the same seed input and random seed; on a kernel without COW page tables
# (stock), plain runs alone. Per run: executions per second, the corpus (paths) found,
# and the fork server's COW state as the target reports it.
#
#   real_afl.sh [--mb N] [--seconds S] [--runs PAIRS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
mb=1024 seconds=60 runs=1
while [ $# -gt 0 ]; do
	case $1 in
	--mb) mb=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*) echo "usage: real_afl.sh [--mb N] [--seconds S] [--runs PAIRS]" >&2; exit 2 ;;
	esac
done
kernel=$(uname -r)

json() { printf '# bench {"bench":"afl","kernel":"%s",%s}\n' "$kernel" "$1"; }
skip() {
	echo "real_afl: SKIP: $1"
	json "\"group\":\"afl\",\"case\":\"unavailable\",\"reason\":\"$1\""
	exit 0
}
command -v afl-fuzz > /dev/null || skip "no afl-fuzz here (the Debian guest has it: vm.sh --rootfs)"
[ -x "$here/afl_target" ] || skip "afl_target not built (bench/Makefile: afl-cc)"
cow=1
[ -r /sys/kernel/mm/cow_pte/prctl_option ] || cow=0
echo "real_afl: $(afl-fuzz -h 2>&1 | grep -m1 -o 'afl-fuzz++[0-9a-z.]*'), target $mb MiB, $seconds s per run"
[ $cow = 1 ] || echo "real_afl: plain runs only (the kernel has no COW page tables)"

in=/tmp/afl-in
rm -rf "$in" && mkdir -p "$in"
printf 'MMXw\000\000\001r\000\000\001' > "$in/seed"
# No CPU binding (two vCPUs shared by the fuzzer and the target), no core-dump or CPU
# governor checks (a bare guest), no terminal UI; the fork server may take minutes to
# populate the memory under emulation.
export AFL_NO_AFFINITY=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_NO_UI=1 AFL_FORKSRV_INIT_TMOUT=600000 AFL_TARGET_MB=$mb

fail=0
declare -A eps paths
one() {
	local b=$1 i=$2 out=/tmp/afl-out-$1-$2 st=/tmp/afl-state-$1-$2 prefix=(env) f
	[ "$b" = cow_pte ] && prefix=("$here/cowrun")
	rm -rf "$out" "$st"
	MMEXT_TARGET_STATE=$st timeout $((seconds * 4 + 900)) "${prefix[@]}" afl-fuzz -i "$in" \
		-o "$out" -V "$seconds" -s 1 -t 20000 -- "$here/afl_target" > "$out.log" 2>&1
	local rc=$?
	f=$out/default/fuzzer_stats
	if [ ! -f "$f" ]; then
		echo "real_afl: $b run $i: afl-fuzz exited $rc without statistics:"
		tail -n 15 "$out.log" | sed 's/^/real_afl:   /'
		fail=1
		return
	fi
	stat() { sed -n "s/^$1 *: *//p" "$f" | head -n1; }
	local e x c found edges rt state
	e=$(stat execs_per_sec) x=$(stat execs_done) c=$(stat corpus_count)
	found=$(stat corpus_found) edges=$(stat edges_found) rt=$(stat run_time)
	# AFL++ before 4.0 called the corpus paths.
	[ -n "$c" ] || c=$(stat paths_total)
	[ -n "$found" ] || found=$(stat paths_found)
	state=$(sed -n 's/^cow_pte //p' "$st" 2> /dev/null)
	echo "real_afl: $b run $i: $e execs/s ($x in $rt s), corpus $c ($found found)," \
	     "$edges edges, fork server COW state ${state:-unknown}, afl-fuzz exit $rc"
	json "\"group\":\"afl-run\",\"case\":\"run\",\"backend\":\"$b\",\"mb\":$mb,\"run\":$i,\"execs_per_sec\":${e:-0},\"execs\":${x:-0},\"corpus\":${c:-0},\"found\":${found:-0},\"edges\":${edges:-0},\"seconds\":${rt:-0},\"cow_state\":${state:--2},\"exit\":$rc"
	eps[$b]+="${e:-0} " paths[$b]+="${c:-0} "
	# The fork server must have served executions, and the COW runs must be COW.
	[ "${x:-0}" -gt 0 ] || fail=1
	if [ "$b" = cow_pte ] && [ "$state" != 1 ]; then
		echo "real_afl: $b run $i: the fork server did not have COW page tables"
		fail=1
	fi
	rm -rf "$out"
}
for i in $(seq "$runs"); do
	if [ $cow = 0 ]; then one plain "$i"
	elif [ $((i % 2)) = 1 ]; then one plain "$i"; one cow_pte "$i"
	else one cow_pte "$i"; one plain "$i"; fi
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2); else print 0}'; }
list() { echo "$1" | xargs | tr ' ' ,; }
for b in plain cow_pte; do
	for m in execs paths; do
		if [ $m = execs ]; then v=${eps[$b]:-}; u=execs_per_s; else v=${paths[$b]:-}; u=corpus; fi
		n=$(echo "$v" | wc -w)
		[ "$n" -gt 0 ] || continue
		json "\"group\":\"$m\",\"case\":\"afl $mb MiB\",\"backend\":\"$b\",\"mb\":$mb,\"unit\":\"$u\",\"median\":$(echo "$v" | median),\"min\":$(echo "$v" | tr ' ' '\n' | grep . | sort -g | head -n1),\"max\":$(echo "$v" | tr ' ' '\n' | grep . | sort -g | tail -n1),\"runs\":$n"
	done
done
if [ -n "${eps[plain]:-}" ] && [ -n "${eps[cow_pte]:-}" ]; then
	json "\"group\":\"pairs\",\"case\":\"regression\",\"measure\":\"execs\",\"mb\":$mb,\"a\":[$(list "${eps[plain]}")],\"b\":[$(list "${eps[cow_pte]}")]"
	json "\"group\":\"pairs\",\"case\":\"regression\",\"measure\":\"paths\",\"mb\":$mb,\"a\":[$(list "${paths[plain]}")],\"b\":[$(list "${paths[cow_pte]}")]"
fi
exit $fail
