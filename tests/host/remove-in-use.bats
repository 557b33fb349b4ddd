#!/usr/bin/env bats
# remove of a devroot something runs in (src/common/inuse.c): refused naming one process,
# or with --force, its processes stopped (SIGTERM, then SIGKILL) and the root removed.

load common

setup() {
	edr_setup
	bg_pids=()
}
teardown() {
	local p
	for p in "${bg_pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	edr_teardown
}

# command_below PID: the first process below PID that is not enter-devroot (run's
# supervisor and, in userns mode, the job's PID 1 are), i.e. the command.
command_below() {
	local c
	for c in $(pgrep -P "$1"); do
		if [[ $(cat "/proc/$c/comm" 2>/dev/null) != enter-devroot ]]; then
			echo "$c"
			return 0
		fi
		command_below "$c" && return 0
	done
	return 1
}

# start_inside NAME CMD...: run CMD in devroot NAME in the background; sets PID, the
# command's, once it runs inside.
start_inside() {
	local name=$1
	shift
	"$EDR_BIN" run "$name" -- "$@" >/dev/null 2>&1 3>&- &
	bg_pids+=($!)
	local i
	PID=
	for i in $(seq 500); do
		PID=$(command_below "$!") && break
		sleep 0.01
	done
	[[ -n $PID ]] || fail "the command did not start inside $name"
	bg_pids+=("$PID")
}

# gone PID: PID exits (or is a zombie) within 10 s.
gone() {
	local i
	for i in $(seq 1000); do alive "$1" || return 0; sleep 0.01; done
	return 1
}

alive() { [[ -d /proc/$1 && $(awk '/^State:/ { print $2 }' "/proc/$1/status") != Z ]]; }

@test "remove: a root with a sleep running inside is refused, naming its PID and command; the root is intact" {
	create_default dev
	start_inside dev sleep 600
	before=$(snapshot "$(root_of dev)")
	edr_run remove dev
	assert_edr_error 125 "'dev'" "process $PID (sleep)" "--force"
	alive "$PID" || fail "the sleep was stopped"
	assert_equal "$(snapshot "$(root_of dev)")" "$before"
	[[ -f $(store)/meta/dev.json ]] || fail "the metadata was removed"
}

@test "remove --force: the sleep inside is stopped with SIGTERM and the root removed" {
	create_default dev
	start_inside dev sleep 600
	local t0=$SECONDS
	edr_run remove --force dev
	assert_status 0
	[[ -z $stderr ]] || fail "SIGTERM sufficed, yet: $stderr"
	[[ $((SECONDS - t0)) -lt 5 ]] || fail "took the grace period: SIGTERM did not work"
	gone "$PID" || fail "the sleep still runs"
	[[ ! -e $(root_of dev) ]] || fail "the root is still there"
	[[ ! -e $(store)/meta/dev.json ]] || fail "the metadata is still there"
}

@test "remove --force: a process ignoring SIGTERM gets SIGKILL after the grace period" {
	create_default dev
	# An ignored signal stays ignored across exec: the shell and its sleep both ignore it.
	start_inside dev sh -c 'trap "" TERM; sleep 600; echo done'
	local child i
	for i in $(seq 200); do child=$(pgrep -P "$PID" -x sleep) && break; sleep 0.01; done
	[[ -n $child ]] || fail "the shell started no sleep"
	edr_run remove --force dev
	assert_status 0
	[[ $stderr == *"did not exit on SIGTERM: sending SIGKILL"* ]] || fail "no word of SIGKILL: $(last_run)"
	gone "$PID" || fail "the shell still runs"
	gone "$child" || fail "its sleep still runs"
	[[ ! -e $(root_of dev) ]] || fail "the root is still there"
}

@test "remove: a process of yours whose working directory is inside counts too" {
	create_default dev
	bash -c 'cd "$1" && exec sleep 600' _ "$(root_of dev)/etc" 3>&- &
	bg_pids+=($!)
	local i
	for i in $(seq 200); do [[ $(cat "/proc/$!/comm" 2>/dev/null) == sleep ]] && break; sleep 0.01; done
	edr_run remove dev
	assert_edr_error 125 "process $! (sleep)"
	[[ -d $(root_of dev) ]] || fail "the root was removed"
}

@test "remove: the shell that runs remove from a directory inside the root is not in the way" {
	create_default dev
	run --separate-stderr bash -c 'cd "$1" && "$2" remove dev' _ "$(root_of dev)/etc" "$EDR_BIN"
	assert_status 0
	[[ ! -e $(root_of dev) ]] || fail "the root is still there"
}

@test "remove: several NAMEs at once; one in use and none is removed, --force removes all" {
	create_default a
	create_default b
	create_default c
	start_inside b sleep 600
	edr_run remove a b c
	assert_edr_error 125 "'b'" "process $PID (sleep)" "nothing removed"
	[[ -d $(root_of a) && -d $(root_of b) && -d $(root_of c) ]] || fail "a root was removed"
	edr_run remove a nosuch c
	assert_edr_error 125 "cannot remove 'nosuch': no such devroot; nothing removed"
	[[ -d $(root_of a) && -d $(root_of c) ]] || fail "a root was removed"
	edr_run remove a b c --force
	assert_status 0
	[[ ! -e $(root_of a) && ! -e $(root_of b) && ! -e $(root_of c) ]] || fail "a root is still there"
	edr_run list
	refute_output --partial a
}
