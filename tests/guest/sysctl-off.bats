#!/usr/bin/env bats
# Run by tests/guest/init after it set fs.unprivileged_chroot=0: with user
# namespaces off too, entering must fail cleanly, saying why.

load common

setup_file() {
	local v
	read -r v < /proc/sys/fs/unprivileged_chroot ||
		fail "no fs.unprivileged_chroot: kernel without the unprivileged-chroot patch"
	[[ $v == 0 ]] || fail "fs.unprivileged_chroot is $v: tests/guest/init sets 0 before this file"
	guest_setup_file
}
setup() { guest_setup; }
teardown() { guest_teardown; }

@test "sysctl off: run fails with 125 and one line naming fs.unprivileged_chroot=0" {
	edr_run run dev -- sh -c 'echo hello'
	assert_edr_error 125 dev "fs.unprivileged_chroot=0"
	refute_output hello
}

@test "sysctl off: run --mode=chroot fails with 125 and one line naming fs.unprivileged_chroot=0" {
	edr_run run dev --mode=chroot -- sh -c 'echo hello'
	assert_edr_error 125 dev "fs.unprivileged_chroot=0"
}

@test "sysctl off: enter fails with 125 and one line, running nothing" {
	edr_run enter dev <<< "echo entered"
	assert_edr_error 125 dev "fs.unprivileged_chroot=0"
	refute_output --partial entered
}

@test "sysctl off: doctor reports chroot refused and exits 125" {
	edr_run doctor
	assert_status 125
	assert_line --regexp '^no_new_privs chroot \(mode chroot\) +refused: Operation not permitted$'
	assert_line --regexp '^fs\.unprivileged_chroot +0$'
}

@test "sysctl off: coreutils chroot with no_new_privs fails with EPERM" {
	run --separate-stderr setpriv --no-new-privs chroot "$DEV" /bin/sh -c 'echo entered'
	assert_status 125
	refute_output entered
	[[ $stderr == *"Operation not permitted"* ]] || fail "chroot(1) did not report EPERM
$(last_run)"
}
