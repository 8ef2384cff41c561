#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kernel pipeline: pristine base tree, patch queue, builds, selftests.
#
#   kernel.sh [--base 6.12|7.3] COMMAND   (the base also from MMEXT_BASE; default 6.12, the
#                              one whose kernel/<base>/base.conf says MMEXT_BASE_DEFAULT=1)
#   kernel.sh prepare          extract the pinned base into build/linux, apply the queue
#   kernel.sh import [-f]      re-apply the base's series to build/linux (keeps mtimes of
#                              unchanged files, so only what a changed patch touches rebuilds)
#   kernel.sh export           write build/linux's commits back to the base's patches/ + series
#   kernel.sh build VARIANT    build bzImage and uapi headers (VARIANT: stock|patched; DEBUG=1
#                              adds KASAN and kmemleak, BENCH=1 drops lockdep and DEBUG_VM,
#                              FUZZ=1 is DEBUG=1 plus KCOV (syzkaller's kernel), KCSAN=1
#                              the data-race detector, DISTRO=1 starts from Debian's
#                              configuration instead of tinyconfig; each in a separate
#                              object dir)
#   kernel.sh config VARIANT   only write VARIANT's .config (as build does first)
#   kernel.sh each [FIRST]     build the patched configuration at every patch of the queue
#                              (from patch FIRST, a number), in a worktree of build/linux:
#                              each patch must build; run it before exporting a reordered
#                              or reworked queue
#   kernel.sh objs [FIRST]     compile the C files each patch from FIRST touches, with the
#                              queue's own options (config/patched.config) on and off: minutes
#   kernel.sh selftests        build the patched tree's tools/testing/selftests/{mm,proc}
#                              (with the uapi headers of the patched build DEBUG etc. select)
#   kernel.sh outdir VARIANT   print the build directory of VARIANT (as DEBUG, BENCH, FUZZ,
#                              KCSAN select: build/out/VARIANT[-distro][-debug|-bench|...])
#   kernel.sh image VARIANT    print the path of VARIANT's bzImage in that directory
#   kernel.sh deb              Debian packages of the patched kernel (the kernel's bindeb-pkg):
#                              linux-image-RELEASE and linux-headers-RELEASE, package version
#                              KVER-mmextN, RELEASE KVER-mmextN-amd64 (N: DEB_REVISION, 1),
#                              in build/out/patched-distro-deb/. Debian's configuration with
#                              its modules, plus distro.config, patched.config and deb.config.
#                              DEB_CONFIG=test packages the test configuration instead
#                              (base, checks, patched and deb-test.config; RELEASE
#                              KVER-mmextN-tiny) in build/out/patched-deb/: minutes, not hours
#   kernel.sh debdir           print the directory of DEB_CONFIG's packages
# A base's queue is kernel/<base>/ (series, patches/, config/ beside the shared
# kernel/config/). Paths are the default base's; another base works in build/<base>/
# (scripts/lib.sh: base_build). scripts/lib.sh alone maps a variant to its directory (variant_dir): programs
# that are not scripts ask outdir or image.
set -euo pipefail
if [ "${1:-}" = --base ]; then export MMEXT_BASE=${2:?--base needs 6.12 or 7.3}; shift 2; fi
. "$(dirname "$0")/lib.sh"

QUEUE_DIR=$BASE_QUEUE
CONFIG_DIR=$MMEXT_ROOT/kernel/config
STAMP=$KTREE/.git/mmext-queue   # "<queue hash> <HEAD after apply>"

# A base from a suite this machine's apt does not use (MMEXT_BASE_APT in its base.conf):
# fetch the package with apt-get under a private configuration in build/<base>/apt (its
# own sources list, lists and cache; the host's sources and dpkg database are untouched)
# and unpack each package in build/<base>/apt/<package>/; MMEXT_BASE_TARBALL and
# MMEXT_DISTRO_CONFIG then name the files inside.
APT_DIR=$BASE_BUILD/apt
apt_private() {
	local cmd=$1; shift
	"$cmd" -o Dir::Etc::sourcelist="$APT_DIR/sources.list" \
		-o Dir::Etc::sourceparts="$APT_DIR/sources.list.d" \
		-o Dir::Etc::preferencesparts="$APT_DIR/preferences.d" \
		-o Dir::State="$APT_DIR/state" -o Dir::Cache="$APT_DIR/cache" \
		-o Acquire::Languages=none "$@"
}

