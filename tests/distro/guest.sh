#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The distro tier in the guest: the whole mm suite as the kernel's run_vmtests.sh runs it
# (every category, destructive tests included), every proc selftest, stress-ng's memory
# stressors with --verify, trinity as an unprivileged user, and uapi_fuzz on the
# interfaces trinity cannot reach. Prints "RESULT NAME pass|fail|skip P F S" per program,
# as run-suite.sh does; the host (vm.sh) adds the kernel-log oracle.
#
#   guest.sh [PART...]    PART: proc vmtests stress fuzz trinity (default: all five, in
#                         this order: trinity, the most disruptive, last)
# Environment: VMTESTS_CATEGORIES (run_vmtests.sh -t categories; default: every one the
# script names), VMTESTS_TIMEOUT (seconds per category, 1200), STRESS_SECONDS (per
# stressor, 10), TRINITY_SECONDS (300), UAPI_FUZZ_SECONDS (uapi_fuzz's, 120),
# TEXTPOKE_SECONDS (the emulator check before the parts, 20).
set -uo pipefail

ks=/mmext/kselftest
nobody=65534
# util-linux's setpriv, by path: busybox runs its own applet of that name (which cannot
# change user) for a bare "setpriv", even when one is first in PATH.
setpriv=
for p in /usr/bin/setpriv /bin/setpriv; do
	[ -x "$p" ] && [ ! -L "$p" ] && setpriv=$p && break
done
[ -n "$setpriv" ] || { echo "guest.sh: no util-linux setpriv in the guest" >&2; exit 1; }
parts=${*:-proc vmtests stress fuzz trinity}
# The guest's initramfs has no accounts; trinity, uapi_fuzz and on-fault-limit run as nobody.
grep -q '^nobody:' /etc/passwd 2>/dev/null || {
	echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd
	echo "nobody:x:$nobody:$nobody:nobody:/nonexistent:/bin/sh" >> /etc/passwd
	printf 'root:x:0:\nnogroup:x:%s:\n' $nobody > /etc/group
}
# A hung-task report shows the task that waits, not the one it waits for: when a kthread
# that should stop keeps running, every CPU's backtrace shows where.
echo 1 > /proc/sys/kernel/hung_task_all_cpu_backtrace 2>/dev/null || true

# result NAME RC [P F S]: the RESULT line for an exit status (0 pass, 4 skip, else fail).
result() {
	local name=$1 rc=$2 p=${3:-} f=${4:-} s=${5:-} res
	case $rc in 0) res=pass ;; 4) res=skip ;; *) res=fail ;; esac
	if [ -z "$p" ]; then
		case $res in pass) p=1 f=0 s=0 ;; fail) p=0 f=1 s=0 ;; skip) p=0 f=0 s=1 ;; esac
	fi
	[ $res = fail ] && [ "$f" = 0 ] && f=1
	[ $res = pass ] && [ "$p" = 0 ] && [ "$s" -gt 0 ] && res=skip
	echo "RESULT $name $res $p $f $s"
}

# run_group SECONDS CMD...: CMD in a process group of its own, the whole of which is
# killed at the time limit: busybox's timeout signals its child alone, and a test that
# child started would run on into the next one.
run_group() {
	local t=$1 pid dog rc
	shift
	setsid "$@" &
	pid=$!
	( sleep "$t"; kill -TERM -"$pid" 2>/dev/null; sleep 10; kill -KILL -"$pid" 2>/dev/null ) &
	dog=$!
	wait $pid
	rc=$?
	kill $dog 2>/dev/null
	wait $dog 2>/dev/null
	return $rc
}

# run_vmtests.sh calls "sudo -u nobody CMD" and "sudo tee FILE"; we are root already.
sudo_shim() {
	mkdir -p /tmp/distro-bin
	cat > /tmp/distro-bin/sudo <<-EOF
	#!/bin/sh
	if [ "\$1" = -u ]; then u=\$(id -u "\$2"); shift 2; exec $setpriv --reuid=\$u --regid=\$u --clear-groups "\$@"; fi
	exec "\$@"
	EOF
	chmod +x /tmp/distro-bin/sudo
	export PATH=/tmp/distro-bin:$PATH
}

# parse_vmtests LOG TIMEDOUT: "NAME RC P F S" for each test run_vmtests.sh ran in LOG
# ("mm/NAME_ARGS", case counts from its kselftest totals), and "# ..." notes.
parse_vmtests() {
	# A test still running at the time limit has a title and no verdict: a failure.
	awk -v timedout="$2" '
		function verdict(rc) { if (name != "") print name, rc, p, f, s; name = "" }
		# A title is "running CMD" between two separator lines (of dashes with GNU
		# tr; busybox tr garbles them); nested output has a second "# ".
		/^# running / {
			verdict(1)
			name = substr($0, 11); sub(/^bash /, "", name); gsub(/\.\//, "", name)
			gsub(/[^A-Za-z0-9_.+-]+/, "_", name); name = "mm/" name
			p = f = s = ""
		}
		name != "" && match($0, /Totals: pass:[0-9]+ fail:[0-9]+ xfail:[0-9]+ xpass:[0-9]+ skip:[0-9]+/) {
			split(substr($0, RSTART, RLENGTH), t, /[^0-9]+/); p = t[2]; f = t[3]; s = t[6]
		}
		/^# \[PASS\]$/ { verdict(0) } /^# \[SKIP\]$/ { verdict(4) } /^# \[FAIL\]$/ { verdict(1) }
		END { if (name != "") { if (timedout) print "# " name ": timed out"; verdict(1) } }
	' "$1"
}

