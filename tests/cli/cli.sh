#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Behaviour and bad-input tests of the mmext command. Prints TAP with a kselftest-style
# Totals line. Needs only bash and busybox tools; the JSON checks use cli_helper (C).
#   cli.sh [DIR]   DIR holds mmext and cli_helper (default: this script's directory)
set -u
dir=${1:-$(cd "$(dirname "$0")" && pwd)}
M=$dir/mmext
H=$dir/cli_helper
tmp=$(mktemp -d)
pass=0 fail=0 skip=0 n=0
helpers=""
trap 'kill $target $helpers 2>/dev/null; rm -rf "$tmp"' EXIT

echo "TAP version 13"
ok()   { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $1"; }
bad()  { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; [ -n "${2:-}" ] && echo "# $2"; }
skp()  { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n $1 # SKIP $2"; }
check() { if eval "$2"; then ok "$1"; else bad "$1" "failed: $2"; fi; }

# run EXPECTED_RC ARGS...: run mmext, stdout in $tmp/out, stderr in $tmp/err; true if rc matches.
run() {
	local want=$1
	shift
	"$M" "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ "$rc" = "$want" ] || { echo "# mmext $* exited $rc, expected $want"; sed 's/^/#   /' "$tmp/err" | head -5; return 1; }
}
usage_err() { run 2 "$@" && grep -q "Try 'mmext" "$tmp/err" && [ ! -s "$tmp/out" ]; }
has() { mmext_probe_line=$(grep "^$1 " "$tmp/probe"); [ "$(echo "$mmext_probe_line" | awk '{print $2}')" = present ]; }

# A process whose maps do not change while we look: sleep, for longer than the slowest
# emulated guest takes to run this file (the trap kills it).
sleep 3600 &
target=$!
# Wait until it has exec'd sleep (its maps no longer show bash).
for _ in 1 2 3 4 5 6 7 8 9 10; do grep -q bash "/proc/$target/maps" 2>/dev/null || break; sleep 0.1; done

# --- help and usage ---
check "mmext --help" 'run 0 --help && grep -q "^Usage: mmext" "$tmp/out"'
for c in probe maps query watch; do
	check "mmext $c --help" "run 0 $c --help && grep -q '^Usage: mmext $c' \"\$tmp/out\""
	check "mmext $c unknown option is a usage error" "usage_err $c --no-such-option"
done
check "mmext -V prints the version" 'run 0 -V && grep -q "^mmext [0-9.]* (libmmext [0-9.]*)$" "$tmp/out"'
check "mmext help lists the commands" 'run 0 help && grep -q "^  maps " "$tmp/out"'
for c in probe maps query watch run; do
	check "mmext help $c is $c --help" "run 0 help $c && \"\$M\" $c --help | cmp -s - \"\$tmp/out\""
done
check "mmext help of an unknown command is a usage error" 'usage_err help no-such-command'
check "mmext help with two commands is a usage error" 'usage_err help maps query'
# Completion: what bash would offer after the words given.
complete_words() { # WORD...: COMPREPLY, sorted, on one line
	(. "$dir/mmext.bash-completion" && COMP_WORDS=("$M" "$@") COMP_CWORD=$# && _mmext &&
	 printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " ")
}
check "completion: commands" '[ "$(complete_words "")" = "--help --version -V -h help maps probe query run watch " ]'
check "completion: run's options, then a command, then files" '
	[ "$(complete_words run --c)" = "--cow-pte " ] && complete_words run --cow-pte -- tru | grep -qw true &&
	complete_words run tru | grep -qw true && [ "$(complete_words run -- true "$dir/cli.s")" = "$dir/cli.sh " ]'
check "completion: a command from its prefix, after help too" '[ "$(complete_words ma)" = "maps " ] && [ "$(complete_words help w)" = "watch " ]'
check "completion: a command's options from its --help" '[ "$(complete_words maps --ro)" = "--rollup " ] && [ "$(complete_words watch --pa)" = "--pages --pattern " ]'
check "completion: backends per command" '[ "$(complete_words maps --backend "")" = "auto ioctl text " ] && [ "$(complete_words watch -b p)" = "pagemap_scan " ]'
check "completion: watch offers only the backends the library provides" '[ "$(complete_words watch --backend "")" = "auto pagemap_scan soft_dirty " ]'
check "completion: PIDs and self" 'complete_words maps "" | grep -qw "$target" && [ "$(complete_words query se)" = "self " ]'
check "mmext without arguments is a usage error" 'run 2 && grep -q "^Usage: mmext" "$tmp/err"'
check "unknown subcommand is a usage error" 'usage_err no-such-command'
check "unknown global option is a usage error" 'usage_err --no-such-option'

# --- probe ---
check "probe exits 0" 'run 0 probe && cp "$tmp/out" "$tmp/probe"'
check "probe prints one line per feature" '[ "$(wc -l < "$tmp/probe")" -eq 8 ]'
for f in anon_name refpage maps_lockless cow_pte writewatch procmap_query soft_dirty; do
	check "probe has a $f line" "grep -Eq '^$f +(present|absent) ' \"\$tmp/probe\""
done
check "absent features give a reason" '! awk "\$2 == \"absent\" && (\$3 == \"-\" || NF < 4)" "$tmp/probe" | grep -q .'
check "probe --json is valid with typed numbers" 'run 0 probe --json && [ "$("$H" json -n id -n errno -l kernel_features < "$tmp/out")" = 8 ]'
check "probe with an argument is a usage error" 'usage_err probe extra'

# --- maps ---
maps=/proc/$target/maps
awk '{print $1}' "$maps" > "$tmp/ranges"
check "maps PID exits 0" 'run 0 maps $target && cp "$tmp/out" "$tmp/maps"'
check "maps ranges match /proc/PID/maps" 'awk "NR > 2 && \$1 != \"total\" {print \$1}" "$tmp/maps" | cmp -s - "$tmp/ranges"'
# Names: maps field 6 on (empty for anonymous, which mmext shows as [anon]).
awk '{n = ""; for (i = 6; i <= NF; i++) n = n (i > 6 ? " " : "") $i; print $1, (n == "" ? "[anon]" : n)}' "$maps" > "$tmp/names"
check "maps names and permissions match" 'awk "NR > 2 && \$1 != \"total\" {n = \"\"; for (i = 4; i <= NF; i++) n = n (i > 4 ? \" \" : \"\") \$i; print \$1, n}" "$tmp/maps" | cmp -s - "$tmp/names" && awk "NR > 2 && \$1 != \"total\" {print \$3}" "$tmp/maps" | cmp -s - <(awk "{print \$2}" "$maps")'
check "maps first shows PID: COMMAND LINE" '[ "$(head -1 "$tmp/maps")" = "$target: sleep 3600" ]'
check "maps total counts every VMA" 'grep -q "^total .* $(wc -l < "$maps") VMAs$" "$tmp/maps"'
check "maps sizes are KiB of the ranges" 'awk "NR > 2 && \$1 != \"total\" {print \$2}" "$tmp/maps" > "$tmp/kb" && [ -s "$tmp/kb" ] && ! grep -vq "^[0-9][0-9]*$" "$tmp/kb"'
check "maps self shows mmext itself" 'run 0 maps self && grep -q "/mmext$" "$tmp/out"'
check "maps --rss adds RSS, PSS, shared/private clean/dirty, swap, swap PSS, huge pages, USS" 'run 0 maps --rss $target && sed -n 2p "$tmp/out" | grep -q "KB *RSS *PSS *SH_CLEAN *SH_DIRTY *PR_CLEAN *PR_DIRTY *SWAP *SWAPPSS *ANONHUGE *USS *PERM NAME$" && awk "\$1 == \"total\" {exit !(\$3 > 0)}" "$tmp/out"'
check "maps --rss lists the same VMAs" 'awk "NR > 2 && \$1 != \"total\" {print \$1}" "$tmp/out" | cmp -s - "$tmp/ranges"'
# What pmap -X shows, as smaps has it: per VMA "RANGE RSS PSS ... ANONHUGE" in KiB, then
# USS as smem has it: Private_Clean + Private_Dirty.
fields="Rss Pss Shared_Clean Shared_Dirty Private_Clean Private_Dirty Swap SwapPss AnonHugePages"
rssnums="-n rss -n pss -n shared_clean -n shared_dirty -n private_clean -n private_dirty -n swap -n swap_pss -n anon_huge -n uss"
smaps_rows() { # FILE
	awk -v f="$fields" 'BEGIN {n = split(f, k); for (i = 1; i <= n; i++) col[k[i] ":"] = i}
		function out() {if (r != "") {printf "%s", r; for (i = 1; i <= n; i++) printf " %d", v[i] + 0; print " " v[5] + v[6]}}
		$1 ~ /^[0-9a-f]+-[0-9a-f]+$/ {out(); r = $1; delete v; next}
		$1 in col {v[col[$1]] = $2} END {out()}' "$1"
}
# Other processes mapping or unmapping the target's shared pages would move its PSS
# and shared/private split between two reads: the target is the static helper, whose
# pages only the other helpers share, and they stay while it is read.
"$H" dirty 16 > "$tmp/rsst" & helpers="$helpers $!" rsst=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$tmp/rsst" ] && break; sleep 0.1; done
rss_rows_match() {
	run 0 maps --rss $rsst && smaps_rows "/proc/$rsst/smaps" > "$tmp/want" &&
	awk 'NR > 2 && $1 != "total" {print $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12}' "$tmp/out" | cmp -s - "$tmp/want"
}
# "KiB VMAS" of a maps file.
maps_kb_vmas() {
	local r rest kb=0 n=0
	while read -r r rest; do
		kb=$((kb + (16#${r#*-} - 16#${r%-*}) / 1024)) n=$((n + 1))
	done < "$1"
	echo "$kb $n"
}
# --rollup: "rollup KB RSS ... USS VMAS", the size and count as the maps listing has them.
rollup_match() {
	run 0 maps --rollup $rsst && [ "$(wc -l < "$tmp/out")" = 3 ] &&
	sed -n 2p "$tmp/out" | grep -q "^ *KB *RSS *PSS .* ANONHUGE *USS *VMAS$" &&
	[ "$(sed -n 3p "$tmp/out" | awk '{$1 = $2 = $NF = ""; print}' | xargs)" = "$(smaps_rows "/proc/$rsst/smaps_rollup" | cut -d" " -f2-)" ] &&
	[ "$(sed -n 3p "$tmp/out" | awk '{print $2, $NF}')" = "$(maps_kb_vmas "/proc/$rsst/maps")" ]
}
check "maps --rss: every VMA's columns as smaps has them" 'rss_rows_match'
check "maps --rollup: the totals of smaps_rollup, USS, size and VMA count" 'rollup_match'
# smaps rounds PSS down per VMA, smaps_rollup only once: its PSS sums may be up to a
# KiB per VMA above ours; every other total must be equal.
rss_vs_rollup() {
	run 0 maps --rss $rsst && cp "$tmp/out" "$tmp/rss" && run 0 maps --rollup $rsst &&
	awk 'NR == FNR {if ($1 == "total") {for (i = 3; i <= 12; i++) t[i - 2] = $i; nv = $13}; next}
		FNR == 3 {for (i = 1; i <= 10; i++) {d = $(i + 2) - t[i]
			if (i == 2 || i == 8 ? d < 0 || d >= nv : d != 0) {print "# field " i ": rollup " $(i + 2) ", total " t[i]; bad = 1}}
			if ($2 != $2 + 0 || $NF != nv) {print "# rollup size " $2 ", VMAs " $NF " against " nv; bad = 1}}
		END {exit bad}' "$tmp/rss" "$tmp/out"
}
check "maps --rss totals agree with smaps_rollup" 'rss_vs_rollup'
check "maps --json --rollup: typed numbers with size and VMA count, no VMA list" '
	run 0 maps --json --rollup $target && "$H" json -n pid -n size -n vmas $rssnums < "$tmp/out" > /dev/null &&
	! grep -q "\"vmas\":\[" "$tmp/out" && grep -q "\"vmas\":$(wc -l < "$maps")[,}]" "$tmp/out"'
awk '{n = ""; for (i = 6; i <= NF; i++) n = n (i > 6 ? " " : "") $i; if (n == "") n = "[anon]"; c[n]++} END {for (k in c) print c[k], k}' "$maps" | sort > "$tmp/groups"
check "maps --group counts VMAs per name" 'run 0 maps --group $target && awk "NR > 2 && \$NF != \"[total]\" {n = \"\"; for (i = 3; i <= NF; i++) n = n (i > 3 ? \" \" : \"\") \$i; print \$2, n}" "$tmp/out" | sort | cmp -s - "$tmp/groups"'
check "maps --group --rss has a total row" 'run 0 maps --group --rss $target && grep -Eq "^ *([0-9]+ +){11}$(wc -l < "$maps") \[total\]$" "$tmp/out"'
check "maps --json: valid, unique keys, typed numbers, every VMA" '
	run 0 maps --json $target &&
	[ "$("$H" json -n start -n end -n size -n offset -n inode -n pid -l vmas < "$tmp/out")" = "$(wc -l < "$maps")" ]'
check "maps --json --group --rss: typed numbers" '
	run 0 maps --json --group --rss $target && "$H" json -n count -n size $rssnums -l groups < "$tmp/out" > /dev/null'
if [ -z "$(command -v python3)" ]; then
	skp "maps --json parses with python3" "no python3 (guest)"
else
	check "maps --json parses with python3" 'run 0 maps --json --rss $target && python3 -c "import json,sys; d = json.load(open(sys.argv[1])); assert all(isinstance(v[\"rss\"], int) for v in d[\"vmas\"])" "$tmp/out"'
fi
# PROCMAP_QUERY does not see the [vsyscall] gate area, which is in no mm's VMA tree; the
# library finds it in the text, so both backends list it.
check "maps --backend text and ioctl agree" '
	if run 0 probe && grep -q "^procmap_query *present" "$tmp/out"; then
		run 0 maps --backend text $target && cp "$tmp/out" "$tmp/text" &&
		run 0 maps --backend ioctl $target && cmp -s "$tmp/out" "$tmp/text"
	else
		run 1 maps --backend ioctl $target
	fi'
if grep -q "\[vsyscall\]$" "$maps"; then
	vsys=$(awk '/\[vsyscall\]$/ {split($1, a, "-"); print a[1]}' "$maps")
	for b in auto text ioctl; do
		check "query -b $b finds [vsyscall] as maps does" "run 0 query -b $b \$target $vsys && grep -q '^0x$vsys in .*\[vsyscall\]\$' \"\$tmp/out\""
	done
	check "query --next from above the last VMA finds [vsyscall]" 'run 0 query --next $target 7fffffffffff && grep -q "next .*\[vsyscall\]$" "$tmp/out"'
else
	skp "query finds [vsyscall] as maps does" "no [vsyscall] on this kernel"
fi

# --- maps: bad input ---
true & gone=$!
wait $gone
for p in abc -5 0 12x "" 99999999999; do
	check "maps bad PID '$p' is a usage error" "usage_err maps '$p'"
done
check "maps without PID is a usage error" 'usage_err maps'
check "maps PID PID: both listings, each after its PID: COMMAND LINE" '
	run 0 maps $target self && [ "$(grep -c "^$target: sleep 3600$" "$tmp/out")" = 1 ] &&
	grep -q "^[0-9]*: .*/mmext maps $target self$" "$tmp/out" && [ "$(grep -c VMAs$ "$tmp/out")" = 2 ]'
check "maps --json PID PID: a document per process in processes[]" '
	run 0 maps --json --rss $target self && [ "$("$H" json -n pid -n rss -l processes < "$tmp/out")" = 2 ] &&
	grep -q "\"cmdline\":\"sleep 3600\"" "$tmp/out"'
check "maps PID PID with one gone: the other listed, exit 1" 'run 1 maps $gone $target && grep -q "^$target: sleep 3600$" "$tmp/out" && grep -q "$gone: no such process" "$tmp/err"'
check "maps --json PID PID with one gone: the other listed, an error object, exit 1" '
	run 1 maps --json $target $gone && [ "$("$H" json -n pid -l processes < "$tmp/out")" = 2 ] &&
	grep -q "\"cmdline\":\"sleep 3600\"" "$tmp/out" &&
	grep -q "{\"pid\":$gone,\"error\":\"no such process\",\"errno\":3}" "$tmp/out" && grep -q "$gone: no such process" "$tmp/err"'
check "maps --json --rollup PID PID with one gone: the other's rollup, an error object, exit 1" '
	run 1 maps --json --rollup $gone $target && [ "$("$H" json -n pid -n rss -l processes < "$tmp/out")" = 2 ] &&
	grep -q "^{\"processes\":\[{\"pid\":$gone,\"error\":" "$tmp/out"'
check "maps --json with every PID gone: error objects only, exit 1" '
	run 1 maps --json $gone $gone && [ "$("$H" json -n pid -n errno -l processes < "$tmp/out")" = 2 ]'
check "maps --json PID gone: nothing on stdout, exit 1" 'run 1 maps --json $gone && [ ! -s "$tmp/out" ]'
check "maps --rollup --group is a usage error" 'usage_err maps --rollup --group $target'
check "maps PID --json: options after the PID" '
	run 0 maps $target --json && cp "$tmp/out" "$tmp/after" && run 0 maps --json $target && cmp -s "$tmp/out" "$tmp/after"'
check "maps PID -b text --rollup PID: options between PIDs" '
	run 0 maps $target -b text --rollup self && [ "$(grep -c "^rollup " "$tmp/out")" = 2 ]'
check "query PID ADDR --json: options after the operands" '
	run 0 query $target 0 --json && grep -q "\"vma\":null" "$tmp/out"'
check "maps -- -1: a PID after -- is still checked" 'usage_err maps -- -1'
for a in "--backend" "--backend fast" "--backend=" "--no-such-option" "--rollup --group" "-x" "--json=1"; do
	check "maps PID $a is a usage error" "usage_err maps \$target $a"
done
check "query PID ADDR --backend is a usage error" 'usage_err query $target 0 --backend'
check "maps bad backend is a usage error" 'usage_err maps --backend fast 1'
check "maps --backend without a value is a usage error" 'usage_err maps 1 --backend'
check "maps of a process that exited: exit 1, no such process" 'run 1 maps $gone && grep -q "no such process" "$tmp/err"'
check "query of a process that exited: exit 1" 'run 1 query $gone 1000 && grep -q "no such process" "$tmp/err"'
# Another user's process: as root, drop to nobody with the helper.
if [ "$(id -u)" = 0 ]; then
	"$H" asuser 65534 "$M" maps 1 > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ $rc = 77 ]; then
		skp "maps of another user's process: permission denied" "cannot run mmext as nobody: $(head -1 "$tmp/err")"
	else
		check "maps of another user's process: exit 1, permission denied" '[ $rc = 1 ] && grep -q "permission denied" "$tmp/err"'
	fi
else
	check "maps of another user's process: exit 1, permission denied" 'run 1 maps 1 && grep -q "permission denied" "$tmp/err"'
fi

# --- query ---
first=$(awk 'NR == 1 {split($1, a, "-"); print a[1]}' "$maps")
firstend=$(awk 'NR == 1 {split($1, a, "-"); print a[2]}' "$maps")
# Ranges are printed as maps prints them (zero-padded to 8 digits: a static binary sits
# at 00400000); the queried address is echoed as given, without padding.
firstaddr=$(printf '%x' "0x$first")
stack=$(awk '/\[stack\]/ {split($1, a, "-"); print a[1]}' "$maps")
check "query: the first VMA's start is in it" 'run 0 query $target $first && grep -q "^0x$firstaddr in $first-$firstend " "$tmp/out"'
check "query: an address inside a VMA (0x prefix optional)" 'run 0 query $target "0x${stack}" && grep -q "^0x$stack in .*\[stack\]$" "$tmp/out"'
check "query: address 0 is in no VMA" 'run 0 query $target 0 && grep -q "^0x0 none$" "$tmp/out"'
check "query --next: address 0 gives the first VMA" 'run 0 query --next $target 0 && grep -q "^0x0 next $first-$firstend " "$tmp/out"'
check "query: one line per address" 'run 0 query $target 0 $first 0x$stack && [ "$(wc -l < "$tmp/out")" = 3 ]'
check "query --json: valid, typed, null for a miss" '
	run 0 query --json $target 0 $first && grep -q "\"vma\":null" "$tmp/out" &&
	[ "$("$H" json -n addr -n start -l results < "$tmp/out")" = 2 ]'
check "query --file skips anonymous VMAs" 'run 0 query --file --next $target $stack && ! grep -q "\[stack\]" "$tmp/out"'
for a in xyz 0x "" 12g -1 10000000000000000000; do
	check "query bad address '$a' is a usage error" "usage_err query $target '$a'"
done
check "query without ADDR is a usage error" 'usage_err query $target'
check "query without PID is a usage error" 'usage_err query'
check "query bad PID is a usage error" 'usage_err query pid 1000'

# --- a target that exits while it is read ---
# midexit kills the target once mmext is blocked on a full stdout pipe; a zombie
# until mmext is done, its maps then just end early.
# A listing then is exit 1 with one line on stderr (JSON: nothing on stdout), or, if
# the target went only after the reading was done, exit 0 with every VMA.
nv=60000
whole_or_failed() { # JSON_KEY: judge $tmp/out, $tmp/err, $rc from the run before
	if [ "$rc" = 1 ]; then
		[ "$(wc -l < "$tmp/err")" = 1 ] || { echo "# stderr:"; sed 's/^/#   /' "$tmp/err" | head -5; return 1; }
		[ -z "$1" ] || [ ! -s "$tmp/out" ] || { echo "# a failed run left $(wc -c < "$tmp/out") bytes of JSON"; return 1; }
	elif [ "$rc" = 0 ] && [ -n "$1" ]; then
		[ "$("$H" json -l "$1" < "$tmp/out")" -ge $nv ] 2>/dev/null || { echo "# exit 0 with an incomplete document"; return 1; }
	elif [ "$rc" = 0 ]; then
		[ "$(awk '$1 == "total" {print $(NF - 1)}' "$tmp/out")" -ge $nv ] 2>/dev/null || { echo "# exit 0 with $(tail -1 "$tmp/out")"; return 1; }
	else
		echo "# exit $rc"; return 1
	fi
}
midexit() { "$H" midexit $nv "$M" "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?; }
for a in "" "-b text" "-b ioctl" "--rss"; do
	check "maps $a of a target that exits meanwhile: whole listing or exit 1" "midexit maps $a PID && whole_or_failed ''"
	check "maps --json $a of a target that exits meanwhile: whole document or nothing" "midexit maps --json $a PID && whole_or_failed vmas"
done
zeros=$(printf ' 0%.0s' $(seq 5000))
check "query -b text of a target that exits meanwhile: exit 1" 'midexit query -b text PID $zeros; [ $rc = 1 ] && [ "$(wc -l < "$tmp/err")" = 1 ]'
check "query --json of a target that exits meanwhile: whole document or nothing" '
	midexit query --json PID $zeros; nv=5000 whole_or_failed results'

# --- a pid reused while it is read ---
# reuse replaces the target (pid 300 of a namespace of its own) by another process with
# its pid as mmext opens the file named: the report must not show the second process,
# and the first, reaped by then, is no such process.
echo first > "$tmp/reuse-first"
echo second > "$tmp/reuse-second"
reuse() { "$H" reuse "$1" "$tmp/reuse-first" "$tmp/reuse-second" "$M" "${@:2}" > "$tmp/out" 2> "$tmp/err"; rc=$?; }
reused_gone() {
	[ $rc = 1 ] || { echo "# exit $rc"; sed 's/^/#   /' "$tmp/err" | head -5; return 1; }
	! grep -q reuse-second "$tmp/out" || { echo "# the second process's data:"; grep reuse-second "$tmp/out" | cut -c -160 | sed 's/^/#   /'; return 1; }
	grep -q "^mmext maps: 300: no such process$" "$tmp/err" || { sed 's/^/# stderr: /' "$tmp/err" | head -5; return 1; }
}
reuse cmdline maps PID
if [ $rc = 77 ]; then
	skp "maps of a pid reused while it is read: one process or none" "needs root for a PID namespace and clone3()'s set_tid, and ptrace"
else
	check "maps of a pid reused before its command line is read: exit 1, no such process" 'reused_gone'
	check "maps --rss of a pid reused before its smaps is read: exit 1, no such process" 'reuse smaps maps --rss PID; reused_gone'
	check "maps --rollup of a pid reused before its smaps_rollup is read: exit 1, no such process" 'reuse smaps_rollup maps --rollup PID; reused_gone'
	check "maps --json --rss PID self with PID reused: an error object, self listed, exit 1" '
		reuse smaps maps --json --rss PID self; reused_gone && [ "$("$H" json -n pid -l processes < "$tmp/out")" = 2 ] &&
		grep -q "{\"pid\":300,\"error\":\"no such process\",\"errno\":3}" "$tmp/out"'
fi

# --- processes without an address space: one answer everywhere ---
"$H" zombie > "$tmp/zombie" & helpers="$helpers $!"
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$tmp/zombie" ] && break; sleep 0.1; done
zombie=$(cat "$tmp/zombie")
kthread=$(awk '$2 == "(kthreadd)" {print $1}' /proc/2/stat 2>/dev/null)
for who in "zombie:$zombie" "kernel thread:$kthread"; do
	what=${who%%:*} pid=${who#*:}
	if [ -z "$pid" ]; then
		skp "$what: no address space" "no $what to look at"
		continue
	fi
	for a in "maps" "maps -b text" "maps -b ioctl" "maps --rss" "maps --group" "maps --json" \
		 "query @ 0" "query -b text @ 0" "query -b ioctl @ 0" "query --json @ 0"; do
		case $a in *@*) args=${a/@/$pid} ;; *) args="$a $pid" ;; esac
		check "$what: $a: exit 1, no address space" "run 1 $args && [ ! -s \"\$tmp/out\" ] && [ \"\$(cat \"\$tmp/err\")\" = \"mmext ${a%% *}: $pid: no address space (a kernel thread, or a process that has exited)\" ]"
	done
done

# --- names as the kernel has them ---
names="$tmp/names.d"
mkdir -p "$names"
# "lit\012x" is those seven bytes: the maps text shows it as it shows new<newline>line.
held=("$names/café" "$names/new"$'\n'"line" "$names/bad"$'\xff'"byte" "$names/back\\slash" "$names/lit\\012x")
for f in "${held[@]}"; do
	printf x > "$f"
done
"$H" hold "${held[@]}" > "$tmp/hold" &
holder=$! helpers="$helpers $holder"
for _ in 1 2 3 4 5 6 7 8 9 10; do [ "$(wc -l 2>/dev/null < "$tmp/hold")" = 5 ] && break; sleep 0.1; done
read -r a_cafe a_nl a_bad a_bs a_lit < <(tr '\n' ' ' < "$tmp/hold")
check "maps --json: a UTF-8 name as it is" 'run 0 maps --json $holder && grep -aq "\"name\":\"$names/café\"" "$tmp/out" && ! grep -q "u00c3" "$tmp/out"'
check "maps --json: a non-UTF-8 name readable, and exact in name_hex" '
	hex=$(printf "%s" "$names/bad"$'"'"'\xff'"'"'"byte" | od -An -tx1 | tr -d " \n") &&
	grep -aq "\"name\":\"$names/bad\\\\ufffdbyte\",\"name_hex\":\"$hex\"" "$tmp/out"'
check "maps --json: addresses also as hex strings" 'grep -q "\"start_hex\":\"0x$a_cafe\"" "$tmp/out"'
check "query --json: the address also as a hex string" 'run 0 query --json $holder $a_cafe && grep -q "\"addr_hex\":\"0x$a_cafe\"" "$tmp/out"'
for b in text ioctl; do
	run 0 maps --json -b $b $holder; grep -ao '"name":"[^"]*"[^}]*' "$tmp/out" | grep -a "$names" > "$tmp/names-$b"
	run 0 maps -b $b $holder; grep -a "$names" "$tmp/out" > "$tmp/text-$b"
	run 0 query -b $b $holder $a_cafe $a_nl $a_bad $a_bs $a_lit; cp "$tmp/out" "$tmp/query-$b"
done
run 0 maps --json --rss $holder; grep -ao '"name":"[^"]*"' "$tmp/out" | grep -a "$names" > "$tmp/names-rss"
check "maps --json: a newline in a path is a newline, from both backends" 'grep -q "new\\\\u000aline" "$tmp/names-text" && cmp -s "$tmp/names-text" "$tmp/names-ioctl"'
check "maps --json: a backslash and 012 in a path are those bytes, from both backends" 'grep -q "lit\\\\\\\\012x" "$tmp/names-text" && grep -q "lit\\\\\\\\012x" "$tmp/names-ioctl"'
check "maps --json --rss: the same names" 'grep -ao "\"name\":\"[^\"]*\"" "$tmp/names-text" | cmp -s - "$tmp/names-rss"'
check "maps: both backends show the same names" 'cmp -s "$tmp/text-text" "$tmp/text-ioctl"'
check "query: both backends show the same names" 'cmp -s "$tmp/query-text" "$tmp/query-ioctl"'
# The name column as the maps file has it: a newline as \012, everything else as it is.
names_as_maps() { # FILE: mmext's output, with ranges first
	local a
	for a in $a_cafe $a_nl $a_bad $a_bs $a_lit; do
		[ "$(grep -a "$a-" "$1" | sed 's|^[^/]*||')" = "$(grep -a "^$a-" "/proc/$holder/maps" | sed 's|^[^/]*||')" ] ||
			{ echo "# $a: $(grep -a "$a-" "$1")"; return 1; }
	done
}
check "maps: names as /proc/PID/maps shows them (backslash as is)" 'names_as_maps "$tmp/text-text" && grep -aq "back\\\\slash$" "$tmp/text-text"'
check "maps --rss: names as /proc/PID/maps shows them" 'run 0 maps --rss $holder && names_as_maps "$tmp/out"'
check "query: names as /proc/PID/maps shows them" 'names_as_maps "$tmp/query-text"'
check "maps --group: names as /proc/PID/maps shows them" 'run 0 maps --group $holder && grep -aq " $names/back\\\\slash$" "$tmp/out" && grep -aq " $names/new\\\\012line$" "$tmp/out"'

# --- run ---
# As env(1): COMMAND's status, 125 for run's own failures (usage too), 126, 127.
run_usage() { run 125 run "$@" && grep -q "Try 'mmext run --help'" "$tmp/err" && [ ! -s "$tmp/out" ]; }
check "run --help" 'run 0 run --help && grep -q "^Usage: mmext run" "$tmp/out"'
check "run: COMMAND's status and output" 'run 3 run -- sh -c "echo out; exit 3" && [ "$(cat "$tmp/out")" = out ]'
# mmext ignores SIGPIPE for its own output; COMMAND must get what mmext was given.
check "run: COMMAND gets the signal dispositions mmext got" '
	run 0 run grep SigIgn /proc/self/status && [ "$(cat "$tmp/out")" = "$(grep SigIgn /proc/self/status)" ]'
check "run: options after COMMAND are COMMAND's" 'run 0 run echo --cow-pte && [ "$(cat "$tmp/out")" = --cow-pte ]'
check "run: COMMAND not found: exit 127" 'run 127 run -- /nonexistent/command && grep -q "^mmext run: .*/nonexistent/command.*: No such file or directory$" "$tmp/err"'
check "run: COMMAND not in PATH: exit 127" 'run 127 run no-such-command-here'
check "run: COMMAND that cannot be executed: exit 126" 'run 126 run -- "$tmp" && grep -q "Permission denied" "$tmp/err"'
check "run without COMMAND: exit 125" 'run_usage && grep -q "no COMMAND given" "$tmp/err"'
check "run -- without COMMAND: exit 125" 'run_usage --'
check "run with an unknown option: exit 125" 'run_usage --no-such-option true && grep -q "unknown option" "$tmp/err"'
check "run --cow-pte --no-cow-pte: exit 125" 'run_usage --cow-pte --no-cow-pte true'
check "run --no-cow-pte: COMMAND runs, on every kernel" 'run 0 run --no-cow-pte -- echo ran && [ "$(cat "$tmp/out")" = ran ]'
enabled=/sys/kernel/mm/cow_pte/enabled
# The debug kernels' switch that makes every fork share, whatever the setting.
forced=$(cat /sys/kernel/mm/cow_pte/force_all 2>/dev/null || echo 0)
if ! has cow_pte; then
	check "run --cow-pte without the feature: exit 125 with the reason, COMMAND not run" '
		run 125 run --cow-pte -- echo ran && [ ! -s "$tmp/out" ] &&
		grep -q "^mmext run: --cow-pte: no COW page tables: .*needs the mmext cow_pte patch" "$tmp/err"'
	skp "run --cow-pte: COMMAND has it and its forks share page tables" "cow_pte absent: $mmext_probe_line"
elif [ "$forced" != 0 ]; then
	skp "run --cow-pte: COMMAND has it and its forks share page tables" "$(dirname $enabled)/force_all is on"
else
	check "without run: the setting is off and forks share nothing" '"$H" cowpte > "$tmp/out" && [ "$(cat "$tmp/out")" = "on 0 shared 0" ]'
	check "run --cow-pte: COMMAND has it and its forks share page tables" '
		run 0 run --cow-pte -- "$H" cowpte && [ "$(cat "$tmp/out")" = "on 1 shared 1" ]'
	check "run --cow-pte: so do the programs COMMAND starts" '
		run 5 run --cow-pte -- sh -c "\"$H\" cowpte; exit 5" && [ "$(cat "$tmp/out")" = "on 1 shared 1" ]'
	check "run --no-cow-pte: an inherited setting off again" '
		run 0 run --cow-pte -- "$M" run --no-cow-pte -- "$H" cowpte && [ "$(cat "$tmp/out")" = "on 0 shared 0" ]'
	if [ "$(id -u)" = 0 ] && [ -w "$enabled" ]; then
		saved=$(cat "$enabled")
		echo 1 > "$enabled"
		"$H" asuser 65534 "$M" run --cow-pte -- echo ran > "$tmp/out" 2> "$tmp/err"
		rc=$?
		if [ $rc = 77 ]; then
			skp "run --cow-pte without CAP_IPC_LOCK (enabled 1): exit 125, why" "cannot run mmext as nobody: $(head -1 "$tmp/err")"
		else
			check "run --cow-pte without CAP_IPC_LOCK (enabled 1): exit 125, why" '
				[ $rc = 125 ] && [ ! -s "$tmp/out" ] && grep -q "^mmext run: --cow-pte: only processes with CAP_IPC_LOCK may turn them on" "$tmp/err"'
		fi
		echo 0 > "$enabled"
		check "run --cow-pte when turned off (enabled 0): exit 125, why" '
			run 125 run --cow-pte -- echo ran && [ ! -s "$tmp/out" ] && grep -q "turned off for everyone" "$tmp/err"'
		echo "$saved" > "$enabled"
	else
		skp "run --cow-pte refused by $enabled: exit 125, why" "needs root"
	fi
fi

# --- output that cannot be written ---
for a in "--help" "--version" "probe" "probe --json" "maps self" "maps --json self" \
	 "maps --group self" "maps --help" "query self 0" "query --json self 0" "watch -c 1 -i 10 -p 8" "watch --json -c 1 -i 10 -p 8"; do
	check "$a > /dev/full: exit 1" "\"\$M\" $a > /dev/full 2> \"\$tmp/err\"; [ \$? = 1 ] && grep -q 'writing output' \"\$tmp/err\""
	check "$a into a closed pipe: exit 1" "\"\$H\" closedpipe \"\$M\" $a 2> \"\$tmp/err\"; [ \$? = 1 ]"
done

# --- arguments echoed in messages ---
check "a bad argument is echoed without control bytes" 'usage_err maps $'"'"'\e[2J\e[31mred'"'"' && ! grep -q $'"'"'\e'"'"' "$tmp/err" && grep -q "033" "$tmp/err"'
check "a long bad argument is echoed cut short" 'usage_err query self "$(printf "g%.0s" $(seq 5000))" && [ "$(head -1 "$tmp/err" | wc -c)" -lt 200 ]'
for a in "maps --backend" "query --backend" "watch --backend" "watch --pattern" "watch --pages" "probe" "maps 1"; do
	check "$a: a bad argument is echoed escaped" "usage_err $a \$'x\\ey' && ! grep -q \$'\\e' \"\$tmp/err\""
done
check "an unknown command is echoed escaped" 'usage_err $'"'"'\e]0;x\a'"'"' && ! grep -q $'"'"'\e'"'"' "$tmp/err"'

# --- watch ---
w="-c 3 -i 20 -p 64"
check "watch (default backend) reports every written page" 'run 0 watch $w && grep -q "missed 0, extra 0$" "$tmp/out"'
check "watch --help offers no mprotect backend" 'run 0 watch --help && ! grep -q mprotect "$tmp/out"'
check "watch -b mprotect is a usage error that says the library has no such backend" '
	usage_err watch -b mprotect $w && grep -q "backend mprotect is not provided by libmmext" "$tmp/err"'
for b in pagemap_scan:writewatch soft_dirty:soft_dirty; do
	back=${b%%:*} feat=${b##*:}
	# soft-dirty's reset may lose a write made meanwhile (mmext_ww(3)): nothing extra.
	case $back in soft_dirty) want='extra 0' ;; *) want='missed 0' ;; esac
	if has "$feat"; then
		check "watch -b $back reports every written page ($want)" "run 0 watch -b $back \$w && grep -q '$want' \"\$tmp/out\""
	else
		check "watch -b $back: exit 1 with the reason ($feat absent)" "run 1 watch -b $back \$w && grep -q 'cannot watch' \"\$tmp/err\""
	fi
done
check "watch --json: valid, typed, nothing missed" '
	run 0 watch --json $w && "$H" json -n index -n written -n missed -l intervals < "$tmp/out" > /dev/null &&
	grep -q "\"missed\":0" "$tmp/out"'
# --- watch --pid: another process, through soft-dirty ---
check "watch --help: another process through soft-dirty, as CRIU" 'run 0 watch --help && grep -q -- "--pid PID" "$tmp/out" && ! grep -q "own memory only\|caller.s own memory" "$tmp/out"'
# covers FILE ADDR LEN: every report line of FILE has a range holding [ADDR, ADDR + LEN).
covers() {
	local lines=0 line r s e
	while read -r line; do
		lines=$((lines + 1))
		for r in $(echo "${line##* }" | tr , ' '); do
			s=$((16#${r%-*})) e=$((16#${r#*-}))
			[ $s -le $((16#$2)) ] && [ $e -ge $((16#$2 + $3)) ] && continue 2
		done
		echo "# report without the written range: $line"; return 1
	done < <(awk 'NR > 2' "$1")
	[ $lines = 3 ]
}
if has soft_dirty; then
	"$H" dirty 16 > "$tmp/dirty" & helpers="$helpers $!" dirty=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$tmp/dirty" ] && break; sleep 0.1; done
	psz=$(getconf PAGESIZE 2>/dev/null || echo 4096)
	check "watch --pid: every report shows the pages the process keeps writing" '
		run 0 watch --pid $dirty -c 3 -i 100 && covers "$tmp/out" "$(cat "$tmp/dirty")" $((16 * psz))'
	check "watch --pid --json: valid, typed, a written count per report" '
		run 0 watch --json --pid $dirty -c 2 -i 50 && [ "$("$H" json -n pid -n written -n start -l intervals < "$tmp/out")" = 2 ]'
	check "watch --pid of a process that exited: exit 1, no such process" 'run 1 watch --pid $gone -c 1 && grep -q "no such process" "$tmp/err"'
else
	check "watch --pid without soft-dirty: exit 1, the reason, nothing on stdout" '
		run 1 watch --pid $target -c 1 && grep -q "cannot watch process $target: this kernel has no soft-dirty tracking" "$tmp/err" && [ ! -s "$tmp/out" ]'
	skp "watch --pid: every report shows the pages the process keeps writing" "soft_dirty absent: $mmext_probe_line"
fi
for a in "--pid self" "--pid abc" "--pid" "--pid 1 --pages 8" "--pid 1 -b mprotect"; do
	check "watch $a is a usage error" "usage_err watch $a"
done
for a in "--pages 0" "--pages x" "--interval 0" "--count -1" "--pattern zigzag" "--backend none" "-- ls" "--rate"; do
	check "watch $a is a usage error" "usage_err watch $a"
done

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail -gt 0 ] && exit 1
[ $pass = 0 ] && exit 4
exit 0