# fetch_private PKG VERSION FILE: PKG=VERSION unpacked in $APT_DIR/PKG, which must hold FILE.
fetch_private() {
	local pkg=$1 ver=$2 file=$3 root=$APT_DIR/$1 deb
	if [ "$(cat "$root/version" 2>/dev/null)" = "$ver" ] && [ -f "$root$file" ]; then
		return 0
	fi
	mkdir -p "$APT_DIR"/{sources.list.d,preferences.d,state/lists/partial,cache/archives/partial,dl}
	echo "$MMEXT_BASE_APT" > "$APT_DIR/sources.list"
	say "fetching $pkg=$ver through $APT_DIR/sources.list"
	apt_private apt-get update >&2 || say "warning: apt-get update reported errors (above)"
	apt_private apt-cache madison "$pkg" | awk '{print $3}' | grep -qxF "$ver" ||
		die "$pkg $ver is not in '$MMEXT_BASE_APT'. Available:" \
		    "$(apt_private apt-cache madison "$pkg" | awk '{print $3}' | xargs)." \
		    "Move the pin in $QUEUE_DIR/base.conf and regenerate its selftest baseline."
	rm -f "$APT_DIR"/dl/*.deb
	(cd "$APT_DIR/dl" && apt_private apt-get download "$pkg=$ver" >&2) ||
		die "downloading $pkg $ver failed"
	deb=$(ls "$APT_DIR"/dl/*.deb)
	rm -rf "$root"
	dpkg-deb -x "$deb" "$root"
	rm -f "$deb"
	[ -f "$root$file" ] || die "$pkg $ver holds no $file"
	echo "$ver" > "$root/version"
}

check_base_pkg() {
	local have
	if [ -n "${MMEXT_BASE_APT:-}" ]; then
		fetch_private "$MMEXT_BASE_PKG" "$MMEXT_BASE_VERSION" "$MMEXT_BASE_TARBALL"
		MMEXT_BASE_TARBALL=$APT_DIR/$MMEXT_BASE_PKG$MMEXT_BASE_TARBALL
		return 0
	fi
	have=$(dpkg-query -W -f='${Version}' "$MMEXT_BASE_PKG" 2>/dev/null || true)
	[ "$have" = "$MMEXT_BASE_VERSION" ] && [ -f "$MMEXT_BASE_TARBALL" ] && return 0
	install_pinned "$MMEXT_BASE_PKG" "$MMEXT_BASE_VERSION" "${MMEXT_BASE_DEB:-}" \
		"${MMEXT_BASE_DEB_SHA256:-}"
}

check_distro_pkg() {
	if [ -n "${MMEXT_BASE_APT:-}" ]; then
		fetch_private "$MMEXT_DISTRO_PKG" "$MMEXT_DISTRO_VERSION" "$MMEXT_DISTRO_CONFIG"
		MMEXT_DISTRO_CONFIG=$APT_DIR/$MMEXT_DISTRO_PKG$MMEXT_DISTRO_CONFIG
		return 0
	fi
	[ "$(dpkg-query -W -f='${Version}' "$MMEXT_DISTRO_PKG" 2>/dev/null || true)" = "$MMEXT_DISTRO_VERSION" ] &&
		[ -f "$MMEXT_DISTRO_CONFIG" ] && return 0
	install_pinned "$MMEXT_DISTRO_PKG" "$MMEXT_DISTRO_VERSION" "${MMEXT_DISTRO_DEB:-}" \
		"${MMEXT_DISTRO_DEB_SHA256:-}"
}

# install_pinned PKG VERSION [DEB SHA256]: PKG=VERSION from the archive. Its index drops a
# build before its pool does: then the pinned file DEB from the pool, by its hash.
install_pinned() {
	local pkg=$1 ver=$2 url=$3 sum=$4 deb
	say "installing $pkg=$ver"
	apt-get install -y --allow-downgrades "$pkg=$ver" >&2 && return 0
	apt-get update >&2 || true
	apt-get install -y --allow-downgrades "$pkg=$ver" >&2 && return 0
	[ -n "$url" ] ||
		die "$pkg $ver is not in the Debian archive any more (it keeps only a few recent" \
		    "builds of a release). Available: $(apt-cache madison "$pkg" | awk '{print $3}' | xargs)." \
		    "Move the pin in $QUEUE_DIR/base.conf and regenerate $QUEUE_DIR/selftests-baseline.txt."
	deb=$BASE_BUILD/${url##*/}
	say "not in the archive's index: fetching $url"
	mkdir -p "$BASE_BUILD"
	curl -fsSL -o "$deb" "$url" || die "$url is gone too: move the pin in $QUEUE_DIR/base.conf"
	echo "$sum  $deb" | sha256sum -c --quiet || die "$deb does not have the hash $QUEUE_DIR/base.conf pins"
	dpkg -i "$deb" >&2 || die "dpkg could not install $deb"
}

queue_patches() {
	[ -f "$QUEUE_DIR/series" ] || return 0
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$QUEUE_DIR/series"
}

