#!/usr/bin/env bats
# CI build environments in chroot mode (issue 15): no mounts (--bind refused, no
# /proc), cancellation through a child subreaper, --timeout, throwaway roots.

load common
load ../lib/jobs

setup_file() { guest_setup_file; }
setup() { guest_setup; }
teardown() {
	kill_job_processes
	guest_teardown
}

@test "ci: --bind is refused in chroot mode with one line, nothing created" {
	mkdir -p "$T/src"
	edr_run run --bind "$T/src:/src" dev -- true
	assert_edr_error "$EDR_TOOL_EXIT" "--bind" "chroot mode makes no mounts"
	[[ ! -e $DEV/src ]] || fail "DST was created"
}

@test "ci: doctor says /proc is absent in chroot mode" {
	edr_run doctor
	assert_status 0
	assert_line --regexp '^/proc inside, mode chroot +absent'
}

@test "ci: SIGTERM to run kills the command and its daemonised grandchild (child subreaper); run dies of SIGTERM" {
	need_probe
	start_daemon_job dev
	[[ -n $(job_processes) ]] || fail "no daemon running before the cancellation"
	kill -TERM "$JOB"
	wait_job
	assert_equal "$JOB_STATUS" 143
	assert_equal "$(job_processes)" ""
}

@test "ci: when the command exits, what it left running is killed" {
	need_probe
	# busybox sh opens /dev/null for a background job; chroot mode has no /dev.
	: > "$DEV/dev/null"
	edr_run run dev -- sh -c '/edr-probe daemon "$1" > /tmp/d.out & while ! grep -q ready /tmp/d.out; do sleep 0.1; done; exit 3' sh "$JOB_TOKEN"
	rm -f "$DEV/dev/null"
	assert_status 3
	assert_equal "$(job_processes)" ""
}

@test "ci: --timeout stops the command and everything it started, exit 124" {
	need_probe
	start_daemon_job dev --timeout 2
	wait_job
	assert_equal "$JOB_STATUS" 124
	assert_equal "$(job_processes)" ""
}

@test "ci: run --ephemeral creates a root, runs in it and removes it" {
	export XDG_DATA_HOME=$T/data
	edr_run run --ephemeral -- sh -c 'echo $ENTER_DEVROOT_NAME; exit 5'
	assert_status 5
	assert_output --regexp '^ephemeral-[0-9a-f]{16}$'
	assert_equal "$("$EDR_BIN" list)" ""
	assert_equal "$(ls -A "$XDG_DATA_HOME/enter-devroot/roots")" ""
}

@test "ci: run --ephemeral cancelled with SIGTERM removes its root; one killed with SIGKILL is reaped by doctor" {
	export XDG_DATA_HOME=$T/data
	local i
	for sig in TERM KILL; do
		"$EDR_BIN" run --ephemeral -- sleep 60 &
		JOB=$!
		for i in $(seq 300); do [[ -n $(ls -A "$XDG_DATA_HOME/enter-devroot/roots" 2>/dev/null) ]] && break; sleep 0.1; done
		sleep 0.5
		kill -"$sig" "$JOB"
		wait_job
	done
	# the KILLed run's root is left, hidden from list
	[[ -n $(ls -A "$XDG_DATA_HOME/enter-devroot/roots") ]] || fail "no root left by the killed run"
	assert_equal "$("$EDR_BIN" list)" ""
	edr_run doctor
	assert_line --regexp '^abandoned throwaway roots removed +1$'
	assert_equal "$(ls -A "$XDG_DATA_HOME/enter-devroot/roots")" ""
}
