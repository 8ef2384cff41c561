#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run a list of test programs and print TAP: one top-level result per program, its own
# output indented as TAP comments. Runs on the host and in the guest.
#
#   run-suite.sh [-t SECONDS] [-x NAME]... [-R LISTFILE]... LISTFILE...
#
# Programs from a -R list get two retries when they fail (the kernel's own selftests: some
# timing-sensitive ones fail now and then under TCG on stock kernels too, khugepaged's
# collapse_full_of_compound in 5 of 32 runs). A retry that passes is reported as
# "# flaky" and a "FLAKY NAME" line, never silently. -x NAME takes NAME's retries away:
# a known failure (a stock bug the queue fixes) would only fail three times as slowly.
# Each LISTFILE line is "NAME COMMAND [ARGS...]" (# comments allowed), COMMAND relative to
# the list file's directory. Exit status: 0 pass, 4 skip (kselftest), anything else fail.
# For each program a line "RESULT NAME pass|fail|skip CASES_PASS CASES_FAIL CASES_SKIP" is
# printed, with case counts from the kselftest "# Totals:" line when the program has one.
set -uo pipefail

per_test_timeout=600
entries=()
no_retry=" "
add_list() {
	local list=$1 retries=$2 dir name cmd
	dir=$(cd "$(dirname "$list")" && pwd)
	while read -r name cmd; do
		case $name in ''|'#'*) continue ;; esac
		entries+=("$name|$dir|$retries|$cmd")
	done < "$list"
}
# Runs in the guest too, without scripts/lib.sh: its usage is this header.
usage() {
	awk 'NR > 1 && !/^#/ {exit} NR > 2 {sub(/^# ?/, ""); print}' "$0" >&"$((${1:-2} ? 2 : 1))"
	exit "${1:-2}"
}
[ $# -gt 0 ] || usage
while [ $# -gt 0 ]; do
	case $1 in
	-t) per_test_timeout=${2:?-t needs SECONDS}; shift ;;
	-x) no_retry="$no_retry${2:?-x needs a NAME} "; shift ;;
	-R) add_list "${2:?-R needs a LISTFILE}" 2; shift ;;
	-h|--help) usage 0 ;;
	-*) usage ;;
	*) add_list "$1" 0 ;;
	esac
	shift
done

# run_one DIR CMD OUTFILE: run a program with the timeout; its exit status.
run_one() {
	(cd "$1" && timeout -k 10 "$per_test_timeout" bash -c "exec $2") > "$3" 2>&1 < /dev/null
}

echo "TAP version 13"
echo "1..${#entries[@]}"
n=0
for e in "${entries[@]}"; do
	n=$((n + 1))
	IFS='|' read -r name dir retries cmd <<< "$e"
	case $no_retry in *" $name "*) retries=0 ;; esac
	out=$(mktemp)
	[ -w /dev/kmsg ] && echo "mmext: start $name" > /dev/kmsg
	start=$SECONDS
	run_one "$dir" "$cmd" "$out"
	rc=$?
	flaky="" try=1
	while [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$try" -le "$retries" ]; do
		sed "s/^/# try $try: /" "$out"
		[ -w /dev/kmsg ] && echo "mmext: retry $name (rc=$rc)" > /dev/kmsg
		try=$((try + 1))
		run_one "$dir" "$cmd" "$out"
		rc2=$?
		[ $rc2 = 0 ] && flaky=" # flaky: failed (exit $rc), passed on try $try"
		rc=$rc2
	done
	secs=$((SECONDS - start))
	[ -w /dev/kmsg ] && echo "mmext: end $name rc=$rc" > /dev/kmsg
	sed 's/^/# /' "$out"
	totals=$(grep -a -o 'Totals: pass:[0-9]* fail:[0-9]* xfail:[0-9]* xpass:[0-9]* skip:[0-9]* error:[0-9]*' "$out" | tail -n1)
	rm -f "$out"
	case $rc in
	0) res=pass; tap="ok $n $name" ;;
	4) res=skip; tap="ok $n $name # SKIP" ;;
	124|137) res=fail; tap="not ok $n $name # TIMEOUT after ${per_test_timeout}s" ;;
	*) res=fail; tap="not ok $n $name # exit $rc" ;;
	esac
	if [ -n "$totals" ]; then
		read -r cp cf cs < <(echo "$totals" | sed -E 's/.*pass:([0-9]+) fail:([0-9]+) xfail:([0-9]+) xpass:([0-9]+) skip:([0-9]+) error:([0-9]+)/\1 \2 \5/')
		# A crash after the totals, or a failing exit with no failed case, still counts.
		[ $res = fail ] && [ "$cf" = 0 ] && cf=1
		# The harness exits 0 when every case skipped.
		[ $res = pass ] && [ "$cp" = 0 ] && [ "$cs" -gt 0 ] && res=skip && tap="ok $n $name # SKIP"
	else
		case $res in pass) cp=1 cf=0 cs=0 ;; fail) cp=0 cf=1 cs=0 ;; skip) cp=0 cf=0 cs=1 ;; esac
	fi
	echo "$tap (${secs}s)$flaky"
	[ -n "$flaky" ] && echo "FLAKY $name"
	echo "RESULT $name $res $cp $cf $cs"
done