queue_hash() {
	{ cat "$QUEUE_DIR/series" 2>/dev/null || true
	  queue_patches | while read -r p; do cat "$QUEUE_DIR/patches/$p"; done; } | sha256sum | cut -c1-16
}

git_k() { git -C "$KTREE" "$@"; }

# base_warnings: the warning lines of stdin but those the base gives itself in a file the
# queue changes ($BASE_QUEUE/build-warnings.txt: an extended regular expression a line);
# true when any line is left.
base_warnings() {
	grep -v -E -f <(sed -e '/^#/d' -e '/^[[:space:]]*$/d' \
		"$BASE_QUEUE/build-warnings.txt" 2>/dev/null)
}

cmd_prepare() {
	# A fetched base's package is only needed to create the tree.
	[ -n "${MMEXT_BASE_APT:-}" ] && [ -d "$KTREE/.git" ] || check_base_pkg
	if [ -d "$KTREE/.git" ]; then
		local v
		v=$(cat "$KTREE/.git/mmext-base-version" 2>/dev/null || true)
		[ "$v" = "$MMEXT_BASE_VERSION" ] ||
			die "$KTREE is built from '$v', the pin is $MMEXT_BASE_VERSION: export any work, then rm -rf $BASE_BUILD"
	else
		say "extracting $MMEXT_BASE_TARBALL into $KTREE"
		rm -rf "$KTREE" "$KSTOCK"
		mkdir -p "$KTREE"
		tar -xJf "$MMEXT_BASE_TARBALL" -C "$KTREE" --strip-components=1
		git_k init -q -b "$QUEUE_BRANCH"
		git_k config user.name "$MMEXT_QUEUE_NAME"
		git_k config user.email "$MMEXT_QUEUE_EMAIL"
		git_k config gc.auto 0
		# Debian's .gitignore ignores the top level (/*): add with -f, and new files too.
		git_k add -A -f
		git_k commit -q -m "base: Debian $MMEXT_BASE_PKG $MMEXT_BASE_VERSION"
		git_k tag "$BASE_TAG"
		echo "$MMEXT_BASE_VERSION" > "$KTREE/.git/mmext-base-version"
		echo "none $(git_k rev-parse HEAD)" > "$STAMP"
	fi
	[ -d "$KSTOCK" ] || git_k worktree add -q --detach "$KSTOCK" "$BASE_TAG"
	sync_tree
}

# Re-applying rewrites every file the queue touches; restore the old mtime of each
# file whose content ended up the same, so make rebuilds only what really changed.
cmd_import() {
	local force=0 want stamp_hash stamp_head head
	[ "${1:-}" = -f ] && force=1
	want=$(queue_hash)
	read -r stamp_hash stamp_head < "$STAMP"
	head=$(git_k rev-parse HEAD)
	if [ "$head" != "$stamp_head" ] && [ $force = 0 ]; then
		die "$KTREE has commits that are not in $QUEUE_DIR (HEAD moved since the last" \
		    "import/export): run 'scripts/kernel.sh export' first, or 'import -f' to drop them"
	fi
	if [ "$want" = "$stamp_hash" ] && [ "$head" = "$stamp_head" ]; then
		say "queue already applied ($(queue_patches | wc -l) patches)"
		return 0
	fi
	[ -z "$(git_k status --porcelain --untracked-files=no)" ] || [ $force = 1 ] ||
		die "build/linux has uncommitted changes; commit and export them, or 'import -f'"

	local saved
	saved=$(mktemp)
	git_k diff --name-only "$BASE_TAG" HEAD | while read -r f; do
		[ -f "$KTREE/$f" ] && echo "$(stat -c %Y "$KTREE/$f") $(sha1sum < "$KTREE/$f" | cut -c1-40) $f"
	done > "$saved"
	git_k am --abort >/dev/null 2>&1 || true
	git_k checkout -q -f "$QUEUE_BRANCH" 2>/dev/null || true
	git_k reset -q --hard "$BASE_TAG"
	local p n=0
	while read -r p; do
		[ -f "$QUEUE_DIR/patches/$p" ] || die "series names $p, which is not in $QUEUE_DIR/patches"
		# --whitespace=error: checkpatch.pl does not see a blank line added at a file's end.
		git_k am -q --keep-cr --whitespace=error "$QUEUE_DIR/patches/$p" ||
			die "patch $p does not apply cleanly; fix it in build/linux ('git am --show-current-patch')"
		n=$((n + 1))
	done < <(queue_patches)
	local mt sum f
	while read -r mt sum f; do
		[ -f "$KTREE/$f" ] && [ "$(sha1sum < "$KTREE/$f" | cut -c1-40)" = "$sum" ] &&
			touch -d "@$mt" "$KTREE/$f"
	done < "$saved"
	rm -f "$saved"
	echo "$want $(git_k rev-parse HEAD)" > "$STAMP"
	say "applied $n patches"
}

