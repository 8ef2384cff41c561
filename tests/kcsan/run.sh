#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kcsan tier: the data-race detector's kernels (KCSAN=1: build/out/{patched,stock}-kcsan)
# on 2 and 4 vCPUs, each running the selftests of the queue's features, the cow_pte
# selftest's stress case with three seeds, and stress-ng's fork and memory stressors, a
# /proc maps and smaps reader running beside the last two. The patched kernel runs with
# COW page tables forced on for every fork (cow_pte/force_all); stock runs the same
# workload, where the features' selftests SKIP.
# KCSAN reports are expected in these guests: tests/kcsan/races.py classifies them
# instead of failing on them, OURS when the first frame of either access is a function the
# queue adds or changes, STOCK otherwise, and says whether stock's runs showed the same
# title. Any other splat (lockdep, WARNING, a BUG that is not KCSAN's) fails its guest.
# Writes build/logs/kcsan/summary.md (each guest's logs in build/logs/kcsan/KERNEL-cCPUS/)
# and prints "RESULT kcsan-KERNEL-cCPUS pass|fail" per guest (its tests passed, no other
# splat) and "RESULT kcsan-ours pass|fail" (fail: a race in the queue's code that stock
# does not show is not annotated).
#
#   tests/kcsan/run.sh [-n] [-c "2 4"] [-k "patched stock"]
#
# -c and -k pick the vCPU counts and kernels, -n boots them as they are built (no builds);
# the summary takes every guest's latest logs, those of earlier calls too.
# KCSAN_SECONDS (default 90) bounds the stress: the cow_pte stress case runs three seeds
# of a third of it each, stress-ng all of it; KCSAN_TEST_TIMEOUT (default 1200) bounds each
# selftest; KCSAN_SELFTESTS names the selftests (of tests/selftests.list) to run.
# KCSAN_PARAMS sets KCSAN's parameters in the guest first (/sys/module/kcsan/parameters),
# e.g. "skip_watch=1000 udelay_task=400": four times the watchpoints, each five times as
# long, for a denser (and slower) search than the defaults (4000 and 80 us).
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
export BUILD=$MMEXT_BUILD KCSAN=1

cpus_list="2 4" kernels="patched stock" build=1
while getopts "hnc:k:" o; do
	case $o in
	c) cpus_list=$OPTARG ;; k) kernels=$OPTARG ;; n) build=0 ;; h) usage 0 ;; *) usage ;;
	esac
done
secs=${KCSAN_SECONDS:-90} test_t=${KCSAN_TEST_TIMEOUT:-1200}
selftests=${KCSAN_SELFTESTS:-refpage proc-maps-race cow_pte pagemap_scan_rounds uffd-unregister-race pagemap_ioctl proc-pid-vm}
logroot=$BASE_BUILD/logs/kcsan
mkdir -p "$logroot"

t0=$SECONDS
if [ $build = 1 ]; then
	"$MMEXT_ROOT/scripts/kernel.sh" prepare
	for k in $kernels; do "$MMEXT_ROOT/scripts/kernel.sh" build $k > "$logroot/build-$k.log" 2>&1 ||
		{ tail -n 20 "$logroot/build-$k.log"; die "the $k-kcsan kernel did not build ($logroot/build-$k.log)"; }
	done
	"$MMEXT_ROOT/scripts/kernel.sh" selftests
	make -s -C "$MMEXT_ROOT/tests"
	say "kernels, selftests and payload ready in $((SECONDS - t0)) s"
fi

