#!/bin/bash
# Build the guest kernel for the QEMU test suite: Debian's linux-source-7.3
# (trixie-backports; scripts/install-deps adds that source, pinned) with
# kernel/patches applied (or not, with --unpatched), configured from
# tinyconfig + kernel/config/*.config, plus the chroot kselftests
# (tools/testing/selftests/filesystems/chroot).
#
# Everything lives in a cache directory outside the repository:
#   $CACHE/src/linux-source-7.3-<pkgversion>/    pristine tree, a git repository
#   $CACHE/work/linux/                           git worktree, reset to pristine
#                                                and the series applied anew
#   $CACHE/work/obj/                             O= build directory, reused
#   $CACHE/build/<key>/out/{bzImage,config,series-applied,selftests/}
#   $CACHE/build/<key>/build.log, stamp          one per finished input set
# The worktree and object directory are shared by all builds: git rewrites
# only the files that differ, so make recompiles only what a patch touches
# (switching between --unpatched and patched costs a minute, not a build).
# The key hashes the package version, the tarball, the series, the config
# fragments, the compiler, this script and the mode, so an unchanged input set
# reuses the finished build.  Progress goes to stderr; the absolute path of
# bzImage is the last (and only) line on stdout.
#
# Usage: kernel/build.sh [--unpatched]      (or KERNEL_UNPATCHED=1)
# Environment: ENTER_DEVROOT_KERNEL_CACHE (cache directory),
#              ENTER_DEVROOT_KERNEL_JOBS (make -j, default 2),
#              ENTER_DEVROOT_KERNEL_KEEP (finished builds kept, default 3).
# Exit status: 0 on success, 1 on any failure (one line on stderr says why).
# `$(SHELL) kernel/build.sh` from make runs /bin/sh: switch to bash.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
# The braces make bash read the whole script before running it, so editing
# this file during a build cannot derail the build.
{
set -euo pipefail

KDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TARBALL=/usr/src/linux-source-7.3.tar.xz
PKG=linux-source-7.3
CACHE=${ENTER_DEVROOT_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/enter-devroot/kernel}
JOBS=${ENTER_DEVROOT_KERNEL_JOBS:-2}
KEEP=${ENTER_DEVROOT_KERNEL_KEEP:-3}
MODE=patched
[ "${KERNEL_UNPATCHED:-0}" = 1 ] && MODE=unpatched
# A fixed identity and date make the pristine commit (the series' base-commit)
# the same on every machine for the same tarball.
GIT_ID=(-c user.name=enter-devroot -c user.email=enter-devroot@localhost
	-c commit.gpgsign=false -c core.autocrlf=false)
PRISTINE_DATE=2000-01-01T00:00:00Z

LOG=/dev/null
STEP=setup

# The trees in work/ are whole again (see BUSY_FILE below).
release_work() {
	[ -z "${BUSY:-}" ] || rm -f "$BUSY"
}

die() {
	release_work
	echo "enter-devroot: kernel build: $*" >&2
	exit 1
}

on_error() {
	release_work # whatever failed has returned: nothing is half-written
	if [ "$LOG" != /dev/null ] && [ -s "$LOG" ]; then
		echo "--- last lines of $LOG ---" >&2
		tail -n 25 "$LOG" >&2
	fi
	echo "enter-devroot: kernel build failed at step '$STEP': see $LOG" >&2
}

step() {
	STEP=$1
	echo "kernel: $1" >&2
}

usage() {
	echo "usage: $0 [--unpatched]" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--unpatched) MODE=unpatched ;;
	-h|--help) usage ;;
	*) echo "enter-devroot: kernel build: unknown argument: $1" >&2; usage ;;
	esac
	shift
done

[ -r "$TARBALL" ] || die "$TARBALL: not found (scripts/install-deps all: $PKG comes from trixie-backports)"
PKGVER=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) ||
	die "$PKG: package not installed (scripts/install-deps all: $PKG comes from trixie-backports)"
for tool in git make gcc flex bison bc xz perl; do
	command -v "$tool" >/dev/null || die "$tool: not found in PATH"
done

# The patches in quilt order (the cover letter is not in the series).
mapfile -t PATCHES < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' \
	"$KDIR/patches/series" 2>/dev/null || true)
for p in "${PATCHES[@]}"; do
	[ -f "$KDIR/patches/$p" ] || die "kernel/patches/series: $p: no such patch"
done
shopt -s nullglob
FRAGMENTS=("$KDIR"/config/*.config)
shopt -u nullglob
[ ${#FRAGMENTS[@]} -gt 0 ] || die "kernel/config: no *.config fragment"

compute_key() {
	{
		echo "mode $MODE"
		echo "package $PKG $PKGVER"
		stat -L -c 'tarball %s %Y' "$TARBALL"
		echo "compiler $(gcc --version | head -n 1)"
		for p in "${PATCHES[@]}"; do
			echo "patch $p $(sha256sum < "$KDIR/patches/$p")"
		done
		for f in "${FRAGMENTS[@]}"; do
			echo "config ${f##*/} $(sha256sum < "$f")"
		done
		echo "script $(sha256sum < "$KDIR/build.sh")"
	} | sha256sum | cut -c1-16
}

