#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What a reader of the man pages looks for: the usual sections, a page for every
# exported function, each options struct spelled out in a SYNOPSIS, in ERRORS every
# errno the library can return, and EXAMPLES that compile. Prints one line per problem;
# exit 1 if any.
#   man-content.sh [REPO]
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
problem() { echo "$*"; bad=1; }
# section PAGE TITLE: the lines of one section.
section() { awk -v t=".SH $2" '$0 == t || $0 == t "\"" {on = 1; next} /^\.SH/ {on = 0} on' "$1"; }

for page in man/*.[1-8]; do
	want=(SYNOPSIS EXAMPLES)
	case $page in
	*.[23]) want+=("RETURN VALUE" ERRORS) ;;
	*.1) want+=("EXIT STATUS") ;;
	esac
	for s in "${want[@]}"; do
		grep -qx "\.SH \"\?$s\"\?" "$page" || problem "$page: no $s section"
	done
done

# The link pages make install writes: one per name in a NAME section.
scripts/man-pages.sh install "$tmp/man" man/*.[1-8]
for f in $(sed -n 's/^[[:space:]]*\(mmext_[a-z0-9_]*\);$/\1/p' lib/libmmext.map); do
	[ -e "$tmp/man/man3/$f.3" ] || problem "$f: exported but named by no man page"
done

# Every member of every options struct, inside one SYNOPSIS.
for s in $(sed -n 's/^struct \(mmext_[a-z_]*_opts\) {$/\1/p' lib/include/mmext/*.h); do
	members=$(awk -v s="struct $s {" '$0 == s {on = 1; next} on && /^};/ {exit}
		on && /;/ {sub(/;.*/, ""); sub(/\[.*/, ""); print $NF}' lib/include/mmext/*.h | tr -d '*')
	found=0
	for page in man/*.3; do
		syn=$(section "$page" SYNOPSIS)
		grep -q "^struct $s {" <<< "$syn" || continue
		found=1
		for m in $members; do
			grep -qw -- "$m" <<< "$syn" || problem "$page: SYNOPSIS: struct $s lacks $m"
		done
	done
	[ $found = 1 ] || problem "struct $s: in no SYNOPSIS"
done

# ERRORS: what the page's sources return, plus what they pass on from system calls
# and the shared helpers (options, /proc, userfaultfd, memfd), read off the code;
# maps_parse.c's EAGAIN stays inside maps.c.
declare -A src=(
	[mmext_maps.3]=maps.c [mmext_ww.3]=writewatch.c [mmext_pattern.3]=pattern.c
	[mmext_names.3]=names.c [mmext_fork.3]=fork.c [mmext_probe.3]="" [mmext_version.3]=""
)
declare -A passed=(
	[mmext_maps.3]="E2BIG EACCES EPERM EMFILE ENFILE"
	[mmext_ww.3]="E2BIG EACCES EPERM ENOSYS EMFILE ENFILE ESRCH"
	[mmext_pattern.3]="E2BIG EMFILE ENFILE"
	[mmext_names.3]="ESRCH EACCES EPERM ENOENT EBADF ENOMEM EMFILE ENFILE"
	[mmext_fork.3]="E2BIG EAGAIN ENOMEM EPERM"
	[mmext_probe.3]="EINVAL"
	[mmext_version.3]=""
)
for page in man/*.3; do
	p=${page#man/}
	[ -n "${src[$p]+set}" ] || { problem "$page: $0 does not know its sources"; continue; }
	errs=$(section "$page" ERRORS)
	want=${passed[$p]}
	for f in ${src[$p]}; do
		want+=" $(grep -ohE '(return|[^!=<>]=|\?|:) -E[A-Z0-9]+' "lib/src/$f" | grep -o 'E[A-Z0-9]*$')"
	done
	for e in $(echo "$want" | tr ' ' '\n' | sort -u); do
		grep -qE "^\.BR? .*\\b$e\\b" <<< "$errs" || problem "$page: ERRORS lacks $e"
	done
done

# EXAMPLES of the library and system call pages compile against today's headers: each
# fragment becomes the body of a function whose parameters are the names the fragments
# take as given (pid, buf, len, nr, argv) and run_child(), declared; a block of its own, so that
# a fragment may declare those names itself.
for page in man/*.[23]; do
	{
		printf '#define _GNU_SOURCE\n#include <inttypes.h>\n#include <stdio.h>\n#include <stdlib.h>\n'
		printf '#include <string.h>\n#include <unistd.h>\n#include <sys/mman.h>\n#include <sys/syscall.h>\n'
		printf '#include <mmext/%s.h>\n' common fork names pattern probe uapi vma writewatch
		printf 'int run_child(void);\nint example(pid_t pid, void *buf, size_t len, long nr, char **argv)\n{\n{\n'
		section "$page" EXAMPLES | sed -n '/^\.EX$/,/^\.EE$/p' | sed "/^\.E[XE]$/d; s/\\\\e/\\\\/g; s/\\\\-/-/g; s/\\\\(aq/'/g; s/\\\\(dq/\"/g"
		printf '}\n\treturn 0;\n}\n'
	} > "$tmp/example.c"
	gcc -std=gnu11 -Wall -Werror -Wno-unused-variable -Wno-unused-parameter -I lib/include \
		-c -o /dev/null "$tmp/example.c" > "$tmp/example.log" 2>&1 ||
		problem "$page: EXAMPLES do not compile: $(grep -m1 'error' "$tmp/example.log")"
done
exit $bad
