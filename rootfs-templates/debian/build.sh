#!/bin/sh
# Build a Debian rootfs template as a .tar.zst with mmdebstrap, tailored for enter-devroot:
# a root that an unprivileged user unpacks and chroots into without /dev, /proc or setuid.
#
#   build.sh VARIANT OUTPUT.tar.zst
#     VARIANT: debian-bookworm        minbase (apt, dpkg, bash, coreutils ...)
#              debian-bookworm-build  minbase + build-essential git pkg-config ca-certificates
#
# Needs root (mmdebstrap --mode=root) and Debian's package mirror. Environment:
#   MIRROR            default http://deb.debian.org/debian
#   SUITE             default bookworm
#   ZSTD_LEVEL        default 19 (built rarely, downloaded often)
#   SOURCE_DATE_EPOCH entry times (mmdebstrap makes the tarball reproducible with it)
set -eu

variant=${1:?usage: build.sh VARIANT OUTPUT.tar.zst}
out=${2:?usage: build.sh VARIANT OUTPUT.tar.zst}
mirror=${MIRROR:-http://deb.debian.org/debian}
suite=${SUITE:-bookworm}

case $variant in
debian-bookworm) include= ;;
debian-bookworm-build) include=build-essential,git,pkg-config,ca-certificates ;;
*) echo "build.sh: unknown template '$variant'" >&2; exit 2 ;;
esac
case $out in
*.tar.zst) ;;
*) echo "build.sh: $out: the output must end in .tar.zst" >&2; exit 2 ;;
esac
command -v mmdebstrap >/dev/null ||
	{ echo "build.sh: mmdebstrap not found: apt-get install mmdebstrap" >&2; exit 1; }
command -v zstd >/dev/null ||
	{ echo "build.sh: zstd not found: apt-get install zstd" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] ||
	{ echo "build.sh: must run as root (mmdebstrap --mode=root)" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
tmp=$out.tmp.$$
trap 'rm -f "$tmp" "$tmp.tar"' EXIT INT TERM

# Device nodes cannot be created unprivileged (enter-devroot would skip them with a
# warning), so they are deleted from the tarball below; /dev keeps its directory and its
# symlinks (fd, stdin, stdout, stderr -> /proc/self/fd/...), which work wherever /proc is.
# (--skip=output/dev would drop /dev altogether.)
# The dpkg path-excludes keep documentation out of this and every later install (copyright
# files stay, as Debian policy wants). tailor.sh adapts the root to life without privileges.
export EDR_TEMPLATE_NAME="$variant"
mmdebstrap --mode=root --variant=minbase --format=tar \
	${include:+--include="$include"} \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-include=/usr/share/locale/locale.alias' \
	--customize-hook="sh '$here/tailor.sh' \"\$1\"" \
	"$suite" "$tmp.tar" "$mirror"
# mmdebstrap writes ./dev from its own list, not from the chroot: fix it up here. No
# device node can exist in an unprivileged root, but some programs cannot start without
# opening /dev/null (git opens it O_RDWR at every start), so an empty regular file, mode
# 0666, stands in for it; what is written to it stays there until the next '>/dev/null'.
nodes=$(tar -tvf "$tmp.tar" ./dev | awk '$1 ~ /^[bcps]/ { print $NF }')
[ -z "$nodes" ] || tar --delete -f "$tmp.tar" $nodes
devdir=$(mktemp -d)
mkdir "$devdir/dev" && : > "$devdir/dev/null" && chmod 0666 "$devdir/dev/null"
tar -C "$devdir" --owner=0 --group=0 --numeric-owner --mtime="@${SOURCE_DATE_EPOCH:-$(date +%s)}" \
	-rf "$tmp.tar" ./dev/null
rm -rf "$devdir"
zstd -q -"${ZSTD_LEVEL:-19}" -T0 --rm -o "$tmp" "$tmp.tar"
chmod 0644 "$tmp" # published as is by a web server
mv -f "$tmp" "$out"
trap - EXIT INT TERM
