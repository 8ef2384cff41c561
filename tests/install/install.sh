#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make install into a temporary root, as a distribution would (PREFIX=/usr, a Debian
# multiarch LIBDIR) and as a user would (PREFIX only), then build a program against it
# with pkg-config, shared and static, run both, and make uninstall. With --deb, the
# same checks on the Debian packages instead: built with dpkg-buildpackage from a copy
# of the tree, lintian clean, unpacked into a temporary root. TAP with Totals.
# Needs the source tree, cc, make and pkg-config (--deb: debhelper and lintian): the
# host tier only.
#   install.sh [--deb] [REPO]   (default: the repo this script is in)
set -u
deb=0
[ "${1:-}" = --deb ] && deb=1 && shift
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
tools="cc make pkg-config"
[ $deb = 1 ] && tools="$tools dpkg-buildpackage dh lintian"
for t in $tools; do
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
arch=${arch:-x86_64-linux-gnu}
layouts=("/usr /usr/lib/$arch" "/opt/mmext /opt/mmext/lib")

# The packages, built once from a copy of the tree (dpkg-buildpackage writes beside it).
if [ $deb = 1 ]; then
	layouts=("/usr /usr/lib/$arch")
	ver=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
	darch=$(dpkg-architecture -q DEB_HOST_ARCH)
	debs="$tmp/pkg/libmmext0_${ver}_$darch.deb $tmp/pkg/libmmext-dev_${ver}_$darch.deb $tmp/pkg/mmext_${ver}_$darch.deb"
	mkdir -p "$tmp/pkg/src"
	tar -C "$repo" --exclude=./build --exclude=./.git -cf - . | tar -C "$tmp/pkg/src" -xf -
	check "dpkg-buildpackage -b builds libmmext0, libmmext-dev and mmext" '
		(cd "$tmp/pkg/src" && dpkg-buildpackage -b -us -uc) && ls $debs'
	# Kept findings are overrides in debian/, each with its reason.
	check "lintian: no finding, pedantic ones included" '
		lintian -I --pedantic --fail-on error,warning,info,pedantic "$tmp/pkg/mmext_${ver}_$darch.changes" 2>&1 |
			grep -v "^running with root privileges" | tee /dev/stderr | { ! grep -q .; }'
	check "the runtime package holds the shared library alone; -dev needs this exact version" '
		dpkg-deb -c "$tmp/pkg/libmmext0_${ver}_$darch.deb" | awk "{print \$6}" |
			grep -v -e "/\$" -e "^\./usr/share/doc/" > "$tmp/runtime" &&
		grep -q "^\./usr/lib/$arch/libmmext\.so\.0\$" "$tmp/runtime" &&
		! grep -v "^\./usr/lib/$arch/libmmext\.so\.0" "$tmp/runtime" &&
		dpkg-deb -f "$tmp/pkg/libmmext-dev_${ver}_$darch.deb" Depends | grep -qx "libmmext0 (= $ver)"'
fi

for layout in "${layouts[@]}"; do
	read -r prefix libdir <<< "$layout"
	root=$tmp/root$n
	vars="DESTDIR=$root PREFIX=$prefix LIBDIR=$libdir BUILD=$tmp/build"
	pc="pkg-config --define-variable=prefix=$root$prefix"
	man=$root$prefix/share/man
	export PKG_CONFIG_PATH=$root$libdir/pkgconfig
	if [ $deb = 1 ]; then
		check "$prefix: the packages unpack" 'for d in $debs; do dpkg -x "$d" "$root" || exit; done'
	else
		check "$prefix: make install" "make -C '$repo' install $vars"
	fi
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
	# Packages compress pages and turn link pages into symlinks (dh_installman).
	check "$prefix: man pages in their sections, one link page per function" '
		ls "$man"/man1/mmext.1* "$man"/man7/libmmext.7* &&
		zcat -f "$man"/man3/mmext_ww_open.3* | grep -q -e "^\.so man3/mmext_ww\.3\$" -e "^\.TH MMEXT_WW 3" &&
		{ ! command -v man > /dev/null || MANPATH=$man man -w mmext_ww_open | grep -q "man3/mmext_ww"; }'
	check "$prefix: a program built with pkg-config, shared" '
		cc -o "$tmp/shared" "$tmp/prog.c" $($pc --cflags --libs libmmext) &&
		readelf -d "$tmp/shared" | grep -q "NEEDED.*\[libmmext.so.0\]" &&
		LD_LIBRARY_PATH=$root$libdir "$tmp/shared" | grep -q "VMAs"'
	check "$prefix: a program built with pkg-config, static" '
		cc -static -o "$tmp/static" "$tmp/prog.c" $($pc --static --cflags --libs libmmext) &&
		! readelf -d "$tmp/static" | grep -q NEEDED && "$tmp/static" | grep -q "VMAs"'
	check "$prefix: the installed command runs, its bash completion beside it" '
		"$root$prefix/bin/mmext" maps self | grep -q "VMAs$" &&
		grep -q "^complete -F _mmext mmext$" "$root$prefix/share/bash-completion/completions/mmext"'
	[ $deb = 1 ] || check "$prefix: make uninstall leaves no file behind" '
		make -C "$repo" uninstall $vars && [ -z "$(find "$root" -type f -o -type l)" ]'
done

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
