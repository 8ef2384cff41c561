#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install what building the kernels, the selftests, the guest and the tests needs
# (Debian 12, as root). Quick when everything is already there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkgs=(
	build-essential bc bison flex libelf-dev libssl-dev dwarves ccache  # kernel build
	cpio busybox-static file kmod xz-utils rsync                       # initramfs
	qemu-system-x86                                                   # guest
	curl                                                              # a pinned package the archive's index dropped
	libcap-dev libnuma-dev                                            # mm selftests
	clang                                                             # libFuzzer target
	procps                                                            # pmap, for benchmarks
	mandoc                                                            # man page lint
	python3-matplotlib                                                # benchmark plots
	poppler-utils                                                     # pdftoppm, reference pages bench
	stress-ng trinity psmisc                                          # distro tier's guest
	mmdebstrap e2fsprogs                                              # Debian guest root (mkrootfs.sh)
	afl++                                                             # afl-cc, real programs bench
	dpkg-dev debhelper fakeroot lintian pkg-config                    # packages (the kernel's too) and their test
	abigail-tools                                                     # abidiff, the ABI check
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	say "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" > /dev/null
fi
