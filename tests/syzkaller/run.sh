#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The syzkaller tier: fuzz the patched 6.12 fuzzing kernel (FUZZ=1: the debug kernel with
# KCOV) with the calls that reach mm, then write a summary with the coverage of the code
# the queue adds or changes.
#
#   tests/syzkaller/run.sh [-t SECONDS] [-r "plain force_all"]
#   tests/syzkaller/run.sh --check     only build the descriptions (what CI runs)
#   tests/syzkaller/run.sh --save      keep the corpus and its fuzzing time in the repo
#   tests/syzkaller/run.sh -h          this text
#
# -t (or SYZ_SECONDS, default 3600) is the fuzzing time, split evenly between the runs of
# -r (or SYZ_RUNS): "plain" boots the kernel as it is, "force_all" with every fork
# sharing its page tables. Each run is one syz-manager on one QEMU VM (TCG, 2 vCPUs),
# reachable over ssh on 127.0.0.1 only. The work directory, build/syzkaller-work/, keeps
# the corpus from run to run, and history.tsv the fuzzing time it comes from; a new work
# directory starts from tests/syzkaller/corpus.db and history.tsv, which --save writes,
# so that fuzzing time adds up across clones. Results: build/logs/syzkaller/ (summary.md, the manager's
# logs, coverage files); crashes in build/syzkaller-work/crashes/.
# Prints RESULT lines: one per run (pass when the manager fuzzed), and one per crash
# title, which passes only when tests/syzkaller/known-crashes.txt names it as stock's.
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

here=$MMEXT_ROOT/tests/syzkaller
# syzkaller's pinned source (its module is not on the Go proxy): SYZKALLER_TARBALL, or the
# shared tools directory beside the clone or at /work/shared.
tarball=${SYZKALLER_TARBALL:-}
for d in "$MMEXT_ROOT/../shared" /work/shared; do
	[ -n "$tarball" ] || [ ! -f "$d/tools/syzkaller/syzkaller-1e72964b.tar.xz" ] ||
		tarball=$d/tools/syzkaller/syzkaller-1e72964b.tar.xz
done
syz=$MMEXT_BUILD/syzkaller
work=$MMEXT_BUILD/syzkaller-work
logs=$MMEXT_BUILD/logs/syzkaller
seconds=${SYZ_SECONDS:-3600} runs=${SYZ_RUNS:-plain force_all} check=0
while [ $# -gt 0 ]; do
	case $1 in
	-t) seconds=${2:?-t needs seconds}; shift ;;
	-r) runs=${2:?-r needs run names}; shift ;;
	--check) check=1 ;;
	--save) check=2 ;;
	-h|--help) usage 0 ;;
	*) usage ;;
	esac
	shift
done
case $seconds in *[!0-9]*|''|0) die "-t takes a number of seconds, not '$seconds'" ;; esac
for r in $runs; do
	case $r in plain|force_all) ;; *) die "unknown run '$r' (plain or force_all)" ;; esac
done
missing=
command -v go > /dev/null || missing="Go is not on PATH"
[ -f "$tarball" ] || missing="no syzkaller source (set SYZKALLER_TARBALL)"
if [ -n "$missing" ]; then
	[ $check = 1 ] || die "$missing"
	echo "ok - syzkaller_descriptions # SKIP $missing"
	echo "RESULT syzkaller_descriptions skip 0 0 1"
	exit 0
fi

