#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The installed tier's checks inside the booted Debian 12 system (tests/installed/run.sh
# puts this file in the image as /usr/local/sbin/mmext-installed-check, started as root
# by mmext-installed-check.service). Everything it prints goes to the second serial port,
# as scripts/vm.sh's guests report: "RESULT NAME pass|fail|skip P F S" per check between
# MMEXT-OUTPUT-BEGIN/END, the kernel's journal between MMEXT-DMESG-BEGIN/END, then
# MMEXT-EXIT STATUS; then it powers the machine off.
# /etc/mmext-installed sets RELEASE (the kernel package's), MMEXT_USER (an ordinary user) and
# DEBIAN_RELEASE (Debian's own release of the same source, in /boot beside ours).
set -u
exec > /dev/ttyS1 2>&1
. /etc/mmext-installed
failed=0

result() {	# NAME pass|fail|skip [WHY]
	case $2 in
	pass) echo "RESULT $1 pass 1 0 0" ;;
	skip) echo "RESULT $1 skip 0 0 1" ;;
	*) echo "RESULT $1 fail 0 1 0"; failed=1 ;;
	esac
	[ -z "${3:-}" ] || echo "# $1: $3"
}
as_user() { runuser -u "$MMEXT_USER" -- "$@"; }

echo MMEXT-OUTPUT-BEGIN
# Our own unit is started, not waited for (Type=simple), so the boot can finish.
state=$(timeout 900 systemctl is-system-running --wait 2>&1)
if [ "$state" = running ]; then
	result system-running pass
else
	result system-running fail "state '$state'; failed units: $(systemctl --failed --plain --no-legend | xargs)"
	systemctl --failed --plain --no-legend | while read -r unit _; do
		journalctl -b -u "$unit" -o cat --no-pager | tail -n 5 | sed "s|^|# $unit: |"
	done
fi
[ "$(ps -p 1 -o comm=)" = systemd ] && result pid1-systemd pass ||
	result pid1-systemd fail "PID 1 is $(ps -p 1 -o comm=)"
if [ "$(uname -r)" = "$RELEASE" ] &&
   dpkg-query -W -f='${Status}' "linux-image-$RELEASE" | grep -q "ok installed"; then
	result kernel-is-package pass "$(uname -r), $(dpkg-query -W -f='${Version}' "linux-image-$RELEASE")"
else
	result kernel-is-package fail "running $(uname -r), installed $RELEASE"
fi
# initramfs-tools' init mounted the root and handed over to systemd.
if journalctl -b -k -o cat | grep -q "Freeing initrd memory" &&
   [ "$(findmnt -n -o SOURCE /)" = /dev/vda ]; then
	result root-from-initramfs pass
else
	result root-from-initramfs fail "root $(findmnt -n -o SOURCE,OPTIONS /)"
fi
# The splats scripts/vm.sh fails a guest on, in the kernel's journal; lockdep's reports
# start with WARNING: or BUG: (its boot banner mentions lockdep too).
splats=$(journalctl -b -k -o cat |
	grep -E 'BUG:|WARNING:|INFO: |Oops|KASAN:|general protection fault|Kernel panic|possible (circular|recursive) locking|inconsistent lock state')
[ -z "$splats" ] && result journal-no-splat pass ||
	result journal-no-splat fail "$(echo "$splats" | head -n 5)"

# Every feature present, for root and for the ordinary user.
probe=$(mmext probe); rc=$?
echo "$probe" | sed 's/^/# /'
for f in anon_name refpage maps_lockless cow_pte writewatch procmap_query soft_dirty anon_shmem_name; do
	echo "$probe" | grep -qE "^$f +present" && result "probe-$f" pass ||
		result "probe-$f" fail "$(echo "$probe" | grep -E "^$f " || echo "not listed (exit $rc)")"
