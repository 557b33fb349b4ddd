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

@test "doctor: mode chroot enters with fchroot(2) on this kernel (Linux 7.3)" {
	edr_run doctor
	assert_status 0
	assert_line --regexp '^mode chroot enters with +fchroot\(2\) on the root.s descriptor'
}

@test "modes: chroot mode enters through the root's descriptor with fchroot(2) (-v says so)" {
	edr_run -v run dev --mode=chroot -- sh -c 'echo hello'
	assert_status 0
	assert_output hello
	[[ $stderr == *"entered root 'dev' with fchroot(2)"* ]] || fail "$stderr"
}

@test "modes: where fchroot(2) is ENOSYS (an older kernel, for real: seccomp), chroot(\".\") enters, and doctor says so" {
	[[ -x ${EDR_ATTACK:-} ]] || fail "edr-attack was not built (see tests/guest/run's stderr)"
	run --separate-stderr "$EDR_ATTACK" no-fchroot "$EDR_BIN" -v run dev --mode=chroot -- sh -c 'echo hello'
	assert_status 0
	assert_output hello
	[[ $stderr == *"entered root 'dev' with chroot(\".\")"* ]] || fail "$stderr"
	run --separate-stderr "$EDR_ATTACK" no-fchroot "$EDR_BIN" doctor
	assert_status 0
	assert_line --regexp '^mode chroot enters with +chroot\("\."\) \(this kernel has no fchroot\(2\)'
	assert_line --regexp '^no_new_privs chroot \(mode chroot\) +works$'
}
