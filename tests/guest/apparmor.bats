#!/usr/bin/env bats
# AppArmor and the unprivileged chroot(2) and fchroot(2) (kernel series v8
# patch 5, "apparmor: Mediate unprivileged chroot(2) and fchroot(2)").
# tests/guest/init loads apparmor.profiles as root; here the unprivileged user
# asks AppArmor to confine its next exec (/proc/self/attr/apparmor/exec, as
# aa-exec does) and runs coreutils' chroot, or edr-attack's fchroot, with
# no_new_privs. Refused for a profile without "capability sys_chroot", with
# an audit record, allowed with it, always refused for a chroot_relative
# profile, with an audit record saying so, and allowed (logged) in complain
# mode; an unconfined task is not affected, nor is entering failfs; the
# feature is advertised in apparmorfs.

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

# The kernel log's lines from now on: mark_log, then new_log_lines.
mark_log() { log_mark=$(dmesg | wc -l); }
new_log_lines() { dmesg | tail -n +$((log_mark + 1)); }

# assert_audit FIELD...: one new kernel log line holds every FIELD.
assert_audit() {
	local lines f
	lines=$(new_log_lines | grep 'audit: type=1400')
	for f; do
		lines=$(grep -F -- "$f" <<< "$lines")
	done
	[[ -n $lines ]] || fail "no audit record with $*; new kernel log lines:
$(new_log_lines)"
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
	in_profile edr-chroot-relative-complain cat /proc/self/attr/apparmor/current
	assert_status 0
	assert_output "edr-chroot-relative-complain (complain)"
}

@test "apparmor: unconfined, the unprivileged chroot works (control)" {
	run --separate-stderr setpriv --no-new-privs chroot "$DEV" /bin/sh -c 'echo entered'
	assert_status 0
	assert_output entered
}

@test "apparmor: a profile without capability sys_chroot refuses the unprivileged chroot, with an audit record" {
	mark_log
	chroot_in edr-chroot-denied
	assert_chroot_refused
	assert_audit 'apparmor="DENIED"' 'operation="capable"' 'profile="edr-chroot-denied"' 'capname="sys_chroot"'
}

@test "apparmor: a profile with capability sys_chroot allows the unprivileged chroot" {
	chroot_in edr-chroot-allowed
	assert_status 0
	assert_output entered
}

@test "apparmor: a chroot_relative profile refuses it even with capability sys_chroot, with an audit record saying why" {
	mark_log
	chroot_in edr-chroot-relative
	assert_chroot_refused
	assert_audit 'apparmor="DENIED"' 'operation="chroot"' 'info="chroot_relative"' 'profile="edr-chroot-relative"' "path=\"$DEV\""
}

@test "apparmor: a chroot_relative profile in complain mode allows it and logs it as ALLOWED" {
	mark_log
	chroot_in edr-chroot-relative-complain
	assert_status 0
	assert_output entered
	assert_audit 'apparmor="ALLOWED"' 'operation="chroot"' 'info="chroot_relative"' 'profile="edr-chroot-relative-complain"'
}

@test "apparmor: fchroot(2) of a directory is mediated as chroot(2): refused without capability sys_chroot, allowed with it" {
	[[ -x ${EDR_ATTACK:-} ]] || fail "edr-attack was not built (see tests/guest/run's stderr)"
	in_profile edr-chroot-denied "$EDR_ATTACK" fchroot "$DEV"
	assert_output EPERM
	in_profile edr-chroot-allowed "$EDR_ATTACK" fchroot "$DEV"
	assert_status 0
	assert_output ok
}

@test "apparmor: entering failfs (fchroot(FD_FAILFS_ROOT)) is not mediated, as in Linux 7.3" {
	[[ -x ${EDR_ATTACK:-} ]] || fail "edr-attack was not built (see tests/guest/run's stderr)"
	in_profile edr-chroot-denied "$EDR_ATTACK" fchroot-failfs
	assert_status 0
	assert_output ok
}

@test "apparmor: the mediation is advertised as features/caps/unprivileged_chroot" {
	run cat /sys/kernel/security/apparmor/features/caps/unprivileged_chroot
	assert_status 0
	assert_output yes
}
