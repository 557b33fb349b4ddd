#!/usr/bin/env bats
# The namespaces a Slurm job step's tasks share on a node in userns mode (src/enter/stepns.c),
# driven here without Slurm: a task is a run given the variables srun gives each task. The
# same on a real two-node Slurm: tests/slurm/srun.bats and spank.bats.

load common

setup() {
	edr_setup
	is_root && skip "userns mode is about unprivileged callers"
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	create_default r
	# Job and step ids unique to this test: other runs share the test user, not the store.
	export SLURM_JOB_ID=$((RANDOM + 1000)) SLURM_STEP_ID=0 SLURMD_NODENAME=n1 SLURM_NODEID=0
	export SLURM_STEP_TASKS_PER_NODE=2
	NS_STATE=$(store)/locks/r@ephemeral-slurm-$SLURM_JOB_ID.0.n1.ns
	PIDS=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	edr_teardown
}

# task N CMD: run CMD in root r as task N of the step, in the background.
task() {
	local n=$1
	shift
	SLURM_PROCID=$n "$EDR_BIN" run --mode userns r -- /bin/sh -c "$*" >"$T/task$n.out" 2>"$T/task$n.err" &
	PIDS+=($!)
}

# wait_for FILE: at most 30 s.
wait_for() {
	local i
	for i in $(seq 300); do
		[[ -e $1 ]] && return 0
		sleep 0.1
	done
	fail "$1 never appeared: $(cat "$T"/task*.err)"
}

# keeper: the PID recorded in the state file, once there is one (at most 30 s: the file is
# made empty, then written).
keeper() {
	local i k
	for i in $(seq 300); do
		k=$(cut -d' ' -f1 "$NS_STATE" 2>/dev/null)
		[[ $k =~ ^[0-9]+$ ]] && { echo "$k"; return 0; }
		sleep 0.1
	done
	fail "no keeper recorded in $NS_STATE"
}

# The enter-devroot processes of this suite (keeper and holder included: their command line
# is the task's), by the path of the binary under test, which no other suite runs; this
# suite's tests run one at a time. (Their environment cannot tell: a process that has
# changed user namespace is no longer dumpable, and its /proc/PID/environ is closed.)
our_processes() { pgrep -u "$(id -u)" -f "^$EDR_BIN " || true; }

assert_all_gone() {
	local i left
	for i in $(seq 100); do
		left=$(our_processes)
		[[ -z $left && ! -e $NS_STATE && ! -e ${NS_STATE}hold ]] && return 0
		sleep 0.1
	done
	fail "left: processes '$left', state: $(ls "$(store)/locks")"
}

@test "stepns: two tasks of a step share /dev/shm and see each other in /proc; the keeper is PID 1" {
	task 0 'echo $$ >/dev/shm/a; while [ ! -e /dev/shm/b ]; do sleep 0.1; done; [ -d /proc/$(cat /dev/shm/b) ] && echo sees-b; tr "\0" " " </proc/1/cmdline; echo; : >/dev/shm/a-done; while [ ! -e /dev/shm/b-done ]; do sleep 0.1; done'
	task 1 'echo $$ >/dev/shm/b; while [ ! -e /dev/shm/a ]; do sleep 0.1; done; [ -d /proc/$(cat /dev/shm/a) ] && echo sees-a; : >/dev/shm/b-done; while [ ! -e /dev/shm/a-done ]; do sleep 0.1; done'
	wait "${PIDS[@]}"
	run cat "$T/task0.out" "$T/task1.out"
	assert_line sees-b
	assert_line sees-a
	assert_line --regexp '^.*enter-devroot run --mode userns r'
	assert_all_gone
}

