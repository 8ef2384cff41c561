#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Make every series of every base ready for git send-email, and check that it applies to
# its pristine base on its own.
#
#   upstream.sh [--base 6.12|7.3]...     (default: every base of kernel/)
#
# A series is a cover letter, covers/<series>.txt in the base's queue
# (kernel/<base>/covers/): the [PATCH 0/N] mail, whose
# Series: header names the queue's patches it holds (see cover_patches in lib.sh). For
# each one, in a scratch worktree of the pristine base commit (tag mmext-base of the
# base's tree):
#   - the subject's N must be the number of those patches, else the series fails; a
#     subject "[PATCH vV 0/N]" (the series continues a posted one) makes every mail vV;
#   - git am of the series' patches, as kernel/<base>/ holds them: a series that needs
#     the rest of the queue under it fails here, and the run fails;
#   - git format-patch --cover-letter --base into build/upstream/<base>/<series>/, the
#     cover letter's subject and text from the cover, To: the maintainers and Cc: the
#     reviewers and lists that scripts/get_maintainer.pl names (--no-git: no history
#     needed, so it works offline), and the cover's own Cc header;
#   - checkpatch.pl on every patch, findings allowed only as in tests/checkpatch-allow.txt
#     (which explains each, UNKNOWN_COMMIT_ID among them: the base trees hold no history
#     to find the Fixes: IDs in). --strict for the mainline bases (MMEXT_BASE_MAINLINE=1
#     in their base.conf), whose series are the ones to send; the others' (6.12's) are
#     held to the lint tier's level, as in the queue.
#
# The queue's patches are signed off by its placeholder identity, which a posting cannot
# carry: the Developer's Certificate of Origin is a person's. SIGNOFF="Name <address>"
# makes that person the mails' author and signer (From: and Signed-off-by:); without it
# the mails keep the placeholder, and the run says they are not to be sent.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bases=()
while [ $# -gt 0 ]; do
	case $1 in
	--base) bases+=("${2:?--base needs a base}"); shift ;;
	-h|--help) usage 0 ;;
	*) usage ;;
	esac
	shift