# run_category CAT LOG SECONDS: run_vmtests.sh -t CAT into LOG, shown with a prefix;
# its status, and whether it ran into the time limit, in rc and timedout.
run_category() {
	local cat=$1 log=$2 t=$3 start=$SECONDS
	[ -w /dev/kmsg ] && echo "mmext: start run_vmtests -t $cat" > /dev/kmsg
	run_group "$t" ./run_vmtests.sh -d -t "$cat" > "$log" 2>&1 < /dev/null
	rc=$?
	[ -w /dev/kmsg ] && echo "mmext: end run_vmtests -t $cat rc=$rc" > /dev/kmsg
	sed "s/^/# $cat: /" "$log"
	echo "# run_vmtests -t $cat: exit $rc in $((SECONDS - start))s"
	# A killed run's status is the signal's, not 124: go by the clock.
	timedout=$([ $((SECONDS - start)) -ge "$t" ] && echo 1 || echo 0)
}

# One run_vmtests.sh per category, each with its own time limit; each test it runs
# becomes a RESULT line. A category where a test failed (but did not time out) runs
# once more: a test that fails and then passes is reported FLAKY and passes, as
# run-suite.sh reports its retries; one that fails twice fails.
part_vmtests() {
	local cats t=${VMTESTS_TIMEOUT:-1200} cat rc timedout name res p f s again
	cd "$ks/mm" || { result mm/run_vmtests 1; return; }
	cats=${VMTESTS_CATEGORIES:-$(grep -o 'CATEGORY="[a-z_0-9]*"' run_vmtests.sh | cut -d'"' -f2 | awk '!seen[$0]++')}
	sudo_shim
	for cat in $cats; do
		run_category "$cat" "/tmp/vmtests-$cat.log" "$t"
		parse_vmtests "/tmp/vmtests-$cat.log" "$timedout" > "/tmp/vmtests-$cat.res"
		: > "/tmp/vmtests-$cat.again"
		if [ "$timedout" = 0 ] && grep -qv '^#\|^[^ ]* [04] ' "/tmp/vmtests-$cat.res"; then
			echo "# run_vmtests -t $cat: a test failed; running the category again"
			run_category "$cat" "/tmp/vmtests-$cat-again.log" "$t"
			parse_vmtests "/tmp/vmtests-$cat-again.log" "$timedout" > "/tmp/vmtests-$cat.again"
		fi
		while read -r name res p f s; do
			case $name in '#') echo "$name $res $p $f $s"; continue ;; esac
			if [ "$res" != 0 ] && [ "$res" != 4 ]; then
				again=$(awk -v n="$name" '$1 == n { print; exit }' "/tmp/vmtests-$cat.again")
				if [ "${again%% *}" = "$name" ] && [ "$(echo "$again" | cut -d' ' -f2)" = 0 ]; then
					echo "# $name failed and passed on a retry"
					echo "FLAKY $name"
					read -r name res p f s <<< "$again"
				fi
			fi
			result "$name" "$res" $p $f $s
		done < "/tmp/vmtests-$cat.res"
		if ! grep -q '^# running ' "/tmp/vmtests-$cat.log"; then
			echo "# run_vmtests -t $cat ran nothing here"
			result "mm/run_vmtests-$cat" "$([ $rc = 0 ] || [ $rc = 4 ] && echo 4 || echo "$rc")"
		fi
	done
}

part_proc() {
	local list=/tmp/proc.list f
	: > $list
	for f in "$ks"/proc/*; do
		[ -f "$f" ] && [ -x "$f" ] && echo "proc/${f##*/} $f" >> $list
	done
	# Retried once, as the selftest subset is: some race-sensitive ones flake under TCG.
	/mmext/tests/run-suite.sh -t 600 -R $list
}

# The memory stressors of stress-ng 0.15.06 ("stress-ng --stressors"), one instance per
# CPU each, with --verify. This version has no KSM option: ksmd scans fast for the whole
# part instead, and merges what the madvise stressor marks MADV_MERGEABLE.
STRESSORS="vm mmap mremap madvise fork vfork clone brk stack mlock msync shm shm-sysv
	pagemove userfaultfd numa mmapfork mmapmany mmapaddr mmapfixed mmaphuge mprotect
	munmap remap vm-rw vm-splice vm-addr memfd secretmem pkey mincore malloc
	tlb-shootdown forkheavy mlockmany stackmmap physpage pageswap idle-page"
