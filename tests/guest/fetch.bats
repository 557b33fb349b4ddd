#!/usr/bin/env bats
# Templates by name from a file:// catalogue, as the unprivileged user on the patched
# kernel: the guest has no network, so the catalogue and the template are published on
# its own filesystem. The host's fetch suites cover http(s); this shows that fetch, the
# cache and create --template work where chroot is the only way in.

load common

setup_file() {
	guest_setup_file
	export PUB=$BATS_FILE_TMPDIR/pub CACHE=$BATS_FILE_TMPDIR/cache
	mkdir -p "$PUB"
	cp "$EDR_TEMPLATE" "$PUB/minimal.tar.gz"
	local sha size
	read -r sha _ < <(sha256sum "$PUB/minimal.tar.gz")
	size=$(stat -c %s "$PUB/minimal.tar.gz")
	printf '# published in the guest\n[minimal]\nurl = minimal.tar.gz\nsha256 = %s\nsize = %s\ndescription = busybox root\n' \
		"$sha" "$size" > "$PUB/index"
	# The same file under a digest it does not have.
	printf '[minimal]\nurl = minimal.tar.gz\nsha256 = %064d\nsize = %s\n' 0 "$size" > "$PUB/bad-index"
}

setup() {
	guest_setup
	export XDG_CACHE_HOME=$CACHE XDG_CONFIG_HOME=$T/config
	unset ENTER_DEVROOT_INDEX
}
teardown() { guest_teardown; }

@test "fetch: templates lists the file:// catalogue" {
	edr_run templates --index "file://$PUB/index"
	assert_status 0
	assert_output --partial minimal
	assert_output --partial "busybox root"
}

@test "fetch: create --template creates a root that runs, then the cache serves it" {
	export XDG_DATA_HOME=$T/data
	edr_run create fetched --template minimal --index "file://$PUB/index" --quiet
	assert_status 0
	edr_run run fetched -- sh -c 'cat /etc/os-release; echo inside-$((6 * 7))'
	assert_status 0
	assert_output --partial inside-42
	# The verified file is in the content-addressed cache: remove the published copy
	# and a second create still succeeds, from the cache alone.
	local sha
	read -r sha _ < <(sha256sum "$EDR_TEMPLATE")
	[[ -f $CACHE/enter-devroot/sha256/$sha ]] || fail "no cache entry sha256/$sha"
	mv "$PUB/minimal.tar.gz" "$PUB/moved-away"
	edr_run create again --template minimal --index "file://$PUB/index" --quiet
	mv "$PUB/moved-away" "$PUB/minimal.tar.gz"
	assert_status 0
	[[ -x $(root_of again)/bin/busybox ]] || fail "second root has no /bin/busybox"
}

@test "fetch: a digest mismatch creates nothing and names both digests" {
	export XDG_DATA_HOME=$T/data XDG_CACHE_HOME=$T/cache
	edr_run create bad --template minimal --index "file://$PUB/bad-index" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" expected
	[[ $stderr == *got* ]] || fail "the error does not say what it got
$(last_run)"
	[[ ! -e $(root_of bad) ]] || fail "a root was left behind"
	[[ -z $(ls -A "$T/cache/enter-devroot/sha256" 2>/dev/null) ]] ||
		fail "a mismatching file entered the cache"
}