@test "stepns: the last task to leave ends what the others left running" {
	task 0 'setsid sleep 1000 </dev/null >/dev/null 2>&1 & : >/dev/shm/started; sleep 1'
	task 1 'while [ ! -e /dev/shm/started ]; do sleep 0.1; done; sleep 2'
	wait "${PIDS[@]}"
	run pgrep -u "$(id -u)" -f '^sleep 1000$'
	[[ -z $output ]] || {
		# Not ours alone to judge: another run's sleep would have another environment.
		local p
		for p in $output; do
			tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -q "^ENTER_DEVROOT_NAME=r$" &&
				fail "the daemon task 0 left outlived the step"
		done
	}
	assert_all_gone
}

@test "stepns: a task killed with SIGKILL never leaves: the keeper's holder ends the namespaces" {
	task 0 'sleep 1000'
	local k
	k=$(keeper)
	[[ -d /proc/$k ]] || fail "no keeper $k"
	# SIGKILL to run itself: its job child and the command die of their parent-death
	# signal, the kernel drops run's lock, and nothing else is left to notice.
	kill -KILL "${PIDS[0]}"
	assert_all_gone
	[[ ! -d /proc/$k ]] || fail "keeper $k still runs"
}

@test "stepns: a state file naming a process that is not our keeper is not joined" {
	mkdir -p "$(dirname "$NS_STATE")"
	# PID 1 of the host, with its true start time: a process of root's.
	local started
	started=$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/1/stat)
	echo "1 $started 1" >"$NS_STATE"
	task 0 'tr "\0" " " </proc/1/cmdline'
	wait "${PIDS[0]}" || fail "the task failed: $(cat "$T/task0.err")"
	run cat "$T/task0.out"
	assert_output --regexp '^.*enter-devroot run --mode userns r'
	assert_all_gone
}

@test "stepns: ENTER_DEVROOT_STEP_PRIVATE=1: each task has namespaces of its own" {
	export ENTER_DEVROOT_STEP_PRIVATE=1
	task 0 ': >/dev/shm/a; sleep 2; ls /dev/shm'
	task 1 ': >/dev/shm/b; sleep 2; ls /dev/shm'
	wait "${PIDS[@]}"
	run cat "$T/task0.out" "$T/task1.out"
	assert_output $'a\nb'
	[[ ! -e $NS_STATE ]] || fail "a state file was made"
}

@test "stepns: run --ephemeral's tasks killed with SIGKILL: the next doctor removes the root and the step's state" {
	local name=ephemeral-slurm-$SLURM_JOB_ID.0.n1
	SLURM_PROCID=0 "$EDR_BIN" run --mode userns --ephemeral --from "$EDR_TEMPLATE" -- sleep 1000 \
		>"$T/task0.out" 2>"$T/task0.err" &
	PIDS+=($!)
	NS_STATE=$(store)/locks/$name@$name.ns
	wait_for "$NS_STATE"
	[[ -e $(store)/locks/$name.step && -d $(root_of "$name") ]] || fail "no step state or root"
	kill -KILL "${PIDS[0]}"
	assert_all_gone
	edr_run doctor
	[[ ! -e $(root_of "$name") ]] || fail "the root was not reaped"
	run ls -A "$(store)/locks"
	refute_output --partial "$name"
}

@test "stepns: run --ephemeral: a step's root its creator never made (killed with SIGKILL) is made by the next task" {
	local name=ephemeral-slurm-$SLURM_JOB_ID.0.n1
	mkdir -p "$(store)/locks"
	# What the first task leaves when it is killed while it creates the root: it joined, and
	# the root was neither made nor failed (slurm-job.h's count: joined left created failed).
	echo "1 0 0 0" >"$(store)/locks/$name.step"
	SLURM_PROCID=1 edr_run run --ephemeral --from "$EDR_TEMPLATE" -- grep PRETTY /etc/os-release
	assert_success
	assert_output 'PRETTY_NAME="enter-devroot minimal (busybox)"'
	# The killed task never leaves: the root waits for the reaper, which finds it free.
	[[ -d $(root_of "$name") ]] || fail "no root $name"
	edr_run doctor
	[[ ! -e $(root_of "$name") ]] || fail "the root was not reaped"
	run ls -A "$(store)/locks"
	refute_output --partial "$name"
}
