#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Static checks, one RESULT line each (see run-suite.sh): the man pages with
# mandoc -T lint (style level: what man(1) would render badly) and man-content.sh
# (sections, a page per function, options structs, every errno), and every patch of
# the queue with the base tree's checkpatch.pl. A kept checkpatch finding is listed,
# with its reason, in tests/checkpatch-allow.txt. The cover letters as the mails they
# are (covers below). Also the benchmark runner's unit checks
# (tests/bench/test_runner.py: its statistics, report verdicts and --write-docs; no
# kernel needed), the test orchestrator's (tests/test_runner.py: target names, the
# baseline comparison),
# and syzkaller's descriptions of the queue's calls (tests/syzkaller/run.sh --check).
# make upstream's refusal of a SIGNOFF that names no person.
# The library's public headers as C99 and C++ (tests/headers.sh), and the places that
# repeat the library's version.
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

bad=0
"$MMEXT_ROOT/tests/headers.sh" > "$log" 2>&1 || bad=1
result headers $bad "$log"

# The version is MMEXT_VERSION_* in mmext/common.h; lib/Makefile and mmext_version()
# derive it. debian/changelog's top entry and the titles of the man pages that carry a
# version (the library's and the command's) must repeat it.
bad=0
{
	ver=$(make -s -C "$MMEXT_ROOT/lib" print-version)
	[[ $ver =~ ^[0-9]+\.[0-9]+$ ]] || { echo "lib/Makefile: version '$ver'"; bad=1; }
	deb=$(dpkg-parsechangelog -l "$MMEXT_ROOT/debian/changelog" -S Version)
	deb=${deb#*:}
	[ "${deb%%-*}" = "$ver" ] || { echo "debian/changelog: $deb, the header $ver"; bad=1; }
	for f in "$MMEXT_ROOT"/man/*.[0-9]; do
		t=$(sed -n 's/^\.TH [^"]*"\(lib\)\{0,1\}mmext \([^"]*\)".*/\2/p' "$f")
		[ -z "$t" ] || [ "$t" = "$ver" ] || { echo "man/${f##*/}: .TH says $t, the header $ver"; bad=1; }
	done
} > "$log" 2>&1
result version $bad "$log"

# checkpatch_series NAME BASE QUEUEDIR CHECKPATCH [ARGS]: every patch of QUEUEDIR/series, the
# findings that tests/checkpatch-allow.txt does not allow for that patch fail NAME.
checkpatch_series() {
	local name=$1 b=$2 q=$3 bin=$4 p out left bad=0
	shift 4
	# Without the tree every run would fail with no finding to report: say so instead.
	if [ ! -x "$bin" ]; then
		echo "ok - $name # SKIP no $bin ('scripts/kernel.sh prepare' makes it)"
		echo "RESULT $name skip 0 0 1"
		return
	fi
	: > "$log"
	while read -r p; do
		# From inside the tree: checks that look at it (the header a patch should include)
		# run too.
		out=$(cd "$(dirname "$bin")/.." && "$bin" --terse --show-types "$@" "$q/patches/$p" 2>&1) && continue
		left=$(echo "$out" | grep -E ': (ERROR|WARNING|CHECK):' | while read -r line; do
			type=$(echo "$line" | sed -n 's/.*: \(ERROR\|WARNING\|CHECK\):\([A-Z_0-9]*\):.*/\2/p')
			checkpatch_allowed "$b/$p" "$type" || echo "$line"
		done)
		[ -z "$left" ] || { echo "$left" >> "$log"; bad=1; }
	done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$q/series")
	result "$name" $bad "$log"
}
# Every base's queue, with the base's own checkpatch.pl when its tree is there (else the
# one of the base lint runs with, the default). The series of a mainline base
# (MMEXT_BASE_MAINLINE=1 in its base.conf) are the ones to send: --strict.
for b in $(all_bases); do
	q=$(base_queue "$b")
	[ -f "$q/series" ] || continue
	cp_bin=$(base_build "$b")/linux/scripts/checkpatch.pl
	[ -x "$cp_bin" ] || cp_bin=$KTREE/scripts/checkpatch.pl
	if [ "$(base_conf "$b" MMEXT_BASE_MAINLINE)" = 1 ]; then
		checkpatch_series "checkpatch_strict_$b" "$b" "$q" "$cp_bin" --strict
	else
		checkpatch_series "checkpatch_$b" "$b" "$q" "$cp_bin"
	fi
done

# The cover letters are sent as they are (scripts/upstream.sh), so check them as mails:
# "Subject: [PATCH 0/N] area: summary" (or [PATCH vV 0/N] for a later version of a
# posted series) with N the number of patches the Series header
# names, no patch in two series, plain text (no markdown headings or code spans) of at
# most 150 lines and 75 columns of text, and the docs/results record each points to exists.
: > "$log"
bad=0
for b in $(all_bases); do
	q=$(base_queue "$b")
	[ -f "$q/series" ] && [ -d "$q/covers" ] || continue
	for c in "$q"/covers/*.md; do
		[ -e "$c" ] && { echo "${c#"$MMEXT_ROOT"/}: a cover letter is a .txt mail"; bad=1; }
	done
	for c in "$q"/covers/*.txt; do
		[ -e "$c" ] || continue
		rel=${c#"$MMEXT_ROOT"/}
		subject=$(cover_header "$c" Subject)
		n=$(sed -nE 's/^\[PATCH (v[0-9]+ )?0\/([0-9]+)\] [a-z0-9_/.,-]+( [a-z0-9_/.,-]+)*: .+/\2/p' <<< "$subject")
		np=$(cover_patches "$c" "$q/series" | wc -l)
		if [ -z "$n" ]; then
			echo "$rel: no 'Subject: [PATCH 0/N] area: summary' header"; bad=1
		elif [ "$n" != "$np" ]; then
			echo "$rel: [PATCH 0/$n], but its Series header names $np patches"; bad=1
		fi
		[ "$(wc -l < "$c")" -le 150 ] || { echo "$rel: $(wc -l < "$c") lines (at most 150)"; bad=1; }
		# The text sent; the headers (a Cc list) may be longer.
		awk -v f="$rel" 'body && length > 75 {print f ":" FNR ": " length " columns"; e=1}
			/^$/ {body=1} END {exit e}' "$c" || bad=1
		grep -nE '^#|`' "$c" | sed "s|^|$rel:|" | grep . && bad=1
		refs=$(grep -oE 'docs/results/[a-z0-9.-]+\.md' "$c" | sort -u)
		[ -n "$refs" ] || { echo "$rel: points to no docs/results record"; bad=1; }
		for r in $refs; do
			[ -f "$MMEXT_ROOT/$r" ] || { echo "$rel: $r does not exist"; bad=1; }
		done
	done
	dup=$(for c in "$q"/covers/*.txt; do [ -e "$c" ] && cover_patches "$c" "$q/series"; done | sort | uniq -d)
	[ -z "$dup" ] || { echo "${q#"$MMEXT_ROOT"/}: in two series: $dup"; bad=1; }
done >> "$log"
result covers $bad "$log"

# make upstream refuses a SIGNOFF that names no person (the mails' From: and
# Signed-off-by:) before it writes anything.
: > "$log"
bad=0
scratch=$(mktemp -d)
for s in "jane@example.org" "Jane <jane>" "Jane Doe <jane@example.org> x" \
	 "mmext developers <devel@mmext.invalid>"; do
	if SIGNOFF=$s MMEXT_BUILD=$scratch "$MMEXT_ROOT/scripts/upstream.sh" > "$scratch.out" 2>&1 ||
	   ! grep -q "^error: SIGNOFF must" "$scratch.out" || [ -n "$(ls -A "$scratch")" ]; then
		echo "SIGNOFF='$s': not refused, or something written:"; cat "$scratch.out"; bad=1
	fi >> "$log"
done
rm -rf "$scratch" "$scratch.out"
result upstream_signoff $bad "$log"

: > "$log"
bad=0
# Debian's python3, which has matplotlib (scripts/deps.sh).
"${PYTHON:-/usr/bin/python3}" "$MMEXT_ROOT/tests/bench/test_runner.py" -q > "$log" 2>&1 || bad=1
result bench_unit $bad "$log"

: > "$log"
bad=0
"${PYTHON:-/usr/bin/python3}" "$MMEXT_ROOT/tests/test_runner.py" -q > "$log" 2>&1 || bad=1
result tests_unit $bad "$log"

# syzkaller's descriptions of the queue's calls (tests/syzkaller/) compile with the pinned
# syzkaller's syz-sysgen; the fuzzing itself is the syzkaller tier.
"$MMEXT_ROOT/tests/syzkaller/run.sh" --check > "$log" 2>&1
grep -E '^(ok|not ok) - |^RESULT ' "$log" || { sed 's/^/# /' "$log" | tail -n 30
	echo "RESULT syzkaller_descriptions fail 0 1 0"; }