done
[ "$(as_user mmext probe | grep -c ' present ')" = "$(echo "$probe" | grep -c ' present ')" ] &&
	result user-probe pass || result user-probe fail "$(as_user mmext probe 2>&1)"
# The tour (built against libmmext-dev, run with libmmext0's library) shows each feature.
tour=$(as_user mmext-tour 2>&1); rc=$?
echo "$tour" | sed 's/^/# /'
if [ $rc = 0 ] && ! echo "$tour" | grep -qE 'WRONG|absent'; then
	result user-tour pass
else
	result user-tour fail "exit $rc"
fi
as_user mmext maps --rollup self > /dev/null && result user-maps pass || result user-maps fail
as_user mmext query -n self 0 > /dev/null && result user-query pass || result user-query fail
as_user mmext watch -c 3 -i 50 > /dev/null && result user-watch pass || result user-watch fail
# COW page tables as the policy says: 2 any process, 1 with CAP_IPC_LOCK (root), 0 none.
pol=$(cat /sys/kernel/mm/cow_pte/enabled 2>/dev/null)
as_user mmext run --cow-pte -- true 2>/dev/null; urc=$?
mmext run --cow-pte -- true 2>/dev/null; rrc=$?
case $pol:$urc:$rrc in
2:0:0|1:125:0|0:125:125) result cow-pte-policy pass "enabled=$pol: user $urc, root $rrc" ;;
*) result cow-pte-policy fail "enabled=$pol: user exit $urc, root exit $rrc" ;;
esac

# GRUB as Debian 12 keeps it (grub-common, /etc/default/grub, grub2-common's kernel
# hooks), beside Debian's own build of the same source (DEBIAN_RELEASE): the default
# entry (GRUB_DEFAULT=0) is the newest release. The hook our package's postinst runs
# updates an existing grub.cfg and must put ours first; purging our kernel runs the hooks
# again and Debian's becomes the default. Last, since it removes the running kernel.
grub_default() {
	grep -Eq '^[[:space:]]*set default="0"$' /boot/grub/grub.cfg &&
		awk '$1 == "linux" { print $2; exit }' /boot/grub/grub.cfg
}
if ! command -v update-grub > /dev/null || [ ! -f "/boot/vmlinuz-$DEBIAN_RELEASE" ]; then
	result grub-default fail "the image lacks update-grub or /boot/vmlinuz-$DEBIAN_RELEASE"
else
	mkdir -p /boot/grub
	echo '# before our kernel' > /boot/grub/grub.cfg
	DEB_MAINT_PARAMS=configure /etc/kernel/postinst.d/zz-update-grub "$RELEASE" \
		"/boot/vmlinuz-$RELEASE" > /tmp/update-grub.log 2>&1; rc=$?
	if [ $rc = 0 ] && [ "$(grub_default)" = "/boot/vmlinuz-$RELEASE" ]; then
		result grub-default pass "first of $(grep -c 'vmlinuz-' /boot/grub/grub.cfg) linux lines"
	else
		result grub-default fail "hook exit $rc, default '$(grub_default 2>&1)': $(tail -n 3 /tmp/update-grub.log | xargs)"
	fi
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -o DPkg::Lock::Timeout=60 \
		"linux-image-$RELEASE" "linux-headers-$RELEASE" > /tmp/purge.log 2>&1; rc=$?
	if [ $rc = 0 ] && [ "$(grub_default)" = "/boot/vmlinuz-$DEBIAN_RELEASE" ]; then
		result grub-default-after-purge pass "$DEBIAN_RELEASE"
	else
		result grub-default-after-purge fail "apt-get exit $rc, default '$(grub_default 2>&1)': $(tail -n 3 /tmp/purge.log | xargs)"
	fi
fi
echo MMEXT-OUTPUT-END
echo MMEXT-DMESG-BEGIN
journalctl -b -k -o short-monotonic --no-pager
echo MMEXT-DMESG-END
echo "MMEXT-EXIT $failed"
sync
systemctl poweroff --no-block
