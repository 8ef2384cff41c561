#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest's Debian 12 root filesystem as an ext2 image from packages: Debian's
# essential set plus scripts/rootfs-packages.txt, from the host's own Debian sources,
# so the guest has the host's libraries (host-built programs run in it unchanged).
# The image is cached in build/rootfs/ under a hash of the package list and this
# script: rebuilt only when one of them changes. Prints the image's path.
#
#   mkrootfs.sh [-f] [--syzkaller | --systemd]
#   mkrootfs.sh -h      this text
#
# -f rebuilds even when the cached image is current. --syzkaller builds the image
# syz-manager's qemu VMs boot instead (tests/syzkaller/): the same packages plus
# openssh-server, busybox's init running tests/syzkaller/guest-rc and sshd, and root's
# login by the key build/rootfs/syzkaller.key (generated once). --systemd builds the
# root a user's Debian 12 has, for the installed tier (tests/installed/): the essential
# set, apt, systemd as init, udev, dbus, initramfs-tools, iproute2, Debian's kernel and
# GRUB's update-grub (not the list), as a tar archive (the tier installs packages into it
# before making its disk).
# Needs root and mmdebstrap (scripts/deps.sh). scripts/vm.sh --rootfs boots the plain one.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

force=0 flavour=debian-12
while [ $# -gt 0 ]; do
	case $1 in
	-h|--help) usage 0 ;;
	-f) force=1 ;;
	--syzkaller) flavour=syzkaller ;;
	--systemd) flavour=systemd ;;
	*) usage ;;
	esac
	shift
done

list=$MMEXT_ROOT/scripts/rootfs-packages.txt
dir=$MMEXT_BUILD/rootfs
extra=() hooks=() ext=ext2
if [ $flavour = systemd ]; then
	ext=tar
	# A user's system, not the benchmarks' programs: the list is left out.
	list=/dev/null
	# iproute2 stands for the rest of Debian's "important" set, which every installed
	# system has: it brings libelf1, which the kernel's headers package needs. Debian's
	# own kernel and GRUB's configuration tools (not its boot loader, which wants a disk
	# to install to) are what ours is installed beside.
	extra=(apt passwd e2fsprogs procps systemd systemd-sysv udev dbus libpam-systemd initramfs-tools zstd
	       iproute2 linux-image-amd64 grub-common grub2-common)
fi
if [ $flavour = syzkaller ]; then
	rc=$MMEXT_ROOT/tests/syzkaller/guest-rc
	key=$dir/syzkaller.key
	mkdir -p "$dir"
	[ -f "$key" ] || ssh-keygen -q -t ed25519 -N '' -C mmext-syzkaller -f "$key"
	extra=(openssh-server)
	# busybox's init reaps the orphans the fuzzer leaves and restarts sshd if it dies.
	hooks=(--customize-hook="mkdir -p \"\$1/root/.ssh\" && cp '$key.pub' \"\$1/root/.ssh/authorized_keys\""
	       --customize-hook="cp '$rc' \"\$1/etc/mmext-rc\" && chmod 755 \"\$1/etc/mmext-rc\""
	       --customize-hook="ln -sf /bin/busybox \"\$1/sbin/init\""
	       --customize-hook="printf '%s\\n' '::sysinit:/etc/mmext-rc' '::respawn:/usr/sbin/sshd -D -e' '::ctrlaltdel:/sbin/reboot' > \"\$1/etc/inittab\"")
fi
hash=$(cat "$list" "$0" ${rc:+"$rc" "$key.pub"} | sha256sum | cut -c1-16)
img=$dir/$flavour-$hash.$ext
if [ -f "$img" ] && [ $force = 0 ]; then
	echo "$img"
	exit 0
fi
command -v mmdebstrap > /dev/null || die "mmdebstrap missing: run scripts/deps.sh"
[ "$(id -u)" = 0 ] || die "building the root filesystem needs root (dpkg in a chroot)"

pkgs=$(sed -e 's/#.*//' "$list" | xargs) pkgs=$(echo $pkgs "${extra[@]}" | tr ' ' ,)
# The host's enabled Debian 12 sources: the same archive and security updates.
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && grep -q bookworm "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || die "no Debian 12 (bookworm) apt sources on this host"

mkdir -p "$dir"
tree=$(mktemp -d "$dir/tree.XXXXXX")
trap 'rm -rf "$tree" "$img.tmp"' EXIT
say "building the Debian 12 root filesystem ($pkgs)"
t0=$SECONDS
# Documentation, manuals and translations are dropped: nothing in a guest reads them.
# /mmext is where the guest's init mounts the payload.
mmdebstrap --mode=root --variant=essential --include="$pkgs" \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--customize-hook='mkdir -p "$1/mmext" && echo mmext-guest > "$1/etc/hostname"' \
	"${hooks[@]}" bookworm "$tree" "${sources[@]}" >&2
# Room beside the packages for what benchmarks write (Redis dumps, fuzzer queues); the
# image file is sparse, so the free space costs no disk.
used_mb=$(du -sm "$tree" | cut -f1)
size_mb=$((used_mb * 5 / 4 + 2048))
rm -f "$img.tmp"
if [ $ext = tar ]; then
	tar -C "$tree" --numeric-owner --xattrs -cf "$img.tmp" .
else
	mke2fs -q -t ext2 -L mmext-root -d "$tree" "$img.tmp" "${size_mb}M" >&2
fi
rm -f "$dir/$flavour"-*."$ext"
mv "$img.tmp" "$img"
say "built $img in $((SECONDS - t0)) s: $used_mb MiB of files, ${size_mb} MiB image," \
    "$(du -sm "$img" | cut -f1) MiB on disk"
echo "$img"
