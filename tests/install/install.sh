#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make install into a temporary root, as a distribution would (PREFIX=/usr, a Debian
# multiarch LIBDIR) and as a user would (PREFIX only), then build a program against it
# with pkg-config, shared and static, run both, and make uninstall. TAP with Totals.
# Needs the source tree, cc, make and pkg-config: the host tier only.
#   install.sh [REPO]   (default: the repo this script is in)
set -u
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 n=0
echo "TAP version 13"
check() {
	n=$((n + 1))
	if eval "$2" > "$tmp/log" 2>&1; then pass=$((pass + 1)); echo "ok $n $1"
	else fail=$((fail + 1)); echo "not ok $n $1"; echo "# failed: $2"; sed 's/^/#   /' "$tmp/log" | tail -15; fi
}
for t in cc make pkg-config; do
	command -v $t > /dev/null || { echo "1..0 # SKIP no $t"; exit 4; }
done

cat > "$tmp/prog.c" <<'C'
#include <stdio.h>
#include <mmext.h>

int main(void)
{
	struct mmext_maps *m;
	struct mmext_vma v;
	int n = 0;

	if (mmext_maps_open(0, NULL, &m))
		return 1;
	while (mmext_maps_next(m, &v) > 0)
		n++;
	mmext_maps_close(m);
	printf("libmmext %s: %d VMAs\n", mmext_version(), n);
	return n > 0 ? 0 : 1;
}
C

arch=$(cc -print-multiarch 2>/dev/null)
for layout in "/usr /usr/lib/${arch:-x86_64-linux-gnu}" "/opt/mmext /opt/mmext/lib"; do
	read -r prefix libdir <<< "$layout"
	root=$tmp/root$n
	vars="DESTDIR=$root PREFIX=$prefix LIBDIR=$libdir BUILD=$tmp/build"
	pc="pkg-config --define-variable=prefix=$root$prefix"
	export PKG_CONFIG_PATH=$root$libdir/pkgconfig
	check "$prefix: make install" "make -C '$repo' install $vars"
	check "$prefix: headers, library with soname links, .a, .pc, command" '
		[ -f "$root$prefix/include/mmext.h" ] && [ -f "$root$prefix/include/mmext/vma.h" ] &&
		[ "$(readlink "$root$libdir/libmmext.so")" = libmmext.so.0 ] &&
		[ -f "$root$libdir/$(readlink "$root$libdir/libmmext.so.0")" ] &&
		readelf -d "$root$libdir/libmmext.so.0" | grep -q "SONAME.*\[libmmext.so.0\]" &&
		[ -f "$root$libdir/libmmext.a" ] && [ -x "$root$prefix/bin/mmext" ]'
	check "$prefix: the .pc names its directories from \${prefix}" '
		grep -qx "prefix=$prefix" "$PKG_CONFIG_PATH/libmmext.pc" &&
		grep -qx "libdir=\${prefix}${libdir#$prefix}" "$PKG_CONFIG_PATH/libmmext.pc" &&
		[ "$($pc --variable=libdir libmmext)" = "$root$libdir" ]'
	check "$prefix: man pages in their sections, one link page per function" '
		[ -f "$root$prefix/share/man/man1/mmext.1" ] && [ -f "$root$prefix/share/man/man7/libmmext.7" ] &&
		grep -qx ".so man3/mmext_ww.3" "$root$prefix/share/man/man3/mmext_ww_open.3" &&
		{ ! command -v man > /dev/null || MANPATH=$root$prefix/share/man man -w mmext_ww_open | grep -q "man3/mmext_ww.3"; }'
	check "$prefix: a program built with pkg-config, shared" '
		cc -o "$tmp/shared" "$tmp/prog.c" $($pc --cflags --libs libmmext) &&
		readelf -d "$tmp/shared" | grep -q "NEEDED.*\[libmmext.so.0\]" &&
		LD_LIBRARY_PATH=$root$libdir "$tmp/shared" | grep -q "VMAs"'
	check "$prefix: a program built with pkg-config, static" '
		cc -static -o "$tmp/static" "$tmp/prog.c" $($pc --static --cflags --libs libmmext) &&
		! readelf -d "$tmp/static" | grep -q NEEDED && "$tmp/static" | grep -q "VMAs"'
	check "$prefix: the installed command runs" '"$root$prefix/bin/mmext" maps self | grep -q "VMAs$"'
	check "$prefix: make uninstall leaves no file behind" '
		make -C "$repo" uninstall $vars && [ -z "$(find "$root" -type f -o -type l)" ]'
done

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
