#!/bin/bash
# Each patch of the series compiles on its own (a bisect stops anywhere): on a worktree of
# the pristine tree that kernel/build.sh keeps, apply the patches one at a time and after
# each build, with W=1, the objects of the C files it touches and of the files that use
# what a header of it changes: no error, and no warning that the pristine tree's same
# objects do not have. The guest's configuration (kernel/build.sh's .config) is
# used, so AppArmor, SELinux, the BPF LSM and lockdep are in. Run kernel/build.sh first.
#
# Usage: kernel/check-bisect.sh       (ENTER_DEVROOT_KERNEL_CACHE as for build.sh)
# Prints one line per patch, "ok N SUBJECT" or "not ok N SUBJECT", and exits 1 on any
# failure; the worktree and its object directory are removed at the end.
set -euo pipefail

KDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${ENTER_DEVROOT_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/enter-devroot/kernel}
JOBS=${ENTER_DEVROOT_KERNEL_JOBS:-2}
pristine=$(ls -d "$CACHE"/src/linux-source-7.3-*/ 2>/dev/null | head -n 1)
config=$CACHE/work/obj/.config
[[ -d $pristine && -f $config ]] || {
	echo "check-bisect: no kernel tree in $CACHE: run kernel/build.sh first" >&2
	exit 1
}
work=$(mktemp -d)
trap 'git -C "$pristine" worktree remove --force "$work/linux" 2>/dev/null || true; rm -rf "$work"' EXIT
git -C "$pristine" worktree add --detach -q "$work/linux" pristine
mkdir "$work/obj"
cp "$config" "$work/obj/.config"
make -C "$work/linux" O="$work/obj" -s olddefconfig
make -C "$work/linux" O="$work/obj" -s -j"$JOBS" prepare >"$work/prepare.log" 2>&1 || {
	tail -n 20 "$work/prepare.log" >&2
	exit 1
}

# objects PATCH: what to build after it. A C file it touches; for a header, the files that
# include it and are changed by the series (the hook's callers), and the LSMs' hooks.
objects() {
	local f
	for f in $(sed -n 's#^+++ b/##p' "$1"); do
		case $f in
		tools/*) ;;
		*.c) echo "${f%.c}.o" ;;
		include/linux/lsm_hook_defs.h | include/linux/security.h)
			echo fs/open.o security/security.o kernel/bpf/bpf_lsm.o ;;
		security/apparmor/include/*) echo security/apparmor/lsm.o security/apparmor/capability.o ;;
		security/selinux/include/*) echo security/selinux/hooks.o security/selinux/ss/services.o ;;
		esac
	done | tr ' ' '\n' | sort -u
}

# warnings LOG: W=1's warnings, without their line and column numbers (a patch moves them).
warnings() { grep 'warning:' "$1" | sed -E 's/:[0-9]+:[0-9]+:/:/' | sort -u || true; }

# What W=1 says of these objects before the series: a patch fails on a warning it adds.
all=$(for p in $(cat "$KDIR/patches/series"); do objects "$KDIR/patches/$p"; done | sort -u)
make -C "$work/linux" O="$work/obj" -s -j"$JOBS" W=1 $all >"$work/base.log" 2>&1 || {
	echo "check-bisect: the pristine tree does not build $all" >&2
	tail -n 20 "$work/base.log" >&2
	exit 1
}
warnings "$work/base.log" >"$work/base.warnings"

rc=0
n=0
while read -r p; do
	n=$((n + 1))
	# The Subject header, its folded lines joined.
	subject=$(awk '/^Subject: /{s=substr($0, 10); f=1; next} f && /^[ \t]/{s=s $0; next}
		f{print s; exit}' "$KDIR/patches/$p" | tr -s ' \t' ' ')
	git -C "$work/linux" -c user.name=check -c user.email=check@localhost am -q "$KDIR/patches/$p"
	objs=$(objects "$KDIR/patches/$p")
	: >"$work/$n.log"
	if [[ -z $objs ]] ||
		make -C "$work/linux" O="$work/obj" -s -j"$JOBS" W=1 $objs >"$work/$n.log" 2>&1 &&
		[[ -z $(warnings "$work/$n.log" | comm -23 - "$work/base.warnings") ]]; then
		echo "ok $n $subject ($(echo ${objs:-no kernel object}))"
	else
		echo "not ok $n $subject"
		tail -n 20 "$work/$n.log" | sed 's/^/# /'
		rc=1
	fi
done <"$KDIR/patches/series"
exit $rc
