#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Static checks, one RESULT line each (see run-suite.sh): the man pages with
# mandoc -T lint (style level: what man(1) would render badly) and man-content.sh
# (sections, a page per function, options structs, every errno), and every patch of
# the queue with the base tree's checkpatch.pl. A kept checkpatch finding is listed,
# with its reason, in tests/checkpatch-allow.txt. Also the benchmark runner's unit checks
# (make -C bench check: its statistics and report verdicts; no kernel needed).
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

result() {	# NAME OK(0|1) LOG
	if [ "$2" = 0 ]; then
		echo "ok - $1"
		echo "RESULT $1 pass 1 0 0"
	else
		echo "not ok - $1"
		sed 's/^/# /' "$3"
		echo "RESULT $1 fail 0 1 0"
	fi
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

bad=0
for f in "$MMEXT_ROOT"/man/*.[0-9]; do
	mandoc -T lint -W style "$f" >> "$log" 2>&1 || bad=1
done
[ -s "$log" ] && bad=1
result man_lint $bad "$log"

bad=0
"$MMEXT_ROOT/tests/man-content.sh" > "$log" 2>&1 || bad=1
result man_content $bad "$log"

: > "$log"
bad=0
allow=$MMEXT_ROOT/tests/checkpatch-allow.txt
# allowed PATCH TYPE: a line "GLOB TYPE" of the allow list matches.
allowed() {
	local glob type
	while read -r glob type; do
		case $glob in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2254
		case $1 in $glob) [ "$type" = "$2" ] && return 0 ;; esac
	done < "$allow"
	return 1
}
while read -r p; do
	out=$("$KTREE/scripts/checkpatch.pl" --no-tree --terse --show-types \
		"$MMEXT_ROOT/kernel/patches/$p" 2>&1) && continue
	# Drop the allowed TYPEs for this patch, then see what is left.
	left=$(echo "$out" | grep -E ': (ERROR|WARNING|CHECK):' | while read -r line; do
		type=$(echo "$line" | sed -n 's/.*: \(ERROR\|WARNING\|CHECK\):\([A-Z_0-9]*\):.*/\2/p')
		allowed "$p" "$type" || echo "$line"
	done)
	[ -z "$left" ] || { echo "$left" >> "$log"; bad=1; }
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$MMEXT_ROOT/kernel/series")
result checkpatch $bad "$log"

# The other bases' series are meant for mainline: --strict, with the base's own
# checkpatch.pl when its tree is there (else 6.12's).
for q in "$MMEXT_ROOT"/kernel/bases/*/; do
	[ -f "$q/series" ] || continue
	b=$(basename "$q")
	cp_bin=$(base_build "$b")/linux/scripts/checkpatch.pl
	[ -x "$cp_bin" ] || cp_bin=$KTREE/scripts/checkpatch.pl
	: > "$log"
	bad=0
	while read -r p; do
		out=$("$cp_bin" --no-tree --strict --terse --show-types "$q/patches/$p" 2>&1) && continue
		left=$(echo "$out" | grep -E ': (ERROR|WARNING|CHECK):' | while read -r line; do
			type=$(echo "$line" | sed -n 's/.*: \(ERROR\|WARNING\|CHECK\):\([A-Z_0-9]*\):.*/\2/p')
			allowed "$p" "$type" || echo "$line"
		done)
		[ -z "$left" ] || { echo "$left" >> "$log"; bad=1; }
	done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$q/series")
	result "checkpatch_strict_$b" $bad "$log"
done

: > "$log"
bad=0
make -s -C "$MMEXT_ROOT/bench" check > "$log" 2>&1 || bad=1
result bench_unit $bad "$log"