done
[ ${#bases[@]} != 0 ] || mapfile -t bases < <(all_bases)
placeholder="$MMEXT_QUEUE_NAME <$MMEXT_QUEUE_EMAIL>"
if [ -n "${SIGNOFF:-}" ]; then
	re='^[^<>@]*[^<>@ ] <[^<>@ ]+@[^<>@ ]+>$'
	[[ $SIGNOFF =~ $re ]] || die "SIGNOFF must be 'Name <address>', not '$SIGNOFF'"
	[ "$SIGNOFF" != "$placeholder" ] || die "SIGNOFF must name a person, not the queue's placeholder"
fi

bad=0
for base in "${bases[@]}"; do
	queue=$(base_queue "$base")
	tree=$(base_build "$base")/linux
	[ -d "$tree/.git" ] || die "$tree missing: run 'scripts/kernel.sh --base $base prepare'"
	strict=
	[ "$(base_conf "$base" MMEXT_BASE_MAINLINE)" = 1 ] && strict=--strict
	out=$MMEXT_BUILD/upstream/$base
	rm -rf "$out"
	mkdir -p "$out"
	scratch=$(mktemp -d)
	trap 'git -C "$tree" worktree remove --force "$scratch/tree" 2>/dev/null || true; rm -rf "$scratch"' EXIT
	# A sparse worktree (the series' files, MAINTAINERS and get_maintainer.pl): checking
	# out the whole tree would take minutes.
	git -C "$tree" worktree add -q --no-checkout --detach "$scratch/tree" mmext-base
	for cover in "$queue"/covers/*.txt; do
		name=$(basename "$cover" .txt)
		mapfile -t patches < <(cover_patches "$cover" "$queue/series" || true)
		if [ ${#patches[@]} = 0 ]; then
			say "$base/$name: the cover names no patches of the series file; skipped"
			continue
		fi
		subject=$(cover_header "$cover" Subject)
		n=$(echo "$subject" | sed -nE 's/^\[PATCH (v[0-9]+ )?0\/([0-9]+)\].*/\2/p')
		v=$(echo "$subject" | sed -nE 's/^\[PATCH v([0-9]+) 0\/[0-9]+\].*/\1/p')
		if [ "$n" != ${#patches[@]} ]; then
			say "$base/$name: the subject says ${n:-no} patches, the Series header ${#patches[@]}"
			bad=1
			continue
		fi
		git -C "$scratch/tree" sparse-checkout set --no-cone /MAINTAINERS /scripts/get_maintainer.pl \
			$(cd "$queue/patches" && sed -nE 's#^diff --git a/(.*) b/(.*)$#/\1 /\2#p' "${patches[@]}" | tr ' ' '\n' | sort -u)
		git -C "$scratch/tree" reset -q --hard mmext-base
		if ! git -C "$scratch/tree" am -q --keep-cr "${patches[@]/#/$queue/patches/}" > "$out/$name.am.log" 2>&1; then
			git -C "$scratch/tree" am --abort > /dev/null 2>&1 || true
			say "$base/$name: does NOT apply to the pristine base on its own ($out/$name.am.log)"
			bad=1
			continue
		fi
		title=${subject#\[PATCH *0/$n\] }
		# get_maintainer.pl wants a whole tree around it: the base's own (its MAINTAINERS).
		to=$(git -C "$scratch/tree" diff mmext-base HEAD | (cd "$tree" && ./scripts/get_maintainer.pl \
			--no-git --no-git-fallback --no-rolestats --m --no-r --no-l))
		# Reviewers of one section are often maintainers of another: name each once.
		cc=$(git -C "$scratch/tree" diff mmext-base HEAD | (cd "$tree" && ./scripts/get_maintainer.pl \
			--no-git --no-git-fallback --no-rolestats --no-m --r --l) | { grep -vxF "$to" || true; } | paste -sd, -)
		to=$(echo "$to" | paste -sd, -)
		# The authors of the versions a series continues, and their reviewers: its Cc header.
		extra=$(cover_header "$cover" Cc)
		cc=${cc:+$cc${extra:+,}}$extra
		dir=$out/$name
		git -C "$scratch/tree" format-patch -q --cover-letter --base=mmext-base --zero-commit \
			${v:+--reroll-count="$v"} --no-signature ${to:+--to="$to"} ${cc:+--cc="$cc"} -o "$dir" mmext-base..HEAD
		# The cover letter: its subject and text from the cover.
		blurb=$(mktemp)
		cover_body "$cover" > "$blurb"
		c=$(ls "$dir"/*0000-*.patch)
		TITLE=$title BLURB=$blurb perl -0pi -e '
			s/\*\*\* SUBJECT HERE \*\*\*/$ENV{TITLE}/;
			my $b = do { local $/; open my $f, "<", $ENV{BLURB} or die; <$f> };
			s/\*\*\* BLURB HERE \*\*\*\n/$b/;' "$c"
		rm -f "$blurb"
		if [ -n "${SIGNOFF:-}" ]; then
			OLD=$placeholder NEW=$SIGNOFF perl -pi -e '
				s/^(From|Signed-off-by): \Q$ENV{OLD}\E$/$1: $ENV{NEW}/' "$dir"/*.patch
		else
			say "$base/$name: signed off by the queue's placeholder; not to be sent without SIGNOFF"
		fi
		n_bad=0
		for p in "$dir"/*.patch; do
			case $(basename "$p") in 0000-* | v*-0000-*) continue ;; esac
			res=$(cd "$tree" && ./scripts/checkpatch.pl $strict --terse --show-types "$p" 2>&1 |
				grep -E ': (ERROR|WARNING|CHECK):' || true)
			[ -n "$res" ] || continue
			# The allow list names the queue's patch files: match by subject.
			q=$(basename "$p")
			while read -r line; do
				type=$(echo "$line" | sed -n 's/.*: \(ERROR\|WARNING\|CHECK\):\([A-Z_0-9]*\):.*/\2/p')
				checkpatch_allowed "$base/$q" "$type" || { echo "  $line"; n_bad=1; }
			done <<< "$res"
		done
		[ $n_bad = 0 ] || bad=1
		say "$base/$name: ${#patches[@]} patches apply to the pristine base; checkpatch${strict:+ $strict}" \
		    "$([ $n_bad = 0 ] && echo 'finds nothing beyond tests/checkpatch-allow.txt' || echo 'has findings (above)'); $dir"
	done
	git -C "$tree" worktree remove --force "$scratch/tree"
	rm -rf "$scratch"
done
[ $bad = 0 ]