# Before a build: apply a changed queue, unless build/linux holds work in progress (commits
# or edits not exported yet), which is then built as it is.
sync_tree() {
	local stamp_hash stamp_head head
	read -r stamp_hash stamp_head < "$STAMP"
	head=$(git_k rev-parse HEAD)
	if [ "$head" != "$stamp_head" ] || [ -n "$(git_k status --porcelain --untracked-files=no)" ]; then
		say "warning: building ${KTREE#"$MMEXT_ROOT"/} as it is: it has $(git_k rev-list --count "$BASE_TAG..HEAD")" \
		    "commits and changes that may not be in $QUEUE_DIR (export them with 'make export-queue')"
		return 0
	fi
	cmd_import
}

cmd_export() {
	local n
	n=$(git_k rev-list --count "$BASE_TAG..HEAD")
	[ -z "$(git_k status --porcelain --untracked-files=no)" ] ||
		say "warning: build/linux has uncommitted changes; they are not exported"
	rm -f "$QUEUE_DIR"/patches/*.patch
	mkdir -p "$QUEUE_DIR/patches"
	if [ "$n" -gt 0 ]; then
		git_k format-patch -q --zero-commit --no-signature -N -o "$QUEUE_DIR/patches" "$BASE_TAG..HEAD"
	fi
	{
		echo "# Patch order for build/linux; written by 'scripts/kernel.sh export'."
		(cd "$QUEUE_DIR/patches" && ls -1 -- *.patch 2>/dev/null || true)
	} > "$QUEUE_DIR/series"
	echo "$(queue_hash) $(git_k rev-parse HEAD)" > "$STAMP"
	say "exported $n patches to $QUEUE_DIR/patches"
}

# config_frags VARIANT: every base takes the shared fragments of kernel/config/; a base whose
# kernel needs an option spelled otherwise adds kernel/<base>/config/<same name>, merged
# after the shared fragment. A base's config/patched.config holds options only its queue
# defines (patched only).
# A -distro variant starts from Debian's configuration and distro.config instead of
# tinyconfig and base.config, and has the checks only with DEBUG=1.
config_frags() {
	local f list="base checks patched debug bench fuzz kcsan"
	case $1 in *-distro*) list="distro patched"; [ "${DEBUG:-0}" = 1 ] && list="$list checks debug" ;; esac
	# Packages (cmd_deb): module signing for Debian's configuration, what systemd needs
	# for the test configuration.
	case $1 in *-distro-deb) list="$list deb" ;; *-deb) list="$list deb-test" ;; esac
	for f in $list; do
		case $f in
		patched)
			case $1 in patched*) ;; *) continue ;; esac
			[ ! -f "$QUEUE_DIR/config/patched.config" ] || echo "$QUEUE_DIR/config/patched.config"
			continue ;;
		# The fuzzing kernel is the debug kernel plus fuzz.config.
		debug) case $1 in *-debug|*-fuzz) ;; *) continue ;; esac ;;
		bench|fuzz|kcsan) case $1 in *-$f) ;; *) continue ;; esac ;;
		deb|deb-test) ;;
		esac
		echo "$CONFIG_DIR/$f.config"
		[ ! -f "$QUEUE_DIR/config/$f.config" ] || echo "$QUEUE_DIR/config/$f.config"
	done
	return 0
}

# start_config VARIANT SRC OUT: the configuration the fragments are merged onto: tinyconfig,
# or for -distro Debian's (linux-config-<version>, pinned with the source) with every
# module turned off, except in a package (-distro-deb), which keeps Debian's modules.
start_config() {
	case $1 in
	*-distro*)
		[ -n "${MMEXT_DISTRO_CONFIG:-}" ] || die "base $MMEXT_BASE has no distribution configuration (MMEXT_DISTRO_CONFIG in its base.conf)"
		check_distro_pkg
		case $1 in
		*-deb) xzcat "$MMEXT_DISTRO_CONFIG" > "$3/.config" ;;
		*) xzcat "$MMEXT_DISTRO_CONFIG" | sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' > "$3/.config" ;;
		esac
		;;
	*) make_k "$2" "$3" tinyconfig >/dev/null ;;
	esac
}

# Every symbol the fragments set must survive olddefconfig; kconfig drops unmet ones silently.
# A later fragment overrides an earlier one, as in merge_config.sh.
check_config() {
	local cfg=$1 bad=0 line sym
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qxF "$line" "$cfg" || { echo "  wanted $line, got: $(grep -E "^(# )?${line%%=*}[= ]" "$cfg" || echo unset)" >&2; bad=1; } ;;
		"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}
			! grep -q "^$sym=" "$cfg" || { echo "  wanted $sym off" >&2; bad=1; } ;;
		esac
	done < <(cat $(config_frags "$2") | sed -nE 's/^# (CONFIG_[A-Za-z0-9_]+) is not set$/\1 &/p; s/^(CONFIG_[A-Za-z0-9_]+)=.*/\1 &/p' |
		 tac | sort -s -u -k1,1 | cut -d' ' -f2-)
	[ $bad = 0 ] || die "kernel config fragments are not satisfied (see above)"
}