KEY=$(compute_key)
B=$CACHE/build/$KEY
OUT=$B/out
if [ -f "$B/stamp" ]; then
	touch "$B/stamp"
	echo "kernel: cached $MODE build $KEY" >&2
	echo "$OUT/bzImage"
	exit 0
fi

mkdir -p "$CACHE/build" "$CACHE/src" || die "$CACHE: cannot create"
exec 9>"$CACHE/lock"
if ! flock -n 9; then
	echo "kernel: waiting for another kernel build in $CACHE" >&2
	flock 9
fi
# Another build may have finished this very key while we waited.
if [ -f "$B/stamp" ]; then
	echo "$OUT/bzImage"
	exit 0
fi
trap on_error ERR

SRC=$CACHE/src/$PKG-$PKGVER
unpack_pristine() {
	local tmp
	step "unpacking $TARBALL ($PKGVER) into $SRC"
	rm -rf "$SRC" "$SRC.ok"
	tmp=$(mktemp -d "$CACHE/src/.unpack.XXXXXX")
	tar -C "$tmp" -xf "$TARBALL"
	mv "$tmp/$PKG" "$SRC"
	rmdir "$tmp"
	step "recording the pristine tree in git"
	# -f: Debian's top-level .gitignore ignores everything at the top level.
	git -C "$SRC" init -q -b pristine
	git -C "$SRC" add -f -A .
	GIT_AUTHOR_DATE=$PRISTINE_DATE GIT_COMMITTER_DATE=$PRISTINE_DATE \
		git -C "$SRC" "${GIT_ID[@]}" commit -q \
		-m "$PKG $PKGVER (pristine)"
	touch "$SRC.ok"
}
[ -f "$SRC.ok" ] || unpack_pristine

LOG=$B/build.log
WT=$CACHE/work/linux
OBJ=$CACHE/work/obj
# BUSY_FILE exists while git or make work in WT and OBJ, and goes once they have
# returned (done or failed): a build that was killed (a machine shut down, a
# session ended) leaves it, and may have left a half-written object or .cmd
# file that make would trust ("unterminated variable reference").  The next
# build then starts from an empty worktree and object directory.
BUSY_FILE=$CACHE/work/busy
BUSY=
step "preparing $MODE build $KEY"
rm -rf "$B"
mkdir -p "$OUT/selftests" "$OBJ"
: > "$LOG"
if [ -e "$BUSY_FILE" ]; then
	echo "kernel: the last build in $CACHE/work was interrupted: starting from a clean tree" >&2
	echo "interrupted build ($(cat "$BUSY_FILE" 2>/dev/null || true)): clean tree" >> "$LOG"
	rm -f "$WT.src" # start over, below
	find "$SRC/.git" -maxdepth 3 -name '*.lock' -delete
fi
BUSY=$BUSY_FILE
echo "pid $$ since $(date -u +%FT%TZ)" > "$BUSY"
# The shared worktree belongs to one package version: start over on a new one (or
# after an interrupted build).
if [ "$(cat "$WT.src" 2>/dev/null || true)" != "$SRC" ]; then
	rm -rf "$WT" "$WT.src" "$WT.built" "$OBJ"
	mkdir -p "$OBJ"
fi
if [ ! -d "$WT" ]; then
	git -C "$SRC" worktree prune
	git -C "$SRC" worktree add -q --detach "$WT" pristine >> "$LOG" 2>&1
	echo "$SRC" > "$WT.src"
fi
reset_worktree() {
	git -C "$WT" am --abort >> "$LOG" 2>&1 || true
	git -C "$WT" checkout -q -f --detach pristine >> "$LOG" 2>&1
	git -C "$WT" clean -q -ffdx >> "$LOG" 2>&1
}
# Resetting to pristine and applying the series again rewrites every file the
# series touches, and make would then recompile everything that includes them
# (the series changes include/linux/security.h: most of the kernel).  BUILT
# names the commit the objects in OBJ were last built from, written only after
# a successful bzImage: a file whose content is the same as then gets its mtime
# back, so only what really changed is recompiled.
BUILT=$WT.built
declare -A KEEP_MTIME=()
built_from=$(cat "$BUILT" 2>/dev/null || true)
rm -f "$BUILT"
if [ -n "$built_from" ] &&
	git -C "$WT" cat-file -e "$built_from^{commit}" 2>/dev/null; then
	while IFS= read -r f; do
		[ -f "$WT/$f" ] && KEEP_MTIME[$f]=$(stat -c %Y "$WT/$f")
	done < <(git -C "$WT" diff --name-only pristine "$built_from")
