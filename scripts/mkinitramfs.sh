#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Pack the guest payload into an initramfs: busybox, bash, the programs of
# guest-tools.txt (and guest-tools-distro.txt for *-distro and *-kcsan variants, whose
# tiers run stress-ng), the host's shared libraries that the payload needs (found with
# ldd), build/guest (tests, tools) and the kernel selftests, the kernel's configuration,
# plus /init and the command to run.
#
#   mkinitramfs.sh VARIANT OUTPUT.cpio.gz COMMAND [ARGS...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case ${1:-} in -h|--help) usage 0 ;; esac
[ $# -ge 3 ] || usage
v=$1 out=$2; shift 2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# mktemp makes it 0700: the guest's / must be searchable by unprivileged test users.
chmod 755 "$root"

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,etc,root,mmext}
cp /bin/busybox "$root/bin/busybox"
cp "$(command -v bash)" "$root/bin/bash"
tools=$MMEXT_ROOT/scripts/guest-tools.txt
case $v in *-distro*|*-kcsan) tools="$tools $MMEXT_ROOT/scripts/guest-tools-distro.txt" ;; esac
# shellcheck disable=SC2086
for tool in $(sed 's/#.*//' $tools 2>/dev/null); do
	p=$(command -v "$tool" || true)
	[ -n "$p" ] && cp "$p" "$root/bin/"
done
# Payload built by the tests' Makefile (binaries and scripts), if any.
[ -d "$MMEXT_BUILD/guest" ] && cp -a "$MMEXT_BUILD/guest/." "$root/mmext/"
# The kernel selftests, without objects.
if [ -d "$KOUT/kselftest" ]; then
	mkdir -p "$root/mmext/kselftest"
	(cd "$KOUT/kselftest" && find . -type f ! -name '*.o' ! -name '*.d' ! -name '*.log' -print0 |
		cpio -0 -pdm --quiet "$root/mmext/kselftest")
fi
# The kernel's configuration where scripts look for it (va_high_addr_switch.sh does).
kdir=$KOUT/$v
if [ -f "$kdir/.config" ] && [ -f "$kdir/include/config/kernel.release" ]; then
	mkdir -p "$root/boot"
	cp "$kdir/.config" "$root/boot/config-$(cat "$kdir/include/config/kernel.release")"
fi
cp "$MMEXT_ROOT/scripts/guest-init" "$root/init"
chmod +x "$root/init"
printf '%q ' "$@" > "$root/mmext/cmd"
echo "$v" > "$root/mmext/kernel"

# Shared libraries of every ELF file, with the loader at its usual path (ldd's "FILE:"
# header lines name the payload's own files, shared objects among them).
find "$root" -type f -perm -u+x -print0 | xargs -0 file -N -F '|' 2>/dev/null |
	awk -F'|' '/ELF .*dynamically linked/ {print $1}' | xargs -r ldd 2>/dev/null |
	grep -v ':$' | grep -o '/[^ ]*\.so[^ ]*' | sort -u | while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done

(cd "$root" && find . -print0 | cpio -0 -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
