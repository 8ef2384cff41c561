#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The test command: build stock and patched 6.12 and everything the tests need, then run
#   lint    mandoc on the man pages, checkpatch.pl on the kernel queue, the benchmark
#           runner's unit checks (tests/lint.sh)
#   host    the feature tests on the running kernel (SKIPs where it lacks a feature),
#           and tests/host.list (make install, building against the installed tree,
#           the Debian packages, the library's ABI against the last release's)
#   host-asan  the same, built with AddressSanitizer and UBSan
#   fuzz    the maps parser's libFuzzer target for FUZZ_SECONDS (tests/fuzz/Makefile)
#   stock   the feature tests and the mm/proc selftest subset in a stock 6.12 guest
#   patched the same in a guest running 6.12 with our queue
#   patched-cow-all  (not run by default) the selftest subset in the patched guest with
#           COW page tables forced on for every fork (/sys/kernel/mm/cow_pte/force_all)
#   mainline  (not run by default) stock and patched on each mainline base (its base.conf
#           says MMEXT_BASE_MAINLINE=1: 7.3): the same as "tests/run.sh --base 7.3", whose
#           tiers are stock and patched only
#   kcsan   (not run by default) the data-race detector's kernels running the features'
#           selftests and stress under force_all, on 2 and 4 vCPUs (tests/kcsan/run.sh)
#   syzkaller  (not run by default) syzkaller on the patched fuzzing kernel for
#           SYZ_SECONDS, then a summary with coverage (tests/syzkaller/run.sh)
#   distro  (not by default: hours) Debian-config kernels through tests/distro/guest.sh;
#           DISTRO_PARTS runs part of it, DISTRO_VM_CPUS sets its guests' vCPUs
#           (4: migration's tests want 3 or more); guest.sh's variables
#           (VMTESTS_CATEGORIES, VMTESTS_TIMEOUT, STRESS_SECONDS, TRINITY_SECONDS,
#           UAPI_FUZZ_SECONDS) reach the guest
# A selftest that passes in selftests-baseline.txt (stock's results) must pass everywhere;
# one that fails there too is reported as a known failure and counted as skipped, unless
# selftests-fixed.txt names it: a stock bug our queue fixes, so it must pass on patched,
# and its failures on stock (even intermittent ones) count as skipped.
# Any kernel splat in a guest fails that tier. Ends with the run's duration and
# "N passed, N failed, N skipped".
#
#   tests/run.sh [--base 6.12|7.3] [--tiers "lint host host-asan fuzz stock patched"]
#                [--update-baseline]
# --base (or MMEXT_BASE) sets the kernel of the stock and patched tiers (default: the base
# whose base.conf says MMEXT_BASE_DEFAULT=1, 6.12); each base has its own baselines
# (kernel/<base>/). DEBUG=1 uses the KASAN/kmemleak builds for the guest tiers.
set -uo pipefail
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	[ "${args[i]}" = --base ] && export MMEXT_BASE=${args[i + 1]:-}
done
. "$(dirname "$0")/../scripts/lib.sh"
# The Makefiles' BUILD: with MMEXT_BUILD elsewhere, the payload the guests boot goes there too.
export BUILD=$MMEXT_BUILD

tiers="lint host host-asan fuzz stock patched" update_baseline=0
# The host tiers do not depend on the base: they run with the default base, and another
# base runs only its guests.
[ "$MMEXT_BASE_DEFAULT" = 1 ] || tiers="stock patched"
while [ $# -gt 0 ]; do
	case $1 in
	--base) shift ;;
	--tiers) tiers=$2; shift ;;
	--update-baseline) update_baseline=1 ;;
	-h|--help) usage 0 ;;
	*) usage ;;
	esac
	shift
done
# "distro": stock-distro and patched-distro, kernels from Debian's configuration (DISTRO=1)
# running tests/distro/guest.sh, with stock-distro's results as their baseline
# (distro-baseline.txt), and patched-distro-cow-all, the same with every process opted
# in to COW page tables.
t2=""
for t in $tiers; do
	case $t in distro) t2="$t2 stock-distro patched-distro patched-distro-cow-all" ;; *) t2="$t2 $t" ;; esac
done
tiers=${t2# }
run_start=$SECONDS

# The base's baselines: stock's selftest results, the stock bugs its queue fixes, and
# stock-distro's results (kernel/<base>/).
baseline=$BASE_QUEUE/selftests-baseline.txt
fixed=$BASE_QUEUE/selftests-fixed.txt
[ -f "$fixed" ] || fixed=/dev/null
distro_baseline=$BASE_QUEUE/distro-baseline.txt
if [ "$MMEXT_BASE_DEFAULT" != 1 ]; then
	case " $tiers " in *" mainline "*|*" lint "*|*" host"*|*" fuzz "*)
		die "--base $MMEXT_BASE runs the stock, patched and patched-cow-all tiers only" ;;
	esac
