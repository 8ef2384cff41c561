#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The installed tier: mmext as a Debian 12 user installs it. The kernel packages
# (scripts/kernel.sh deb; DEB_CONFIG as there: Debian's configuration, or test) and the
# library's (debian/) are installed with apt into the root of scripts/mkrootfs.sh
# --systemd (chroot), whose kernel postinst writes the initramfs; QEMU (2 vCPUs on two NUMA
# nodes, as scripts/vm.sh) boots that root's /boot/vmlinuz and initrd.img from an ext4
# disk, systemd as PID 1, and tests/installed/guest-check.sh, started by a unit, checks the
# system, the kernel's journal and the features, as root and as an ordinary user, and
# reports on the second serial port. Then apt removes and purges the packages, and the
# root's file list must be what it was before the install.
# Prints "RESULT NAME pass|fail|skip P F S" per check; exit status 0 if none failed.
#
#   tests/installed/run.sh [-n]
#
# -n packages the kernel only if its packages are missing (no kernel.sh deb).
# INSTALLED_TIMEOUT (default 1800) bounds the guest. Needs root (chroot, mounts).
# Logs, the disk and the root's file lists: build/logs/installed/.
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

build=1
while getopts "hn" o; do
	case $o in n) build=0 ;; h) usage 0 ;; *) usage ;; esac
done
[ "$(id -u)" = 0 ] || die "the installed tier needs root (chroot, mounts)"
logs=$BASE_BUILD/logs/installed
user=mmextuser
failed=0
result() {	# NAME pass|fail [WHY]
	case $2 in
	pass) echo "RESULT $1 pass 1 0 0" ;;
	skip) echo "RESULT $1 skip 0 0 1" ;;
	*) echo "RESULT $1 fail 0 1 0"; failed=1 ;;
	esac
	[ -z "${3:-}" ] || echo "# $1: $3"
}
t0=$SECONDS
tree=$logs/root
# A run killed while the root's /proc and /dev were mounted leaves them mounted: never
# delete through them.
for m in "$tree/proc" "$tree/dev"; do
	! mountpoint -q "$m" || umount -l "$m"
done
rm -rf --one-file-system "$logs"
mkdir -p "$logs"

# -- the packages --
kdir=$("$MMEXT_ROOT/scripts/kernel.sh" debdir)
if [ $build = 1 ] || ! ls "$kdir"/linux-image-*.deb > /dev/null 2>&1; then
	"$MMEXT_ROOT/scripts/kernel.sh" deb >&2
fi
kimg=$(ls "$kdir"/linux-image-*.deb | grep -v -- -dbg_)
khdr=$(ls "$kdir"/linux-headers-*.deb)
rel=$(dpkg-deb -f "$kimg" Package) rel=${rel#linux-image-}
kver=$(dpkg-deb -f "$kimg" Version)
say "kernel $rel ($kver); building the library's packages"
# From a copy of the tree, as tests/install/install.sh --deb: dpkg-buildpackage writes
# beside the source.
mkdir -p "$logs/lib/src"
tar -C "$MMEXT_ROOT" --exclude=./build --exclude=./.git -cf - . | tar -C "$logs/lib/src" -xf -
(cd "$logs/lib/src" && dpkg-buildpackage -b -us -uc) > "$logs/lib-build.log" 2>&1 ||
	die "the library's packages did not build ($logs/lib-build.log)"
lib0=$(ls "$logs"/lib/libmmext0_*.deb) libdev=$(ls "$logs"/lib/libmmext-dev_*.deb)
cmd=$(ls "$logs"/lib/mmext_*.deb)
# The tour, built against libmmext-dev and run with libmmext0's shared library.
mkdir -p "$logs/dev"
dpkg-deb -x "$lib0" "$logs/dev" && dpkg-deb -x "$libdev" "$logs/dev"
arch=$(dpkg-architecture -q DEB_HOST_MULTIARCH)
cc -O2 -I"$logs/dev/usr/include" -o "$logs/mmext-tour" "$MMEXT_ROOT/examples/tour.c" \
	-L"$logs/dev/usr/lib/$arch" -lmmext -lpthread

# Ours must come after Debian's own build of the same source: the package version for
# dpkg, the release for GRUB, whose default entry is the newest release (Debian's
# 10_linux compares them as dpkg versions, with -rc, -test and the like made ~rc, ~test).
grub_ver() { sed -E 's/[._-](pre|rc|test|git|old|trunk)/~\1/g' <<< "$1"; }
deb_rel=$MMEXT_DEBIAN_RELEASE
dpkg --compare-versions "$(grub_ver "$rel")" gt "$(grub_ver "$deb_rel")" &&
	dpkg --compare-versions "$kver" gt "$MMEXT_BASE_VERSION" &&
	result sorts-after-debian pass "$rel after $deb_rel, $kver after $MMEXT_BASE_VERSION" ||
	result sorts-after-debian fail "$rel / $deb_rel, $kver / $MMEXT_BASE_VERSION"

# The image's postinst makes an initramfs and module indexes: apt must bring in what
# does that, as for Debian's own image.
deps=$(dpkg-deb -f "$kimg" Depends)
case ", $deps," in
*", kmod,"*"initramfs-tools"*"| linux-initramfs-tool,"*)
	result image-depends pass "Depends: $deps" ;;