fi
restore_mtimes() {
	local f
	for f in "${!KEEP_MTIME[@]}"; do
		[ -f "$WT/$f" ] &&
			git -C "$WT" diff --quiet "$built_from" HEAD -- "$f" &&
			touch -m -d "@${KEEP_MTIME[$f]}" "$WT/$f"
	done
	return 0
}
reset_worktree

apply_series() {
	local p
	for p in "${PATCHES[@]}"; do
		echo "applying $p" >> "$LOG"
		if ! git -C "$WT" "${GIT_ID[@]}" am -q "$KDIR/patches/$p" \
			>> "$LOG" 2>&1; then
			git -C "$WT" am --abort >> "$LOG" 2>&1 || true
			STEP="applying $p"
			die "kernel/patches/$p does not apply to $PKG $PKGVER (see $LOG)"
		fi
	done
}

if [ "$MODE" = patched ]; then
	step "applying ${#PATCHES[@]} patches"
	apply_series
	printf '%s\n' "${PATCHES[@]}" > "$OUT/series-applied"
else
	echo "none (--unpatched: pristine $PKG $PKGVER)" > "$OUT/series-applied"
fi
restore_mtimes

MK=(make -C "$WT" O="$OBJ" -j"$JOBS")
step "configuring (tinyconfig + ${FRAGMENTS[*]##*/})"
"${MK[@]}" tinyconfig >> "$LOG" 2>&1
(cd "$OBJ" && "$WT/scripts/kconfig/merge_config.sh" -m -O "$OBJ" \
	"$OBJ/.config" "${FRAGMENTS[@]}") >> "$LOG" 2>&1
"${MK[@]}" olddefconfig >> "$LOG" 2>&1

# Every option a fragment sets must have survived olddefconfig.
check_config() {
	local f line opt missing=()
	for f in "${FRAGMENTS[@]}"; do
		while IFS= read -r line; do
			case $line in
			CONFIG_*=*)
				grep -qxF -- "$line" "$OBJ/.config" ||
					missing+=("$line") ;;
			"# CONFIG_"*" is not set")
				opt=${line#\# }; opt=${opt%% *}
				! grep -q "^$opt=" "$OBJ/.config" ||
					missing+=("$line") ;;
			esac
		done < "$f"
	done
	if [ ${#missing[@]} -gt 0 ]; then
		printf 'kernel: config option lost by olddefconfig: %s\n' \
			"${missing[@]}" >&2
		STEP="checking the configuration"
		die "${#missing[@]} option(s) of kernel/config did not survive (unmet dependencies?)"
	fi
}
check_config

step "building bzImage with make -j$JOBS (log: $LOG)"
start=$SECONDS
"${MK[@]}" bzImage >> "$LOG" 2>&1
echo "bzImage built in $((SECONDS - start)) s" >> "$LOG"
git -C "$WT" rev-parse HEAD > "$BUILT"

# The selftests are userspace: in --unpatched mode they still come from the
# series, so the same tests can prove that the pristine kernel fails them.
if [ "$MODE" = unpatched ]; then
	step "applying the series for the selftests only"
	apply_series
fi
step "building the chroot selftests"
SELFTESTS=$WT/tools/testing/selftests/filesystems/chroot
if [ -d "$SELFTESTS" ]; then
	# They use this kernel's UAPI (io_uring opcodes newer than the host's).
	"${MK[@]}" headers >> "$LOG" 2>&1
	# chroot_lsm_test builds the in-tree libbpf under $OBJ/selftests-tools
	# (cleaned here, as the tree is reset); Debian installs bpftool in
	# /usr/sbin, not always in a user's PATH.
	make -C "$SELFTESTS" \
		KHDR_INCLUDES="-isystem $OBJ/usr/include" \
		BPFTOOL="$(command -v bpftool || echo /usr/sbin/bpftool)" \
		OUTPUT="$OUT/selftests" >> "$LOG" 2>&1
	# Only the programs travel to the guest: not the libbpf build.
	rm -rf "$OUT/selftests/tools" "$OUT/selftests"/*.o "$OUT/selftests"/*.skel.h
	[ -x "$OUT/selftests/chroot_lsm_test" ] ||
		die "chroot_lsm_test was not built (clang, bpftool, libbpf-dev, libelf-dev: see $LOG)"
else
	echo "kernel: no tools/testing/selftests/filesystems/chroot in the series" >&2
fi

cp "$OBJ/arch/x86/boot/bzImage" "$OUT/bzImage"
cp "$OBJ/.config" "$OUT/config"
release_work
date -u +%FT%TZ > "$B/stamp"
trap - ERR

# Keep the most recently used finished builds only.
prune() {
	local d n=0
	while IFS= read -r d; do
		n=$((n + 1))
		[ "$n" -le "$KEEP" ] && continue
		rm -rf "$d"
	done < <(ls -1t "$CACHE"/build/*/stamp 2>/dev/null | sed 's:/stamp$::')
}
prune

echo "kernel: done in $SECONDS s" >&2
echo "$OUT/bzImage"
exit 0
}