make_k() {
	local src=$1 out=$2; shift 2
	make -s -C "$src" O="$out" -j"$(nproc)" CC="ccache gcc" HOSTCC="ccache gcc" \
		KBUILD_BUILD_USER=mmext KBUILD_BUILD_HOST=mmext \
		KBUILD_BUILD_TIMESTAMP="$(git -C "$src" log -1 --format=%cI)" "$@"
}

# configure VARIANT: (re)write the variant's .config when its fragments changed.
cmd_config() {
	local v src
	v=$(variant_name "${1:?variant}")
	src=$(variant_src "$v")
	[ -d "$src" ] || die "$src missing: run 'scripts/kernel.sh prepare'"
	[ "$src" = "$KSTOCK" ] || sync_tree
	configure "$v" "$src" "$(variant_dir "$1")"
}

# configure VARIANT SRC OUT
configure() {
	local v=$1 src=$2 out=$3 h
	mkdir -p "$out"
	h=$( { cat $(config_frags "$v"); case $v in *-distro*) echo "$MMEXT_DISTRO_CONFIG $MMEXT_DISTRO_VERSION" ;; esac; } |
		sha256sum | cut -c1-16)
	if [ ! -f "$out/.config" ] || [ "$(cat "$out/.mmext-config" 2>/dev/null)" != "$h" ]; then
		say "configuring $v"
		start_config "$v" "$src" "$out"
		"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" $(config_frags "$v") >/dev/null
		make_k "$src" "$out" olddefconfig >/dev/null
		check_config "$out/.config" "$v"
		echo "$h" > "$out/.mmext-config"
	fi
}

cmd_build() {
	local v src out lock
	export CCACHE_BASEDIR=$MMEXT_BUILD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
	out=$(variant_dir "$1")
	# Two builds in one object dir break each other's objects: the second waits.
	mkdir -p "$(dirname "$out")"
	exec {lock}>"$out.lock"
	if ! flock -n "$lock"; then
		say "waiting for another build in $out"
		flock "$lock"
	fi
	cmd_config "$1"
	v=$(variant_name "$1")
	src=$(variant_src "$v")
	say "building $v kernel in $out"
	local t0=$SECONDS
	make_k "$src" "$out" bzImage 2>&1 | tee "$out/build.log"
	# The queue's files build without warnings in every configuration (the base has some
	# of its own elsewhere, and in those files the ones base_warnings lists); a file
	# compiled again shows its warnings again.
	if [ "$src" = "$KTREE" ] && grep -E '(warning|error):' "$out/build.log" |
		grep -F "$(git_k diff --name-only "$BASE_TAG..HEAD")" | base_warnings >&2; then
		die "$v: the queue's files build with warnings ($out/build.log)"
	fi
	make_k "$src" "$out" headers >/dev/null
	say "built $v in $((SECONDS - t0)) s: $(make_k "$src" "$out" kernelrelease)"
	exec {lock}>&-
}

# Every patch of the queue builds: one object dir, rebuilt incrementally commit by commit
# with the patched variant's .config (options a patch has not yet added are dropped by
# olddefconfig and come back with it), in a detached worktree so build/linux is untouched.
cmd_each() {
	local first=${1-1} tree=$BASE_BUILD/linux-each out c i=0 n t0=$SECONDS
	case $first in *[!0-9]*|'') die "each takes a patch number, not '$first'" ;; esac
	cmd_build patched
	out=$(variant_dir patched)-each
	mkdir -p "$out"
	export CCACHE_BASEDIR=$MMEXT_BUILD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
	[ -d "$tree" ] || git_k worktree add -q --detach "$tree" "$BASE_TAG"
	n=$(git_k rev-list --count "$BASE_TAG..HEAD")
	for c in $(git_k rev-list --reverse "$BASE_TAG..HEAD"); do
		i=$((i + 1))
		[ $i -ge "$first" ] || continue
		git -C "$tree" checkout -q --detach "$c"
		cp "$(variant_dir patched)/.config" "$out/.config"
		say "[$i/$n] $(git_k log -1 --format=%s "$c")"
		make_k "$tree" "$out" olddefconfig >/dev/null
		make_k "$tree" "$out" bzImage > "$out/build.log" 2>&1 ||
			{ tail -n 30 "$out/build.log" >&2; die "patch $i does not build: $(git_k log -1 --format='%h %s' "$c")"; }
		# Warnings in the files this patch touches (the base has some of its own elsewhere).
		! grep -E '(warning|error):' "$out/build.log" |
			grep -F "$(git_k diff-tree --no-commit-id --name-only -r "$c")" |
			base_warnings >&2 ||
			die "patch $i builds with warnings: $(git_k log -1 --format='%h %s' "$c")"
	done
	say "all $n patches build ($((SECONDS - t0)) s)"
}