*) result image-depends fail "Depends: '$deps' lacks kmod or an initramfs generator" ;;
esac

# -- the root as a user has it, then the install --
rootfs=$("$MMEXT_ROOT/scripts/mkrootfs.sh" --systemd)
mkdir "$tree"
tar -C "$tree" --numeric-owner --xattrs -xpf "$rootfs"
chroot "$tree" useradd -m -s /bin/bash "$user"
install -m 755 "$MMEXT_ROOT/tests/installed/guest-check.sh" "$tree/usr/local/sbin/mmext-installed-check"
install -m 755 "$logs/mmext-tour" "$tree/usr/local/bin/mmext-tour"
# Beside the Debian 12 kernel the root came with (linux-image-amd64), a stand-in named as
# Debian's own build of our source, which GRUB would rank against ours: a copy of that
# kernel (GRUB sorts by name and never boots it here). And /etc/default/grub, which
# grub-pc's postinst installs from grub-common's template.
debian_12=$(cd "$tree/boot" && ls vmlinuz-*)
[ "$(echo "$debian_12" | wc -w)" = 1 ] || die "the root has kernels '$debian_12', not one of Debian's"
[ "${MMEXT_DEBIAN_RELEASE%%+*}" = "${rel%%-*}" ] ||
	die "MMEXT_DEBIAN_RELEASE ($MMEXT_DEBIAN_RELEASE) is not of this base's version (${rel%%-*})"
cp "$tree/boot/$debian_12" "$tree/boot/vmlinuz-$MMEXT_DEBIAN_RELEASE"
cp "$tree/usr/share/grub/default/grub" "$tree/etc/default/grub"
printf 'RELEASE=%s\nMMEXT_USER=%s\nDEBIAN_RELEASE=%s\n' "$rel" "$user" "$MMEXT_DEBIAN_RELEASE" \
	> "$tree/etc/mmext-installed"
cat > "$tree/etc/systemd/system/mmext-installed-check.service" <<EOF
[Unit]
Description=mmext installed tier: checks, reported on ttyS1
After=multi-user.target

[Service]
Type=simple
ExecStart=/usr/local/sbin/mmext-installed-check

[Install]
WantedBy=multi-user.target
EOF
ln -s ../mmext-installed-check.service "$tree/etc/systemd/system/multi-user.target.wants/"
echo '/dev/vda / ext4 errors=remount-ro 0 1' > "$tree/etc/fstab"
echo mmext-installed > "$tree/etc/hostname"

# The root's files, less apt's and dpkg's own records and logs, which an install changes,
# and what a running system keeps in memory (/run: blkid's cache, from the chroot's mkinitramfs).
files() {
	(cd "$tree" && find . -xdev | grep -v -E '^\./(proc|sys|dev|run|tmp)/|^\./var/(lib/(dpkg|apt)|log|cache)/' | sort)
}
files > "$logs/files-before.txt"

mounted=()
mount_api() {
	mount -t proc proc "$tree/proc" && mounted+=("$tree/proc")
	mount --bind /dev "$tree/dev" && mounted+=("$tree/dev")
}
umount_api() {
	local m
	for m in "${mounted[@]}"; do umount "$m" || umount -l "$m"; done
	mounted=()
}
trap umount_api EXIT
trap 'exit 130' INT TERM
in_root() { chroot "$tree" env DEBIAN_FRONTEND=noninteractive "$@"; }

mkdir -p "$tree/tmp/debs"
cp "$kimg" "$khdr" "$lib0" "$cmd" "$tree/tmp/debs/"
mount_api
names=$(cd "$tree/tmp/debs" && ls | sed 's|^|./|' | xargs)
if in_root sh -c "cd /tmp/debs && apt install -y $names" > "$logs/apt-install.log" 2>&1; then
	result apt-install pass "$names"