part_stress() {
	local secs=${STRESS_SECONDS:-10} have s log rc ksm=/sys/kernel/mm/ksm
	have=" $(stress-ng --stressors) "
	mkdir -p /tmp/stress && cd /tmp/stress || return
	echo 10 > $ksm/sleep_millisecs; echo 1000 > $ksm/pages_to_scan; echo 1 > $ksm/run
	for s in $STRESSORS; do
		name=stress-ng/$s
		case $have in *" $s "*) ;; *) echo "# $name: not in this stress-ng"; result "$name" 4; continue ;; esac
		log=/tmp/stress/$s.log
		run_group $((secs * 4 + 60)) stress-ng --"$s" 0 --verify -t "${secs}s" \
			--temp-path /tmp/stress --metrics-brief > "$log" 2>&1 < /dev/null
		rc=$?
		sed "s|^|# $name: |" "$log"
		# 2: a stressor failed (a verify failure among them); 3: no resource, 4: not
		# implemented here: skips; 7: metrics untrustworthy, not a failure of the kernel.
		case $rc in 0|7) rc=0 ;; 3|4) rc=4 ;; esac
		grep -qi 'verif.*fail\|fail.*verif' "$log" && rc=1
		# A stressor this version calls pathological (mlockmany: "may hang or reboot
		# the machine") runs only with --pathological, which would risk the whole part.
		grep -q 'No stress workers invoked' "$log" && rc=4
		result "$name" $rc
	done
	echo "# ksm: $(cat $ksm/pages_shared) shared, $(cat $ksm/pages_sharing) sharing, $(cat $ksm/full_scans) full scans"
	echo 2 > $ksm/run
}

# trinity as nobody for TRINITY_SECONDS: it ends on its own if the kernel taints.
part_trinity() {
	local secs=${TRINITY_SECONDS:-300} dir=/tmp/trinity rc taint0 taint1 left start ran
	mkdir -p $dir && chown $nobody:$nobody $dir && cd $dir || return
	taint0=$(cat /proc/sys/kernel/tainted)
	start=$SECONDS
	# SIGINT is trinity's own stop: it reaps its children and prints its totals.
	# Trinity 2023.01 crashes building its socket cache in this guest, and perf fds fail
	# to initialise. Debian's kernels taint on purpose (TAINT_AUX) at any fanotify_mark()
	# that asks for permission events, even a failing one ("may lead to deadlock"):
	# that stops trinity and is no kernel bug.
	timeout -s INT -k 60 "$secs" "$setpriv" --reuid=$nobody --regid=$nobody --clear-groups \
		trinity -q -l off -C 4 --disable-fds=sockets,perf -x fanotify_mark \
		> $dir/log 2>&1 < /dev/null
	rc=$? ran=$((SECONDS - start))
	sleep 5
	taint1=$(cat /proc/sys/kernel/tainted)
	left=$(ps -e -o pid,user,stat,comm 2>/dev/null | awk -v u=$nobody '$2 == "nobody" || $2 == u {print $1}')
	tail -n 40 $dir/log | sed 's/^/# trinity: /'
	echo "# trinity: exit $rc after ${ran}s, tainted $taint0 -> $taint1, processes of nobody left: ${left:-none}"
	[ -n "$left" ] && ps -e -o pid,user,stat,comm | sed 's/^/# trinity: /' && kill -9 $left 2>/dev/null
	# The normal end is our SIGINT at the time limit, whatever trinity then returns; a
	# tainted kernel, stuck processes, no stop within 60 s (137) or an early end fail.
	if [ "$taint1" != "$taint0" ] || [ -n "$left" ] || [ $rc = 137 ] || [ $ran -lt "$secs" ]; then
		rc=1
	else
		rc=0
	fi
	result trinity $rc
}

part_fuzz() {
	local secs=${UAPI_FUZZ_SECONDS:-120} rc
	mkdir -p /tmp/fuzz && chown $nobody:$nobody /tmp/fuzz && cd /tmp/fuzz || return
	timeout -k 30 $((secs + 120)) "$setpriv" --reuid=$nobody --regid=$nobody --clear-groups \
		/mmext/bin/uapi_fuzz -t "$secs" > log 2>&1 < /dev/null
	rc=$?
	sed 's/^/# uapi_fuzz: /' log
	result uapi_fuzz $rc
}

# The emulator before the kernel: in a guest whose CPUs can run stale kernel text, every
# later result would be noise (textpoke.c).
echo "# distro: textpoke"
/mmext/bin/textpoke -t "${TEXTPOKE_SECONDS:-20}"
result harness/textpoke $?

for part in $parts; do
	case $part in
	vmtests|proc|stress|trinity|fuzz) ;;
	*) echo "unknown part '$part'" >&2; exit 2 ;;
	esac
	echo "# distro: $part"
	start=$SECONDS
	"part_$part"
	echo "# distro: $part took $((SECONDS - start))s"
done
exit 0
