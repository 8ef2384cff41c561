#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install the mmext syzkaller descriptions into an unpacked syzkaller tree and
# regenerate its descriptions with syz-sysgen.
#
#   tests/syzkaller/apply.sh SYZKALLER_TREE [KERNEL_TREE]
#
# Copies mmext.txt and mmext.txt.const into SYZKALLER_TREE/sys/linux/ and
# runs `make -C SYZKALLER_TREE descriptions`; exits non-zero, saying why, if
# syz-sysgen rejects them. With KERNEL_TREE (a kernel source tree with the
# mmext queue applied), first checks that the constants the kernel defines
# for itself (refpage_create's number, PR_COW_PTE, REFPAGE_CLOEXEC) agree
# with mmext.txt.const. Rebuild the binaries that embed the descriptions
# afterwards, e.g.
#   make -C SYZKALLER_TREE TARGETOS=linux TARGETARCH=amd64 manager execprog executor repro prog2c
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
files=(mmext.txt mmext.txt.const)

die() {
	echo "apply.sh: $*" >&2
	exit 1
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 SYZKALLER_TREE [KERNEL_TREE]"
tree=$1
kernel=${2:-}
[ -d "$tree/sys/linux" ] && [ -f "$tree/Makefile" ] ||
	die "$tree is not a syzkaller source tree (no sys/linux/ or Makefile)"

# The value of NAME in mmext.txt.const for amd64: its default or amd64's own.
const_amd64() {
	awk -v name="$1" -F' = ' '
		$1 == name {
			n = split($2, parts, ", ")
			for (i = 1; i <= n; i++) {
				m = split(parts[i], f, ":")
				if (m == 1) dflt = f[1]
				for (j = 1; j < m; j++)
					if (f[j] == "amd64") own = f[m]
			}
			print (own != "" ? own : dflt)
		}' "$here/mmext.txt.const"
}

check_const() {
	local name=$1 kernel_value=$2 ours
	ours=$(const_amd64 "$name")
	[ -n "$kernel_value" ] || die "$name: not found in $kernel"
	[ "$((kernel_value))" = "$((ours))" ] ||
		die "$name is $((kernel_value)) in $kernel but $ours in mmext.txt.const"
}

if [ -n "$kernel" ]; then
	nr=$(awk '$3 == "refpage_create" && $2 != "x32" { print $1 }' \
		"$kernel/arch/x86/entry/syscalls/syscall_64.tbl")
	check_const __NR_refpage_create "$nr"
	for name in PR_COW_PTE PR_COW_PTE_DISABLE PR_COW_PTE_ENABLE PR_COW_PTE_GET; do
		check_const "$name" "$(awk -v n="$name" '$1 == "#" && $2 == "define" && $3 == n { print $4 }
			$1 == "#define" && $2 == n { print $3 }' "$kernel/include/uapi/linux/prctl.h")"
	done
	check_const REFPAGE_CLOEXEC "$(awk '$2 == "REFPAGE_CLOEXEC" { sub(/U$/, "", $3); print $3 }' \
		"$kernel/include/uapi/linux/refpage.h")"
fi

for f in "${files[@]}"; do
	install -m 0644 "$here/$f" "$tree/sys/linux/$f"
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! make -C "$tree" TARGETOS=linux TARGETARCH=amd64 descriptions >"$log" 2>&1; then
	cat "$log" >&2
	# Leave the tree as it was: without our files, and with the stub that
	# says the descriptions are generated removed (syz-sysgen deleted them).
	for f in "${files[@]}"; do
		rm -f "$tree/sys/linux/$f"
	done
	rm -f "$tree/.descriptions"
	die "syz-sysgen rejected the descriptions (see above); they were removed from $tree again"
fi
grep -E 'mmext\.txt' "$log" >&2 || true
echo "apply.sh: descriptions installed and generated in $tree"
