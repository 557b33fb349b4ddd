#!/usr/bin/env bats
# Run by tests/guest/init after it set fs.unprivileged_chroot=0: with user
# namespaces off too, entering must fail cleanly, saying why.

load common

setup_file() { guest_setup_file; }
setup() { guest_setup; }
teardown() { guest_teardown; }

@test "sysctl off: fs.unprivileged_chroot reads 0" {
	run cat /proc/sys/fs/unprivileged_chroot
	assert_status 0
	assert_output 0
}

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
