#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Redis BGSAVE, plain fork against COW page tables, in a Debian guest (vm.sh --rootfs):
# starts Debian's redis-server twice, as is and under ./cowrun, and runs ./redis_save
# against both (its header says what it measures); on a kernel without COW page tables
# (stock), the plain server alone.
#
#   real_redis.sh [--keys N] [--size BYTES] [--runs PAIRS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
keys=1000000 size=1024 runs=1
while [ $# -gt 0 ]; do
	case $1 in
	--keys) keys=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*) echo "usage: real_redis.sh [--keys N] [--size BYTES] [--runs PAIRS]" >&2; exit 2 ;;
	esac
done

skip() {
	echo "real_redis: SKIP: $1"
	printf '# bench {"bench":"redis_save","kernel":"%s","group":"redis","case":"unavailable","reason":"%s"}\n' \
		"$(uname -r)" "$1"
	exit 0
}
command -v redis-server > /dev/null || skip "no redis-server here (the Debian guest has it: vm.sh --rootfs)"
servers="plain cow"
[ -r /sys/kernel/mm/cow_pte/prctl_option ] || servers=plain

# Redis's own advice for fork-based saves; this guest is thrown away after the run.
echo 1 > /proc/sys/vm/overcommit_memory
work=/var/lib/mmext-redis
log=/tmp/cow_pte_preload.log
rm -rf "$work" "$log"
pids=()
start() {
	local name=$1
	shift
	mkdir -p "$work/$name"
	"$@" redis-server --port 0 --unixsocket "$work/$name.sock" --dir "$work/$name" \
		--dbfilename dump.rdb --save '' --appendonly no --enable-debug-command yes \
		--daemonize no --logfile "$work/$name.log" &
	pids+=($!)
}
stop() {
	local s
	for s in $servers; do
		redis-cli -s "$work/$s.sock" shutdown nosave > /dev/null 2>&1
	done
	wait "${pids[@]}" 2> /dev/null
}
trap stop EXIT
start plain env
cow=()
if [ "$servers" != plain ]; then
	start cow env MMEXT_COW_PTE_LOG=$log "$here/cowrun"
	cow=(--cow "$work/cow.sock")
fi
for _ in $(seq 300); do
	[ -S "$work/plain.sock" ] && { [ "$servers" = plain ] || [ -S "$work/cow.sock" ]; } && break
	sleep 0.2
done
what="plain and COW"
[ "$servers" = plain ] && what="plain only (the kernel has no COW page tables)"
echo "real_redis: $(redis-server --version); $what"
[ -f "$log" ] && echo "real_redis: COW opt-in (pid, program, result): $(cat "$log")"
"$here/redis_save" --plain "$work/plain.sock" "${cow[@]}" --keys "$keys" \
	--size "$size" --runs "$runs"
rc=$?
for s in $servers; do
	grep -h -E "fork|Fork CoW|saved|error" "$work/$s.log" | tail -n 4 | sed "s/^/real_redis: $s: /"
done
exit $rc
