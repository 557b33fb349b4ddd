#!/bin/sh
# A fetch smoke test that needs nothing but a POSIX shell, coreutils and the binary: for the
# QEMU guest suite, where there is no web server and no network. Prints TAP.
#
#   tests/fetch/guest-smoke.sh BINARY TEMPLATE_TARBALL
#
# Run it as the unprivileged user: it publishes TEMPLATE_TARBALL in a file:// catalogue,
# creates a devroot from it by name, runs a command inside, creates a second one (which must
# be served from the cache), and checks that a digest mismatch creates nothing.
set -u
bin=${1:?usage: guest-smoke.sh BINARY TEMPLATE_TARBALL}
tpl=${2:?usage: guest-smoke.sh BINARY TEMPLATE_TARBALL}
work=$(mktemp -d "${TMPDIR:-/tmp}/edr-guest-fetch.XXXXXX") || exit 1
trap 'chmod -R u+rwX "$work" 2>/dev/null; rm -rf "$work"' EXIT
export HOME="$work/home" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache" \
	XDG_CONFIG_HOME="$work/config"
unset ENTER_DEVROOT_INDEX
mkdir -p "$HOME" "$work/pub"
cp "$tpl" "$work/pub/t.tar"
sha=$(sha256sum "$work/pub/t.tar" | cut -d' ' -f1)
size=$(wc -c < "$work/pub/t.tar" | tr -d ' ')
printf '[t]\nurl = t.tar\nsha256 = %s\nsize = %s\ndescription = guest\n' "$sha" "$size" > "$work/pub/index"
printf '[t]\nurl = t.tar\nsha256 = %064d\nsize = %s\n' 0 "$size" > "$work/pub/bad-index"
idx="file://$work/pub/index"

n=0 failed=0
check() { # DESCRIPTION COMMAND...
	desc=$1
	shift
	n=$((n + 1))
	if "$@" > "$work/out" 2>&1; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		sed 's/^/# /' "$work/out"
		failed=$((failed + 1))
	fi
}
echo "1..5"
check "templates lists the file:// catalogue" sh -c "'$bin' templates --index '$idx' | grep -q '^t '"
check "create --template unpacks a verified template" "$bin" create a --template t --index "$idx"
check "the devroot runs a command" "$bin" run a -- sh -c 'test -d /etc && echo inside'
check "a second create is served from the cache" sh -c "
	rm -f '$work/pub/t.tar' &&
	'$bin' create b --template t --index '$idx' &&
	test \$('$bin' cache list | wc -l) -eq 2" # the header and one file
check "a digest mismatch creates nothing" sh -c "
	cp '$tpl' '$work/pub/t.tar' &&
	! '$bin' create c --template t --index 'file://$work/pub/bad-index' 2> '$work/err' &&
	grep -q 'expected 0000' '$work/err' && ! test -e '$XDG_DATA_HOME/enter-devroot/roots/c'"
[ "$failed" -eq 0 ]
