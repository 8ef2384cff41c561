#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# libmmext's ABI against the last release's (lib/abi/SONAME.abi, abidw's XML):
# builds the library with -g and compares with abidiff, only the types of the public
# headers counting (the baseline was written with the release's headers). With the
# soname unchanged, nothing may change but added symbols, and those must be in a
# version node the release did not have (lib/libmmext.map); a new soname allows any
# change. Changes the library's contracts make safe (an options struct growing at its
# end) are suppressed in lib/abi/libmmext.suppr.
# Needs abigail-tools (scripts/deps.sh); exit status 0 pass, 1 fail, 4 skip.
#   tests/abi.sh [LIBDIR]   (LIBDIR: an existing build with -g, else one is made)
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

lib=$MMEXT_ROOT/lib
suppr=$lib/abi/libmmext.suppr
base=$(ls "$lib"/abi/*.abi)
[ "$(wc -l <<< "$base")" = 1 ] || { echo "not one baseline in lib/abi: $base"; exit 1; }
command -v abidiff > /dev/null || { echo "SKIP: no abidiff (abigail-tools)"; exit 4; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=${1:-$tmp/lib}
if [ $# = 0 ]; then
	make -s -C "$lib" LIBDIR_OUT="$out" CFLAGS="-O2 -g" > "$tmp/make.log" 2>&1 ||
		{ cat "$tmp/make.log"; exit 1; }
fi
so=$(ls "$out"/libmmext.so.[0-9]* 2>/dev/null | grep -E '\.so\.[0-9]+$' | head -n1)
[ -n "$so" ] || { echo "no libmmext.so.N in $out"; exit 1; }
readelf -S "$so" | grep '\.debug_info' > /dev/null || { echo "$so has no debug info (build with -g)"; exit 1; }

soname_of() { sed -n "s/^<abi-corpus .*soname='\([^']*\)'.*/\1/p" "$1"; }
old_soname=$(soname_of "$base")
new_soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
diff_args=(--suppressions "$suppr" --headers-dir2 "$lib/include" "$base" "$so")

if [ "$old_soname" != "$new_soname" ]; then
	abidiff "${diff_args[@]}"
	echo "soname $old_soname -> $new_soname: incompatible changes are allowed;" \
	     "'make -C lib abi-update' makes this the baseline at the release"
	exit 0
fi

bad=0
# Everything but added symbols: no change at all.
abidiff --no-added-syms "${diff_args[@]}" > "$tmp/diff" 2>&1
rc=$?
if [ $rc != 0 ]; then
	cat "$tmp/diff"
	echo "ABI change with the soname $new_soname unchanged (abidiff exit $rc):" \
	     "undo it, or bump the soname (lib/Makefile)"
	bad=1
fi

# Added symbols: each in a version node the release did not have.
abidiff "${diff_args[@]}" > "$tmp/all" 2>&1
released=$(sed -n "s/.*<elf-symbol name='[^']*' version='\([^']*\)'.*/\1/p" "$base" | sort -u)
added=$(sed -n 's/^ *\[A\] .*{\([^}]*\)}.*$/\1/p' "$tmp/all")
for s in $added; do
	node=${s##*@}
	if [ "$node" = "$s" ] || [ -z "$node" ]; then
		echo "added $s has no version node (lib/libmmext.map)"
		bad=1
	elif grep -qxF "$node" <<< "$released"; then
		echo "added ${s%%@*} to $node, which the release had: give it a new node in lib/libmmext.map"
		bad=1
	else
		echo "added $s"
	fi
done
[ $bad = 0 ] && echo "ABI of $new_soname: compatible with the baseline, symbols added: $(wc -w <<< "$added")"
exit $bad
