#!/usr/bin/env bats
# coreutils' own chroot(1), run by the unprivileged user with no_new_privs
# (`setpriv --no-new-privs chroot DIR CMD`): chroot(DIR) from wherever the
# caller is, then chdir("/"), as programs written to the POSIX idiom do. The
# patched kernel allows it with fs.unprivileged_chroot=1, whatever the
# working directory; it refuses it without no_new_privs and a second time.

load common

setup_file() { guest_setup_file; }
setup() { guest_setup; }
teardown() { guest_teardown; }

@test "coreutils chroot: setpriv --no-new-privs chroot DIR CMD works from a working directory outside DIR" {
	local root_id
	root_id=$(dev_id "$DEV")
	[[ $root_id != "$(dev_id /)" ]] || fail "the root and the host's / are the same directory"
	mkdir "$T/outside"
	cd "$T/outside"
	echo "marker-$BATS_TEST_NUMBER" > "$DEV/coreutils-marker"
	run --separate-stderr setpriv --no-new-privs chroot "$DEV" \
		/bin/sh -c 'cat /coreutils-marker; pwd; stat -c %d:%i /; cd /../../..; stat -c %d:%i .'
	assert_status 0
	assert_equal "${lines[0]}" "marker-$BATS_TEST_NUMBER"
	assert_equal "${lines[1]}" /
	assert_equal "${lines[2]}" "$root_id"
	assert_equal "${lines[3]}" "$root_id"
}

@test "coreutils chroot: without no_new_privs the unprivileged chroot fails with EPERM" {
	run --separate-stderr chroot "$DEV" /bin/sh -c 'echo entered'
	assert_status 125
	refute_output entered
	[[ $stderr == *"Operation not permitted"* ]] || fail "chroot(1) did not report EPERM
$(last_run)"
}

@test "coreutils chroot: a second chroot from inside is refused (already chrooted)" {
	mkdir -p "$DEV/nested"
	run --separate-stderr setpriv --no-new-privs chroot "$DEV" \
		/bin/sh -c 'chroot /nested /bin/sh -c "echo nested"; echo "status $?"'
	assert_status 0
	refute_line nested
	assert_line --regexp '^status [1-9][0-9]*$'
}
