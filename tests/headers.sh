#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The public headers (lib/include) as a user's compiler sees them, every warning an
# error: each header alone and all of them together (twice, for the include guards),
# as C99 with -pedantic and as C++11, with gcc and clang; clang also flags identifiers
# reserved to the implementation. A program expands MMEXT_OPTS() for every options
# struct (C99, and C++20, the first C++ with designated initialisers) and checks that
# only sz is nonzero; the options structs must have no padding, since only then does
# that initialiser zero every byte the library's tail check reads.
# Prints what failed; exit status 0 or 1.
#   tests/headers.sh
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

inc=$MMEXT_ROOT/lib/include
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0

c99=(-x c -std=c99 -pedantic -Wall -Wextra -Werror -I"$inc")
cxx=(-x c++ -std=c++11 -pedantic -Wall -Wextra -Werror -I"$inc")
reserved=(-Wreserved-identifier -Wreserved-macro-identifier)

# compile NAME SOURCE: with each compiler; any warning fails NAME.
compile() {
	try "$1 (gcc C99)" gcc "${c99[@]}" -fsyntax-only "$2"
	try "$1 (g++ C++11)" g++ "${cxx[@]}" -fsyntax-only "$2"
	try "$1 (clang C99)" clang "${c99[@]}" "${reserved[@]}" -fsyntax-only "$2"
	try "$1 (clang++ C++11)" clang++ "${cxx[@]}" "${reserved[@]}" -fsyntax-only "$2"
}
try() {	# NAME COMMAND...
	local name=$1
	shift
	"$@" > "$tmp/out" 2>&1 && return
	echo "$name:"
	sed 's/^/  /' "$tmp/out"
	bad=1
	return 1
}

for t in gcc g++ clang clang++; do
	command -v $t > /dev/null || { echo "no $t (scripts/deps.sh installs it)"; exit 1; }
done

hdrs=$(cd "$inc" && ls mmext.h mmext/*.h)
for h in $hdrs; do
	echo "#include <$h>" > "$tmp/alone.c"
	compile "$h alone" "$tmp/alone.c"
done
for h in $hdrs $hdrs; do echo "#include <$h>"; done > "$tmp/all.c"
compile "all headers" "$tmp/all.c"

# The options structs and their members, in order: a member added to a struct and not
# here makes the padding check fail, so each new member gets its thought.
cat > "$tmp/opts.c" <<'EOF'
#include <stdio.h>
#include <mmext.h>

#define M(T, m) sizeof(((struct T *)0)->m)
#define NO_PADDING(T, sum) typedef char T##_has_padding[sizeof(struct T) == (sum) ? 1 : -1]
NO_PADDING(mmext_ww_opts, M(mmext_ww_opts, sz) + M(mmext_ww_opts, backend) +
	   M(mmext_ww_opts, flags));
NO_PADDING(mmext_maps_opts, M(mmext_maps_opts, sz) + M(mmext_maps_opts, backend) +
	   M(mmext_maps_opts, flags));
NO_PADDING(mmext_fork_opts, M(mmext_fork_opts, sz) + M(mmext_fork_opts, flags) +
	   M(mmext_fork_opts, reserved));
NO_PADDING(mmext_pattern_opts, M(mmext_pattern_opts, sz) + M(mmext_pattern_opts, backend) +
	   M(mmext_pattern_opts, prot) + M(mmext_pattern_opts, tile_pages) +
	   M(mmext_pattern_opts, flags) + M(mmext_pattern_opts, reserved));

static int fails;

/* sz is the struct's size and every other byte is zero. */
static void check(const char *what, const void *o, size_t size)
{
	const unsigned char *p = (const unsigned char *)o;
	size_t sz, i;

	memcpy(&sz, o, sizeof(sz));
	if (sz != size) {
		printf("%s: sz %zu, not %zu\n", what, sz, size);
		fails++;
	}
	for (i = sizeof(sz); i < size; i++)
		if (p[i]) {
			printf("%s: byte %zu is %#x\n", what, i, p[i]);
			fails++;
		}
}

int main(void)
{
	MMEXT_OPTS(mmext_ww_opts, w);
	MMEXT_OPTS(mmext_maps_opts, m, .flags = MMEXT_MAPS_BUILD_ID);
	MMEXT_OPTS(mmext_fork_opts, f, .flags = MMEXT_FORK_PLAIN_ONLY);
	MMEXT_OPTS(mmext_pattern_opts, p, .backend = MMEXT_PATTERN_EMULATED, .tile_pages = 4);

	/* The fields given must hold their values; clear them to check the rest. */
	if (m.flags != MMEXT_MAPS_BUILD_ID || f.flags != MMEXT_FORK_PLAIN_ONLY ||
	    p.backend != MMEXT_PATTERN_EMULATED || p.tile_pages != 4) {
		printf("a field given to MMEXT_OPTS lost its value\n");
		fails++;
	}
	m.flags = 0;
	f.flags = 0;
	p.backend = 0;
	p.tile_pages = 0;
	check("ww", &w, sizeof(w));
	check("maps", &m, sizeof(m));
	check("fork", &f, sizeof(f));
	check("pattern", &p, sizeof(p));
	return fails != 0;
}
EOF
# opts_run NAME COMPILER...: build opts.c with it and run it.
opts_run() {
	local name=$1
	shift
	try "MMEXT_OPTS ($name)" "$@" -o "$tmp/opts" "$tmp/opts.c" || return
	try "MMEXT_OPTS ($name), run" "$tmp/opts"
}
opts_run "gcc C99" gcc "${c99[@]}"
opts_run "clang C99" clang "${c99[@]}" "${reserved[@]}"
# g++ warns about every member a designated initialiser leaves out (clang++ does not).
opts_run "g++ C++20" g++ "${cxx[@]}" -std=c++20 -Wno-missing-field-initializers
opts_run "clang++ C++20" clang++ "${cxx[@]}" -std=c++20 "${reserved[@]}"

exit $bad
