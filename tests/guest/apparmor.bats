#!/usr/bin/env bats
# AppArmor and the unprivileged chroot(2) (kernel series patch 3,
# "apparmor: Mediate unprivileged chroot(2)"). tests/guest/init loads
# apparmor.profiles as root; here the unprivileged user asks AppArmor to
# confine its next exec (/proc/self/attr/apparmor/exec, as aa-exec does) and
# runs coreutils' chroot with no_new_privs. Refused for a profile without
# "capability sys_chroot", allowed with it, always refused for a
# chroot_relative profile; an unconfined task is not affected.

load common

setup_file() { guest_setup_file; }
setup() {
	guest_setup
	[[ -f ${EDR_PREPARED:-}/apparmor-loaded ]] ||
		fail "tests/guest/init did not load apparmor.profiles (AppArmor off in the kernel, or no apparmor_parser on the host: see results/init.log)"
}
teardown() { guest_teardown; }

# in_profile PROFILE CMD...: run CMD confined by PROFILE.
in_profile() {
	local profile=$1
	shift
	run --separate-stderr bash -c \
		'printf "exec %s" "$1" > /proc/self/attr/apparmor/exec || exit 99; shift; exec "$@"' \
		in_profile "$profile" "$@"
}

# chroot_in PROFILE: setpriv --no-new-privs chroot DEV, confined by PROFILE.
chroot_in() {
	in_profile "$1" setpriv --no-new-privs chroot "$DEV" /bin/sh -c 'echo entered'
}

assert_chroot_refused() {
	assert_status 125
	refute_output entered
	[[ $stderr == *"Operation not permitted"* ]] || fail "chroot(1) did not report EPERM
$(last_run)"
}

@test "apparmor: the profiles are loaded and confine the next exec" {
	local p
	for p in edr-chroot-denied edr-chroot-allowed edr-chroot-relative; do
		in_profile "$p" cat /proc/self/attr/apparmor/current
		assert_status 0
		assert_output "$p (enforce)"
	done
}

@test "apparmor: unconfined, the unprivileged chroot works (control)" {
	run --separate-stderr setpriv --no-new-privs chroot "$DEV" /bin/sh -c 'echo entered'
	assert_status 0
	assert_output entered
}

@test "apparmor: a profile without capability sys_chroot refuses the unprivileged chroot" {
	chroot_in edr-chroot-denied
	assert_chroot_refused
}

@test "apparmor: a profile with capability sys_chroot allows the unprivileged chroot" {
	chroot_in edr-chroot-allowed
	assert_status 0
	assert_output entered
}

@test "apparmor: a chroot_relative profile refuses it even with capability sys_chroot" {
	chroot_in edr-chroot-relative
	assert_chroot_refused
}