# objs [FIRST]: at every patch from FIRST, compile the C files the patch touches, in the
# patched configuration plus objs.config, and again with the queue's own options (its
# config/patched.config) off. A file the configuration does not build (obj-$(CONFIG_X)
# with X off, as cow_pte.c with COW_PTE off) is named and left out. Minutes where each
# takes an hour; each builds and links whole kernels.
# The options the queue's own config/patched.config turns on.
queue_options() { sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=y$/\1/p' "$QUEUE_DIR/config/patched.config"; }

cmd_objs() {
	local first=${1-1} tree=$BASE_BUILD/linux-each out c i=0 n o f x these objs t0=$SECONDS
	case $first in *[!0-9]*|'') die "objs takes a patch number, not '$first'" ;; esac
	cmd_config patched
	export CCACHE_BASEDIR=$MMEXT_BUILD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
	[ -d "$tree" ] || git_k worktree add -q --detach "$tree" "$BASE_TAG"
	out=$(variant_dir patched)-objs
	# The configurations wanted, $out/on.config and off.config: each patch's olddefconfig
	# starts from them, since it drops the symbols a patch before their Kconfig lacks.
	mkdir -p "$out/on" "$out/off"
	"$KTREE/scripts/kconfig/merge_config.sh" -m -O "$out" "$(variant_dir patched)/.config" \
		"$CONFIG_DIR/objs.config" > /dev/null
	mv "$out/.config" "$out/on.config"
	cp "$out/on.config" "$out/off.config"
	for x in $(queue_options); do
		sed -i "s/^$x=y$/# $x is not set/" "$out/off.config"
	done
	n=$(git_k rev-list --count "$BASE_TAG..HEAD")
	for c in $(git_k rev-list --reverse "$BASE_TAG..HEAD"); do
		i=$((i + 1))
		[ $i -ge "$first" ] || continue
		objs=$(git_k diff-tree --no-commit-id --name-only -r "$c" -- '*.c' |
			grep -v -E '^(tools|Documentation|samples|scripts)/' | sed 's/\.c$/.o/' || true)
		say "[$i/$n] $(git_k log -1 --format=%s "$c"): $(echo "$objs" | grep -c . || true) files"
		[ -n "$objs" ] || continue
		git -C "$tree" checkout -q --detach "$c"
		for o in on off; do
			cp "$out/$o.config" "$out/$o/.config"
			make_k "$tree" "$out/$o" olddefconfig >/dev/null
			# Each option the queue has added by this patch must be on, or off, as asked.
			for x in $(queue_options); do
				git -C "$tree" grep -q -E "^(menu)?config ${x#CONFIG_}\$" -- '*Kconfig*' || continue
				grep -q "^$x=y$" "$out/$o/.config" && [ $o = off ] &&
					die "patch $i: $x stays on in the configuration with the queue's options off"
				grep -q "^$x=y$" "$out/$o/.config" || [ $o = off ] ||
					die "patch $i: $x is off in the configuration with the queue's options on (a dependency it lacks)"
			done
			these=
			for f in $objs; do
				x=$(grep -o -E "obj-\\\$\(CONFIG_[A-Za-z0-9_]+\)[[:space:]]*[+:]?=.*\<$(basename "$f")\>" \
					"$tree/$(dirname "$f")/Makefile" 2>/dev/null | head -n 1 |
					sed -E 's/^obj-\$\((CONFIG_[A-Za-z0-9_]+)\).*/\1/' || true)
				if [ -n "$x" ] && ! grep -q "^$x=y$" "$out/$o/.config"; then
					say "    $f: not built with $x off (the queue's options $o)"
				else
					these="$these $f"
				fi
			done
			[ -n "$these" ] || continue
			# shellcheck disable=SC2086
			make_k "$tree" "$out/$o" $these > "$out/$o/build.log" 2>&1 ||
				{ tail -n 30 "$out/$o/build.log" >&2; die "patch $i does not compile with the queue's options $o: $(git_k log -1 --format='%h %s' "$c")"; }
			! grep -E '(warning|error):' "$out/$o/build.log" | base_warnings >&2 ||
				die "patch $i compiles with warnings, the queue's options $o: $(git_k log -1 --format='%h %s' "$c")"
		done
	done
	say "every patch from $first compiles, the queue's options on and off ($((SECONDS - t0)) s)"
}

