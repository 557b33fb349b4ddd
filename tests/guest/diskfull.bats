#!/usr/bin/env bats
# A disk that fills up mid-extraction: tests/guest/init mounts an 8 MiB tmpfs
# owned by the guest user on /tmp/edr-small; a root that does not fit must fail
# with one ENOSPC line and exit 125, leave no root, staging or metadata, and a
# later create that fits must succeed.

load common

SMALL=/tmp/edr-small

setup() {
	mountpoint -q "$SMALL" || skip "no small tmpfs on $SMALL (tests/guest/init)"
	T=$BATS_TEST_TMPDIR
	export XDG_DATA_HOME=$SMALL/data HOME=$BATS_TEST_TMPDIR
	rm -rf "$XDG_DATA_HOME"
	mkdir -p "$XDG_DATA_HOME" "$T/big" "$T/small"
}
teardown() { rm -rf "$SMALL/data"; }

@test "diskfull: a root that does not fit fails with ENOSPC, exit 125, nothing left; one that fits succeeds" {
	head -c $((12 << 20)) /dev/urandom >"$T/big/blob"
	echo x >"$T/big/after"
	tar -C "$T/big" -cf "$T/big.tar" blob after
	edr_run create full --from "$T/big.tar"
	assert_status 125
	[[ ${#stderr_lines[@]} -eq 1 ]] || fail "expected one error line: $stderr"
	[[ $stderr == "enter-devroot: "*"No space left on device"* ]] || fail "not an ENOSPC line: $stderr"
	[[ $stderr == *big.tar* ]] || fail "the error does not name the archive: $stderr"
	[[ ! -e $XDG_DATA_HOME/enter-devroot/roots/full ]] || fail "a partial root remains"
	[[ -z $(ls -A "$XDG_DATA_HOME/enter-devroot/staging" 2>/dev/null) ]] || fail "staging debris remains"
	[[ -z $(ls -A "$XDG_DATA_HOME/enter-devroot/meta" 2>/dev/null) ]] || fail "metadata debris remains"
	echo small >"$T/small/f"
	tar -C "$T/small" -cf "$T/small.tar" f
	edr_run create fits --from "$T/small.tar"
	assert_status 0
	[[ $(cat "$XDG_DATA_HOME/enter-devroot/roots/fits/f") == small ]] || fail "the later create is wrong"
}
