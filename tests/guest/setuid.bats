#!/usr/bin/env bats
# A setuid-root binary inside a devroot gains nothing. tests/guest/init, as
# root, planted the static probe as /suid-ids, owner root, mode 6755, in the
# root "suid" of EDR_PREPARED (an archive cannot carry it: the tool strips
# setuid bits and cannot chown).

load common

setup_file() { guest_setup_file; }

setup() {
	guest_setup
	need_probe
	export XDG_DATA_HOME=$EDR_PREPARED
	SUID=$(root_of suid)/suid-ids
	[[ -f $SUID ]] || fail "$SUID: not planted by tests/guest/init (see results/init.log)"
	local mode
	mode=$(stat -c '%u:%g %a' "$SUID")
	[[ $mode == "0:0 6755" ]] || fail "$SUID: expected owner 0:0 and mode 6755, got $mode"
}

teardown() { guest_teardown; }

@test "setuid: control: run directly, the planted binary runs as root" {
	run "$SUID" ids
	assert_status 0
	assert_output "$UID 0 $GID 0"
}

@test "setuid: run inside the devroot, the setuid-root binary keeps the caller's ids" {
	edr_run run suid -- /suid-ids ids
	assert_status 0
	assert_output "$UID $UID $GID $GID"
}

@test "setuid: run inside the devroot, the setuid-root binary has no capability" {
	edr_run run suid -- /suid-ids caps
	assert_status 0
	assert_output 0000000000000000
}
