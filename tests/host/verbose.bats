#!/usr/bin/env bats
# -v/--verbose and ENTER_DEVROOT_DEBUG: each step on stderr, prefixed "enter-devroot: ";
# nothing of it without them; errors stay one line.

load common

setup() {
	edr_setup
	unset ENTER_DEVROOT_DEBUG
	create_default dev
}
teardown() { edr_teardown; }

userns_works() { unshare -U true 2>/dev/null; }

# assert_stderr_has REGEX...: a line of the last edr_run's stderr matches each REGEX.
assert_stderr_has() {
	local re line found
	for re in "$@"; do
		found=
		for line in "${stderr_lines[@]}"; do
			[[ $line =~ $re ]] && found=1 && break
		done
		[[ -n $found ]] || fail "no stderr line matches '$re'
$(last_run)"
	done
}

# assert_all_prefixed: every stderr line of the last edr_run starts "enter-devroot: ".
assert_all_prefixed() {
	local line
	for line in "${stderr_lines[@]}"; do
		[[ $line == "enter-devroot: "* ]] || fail "unprefixed stderr line '$line'
$(last_run)"
	done
}

@test "verbose: -v run NAME -- true prints the mode and why, the namespaces, each mount, the filter and the command" {
	userns_works || skip "unprivileged user namespaces are not available on this host"
	edr_run -v run dev --mode userns -- true
	assert_status 0
	assert_all_prefixed
	assert_stderr_has '^enter-devroot: sysctl fs\.unprivileged_chroot=' \
		'^enter-devroot: mode userns: --mode userns$' \
		'^enter-devroot: new user, mount and PID namespaces' \
		"^enter-devroot: mount tmpfs -> $(root_of dev)/dev \\(type tmpfs, flags nosuid,noexec" \
		"^enter-devroot: mount /dev/null -> $(root_of dev)/dev/null \\(type none, flags bind\\)$" \
		"^enter-devroot: mount proc -> $(root_of dev)/proc \\(type proc, flags nosuid,nodev,noexec\\)$" \
		"^enter-devroot: mount /etc/hosts -> $(root_of dev)/etc/hosts \\(type none, flags bind\\)$" \
		"^enter-devroot: chroot into root 'dev'$" \
		'^enter-devroot: installed seccomp filter \([0-9]+ instructions\)$' \
		'^enter-devroot: exec true$'
}

@test "verbose: auto mode says which mode it chose and why" {
	edr_run --verbose run dev -- true
	assert_status 0
	assert_stderr_has '^enter-devroot: mode (chroot|userns): auto, '
}

@test "verbose: without -v, run prints nothing on stderr" {
	edr_run run dev -- true
	assert_status 0
	[[ -z $stderr ]] || fail "stderr not empty
$(last_run)"
}

@test "verbose: ENTER_DEVROOT_DEBUG=1 prints what -v prints; =0 and empty print nothing" {
	export ENTER_DEVROOT_KEEP_IDLE=0 # each run cold: a warm one joins and mounts nothing
	edr_run -v run dev -- true
	assert_status 0
	local with_v=$stderr
	[[ -n $with_v ]] || fail "-v printed nothing"
	ENTER_DEVROOT_DEBUG=1 edr_run run dev -- true
	assert_status 0
	[[ $stderr == "$with_v" ]] || fail "ENTER_DEVROOT_DEBUG=1 differs from -v:
--- -v
$with_v
$(last_run)"
	ENTER_DEVROOT_DEBUG=0 edr_run run dev -- true
	assert_status 0
	[[ -z $stderr ]] || fail "ENTER_DEVROOT_DEBUG=0 printed: $stderr"
	ENTER_DEVROOT_DEBUG= edr_run run dev -- true
	assert_status 0
	[[ -z $stderr ]] || fail "ENTER_DEVROOT_DEBUG= printed: $stderr"
}

@test "verbose: -v is not passed into the root's environment" {
	edr_run -v run dev -- env
	assert_status 0
	refute_output --partial ENTER_DEVROOT_DEBUG
}

@test "verbose: -v --root names the --root filter" {
	edr_run -v run dev --root -- true
	assert_status 0
	assert_stderr_has '^enter-devroot: installed the --root seccomp filter \([0-9]+ instructions\)$'
}

@test "verbose: -v create (the store helper) prints the source, staging and the rename" {
	edr_run -v create other --quiet
	assert_status 0
	assert_all_prefixed
	assert_stderr_has "^enter-devroot: source: .*minimal" \
		"^enter-devroot: staging 'other' in " \
		"^enter-devroot: renamed .* into place as $(root_of other)$"
}

@test "verbose: -v and --verbose after the subcommand, as before it; after the command's -- they are the command's" {
	edr_run run dev -v -- true
	assert_status 0
	assert_stderr_has "^enter-devroot: mode "
	edr_run create other --verbose --quiet
	assert_status 0
	assert_stderr_has "^enter-devroot: source: .*minimal"
	edr_run run dev -- echo -v
	assert_status 0
	assert_output -- -v
	[[ -z $stderr ]] || fail "-v after -- was taken: $stderr"
}

@test "verbose: errors stay one line: the error is the last line, whole" {
	edr_run -v run nosuch -- true
	assert_status "$EDR_TOOL_EXIT"
	assert_all_prefixed
	[[ ${stderr_lines[-1]} =~ ^enter-devroot:\ .*\'nosuch\' ]] || fail "last line is not the error
$(last_run)"
	edr_run run nosuch -- true
	assert_edr_error "$EDR_TOOL_EXIT" nosuch
}
