#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernel.sh refuses bad arguments with a message and a non-zero exit status, and
# changes nothing: not the queue (kernel/), not the trees and configurations each and objs
# write. Exit status 0 pass, 1 fail.
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

k=$MMEXT_ROOT/scripts/kernel.sh
bad=0
# What these commands would write first (other tiers may build beside this one).
state() {
	git -C "$MMEXT_ROOT" status --porcelain -- kernel
	(cd "$MMEXT_ROOT" && ls -d build/linux-each build/*/linux-each build/out/*-objs \
		build/*/out/*-objs 2>/dev/null)
}
before=$(state)
# ARGS... -- the message's text: the command must fail and print it.
refuse() {
	local args=() out rc
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	out=$("$k" "${args[@]}" 2>&1)
	rc=$?
	if [ $rc = 0 ] || ! grep -q -F -- "$1" <<< "$out"; then
		echo "not ok - kernel.sh ${args[*]}: exit $rc, '$out' lacks '$1'"
		bad=1
	else
		echo "ok - kernel.sh ${args[*]}: $1"
	fi
}
refuse each x -- "each takes a patch number, not 'x'"
refuse each -1 -- "each takes a patch number, not '-1'"
refuse objs x -- "objs takes a patch number, not 'x'"
refuse objs "" -- "objs takes a patch number, not ''"
refuse objs 1.5 -- "objs takes a patch number, not '1.5'"
refuse --base 9.9 objs 1 -- "unknown base '9.9'"
refuse frobnicate -- "kernel.sh [--base"
if [ "$(state)" != "$before" ]; then
	echo "not ok - the refused commands changed kernel/ or build/"
	bad=1
else
	echo "ok - nothing changed"
fi
exit $bad
