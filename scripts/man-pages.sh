#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install or remove man pages in MANDIR/manN, with a link page (.so) for every other
# name a page's NAME section lists, so that `man mmext_ww_open` finds mmext_ww(3).
#   man-pages.sh install|uninstall MANDIR PAGE...
set -euo pipefail
# Stands alone (debian/rules runs it through make install): its usage is this header.
usage() {
	awk 'NR > 1 && !/^#/ {exit} NR > 2 {sub(/^# ?/, ""); print}' "$0" >&"$((${1:-2} ? 2 : 1))"
	exit "${1:-2}"
}
case ${1:-} in
install|uninstall) [ $# -ge 2 ] || usage ;;
-h|--help) usage 0 ;;
*) usage ;;
esac
action=$1 mandir=$2
shift 2
for page in "$@"; do
	base=$(basename "$page") sec=${page##*.}
	dir=$mandir/man$sec
	# "name1, name2, ... \- summary", over one or more lines after .SH NAME.
	names=$(awk '/^\.SH/ {if (on) exit; on = /^\.SH NAME/; next} on {printf "%s ", $0}' "$page" |
		sed 's/\\-.*//; s/,/ /g')
	if [ "$action" = install ]; then
		install -d "$dir"
		install -m 644 "$page" "$dir/$base"
	else
		rm -f "$dir/$base"
	fi
	for n in $names; do
		[ "$n.$sec" = "$base" ] && continue
		if [ "$action" = install ]; then
			echo ".so man$sec/$base" > "$dir/$n.$sec"
		else
			rm -f "$dir/$n.$sec"
		fi
	done
	[ "$action" = install ] || rmdir "$dir" 2>/dev/null || :
done