fi
logs=$BASE_BUILD/logs/tests
mkdir -p "$logs"
set -e
"$MMEXT_ROOT/scripts/deps.sh"
want() { case " $tiers " in *" $1 "*) return 0 ;; esac; return 1; }
# The tests and the guest payload need no kernel tree (they are the same whichever base
# boots them); lint runs the base tree's checkpatch.pl, and the guests boot its kernels
# and run its selftests, built with patched's uapi headers.
guests=0
if want stock || want patched || want patched-cow-all || [[ " $tiers " = *-distro* ]]; then guests=1; fi
if want lint || [ $guests = 1 ]; then "$MMEXT_ROOT/scripts/kernel.sh" prepare; fi
if [ $guests = 1 ]; then
	"$MMEXT_ROOT/scripts/kernel.sh" build patched
	want stock && "$MMEXT_ROOT/scripts/kernel.sh" build stock
	"$MMEXT_ROOT/scripts/kernel.sh" selftests
fi
# The selftest subset as the guest runs it. A base without some of the queue's selftests
# lists them, with the reason, in its selftests-skip.txt; the filtered list sits next to
# the base's selftests (/mmext/kselftest in the guest), where its relative paths still hold.
guest_list=/mmext/tests/selftests.list
if [ $guests = 1 ] && [ -f "$BASE_QUEUE/selftests-skip.txt" ]; then
	awk 'NR == FNR { if ($1 !~ /^#/) skip[$1] = 1; next } !($1 in skip)' \
		"$BASE_QUEUE/selftests-skip.txt" "$MMEXT_ROOT/tests/selftests.list" > "$KOUT/kselftest/selftests.list"
	guest_list=/mmext/kselftest/selftests.list
fi
make -s -C "$MMEXT_ROOT/tests"
want host-asan && make -s -C "$MMEXT_ROOT/tests" SANITIZE=1 OUT="$MMEXT_BUILD/guest-asan"
make -s -C "$MMEXT_ROOT/examples"
set +e

total_pass=0 total_fail=0 total_skip=0
failures=() flaky=()

# tally TIER RESULTFILE: add up "RESULT" lines, applying the baseline to selftests
# (the distro tiers' is stock-distro's, whose names have an mm/ or proc/ prefix).
tally() {
	local tier=$1 file=$2 name res cp cf cs base bl=$baseline
	case $tier in *-distro*) bl=$distro_baseline ;; esac
	while read -r _ name res cp cf cs; do
		base=""
		[ -f "$bl" ] && base=$(awk -v n="$name" '$1 == n {print $2}' "$bl")
		known=""
		if [ "$res" = fail ]; then
			if grep -qx "${name#*/}" "$fixed"; then
				case $tier in stock|stock-distro) known="on stock $MMEXT_BASE (a bug the queue fixes)" ;; esac
			elif [ "$base" = fail ]; then
				known="on stock $MMEXT_BASE too (baseline)"
			fi
		fi
		if [ -n "$known" ]; then
			echo "# $tier: $name fails $known: counted as skipped"
			total_skip=$((total_skip + cp + cf + cs))
			continue
		fi
		if [ "$base" = pass ] && [ "$res" != pass ]; then
			failures+=("$tier: $name passes on stock (baseline) but is $res here")
			[ "$cf" = 0 ] && cf=1
		fi
		[ "$res" = fail ] && failures+=("$tier: $name failed")
		total_pass=$((total_pass + cp)) total_fail=$((total_fail + cf)) total_skip=$((total_skip + cs))
	done < <(grep '^RESULT ' "$file")
}

# guest_ended TIER RC: take the guest's output as the tier's results, and fail the tier
# if the run itself went wrong (vm.sh's status RC): results before a splat, a hang or a
# crash are not the tier's whole result.
guest_ended() {
	local logdir=$BASE_BUILD/logs/vm-$1 why=
	cp "$logdir/output.log" "$out" 2>/dev/null || : > "$out"
	if [ "$2" = 1 ] && [ -s "$logdir/splats.log" ]; then
		why="kernel splat in dmesg ($logdir/splats.log)"
	elif [ "$2" = 124 ]; then
		why="guest timed out ($logdir/console.log)"
	elif [ "$2" = 125 ]; then
		why="guest ended without reporting a status: killed, hung or crashed ($logdir/console.log)"
	elif ! grep -q '^RESULT ' "$out"; then
		why="guest run produced no results (exit $2; $logdir/console.log)"
	fi
	if [ -n "$why" ]; then
		failures+=("$1: $why")
		total_fail=$((total_fail + 1))
	fi
}

