#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot a built kernel under QEMU with an initramfs holding the test payload, run one
# command in the guest, and exit with the guest command's status.
#
#   vm.sh [--base 6.12|7.3] [--rootfs] [-k stock|patched] [-t SECONDS] [-l LOGDIR] [-m MEM]
#         [-c CPUS] -- COMMAND [ARGS...]
#   vm.sh -h    this text
#
# COMMAND runs as root in the guest, with the repo's build/guest payload at /mmext
# (PATH includes /mmext/bin), and the base's selftests at /mmext/kselftest. --rootfs
# runs it in a Debian 12 userland instead of the initramfs's busybox: the root
# filesystem image of scripts/mkrootfs.sh (built on first use, then cached) on a virtio
# disk, written through a throwaway overlay, with the same payload, results channel
# and checks. --base (or
# MMEXT_BASE) picks the kernel base, by default the default one (6.12). DEBUG=1 boots the *-debug build,
# BENCH=1 the *-bench one, DISTRO=1 the one from Debian's configuration
# (*-distro[-debug]). CPUS (an even number, default 2) are split between two NUMA
# nodes, as the memory is. MMEXT_ACCEL=kvm|tcg forces the accelerator; otherwise KVM is
# probed once per machine and TCG used if it hangs.
# The run fails (exit 1) if the guest's dmesg has BUG:, WARNING:, Oops, KASAN, lockdep or
# kmemleak reports, even when COMMAND passed; 124 on timeout, 125 if the guest ended
# without reporting the command's status (it was killed, or it panicked). LOGDIR gets console.log,
# output.log (the command's output) and dmesg.log.
set -euo pipefail
if [ "${1:-}" = --base ]; then export MMEXT_BASE=${2:?--base needs 6.12 or 7.3}; shift 2; fi
. "$(dirname "$0")/lib.sh"

kernel=patched timeout=1800 logdir="" mem=3G cpus=2 rootfs=""
[ "${1:-}" = --help ] && usage 0
if [ "${1:-}" = --rootfs ]; then
	rootfs=$("$MMEXT_ROOT/scripts/mkrootfs.sh") || die "no root filesystem image"
	shift
fi
while getopts "hk:t:l:m:c:" o; do
	case $o in
	k) kernel=$OPTARG ;; t) timeout=$OPTARG ;; l) logdir=$OPTARG ;; m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	h) usage 0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
case $cpus in
*[!0-9]*|''|*[13579]|0) die "-c takes an even number of CPUs, not '$cpus'" ;;
esac
[ $# -gt 0 ] || die "no guest command given"

v=$(variant_name "$kernel")
image=$(variant_image "$kernel")
[ -f "$image" ] || die "$image missing: run 'scripts/kernel.sh --base $MMEXT_BASE build $kernel'"
logdir=${logdir:-$BASE_BUILD/logs/vm-$v}
mkdir -p "$logdir"

# Nested KVM on these machines hangs before the kernel prints anything: probe with a
# short boot, remember the answer, and fall back to TCG without asking.
pick_accel() {
	if [ -n "${MMEXT_ACCEL:-}" ]; then echo "$MMEXT_ACCEL"; return; fi
	local cache=$MMEXT_BUILD/accel
	if [ -f "$cache" ]; then cat "$cache"; return; fi
	local a=tcg
	if [ -w /dev/kvm ]; then
		say "probing KVM (up to 15 s)"
		if timeout 15 qemu-system-x86_64 -accel kvm -cpu host -m 256M -nographic -no-reboot \
			-kernel "$image" -append "console=ttyS0 panic=-1 rdinit=/nonexistent" \
			-serial stdio -monitor none 2>/dev/null | grep -q -m1 "Linux version"; then
			a=kvm
		fi
	fi
	echo "$a" > "$cache"
	echo "$a"
}
accel=$(pick_accel)
# An emulated CPU runs kernel code tens of times slower than the lockup detectors
# assume (a soft lockup after 20 s, an RCU stall after 21 s): with more vCPUs than host
# cores, stock kernels trip both in long mm selftests. Under TCG the guest gets six times
# the time, still far below the run's own timeout (watchdog_thresh only where the kernel
# has the detector, or the kernel hands the unknown option to init).
# The emulated CPU is the base's (MMEXT_BASE_TCG_CPU in its base.conf: 6.12 boots without
# CX16, which QEMU 7.2's multi-threaded TCG gets wrong).
slow_cpu=""
config=$(variant_dir "$kernel")/.config
case $accel in
kvm) accel_args=(-accel kvm -cpu host) ;;
*) read -ra accel_args <<< "$(tcg_accel "$config")"
   slow_cpu=" rcupdate.rcu_cpu_stall_timeout=120"
   if grep -q '^CONFIG_SOFTLOCKUP_DETECTOR=y' "$config" 2>/dev/null; then
	slow_cpu+=" watchdog_thresh=60"
   fi ;;