else
	result apt-install fail "$(tail -n 5 "$logs/apt-install.log")"
fi
rm -rf "$tree/tmp/debs"
[ -s "$tree/boot/initrd.img-$rel" ] && result initramfs-written pass ||
	result initramfs-written fail "no /boot/initrd.img-$rel (see $logs/apt-install.log)"
pkgs="linux-image-$rel linux-headers-$rel libmmext0 mmext"
for p in $pkgs; do in_root dpkg -L "$p"; done > "$logs/dpkg-L.txt" 2>&1 || true
umount_api

# -- the boot --
if [ -s "$tree/boot/initrd.img-$rel" ] && [ -f "$tree/boot/vmlinuz-$rel" ]; then
	cp "$tree/boot/vmlinuz-$rel" "$tree/boot/initrd.img-$rel" "$logs/"
	size_mb=$(( $(du -sm "$tree" | cut -f1) + 1024 ))
	mke2fs -q -t ext4 -L mmext-root -d "$tree" "$logs/root.ext4" "${size_mb}M"
	accel=${MMEXT_ACCEL:-$(cat "$MMEXT_BUILD/accel" 2>/dev/null || echo tcg)}
	case $accel in
	kvm) accel_args=(-accel kvm -cpu host) slow="" ;;
	*) read -ra accel_args <<< "$(tcg_accel "$tree/boot/config-$rel")"
	   slow=" rcupdate.rcu_cpu_stall_timeout=120 watchdog_thresh=60" ;;
	esac
	say "booting $rel with systemd ($accel, 2 CPUs): console in $logs/console.log"
	rc=0
	timeout --foreground -k 5 "${INSTALLED_TIMEOUT:-1800}" qemu-system-x86_64 "${accel_args[@]}" \
		-smp 2,sockets=2,cores=1,threads=1 -m 2G \
		-object memory-backend-ram,id=m0,size=1024M -object memory-backend-ram,id=m1,size=1024M \
		-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1 \
		-nographic -no-reboot -monitor none -nic none \
		-kernel "$logs/vmlinuz-$rel" -initrd "$logs/initrd.img-$rel" \
		-drive "file=$logs/root.ext4,format=raw,if=virtio" \
		-append "root=/dev/vda ro console=ttyS0 panic=-1 loglevel=6$slow" \
		-serial "file:$logs/console.log" -serial "file:$logs/channel.raw" < /dev/null || rc=$?
	tr -d '\r' < "$logs/channel.raw" > "$logs/channel.log"
	sed -n '/^MMEXT-OUTPUT-BEGIN$/,/^MMEXT-OUTPUT-END$/p' "$logs/channel.log" | sed '1d;$d' > "$logs/output.log"
	sed -n '/^MMEXT-DMESG-BEGIN$/,/^MMEXT-DMESG-END$/p' "$logs/channel.log" | sed '1d;$d' > "$logs/dmesg.log"
	cat "$logs/output.log"
	grep -q '^RESULT .* fail ' "$logs/output.log" && failed=1
	if ! grep -q '^MMEXT-EXIT ' "$logs/channel.log"; then
		result guest-reported fail "QEMU exit $rc, no report: hang, panic or timeout ($logs/console.log)"
	fi
else
	result guest-reported skip "nothing to boot"
fi

# -- the removal --
mount_api
in_root apt remove -y $pkgs > "$logs/apt-remove.log" 2>&1 && result apt-remove pass ||
	result apt-remove fail "$(tail -n 5 "$logs/apt-remove.log")"
# What remove left (dpkg forgets a package with no conffiles or postrm at once).
left=$(in_root dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $pkgs 2>/dev/null | awk '$1 == "rc" {print $2}' | xargs) || true
if [ -z "$left" ]; then
	result apt-purge pass "remove left nothing to purge"
else
	in_root apt purge -y $left > "$logs/apt-purge.log" 2>&1 && result apt-purge pass "$left" ||
		result apt-purge fail "$(tail -n 5 "$logs/apt-purge.log")"
fi
umount_api
files > "$logs/files-after.txt"
if diff "$logs/files-before.txt" "$logs/files-after.txt" > "$logs/files.diff"; then
	result purge-leaves-nothing pass "$(grep -c . "$logs/dpkg-L.txt") paths of dpkg -L gone"
else
	result purge-leaves-nothing fail "$(head -n 10 "$logs/files.diff" | xargs)"
fi
say "installed tier: $((SECONDS - t0)) s"
exit $failed