for tier in $tiers; do
	echo "### tier $tier"
	tier_start=$SECONDS
	out=$logs/$tier.tap
	case $tier in
	lint)
		"$MMEXT_ROOT/tests/lint.sh" | tee "$out"
		;;
	host)
		"$MMEXT_ROOT/tests/run-suite.sh" "$MMEXT_BUILD/guest/bin/tests.list" \
			"$MMEXT_ROOT/tests/host.list" | tee "$out"
		;;
	host-asan)
		"$MMEXT_ROOT/tests/run-suite.sh" "$MMEXT_BUILD/guest-asan/bin/tests.list" | tee "$out"
		;;
	fuzz)
		if make -s -C "$MMEXT_ROOT/tests/fuzz" run ${FUZZ_SECONDS:+FUZZ_SECONDS="$FUZZ_SECONDS"} > "$logs/fuzz.log" 2>&1; then
			echo "RESULT maps_parser_fuzz pass 1 0 0" | tee "$out"
		else
			tail -n 30 "$logs/fuzz.log"
			echo "RESULT maps_parser_fuzz fail 0 1 0" | tee "$out"
		fi
		grep -E '^Done|^#[0-9]+ *DONE' "$logs/fuzz.log" | sed 's/^/# /'
		;;
	stock|patched|patched-cow-all)
		# KASAN and kmemleak make the large-VMA tests several times slower under TCG.
		# uffd-unit-tests' poison cases print a line per page with memory failure built in.
		suite_t=1200 vm_t=3600
		[ "${DEBUG:-0}" = 1 ] && suite_t=1800 vm_t=7200
		if [ $tier = patched-cow-all ]; then
			# Test switch: every fork shares PTE tables; the selftest subset must not notice.
			"$MMEXT_ROOT/scripts/vm.sh" -k patched -t $vm_t -l "$BASE_BUILD/logs/vm-$tier" -- \
				sh -c "echo 1 > /sys/kernel/mm/cow_pte/force_all &&
				       exec /mmext/tests/run-suite.sh -t $suite_t -R $guest_list"
		else
			# On stock, the bugs the queue fixes fail every try: no retries for them.
			no_retry=()
			[ $tier = stock ] && for n in $(grep -v '^#' "$fixed"); do no_retry+=(-x "$n"); done
			"$MMEXT_ROOT/scripts/vm.sh" -k $tier -t $vm_t -l "$BASE_BUILD/logs/vm-$tier" -- \
				/mmext/tests/run-suite.sh -t $suite_t "${no_retry[@]}" /mmext/bin/tests.list \
				-R $guest_list
		fi
		guest_ended $tier $?
		;;
	stock-distro|patched-distro|patched-distro-cow-all)
		# Built here, not above: a kernel whose configuration fails fails its tier only.
		k=${tier%%-*} vm_t=${DISTRO_VM_TIMEOUT:-21600}
		[ "${DEBUG:-0}" = 1 ] && vm_t=$((vm_t * 2))
		: > "$out"
		parts=${DISTRO_PARTS:-proc vmtests stress fuzz trinity}
		if [ -z "${parts// /}" ]; then
			echo "### tier $tier: nothing to run (DISTRO_PARTS=${DISTRO_PARTS:-})"
			continue
		fi
		if ! DISTRO=1 "$MMEXT_ROOT/scripts/kernel.sh" build $k > "$logs/build-$k-distro.log" 2>&1; then
			tail -n 20 "$logs/build-$k-distro.log"
			failures+=("$tier: the $k-distro kernel did not build ($logs/build-$k-distro.log)")
			total_fail=$((total_fail + 1))
			echo "### tier $tier: $((SECONDS - tier_start))s"
			continue
		fi
		cmd=
		for v in VMTESTS_CATEGORIES VMTESTS_TIMEOUT STRESS_SECONDS TRINITY_SECONDS UAPI_FUZZ_SECONDS; do
			[ -n "${!v:-}" ] && cmd+="export $v='${!v}'; "
		done
		cmd+="exec /mmext/tests/distro-guest.sh $parts"
		# Debian's kernel has no CONFIG_DEBUG_VM, so no force_all switch: every process of
		# the tier opts in as a user would, by a setting kept across fork() and execve()
		# (enabled=2 lets trinity's and uapi_fuzz's unprivileged processes keep it).
		[ $tier = patched-distro-cow-all ] &&
			cmd="echo 2 > /sys/kernel/mm/cow_pte/enabled || exit 1; ${cmd/exec /exec mmext run --cow-pte -- }"
		DISTRO=1 "$MMEXT_ROOT/scripts/vm.sh" -k $k -m 4G -c "${DISTRO_VM_CPUS:-4}" -t $vm_t -l "$BASE_BUILD/logs/vm-$tier" -- sh -c "$cmd"
		guest_ended $tier $?
		;;
	kcsan|syzkaller)
		# Their own runners (tests/<tier>/run.sh) build their kernels and print RESULT lines.
		"$MMEXT_ROOT/tests/$tier/run.sh" 2>&1 | tee "$out"
		[ "${PIPESTATUS[0]}" = 0 ] || grep -q '^RESULT .* fail ' "$out" || {
			failures+=("$tier: its runner failed without a result ($logs/$tier.tap)")
			total_fail=$((total_fail + 1))
		}
		;;
	mainline)
		# Each mainline base's own run; its totals and failures join this run's.
		ub=()
		[ $update_baseline = 1 ] && ub=(--update-baseline)
		for b in $(all_bases); do
			[ "$(base_conf "$b" MMEXT_BASE_MAINLINE)" = 1 ] || continue
			ml=$logs/mainline-$b.log mp=
			"$0" --base "$b" --tiers "stock patched" "${ub[@]}" 2>&1 | tee "$ml"
			read -r mp mf ms < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/p' \
				"$ml" | tail -n1)
			if [ -z "${mp:-}" ]; then
				failures+=("mainline: the $b run ended without totals ($ml)")
				total_fail=$((total_fail + 1))
			else
				total_pass=$((total_pass + mp)) total_fail=$((total_fail + mf)) total_skip=$((total_skip + ms))
				while read -r line; do failures+=("mainline $b: $line"); done < <(sed -n '/^Failures:$/,/^[0-9]* passed/p' \
					"$ml" | sed -n 's/^  //p')
			fi
		done
		: > "$out"
		;;
	*) echo "unknown tier $tier" >&2; exit 2 ;;
	esac
	tally "$tier" "$out"
	while read -r _ name; do flaky+=("$tier: $name failed and passed on a retry"); done < <(grep '^FLAKY ' "$out")
	if [ $update_baseline = 1 ] && [ $tier = stock-distro ]; then
		# A partial run (DISTRO_PARTS, VMTESTS_CATEGORIES) replaces the lines it has
		# results for and keeps the others.
		{
			echo "# stock-distro $MMEXT_BASE ($MMEXT_BASE_VERSION, Debian's configuration) results of the"
			echo "# distro tier, written by 'tests/run.sh --tiers stock-distro --update-baseline'."
			echo "# NAME RESULT PASS FAIL SKIP"
			{ grep '^RESULT ' "$out" | cut -d' ' -f2-
			  awk '!/^#/' "$distro_baseline" 2>/dev/null || true; } | awk '!seen[$1]++' | sort
		} > "$distro_baseline.new" && mv "$distro_baseline.new" "$distro_baseline"
		echo "# baseline written to $distro_baseline"
	fi
	echo "### tier $tier: $((SECONDS - tier_start))s"
	if [ $update_baseline = 1 ] && [ $tier = stock ]; then
		{
			echo "# Stock $MMEXT_BASE ($MMEXT_BASE_VERSION) results of tests/selftests.list in our guest,"
			echo "# written by 'tests/run.sh --base $MMEXT_BASE --tiers stock --update-baseline'. NAME RESULT PASS FAIL SKIP"
			grep '^RESULT ' "$out" | awk 'NR==FNR {want[$1]=1; next} ($2 in want) {print $2, $3, $4, $5, $6}' \
				<(grep -v '^#' "$MMEXT_ROOT/tests/selftests.list") -
		} > "$baseline"
		echo "# baseline written to $baseline"
	fi
done

echo
if [ ${#flaky[@]} -gt 0 ]; then
	echo "Flaky (counted as passed, look at them):"
	printf '  %s\n' "${flaky[@]}"
fi
if [ ${#failures[@]} -gt 0 ]; then
	echo "Failures:"
	printf '  %s\n' "${failures[@]}"
fi
echo "# tiers $tiers took $((SECONDS - run_start))s"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ $total_fail = 0 ] && [ ${#failures[@]} = 0 ]