# One build of the patched tree's selftests runs on every kernel: the queue's new tests
# SKIP on stock, and the queue's selftest fixes apply to both. The uapi headers come from
# the patched build of the variant DEBUG, BENCH, FUZZ or KCSAN select (they are the same in
# every configuration), so that variant needs no plain patched build.
cmd_selftests() {
	local out=$KOUT/kselftest hdr t ours
	hdr=$(variant_dir patched)/usr/include
	[ -d "$hdr" ] || die "build the patched kernel first ($hdr: its uapi headers are needed)"
	sync_tree
	say "building selftests (mm, proc) from the patched tree"
	# The tests the queue adds or changes must build: none of them may be left from an
	# earlier build to run in place of one that no longer does.
	ours=$(git_k diff --name-only --diff-filter=AM "$BASE_TAG" -- \
		tools/testing/selftests/mm/'*.c' tools/testing/selftests/proc/'*.c' |
		sed -e 's|^tools/testing/selftests/||' -e 's|\.c$||')
	for t in $ours; do
		rm -f "$out/$t"
	done
	for t in mm proc; do
		mkdir -p "$out/$t"
		# -k: a few tests need libraries we do not use; tests/run.sh reports a missing one.
		make -s -k -C "$KTREE/tools/testing/selftests/$t" -j"$(nproc)" CC="ccache gcc" \
			OUTPUT="$out/$t" KHDR_INCLUDES="-isystem $hdr" \
			> "$out/$t.log" 2>&1 || say "some $t selftests did not build (see $out/$t.log)"
		# run_vmtests.sh and the scripts it calls, for the distro tier (make install's).
		cp -p "$KTREE/tools/testing/selftests/$t"/*.sh "$out/$t/" 2>/dev/null || true
	done
	for t in $ours; do
		[ -x "$out/$t" ] || die "the queue's $t did not build (see $out/${t%%/*}.log)"
	done
}

# Debian packages with the kernel's own bindeb-pkg: it makes the linux-image and
# linux-headers packages Debian's /etc/kernel hooks (initramfs-tools, GRUB) act on, and
# needs no second copy of the tree; Debian's linux source package would rebuild every
# flavour and its signed-image templates. Objects in OUT/obj, packages beside them.
deb_variant() {
	case ${DEB_CONFIG:-debian} in
	debian) echo patched-distro-deb amd64 ;;
	# Not "test": GRUB sorts a release with -test in it before the same one without.
	test) echo patched-deb tiny ;;
	*) die "DEB_CONFIG is debian or test, not '$DEB_CONFIG'" ;;
	esac
}
cmd_debdir() { local v; v=$(deb_variant) && echo "$KOUT/${v% *}"; }

# deb_depends DIR DEPS: add DEPS to the Depends: of the package unpacked in DIR.
deb_depends() {
	if grep -q '^Depends:' "$1/DEBIAN/control"; then
		sed -i "s/^Depends: .*/&, $2/" "$1/DEBIAN/control"
	else
		sed -i "/^Architecture:/a Depends: $2" "$1/DEBIAN/control"
	fi
}

# deb_repack DEB FUNCTION: unpack DEB, let FUNCTION DIR change it, build it again with
# its size and checksums brought up to date.
deb_repack() {
	local deb=$1 d
	d=$(mktemp -d)
	dpkg-deb -R "$deb" "$d/root"
	"$2" "$d/root"
	sed -i "s/^Installed-Size: .*/Installed-Size: $(du -sk --exclude=DEBIAN "$d/root" | cut -f1)/" \
		"$d/root/DEBIAN/control"
	(cd "$d/root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
		xargs -0 md5sum) > "$d/md5sums"
	mv "$d/md5sums" "$d/root/DEBIAN/md5sums"
	dpkg-deb --root-owner-group -b "$d/root" "$deb" > /dev/null
	rm -rf "$d"
}

