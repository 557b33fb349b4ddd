#!/usr/bin/env bats
# Entering modes on this host (kernel without the unprivileged-chroot patch,
# unprivileged user namespaces allowed) and what doctor reports about them.

load common

setup() {
	edr_setup
	is_root && skip "the mode fallback is about unprivileged callers (root is covered by root.bats)"
	userns_works || skip "unprivileged user namespaces are not available on this host"
	create_default dev
}
teardown() { edr_teardown; }

userns_works() { unshare -U true 2>/dev/null; }

# plain_chroot_allowed: whether this kernel lets an unprivileged, no_new_privs
# process chroot (the patched kernel does; this host's normally does not).
plain_chroot_allowed() {
	[[ -r /proc/sys/fs/unprivileged_chroot ]] && [[ $(cat /proc/sys/fs/unprivileged_chroot) == 1 ]]
}

# edr_run_mode MODE SUBCOMMAND NAME ARGS...: --mode is an option of enter and run.
edr_run_mode() {
	local mode=$1 sub=$2 name=$3
	shift 3
	edr_run "$sub" "$name" "--mode=$mode" "$@"
}

@test "modes: --mode=userns works for an unprivileged user" {
	edr_run_mode userns run dev -- sh -c 'id -u; echo in'
	assert_status 0
	assert_equal "$output" "$(id -u)"$'\nin'
}

@test "modes: --mode=auto works for an unprivileged user" {
	edr_run_mode auto run dev -- sh -c 'echo in'
	assert_status 0
	assert_output in
}

@test "modes: the default mode works for an unprivileged user (auto falls back to userns)" {
	edr_run run dev -- sh -c 'echo in'
	assert_status 0
	assert_output in
}

@test "modes: --mode=chroot as an unprivileged user on an unpatched kernel fails with 125 and one line" {
	plain_chroot_allowed && skip "this kernel allows unprivileged chroot"
	edr_run_mode chroot run dev -- sh -c 'echo in'
	assert_edr_error 125
	refute_output --partial in
	[[ $stderr == *chroot* ]] || fail "the error does not say chroot was refused: $stderr"
}

@test "modes: --mode=chroot failure says what is missing (the kernel patch or sysctl)" {
	plain_chroot_allowed && skip "this kernel allows unprivileged chroot"
	edr_run_mode chroot run dev -- true
	assert_status 125
	[[ $stderr =~ kernel|sysctl|unprivileged_chroot|patch ]] || fail "does not say what is missing: $stderr"
}

@test "modes: --mode works for enter as for run" {
	run --separate-stderr bash -c 'echo "echo in; exit 5" | "$EDR_BIN" enter dev --mode=userns'
	assert_status 5
	assert_line --regexp '^(.*[$#] )?in$'
}

@test "modes: --mode=bogus is refused with 125 naming it" {
	edr_run_mode bogus run dev -- true
	assert_edr_error 125 bogus
}

@test "modes: neither chroot nor userns available gives one line saying what is missing" {
	skip "needs a host with user namespaces disabled (sysctl); covered by the QEMU guest"
}

@test "doctor: exits 0" {
	edr_run doctor
	assert_status 0
}

@test "doctor: reports user namespaces as available" {
	edr_run doctor
	assert_status 0
	local line
	line=$(grep -i userns <<< "$output$stderr" | head -1)
	[[ -n $line ]] || fail "doctor does not mention userns: $output"
	[[ $line =~ [Aa]vailable|[Yy]es|[Oo][Kk]|work ]] || fail "doctor does not say userns is available: $line"
	[[ $line != *"not available"* && $line != *unavailable* ]] || fail "doctor says userns is unavailable: $line"
}

@test "doctor: reports unprivileged chroot as unavailable on this unpatched kernel, with the reason" {
	plain_chroot_allowed && skip "this kernel allows unprivileged chroot"
	edr_run doctor
	assert_status 0
	local line
	line=$(grep -i chroot <<< "$output" | grep -vi userns | head -1)
	[[ -n $line ]] || fail "doctor does not mention chroot: $output"
	[[ $line =~ no|not|unavailable|refused|EPERM|lacks|missing ]] || fail "doctor does not say chroot is unavailable: $line"
}

@test "doctor: says whether mode chroot enters with fchroot(2) or chroot(\".\"), as this kernel has fchroot(2) or not" {
	local has
	# fchroot(2) is 472 everywhere (Linux 7.3); a kernel that has it answers EBADF here, one
	# without it ENOSYS (38).
	has=$(python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); l.syscall(472, -1, 0); print("no" if ctypes.get_errno() == 38 else "yes")')
	edr_run doctor
	assert_status 0
	if [[ $has == yes ]]; then
		assert_line --regexp '^mode chroot enters with +fchroot\(2\) on the root.s descriptor'
	else
		assert_line --regexp '^mode chroot enters with +chroot\("\."\) \(this kernel has no fchroot\(2\)'
	fi
}

@test "doctor: says which mode auto will use" {
	edr_run doctor
	assert_status 0
	assert_output --partial userns
	assert_output --regexp '[Aa]uto'
}

@test "doctor: says what a terminal gets inside in each mode (no /dev/pts in chroot mode)" {
	edr_run doctor
	assert_status 0
	assert_line --regexp '^terminal inside, mode chroot +.*no /dev/tty, /dev/pts nor /dev/ptmx'
	assert_line --regexp '^terminal inside, mode userns +.*/dev/console.*/dev/pts'
}
