#!/usr/bin/env bats
# doctor and --mode on the patched kernel with user namespaces switched off.

load common

setup_file() { guest_setup_file; }
setup() { guest_setup; }
teardown() { guest_teardown; }

@test "doctor: exits 0, reports the no_new_privs chroot mode available and auto using it" {
	edr_run doctor
	assert_status 0
	assert_line --regexp '^no_new_privs chroot \(mode chroot\) +works$'
	assert_line --regexp '^fs\.unprivileged_chroot +1$'
	assert_line --regexp '^mode auto uses +chroot$'
}

@test "doctor: reports user namespaces unavailable, naming the sysctl" {
	edr_run doctor
	assert_line --regexp '^user namespaces \(mode userns\) +unavailable: user\.max_user_namespaces=0$'
}

@test "modes: --mode=chroot works" {
	edr_run run dev --mode=chroot -- sh -c 'echo hello'
	assert_status 0
	assert_output hello
}

@test "modes: --mode=userns fails with 125 and one line saying user namespaces are off" {
	edr_run run dev --mode=userns -- sh -c 'echo hello'
	assert_edr_error 125 dev "user.max_user_namespaces=0"
	refute_output hello
}

@test "modes: enter --mode=chroot works with the shell fed from stdin" {
	edr_run enter dev --mode=chroot <<< "echo via-chroot"
	assert_status 0
	assert_line --regexp '(^|\$ )via-chroot$'
}