# Debian's own headers package ships the host programs (fixdep, modpost, objtool...)
# stripped, with the libraries they need as dependencies, and no VCS files (lintian
# reports each); bindeb-pkg copies them as built.
deb_tidy_headers() {
	local root=$1 src bins=()
	find "$root" -name .gitignore -delete
	mapfile -t bins < <(find "$root/usr/src" -type f -print0 | xargs -0 file | sed -n 's/: *ELF .*//p')
	[ ${#bins[@]} -gt 0 ] || return 0
	strip --strip-unneeded --remove-section=.comment --remove-section=.note "${bins[@]}"
	# dpkg-shlibdeps wants a source package around the programs.
	src=$(mktemp -d)
	mkdir -p "$src/debian"
	printf 'Source: linux-mmext\n\nPackage: headers\nArchitecture: any\n' > "$src/debian/control"
	deb_depends "$root" "$(cd "$src" && dpkg-shlibdeps -O "${bins[@]}" | sed -n 's/^shlibs:Depends=//p')"
	rm -rf "$src"
}

# bindeb-pkg's image declares no dependency, yet its postinst needs an initramfs
# generator (the kernel mounts the root through one) and the modules kmod's depmod
# indexes: depend on them as Debian's own image does.
deb_tidy_image() {
	deb_depends "$1" "kmod, initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool"
}

cmd_deb() {
	local v out obj lock kver rel pkgver rev=${DEB_REVISION:-1} flavour t0=$SECONDS
	v=$(deb_variant) || exit 1
	flavour=${v#* } v=${v% *}
	case $rev in *[!0-9]*|'') die "DEB_REVISION is a number, not '$rev'" ;; esac
	# dpkg-buildpackage runs without its build-dependency check: the control file asks for
	# gcc-x86-64-linux-gnu, which Debian 12 does not have (its gcc is that compiler).
	local p missing=()
	for p in dpkg-dev debhelper bc bison flex cpio kmod libelf-dev libssl-dev rsync file; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] || die "building the packages needs ${missing[*]}: run scripts/deps.sh"
	export CCACHE_BASEDIR=$MMEXT_BUILD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
	# Only the fragments' suffixes choose the configuration, not DEBUG and the like.
	export DEBUG=0
	out=$KOUT/$v obj=$KOUT/$v/obj
	mkdir -p "$out"
	exec {lock}>"$out.lock"
	if ! flock -n "$lock"; then
		say "waiting for another build in $out"
		flock "$lock"
	fi
	[ -d "$KTREE" ] || die "$KTREE missing: run 'scripts/kernel.sh prepare'"
	sync_tree
	configure "$v" "$KTREE" "$obj"
	kver=$(make_k "$KTREE" "$obj" kernelversion)
	# The base's version, ours (mmextN), the configuration: Debian's own kernel of this
	# source is 6.12.N+deb12-amd64, package 6.12.N-1~deb12u1. mmextN sorts after
	# 1~deb12u1, and the release after Debian's as GRUB compares them (dpkg's order).
	pkgver=$kver-mmext$rev
	rel=$pkgver-$flavour
	# Packaging again takes minutes even when nothing changed: skip it when the tree
	# (commits and edits), the configuration and this script are those of the packages.
	local stamp
	stamp=$( { git_k rev-parse HEAD; git_k diff HEAD; cat "$obj/.mmext-config" "$0"; echo "$rel"; } |
		sha256sum | cut -c1-16)
	if [ "$(cat "$out/.mmext-deb" 2>/dev/null)" = "$stamp" ] &&
	   ls "$out"/linux-image-"$rel"_*.deb "$out"/linux-headers-"$rel"_*.deb > /dev/null 2>&1; then
		say "packages of $rel are current: $out"
		return 0
	fi
	rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes "$out/.mmext-deb"
	say "building Debian packages of $rel in $out"
	make_k "$KTREE" "$obj" LOCALVERSION="-mmext$rev-$flavour" KDEB_PKGVERSION="$pkgver" \
		KDEB_SOURCENAME=linux-mmext KDEB_CHANGELOG_DIST=bookworm \
		DEBFULLNAME="mmext maintainers" DEBEMAIL=maintainers@mmext.invalid \
		DPKG_FLAGS=-d bindeb-pkg > "$out/build.log" 2>&1 ||
		{ tail -n 30 "$out/build.log" >&2; die "bindeb-pkg failed ($out/build.log)"; }
	# linux-libc-dev would replace Debian 12's own (the 6.1 headers its glibc is built
	# against); libmmext-dev carries the definitions our programs need.
	rm -f "$out"/linux-libc-dev_*.deb
	ls "$out"/linux-image-"$rel"_*.deb "$out"/linux-headers-"$rel"_*.deb > /dev/null ||
		die "bindeb-pkg made no linux-image or linux-headers package for $rel"
	deb_repack "$(ls "$out"/linux-headers-"$rel"_*.deb)" deb_tidy_headers
	deb_repack "$(ls "$out"/linux-image-"$rel"_*.deb)" deb_tidy_image
	echo "$stamp" > "$out/.mmext-deb"
	say "built $(cd "$out" && ls -- *.deb | xargs) in $((SECONDS - t0)) s"
	exec {lock}>&-
}

cmd_outdir() { variant_dir "${1:?variant}"; }
cmd_image() { variant_image "${1:?variant}"; }

case ${1:-} in
prepare|import|export|config|build|each|objs|selftests|outdir|image|deb|debdir) c=$1; shift; "cmd_$c" "$@" ;;
-h|--help) usage 0 ;;
*) usage ;;
esac