esac

initrd=$BASE_BUILD/guest-$v.cpio.gz
"$MMEXT_ROOT/scripts/mkinitramfs.sh" "$v" "$initrd" "$@"

# Two NUMA nodes, half the vCPUs (a socket each: CPUs sharing a cache across nodes make
# the kernel warn) and half the memory each: migration between nodes and NUMA balancing
# run in every guest.
case $mem in
*G) mem_mb=$(( ${mem%G} * 1024 )) ;; *M) mem_mb=${mem%M} ;; *) die "-m takes NG or NM, not '$mem'" ;;
esac
node_mb=$((mem_mb / 2))
cpu_range() { [ $((cpus / 2)) = 1 ] && echo "$1" || echo "$1-$(($1 + cpus / 2 - 1))"; }
numa_args=(-object "memory-backend-ram,id=m0,size=${node_mb}M"
	   -object "memory-backend-ram,id=m1,size=$((mem_mb - node_mb))M"
	   -numa "node,nodeid=0,cpus=$(cpu_range 0),memdev=m0"
	   -numa "node,nodeid=1,cpus=$(cpu_range $((cpus / 2))),memdev=m1")

disk_args=() root_arg=""
if [ -n "$rootfs" ]; then
	# snapshot=on: the guest's writes go to a temporary overlay, the cached image
	# stays as built for the next boot.
	disk_args=(-drive "file=$rootfs,format=raw,if=virtio,snapshot=on")
	root_arg=" mmext.root=/dev/vda"
fi

say "booting $v (${accel_args[*]:1:1}, $cpus CPUs, $mem, timeout ${timeout}s${rootfs:+, root $(basename "$rootfs")}): $*"
rc=0
timeout --foreground -k 5 "$timeout" qemu-system-x86_64 "${accel_args[@]}" -smp $cpus,sockets=$cpus,cores=1,threads=1 -m "$mem" "${numa_args[@]}" \
	-nographic -no-reboot -monitor none -nic none \
	-kernel "$image" -initrd "$initrd" "${disk_args[@]}" \
	-append "console=ttyS0 panic=-1 loglevel=6 log_buf_len=4M printk.devkmsg=on brd.rd_nr=3 brd.rd_size=524288$slow_cpu$root_arg" \
	-serial stdio -serial "file:$logdir/channel.raw" \
	< /dev/null > >(tee "$logdir/console.log" | sed -u 's/\r$//' >&2) || rc=$?
sleep 0.2
if [ $rc = 124 ] || [ $rc = 137 ]; then
	say "guest timed out after ${timeout}s (console: $logdir/console.log)"
	exit 124
fi

tr -d '\r' < "$logdir/channel.raw" > "$logdir/channel.log"
sed -n '/^MMEXT-OUTPUT-BEGIN$/,/^MMEXT-OUTPUT-END$/p' "$logdir/channel.log" | sed '1d;$d' > "$logdir/output.log"
sed -n '/^MMEXT-DMESG-BEGIN$/,/^MMEXT-DMESG-END$/p' "$logdir/channel.log" | sed '1d;$d' > "$logdir/dmesg.log"
status=$(sed -n 's/^MMEXT-EXIT \([0-9]*\)$/\1/p' "$logdir/channel.log" | tail -n1)
if [ -z "$status" ]; then
	say "guest ended without reporting a status (hang, panic or crash?): see $logdir/console.log"
	exit 125
fi

# A splat fails the run whatever the command said.
# lockdep and KASAN reports start with BUG:/WARNING:/INFO:; kmemleak's list is appended
# to dmesg.log by the guest's init.
splat_re='BUG:|WARNING:|INFO: |Oops|KASAN:|general protection fault|Kernel panic|unreferenced object|new suspected memory leak'
# Plain messages that happen to begin with "WARNING:" (a mount with the removed "mand"
# option, which trinity tries as any user).
not_splat_re='WARNING: The mand mount option has been deprecated'
if grep -E "$splat_re" "$logdir/dmesg.log" | grep -v -E "$not_splat_re" > "$logdir/splats.log"; then
	say "kernel splat in the guest's dmesg (full log: $logdir/dmesg.log):"
	head -n 20 "$logdir/splats.log" >&2
	exit 1
fi
rm -f "$logdir/splats.log"
exit "$status"
