#!/bin/sh
# Build the embedded default template: a minimal root from a static busybox, without root
# and without network. Deterministic: sorted entries, fixed times, owner 0:0.
#   build.sh BUSYBOX OUTPUT.tar.gz
# Environment: TAR (GNU tar), GZIP_PROG (gzip), SOURCE_DATE_EPOCH (entry times).
set -eu

busybox=${1:?usage: build.sh BUSYBOX OUTPUT.tar.gz}
out=${2:?usage: build.sh BUSYBOX OUTPUT.tar.gz}
tar=${TAR:-tar}
gzip=${GZIP_PROG:-gzip}
epoch=${SOURCE_DATE_EPOCH:-1704067200} # 2024-01-01T00:00:00Z

test -x "$busybox" || { echo "build.sh: $busybox is not executable" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/edr-minimal.XXXXXX")
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT INT TERM
r=$work/root
umask 022

mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc" "$r/home" "$r/root" \
	"$r/tmp" "$r/dev" "$r/proc" "$r/sys" "$r/var/tmp" "$r/run"
cp "$busybox" "$r/bin/busybox"
chmod 0755 "$r/bin/busybox"

# Every applet this busybox has, at the path busybox itself reports for it.
"$busybox" --list-full | while read -r applet; do
	case $applet in
	''|linuxrc|bin/busybox) continue ;;
	esac
	test -e "$r/$applet" || test -L "$r/$applet" || ln -s /bin/busybox "$r/$applet"
done
for needed in bin/sh usr/bin/env; do
	test -L "$r/$needed" || { echo "build.sh: $busybox has no applet for /$needed" >&2; exit 1; }
done

cat > "$r/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
cat > "$r/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP
cat > "$r/etc/os-release" <<'OSRELEASE'
NAME="enter-devroot minimal"
ID=enter-devroot-minimal
PRETTY_NAME="enter-devroot minimal (busybox)"
HOME_URL="https://github.com/"
OSRELEASE
cat > "$r/etc/profile" <<'PROFILE'
PS1='[devroot] \w \$ '
export PS1
PROFILE
echo 'hosts: files' > "$r/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$r/etc/hosts"

chmod 1777 "$r/tmp" "$r/var/tmp"
chmod 0700 "$r/root"
chmod 0555 "$r/proc" "$r/sys"

mkdir -p "$(dirname "$out")"
"$tar" --create --directory="$r" --sort=name --format=gnu \
	--owner=0 --group=0 --numeric-owner --mtime="@$epoch" . |
	"$gzip" -9 -n > "$out.tmp"
mv -f "$out.tmp" "$out"