# build_syzkaller: unpack the pinned source with our descriptions applied, and build it
# when either changed (a stamp holds their hash). With an argument, only the descriptions.
# Where the kernel tree exists, apply.sh first checks that the descriptions' numbers are
# the kernel's (the ones the 6.12 backport publishes in /sys/kernel/mm/refpage/syscall_nr
# and /sys/kernel/mm/cow_pte/prctl_option; the image's boot prints those as well).
build_syzkaller() {
	local h ktree=() k
	[ -d "$KTREE/.git" ] && ktree=("$KTREE")
	h=$( { cat "$tarball" "$here/mmext.txt" "$here/mmext.txt.const" "$here/apply.sh"
	       for k in arch/x86/entry/syscalls/syscall_64.tbl include/uapi/linux/prctl.h \
			include/uapi/linux/refpage.h; do
		       [ ${#ktree[@]} = 0 ] || cat "$KTREE/$k" 2>/dev/null || true
	       done; } | sha256sum | cut -c1-16)
	if [ "$(cat "$syz/.mmext-stamp" 2>/dev/null)" != "$h" ]; then
		say "unpacking syzkaller with our descriptions into $syz"
		rm -rf "$syz"
		mkdir -p "$syz"
		tar -C "$syz" -xJf "$tarball"
		"$here/apply.sh" "$syz" "${ktree[@]}"
		echo "$h" > "$syz/.mmext-stamp"
	fi
	[ $# = 0 ] || return 0
	[ -x "$syz/bin/syz-manager" ] && [ "$(cat "$syz/.mmext-built" 2>/dev/null)" = "$h" ] && return 0
	say "building syzkaller (a few minutes)"
	make -s -C "$syz" TARGETOS=linux TARGETARCH=amd64 manager execprog executor repro prog2c \
		> "$logs/build.log" 2>&1 || { tail -n 30 "$logs/build.log"; die "syzkaller did not build"; }
	echo "$h" > "$syz/.mmext-built"
}

mkdir -p "$logs" "$work"
if [ $check = 2 ]; then
	[ -f "$work/corpus.db" ] || die "no corpus in $work to save"
	cp "$work/corpus.db" "$here/corpus.db"
	cp "$work/history.tsv" "$here/history.tsv"
	say "saved $(du -h "$here/corpus.db" | cut -f1) of corpus from" \
	    "$(awk -F'\t' '{s += $3} END {print s}' "$here/history.tsv") s of fuzzing"
	exit 0
fi
if [ ! -f "$work/corpus.db" ] && [ -f "$here/corpus.db" ]; then
	cp "$here/corpus.db" "$work/corpus.db"
	cp "$here/history.tsv" "$work/history.tsv"
fi
if [ $check = 1 ]; then
	# A tree of its own: a check must not replace the binaries a running manager uses.
	syz=$MMEXT_BUILD/syzkaller-check
	build_syzkaller descriptions
	echo "ok - syzkaller_descriptions"
	echo "RESULT syzkaller_descriptions pass 1 0 0"
	exit 0
fi

exec 9> "$MMEXT_BUILD/syzkaller.lock"
flock -n 9 || die "another syzkaller run uses $syz"
"$MMEXT_ROOT/scripts/deps.sh"
"$MMEXT_ROOT/scripts/kernel.sh" prepare
build_syzkaller
# Our seed programs (tests/syzkaller/seeds/) join the tree's: the manager starts every run
# from them, so that the queue's features are reached in the first minutes, not hours.
rm -f "$syz"/sys/linux/test/mmext_*
cp "$here"/seeds/mmext_* "$syz/sys/linux/test/"
FUZZ=1 "$MMEXT_ROOT/scripts/kernel.sh" build patched
kobj=$(FUZZ=1 "$MMEXT_ROOT/scripts/kernel.sh" outdir patched)
image=$("$MMEXT_ROOT/scripts/mkrootfs.sh" --syzkaller)
key=$MMEXT_BUILD/rootfs/syzkaller.key

# The manager's configuration for one run.
config() {
	local cmdline="root=/dev/vda rw console=ttyS0 brd.rd_nr=1 brd.rd_size=262144"
	# Under TCG the kernel's own watchdogs need the time scripts/vm.sh gives them.
	cmdline+=" rcupdate.rcu_cpu_stall_timeout=120 watchdog_thresh=60"
	[ "$1" = force_all ] && cmdline+=" mmext.force_all=1"
	python3 - "$here/calls.txt" <<-EOF
	import json, sys
	calls = [l.split('#')[0].strip() for l in open(sys.argv[1])]
	print(json.dumps({
	    "name": "mmext-$1",
	    "target": "linux/amd64",
	    "http": "127.0.0.1:${SYZ_HTTP_PORT:-56741}",
	    "rpc": "127.0.0.1:0",
	    "workdir": "$work",
	    "kernel_obj": "$kobj",
	    "kernel_src": "$KTREE",
	    "image": "$image",
	    "sshkey": "$key",
	    "syzkaller": "$syz",
	    "procs": 2,
	    "sandbox": "none",
	    "reproduce": False,
	    "enable_syscalls": [c for c in calls if c],
	    # Programs that reach the queue's code, then the rest of mm, are picked more often.
	    "experimental": {"focus_areas": [
	        {"name": "queue", "weight": 4.0, "filter": {"files": [
	            "^mm/cow_pte.c$", "^mm/refpage.c$", "^fs/proc/task_mmu.c$"]}},
	        {"name": "mm", "weight": 2.0, "filter": {"files": ["^mm/", "^fs/proc/"]}},
	        {"name": "rest", "weight": 1.0}]},
	    "type": "qemu",
	    "vm": {
	        "count": 1, "cpu": 2, "mem": 2048,
	        "kernel": "$kobj/arch/x86/boot/bzImage",
	        "cmdline": "$cmdline",
	        "image_device": "drive if=virtio,format=raw,file=",
	        "network_device": "virtio-net-pci",
	        # TCG (no usable KVM here) as scripts/vm.sh runs it (tcg_accel: the base's
	        # CPU, one thread for a kernel with jump labels), and
	        # two NUMA nodes so that migration between nodes is reachable: a socket each,
	        # as a cache shared across nodes makes the kernel warn (this -smp overrides
	        # the manager's own).
	        "qemu_args": "$(tcg_accel "$kobj/.config") -smp 2,sockets=2,cores=1,threads=1"
	            " -object memory-backend-ram,id=m0,size=1024M"
	            " -object memory-backend-ram,id=m1,size=1024M"
	            " -numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1",
	    },
	}, indent=1))
	EOF
}

set -- $runs
per_run=$((seconds / $#))
: > "$logs/durations"
[ $per_run -ge 300 ] || die "$per_run s per run is too short: the VM alone takes minutes to boot"
last=${!#}
for r in $runs; do
	config "$r" > "$logs/$r.cfg"
	say "fuzzing ($r) for $per_run s"
	t0=$SECONDS
	rm -f "$logs/$r.bench"
	"$syz/bin/syz-manager" -config "$logs/$r.cfg" -bench "$logs/$r.bench" > "$logs/$r.log" 2>&1 &
	mgr=$!
	sleep "$per_run" &
	timer=$!
	wait -n $mgr $timer || true
	if ! kill -0 $mgr 2>/dev/null; then
		say "syz-manager ($r) stopped after $((SECONDS - t0)) s:"
		tail -n 5 "$logs/$r.log" >&2
	fi
	kill $timer 2>/dev/null || true
	if [ "$r" = "$last" ] && kill -0 $mgr 2>/dev/null; then
		# The coverage report is made from the running manager's corpus (symbolising
		# vmlinux takes minutes the first time).
		say "fetching coverage"
		url=http://127.0.0.1:${SYZ_HTTP_PORT:-56741}
		curl -sf --max-time 1800 "$url/filecover" -o "$logs/filecover.csv" || say "no /filecover"
		curl -sf --max-time 1800 "$url/cover?jsonl=1" -o "$logs/cover.jsonl" || say "no /cover"
	fi
	kill -INT $mgr 2>/dev/null || true
	for _ in $(seq 60); do kill -0 $mgr 2>/dev/null || break; sleep 1; done
	kill -KILL $mgr 2>/dev/null || true
	wait $mgr 2>/dev/null || true
	echo "$r $((SECONDS - t0))" >> "$logs/durations"
	# Fuzzing time adds up over the runs that share the work directory's corpus; a run
	# whose VM never ran a program (it did not boot) fuzzed nothing.
	execs=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import summary
print(summary.read_bench(sys.argv[2]).get("exec total", 0))' "$here" "$logs/$r.bench")
	if [ "${execs:-0}" -gt 0 ]; then
		printf '%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$r" $((SECONDS - t0)) \
			"$(git -C "$MMEXT_ROOT" rev-parse --short HEAD)" >> "$work/history.tsv"
	else
		say "$r executed no program: its time is not counted as fuzzing time"
	fi
done

python3 "$here/summary.py" --logs "$logs" --work "$work" --ktree "$KTREE" \
	--known "$here/known-crashes.txt" --runs "$runs" --out "$logs/summary.md"
say "summary: $logs/summary.md"