# The guest's workload; the selftests' list is written next to tests/selftests.list,
# whose paths are relative to it.
workload() {
	local force="" p
	[ "$1" = patched ] && force="echo 1 > /sys/kernel/mm/cow_pte/force_all || exit 1"
	for p in ${KCSAN_PARAMS:-}; do
		echo "echo ${p#*=} > /sys/module/kcsan/parameters/${p%%=*} || exit 1"
	done
	cat <<-EOF
	$force
	result() { case \$2 in 0) echo "RESULT \$1 pass 1 0 0" ;; 4) echo "RESULT \$1 skip 0 0 1" ;;
		*) echo "RESULT \$1 fail 0 1 0" ;; esac; }
	cd /mmext/tests
	grep -E '^($(echo $selftests | tr ' ' '|')) ' selftests.list > kcsan.list
	./run-suite.sh -t $test_t kcsan.list
	(while :; do cat /proc/[0-9]*/maps /proc/[0-9]*/smaps > /dev/null 2>&1; done) &
	reader=\$!
	for seed in 1 2 3; do
		COW_PTE_SEED=\$seed COW_PTE_SECONDS=$((secs / 3)) ../kselftest/mm/cow_pte -t stress > /tmp/stress.log 2>&1
		rc=\$?
		sed 's/^/# /' /tmp/stress.log
		# The harness exits 0 when its case skipped (stock has no COW PTE tables).
		[ \$rc = 0 ] && grep -q 'Totals: pass:0 .*skip:1 ' /tmp/stress.log && rc=4
		result cow_pte-stress-\$seed \$rc
	done
	# Not madvise: it fails on stock too (kernel/6.12/distro-baseline.txt).
	stress-ng --fork 1 --vfork 1 --forkheavy 1 --vm 1 --vm-bytes 64m --mremap 1 \\
		--mprotect 1 --munmap 1 --userfaultfd 1 --vm-rw 1 --verify -t ${secs}s \\
		--temp-path /tmp --metrics-brief 2>&1 | sed 's/^/# stress-ng: /'
	rc=\${PIPESTATUS[0]}
	# 3 and 4: a stressor without resources or support here; 7: untrustworthy metrics.
	case \$rc in 3|4) rc=4 ;; 7) rc=0 ;; esac
	result stress-ng \$rc
	kill \$reader
	# KCSAN's counters: how many watchpoints it set up, how many races it saw.
	sed 's/^/# kcsan: /' /sys/kernel/debug/kcsan
	EOF
}

# judge KERNEL LOGDIR RC: the guest's "why" it failed, or nothing. The stock bugs the queue
# fixes (the base's selftests-fixed.txt) fail on stock as expected.
judge() {
	local st fails
	st=$(sed -n 's/^MMEXT-EXIT \([0-9]*\)$/\1/p' "$2/channel.log" 2>/dev/null | tail -n1)
	case $3 in 124) echo "timed out"; return ;; 125) echo "no status: crashed or hung"; return ;; esac
	[ -s "$2/splats.log" ] && grep -v 'BUG: KCSAN: ' "$2/splats.log" | grep -q . &&
		{ echo "a splat other than KCSAN's: $(grep -v 'BUG: KCSAN: ' "$2/splats.log" | head -n1)"; return; }
	grep -q '^RESULT ' "$2/output.log" || { echo "no results (exit ${st:-?})"; return; }
	fails=$(awk '$1 == "RESULT" && $3 == "fail" {print $2}' "$2/output.log" |
		{ if [ "$1" = stock ]; then grep -vxF -f <(grep -v '^#' "$BASE_QUEUE/selftests-fixed.txt"); else cat; fi } |
		xargs) || true
	[ -z "$fails" ] || echo "failed: $fails"
}

for cpus in $cpus_list; do
	for k in $kernels; do
		logdir=$logroot/$k-c$cpus
		mkdir -p "$logdir"
		rm -f "$logdir"/{splats,output,dmesg,channel}.log
		say "$k-kcsan, $cpus vCPUs (console: $logdir/console.log)"
		t=$SECONDS rc=0
		# The guest's time: its selftests, the stress, and boot and KCSAN's slowness.
		"$MMEXT_ROOT/scripts/vm.sh" -k $k -c "$cpus" -t $((test_t * 4 + secs * 4 + 900)) -l "$logdir" \
			-- bash -c "$(workload $k)" > "$logdir/vm.log" 2>&1 || rc=$?
		why=$(judge $k "$logdir" $rc)
		res=pass
		[ -z "$why" ] || res=fail
		printf 'seconds %s\nresult %s\nwhy %s\n' $((SECONDS - t)) $res "$why" > "$logdir/run.txt"
		n=$(grep -c 'BUG: KCSAN: ' "$logdir/dmesg.log" 2>/dev/null) || true
		say "$k-kcsan, $cpus vCPUs: $res in $((SECONDS - t)) s${why:+: $why}, ${n:-0} KCSAN reports"
		echo "RESULT kcsan-$k-c$cpus $res $([ $res = pass ] && echo '1 0' || echo '0 1') 0"
	done
done
python3 "$(dirname "$0")/races.py" "$KTREE" "$BASE_TAG" "$logroot"
say "summary: $logroot/summary.md; the tier took $((SECONDS - t0)) s"
