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
	mapfile -t BEFORE < <(all_processes)
}

teardown() {
	local p
	# A stand-in slurmstepd's tasks first: they are its children.
	for p in "${PIDS[@]}"; do pkill -KILL -P "$p" 2>/dev/null || true; done
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

# The enter-devroot processes of this test (keeper and holder included: their command line
# is the task's), by the path of the binary under test, which no other suite runs; this
# suite's tests run one at a time. Those that ran before the test are not its own: an
# earlier test's warm keeper waits out its idle time (10 s by default, more on a loaded
# machine). (Their environment cannot tell: a process that has changed user namespace is
# no longer dumpable, and its /proc/PID/environ is closed.)
all_processes() { pgrep -u "$(id -u)" -f "^$EDR_BIN " || true; }
our_processes() { all_processes | grep -vxF -f <(printf '%s\n' "${BEFORE[@]:-none}") || true; }

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

# stepd DIR N CMD...: a stand-in for a step's slurmstepd on this node, DIR/slurmstepd, in
# the background: a process of that name that forks the step's N tasks there as its
# children, as Slurm's does (slurmstep.c recognises the run of the step by it), each CMD
# with SLURM_PROCID set, its output in $T/taskI.out and .err, and exits with the last
# failure. Its PID: $STEPD_PID.
stepd() {
	local dir=$1
	shift
	mkdir -p "$dir"
	cat >"$dir/slurmstepd" <<'EOS'
#!/bin/sh
n=$1 out=$2
shift 2
i=0 pids= rc=0
while [ "$i" -lt "$n" ]; do
	SLURM_PROCID=$i "$@" >"$out/task$i.out" 2>"$out/task$i.err" &
	pids="$pids $!"
	i=$((i + 1))
done
for p in $pids; do wait "$p" || rc=$?; done
exit "$rc"
EOS
	chmod +x "$dir/slurmstepd"
	local n=$1
	shift
	# Not bats's fd 3 either: a task left running would hold its output open.
	"$dir/slurmstepd" "$n" "$T" "$@" </dev/null >/dev/null 2>&1 3>&- &
	STEPD_PID=$!
	PIDS+=($!)
}

# ephemeral_step DIR N SCRIPT: the step's N tasks on this node, under stand-in slurmstepd
# DIR, each running SCRIPT in the step's throwaway root.
ephemeral_step() {
	stepd "$1" "$2" "$EDR_BIN" run --mode userns --ephemeral --from "$EDR_TEMPLATE" -- /bin/sh -c "$3"
}

# kill_step: SIGKILL the tasks of the stand-in slurmstepd $STEPD_PID, then the stand-in,
# as `scancel --signal=KILL` kills a step's processes; wait until they are all gone.
kill_step() {
	local tasks
	tasks=$(pgrep -P "$STEPD_PID") || fail "slurmstepd stand-in $STEPD_PID has no task"
	# shellcheck disable=SC2086 # one PID a word
	kill -KILL $tasks "$STEPD_PID"
	wait "$STEPD_PID" 2>/dev/null || true
	assert_all_gone
}

# wait_output N TEXT: until task N printed the line TEXT (at most 30 s).
wait_output() {
	local i
	for i in $(seq 300); do
		grep -qx "$2" "$T/task$1.out" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "task $1 never printed '$2': $(cat "$T/task$1.err")"
}

@test "stepns: run --ephemeral's tasks killed with SIGKILL, their root removed: a later job of the same id runs (job ids restart on a new cluster)" {
	local name=ephemeral-slurm-$SLURM_JOB_ID.0.n1
	NS_STATE=$(store)/locks/$name@$name.ns
	# One of the step's two tasks on n1 has started when the step is killed.
	export SLURM_STEP_TASKS_PER_NODE=2
	ephemeral_step "$T/cluster1" 1 'echo started; sleep 1000'
	wait_output 0 started
	[[ -e $(store)/locks/$name.step && -d $(root_of "$name") ]] || fail "no step state or root"
	kill_step
	edr_run remove "$name"
	assert_success
	run ls -A "$(store)/locks"
	refute_output --partial "$name.step"
	# The same job and step ids, another slurmstepd: both of the step's tasks on n1.
	ephemeral_step "$T/cluster2" 2 'grep PRETTY /etc/os-release'
	wait "$STEPD_PID" || fail "a task failed: $(cat "$T"/task*.err)"
	run cat "$T/task0.out" "$T/task1.out"
	assert_output $'PRETTY_NAME="enter-devroot minimal (busybox)"\nPRETTY_NAME="enter-devroot minimal (busybox)"'
	run cat "$T/task0.err" "$T/task1.err"
	assert_output ""
	[[ ! -e $(root_of "$name") ]] || fail "the step's root outlived it"
	run ls -A "$(store)/locks"
	refute_output --partial "$name"
}

@test "stepns: run --ephemeral's tasks killed with SIGKILL: a later job of the same id, before any doctor, gets a root of its own, not theirs" {
	local name=ephemeral-slurm-$SLURM_JOB_ID.0.n1
	NS_STATE=$(store)/locks/$name@$name.ns
	ephemeral_step "$T/cluster1" 1 ': >/left-by-the-killed-step && echo made; sleep 1000'
	wait_output 0 made
	kill_step
	ephemeral_step "$T/cluster2" 2 'ls /left-by-the-killed-step 2>/dev/null || echo fresh'
	wait "$STEPD_PID" || fail "a task failed: $(cat "$T"/task*.err)"
	run cat "$T/task0.out" "$T/task1.out"
	assert_output $'fresh\nfresh'
	[[ ! -e $(root_of "$name") ]] || fail "the step's root outlived it"
	run ls -A "$(store)/locks"
	refute_output --partial "$name"
}

@test "stepns: a step's count that a running slurmstepd other than the task's keeps is refused in one line" {
	local name=ephemeral-slurm-$SLURM_JOB_ID.0.n1 other started
	stepd "$T/cluster1" 1 sleep 1000
	other=$STEPD_PID
	started=$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$other/stat")
	mkdir -p "$(store)/locks"
	echo "1 0 1 0 $other $started" >"$(store)/locks/$name.step"
	mkdir "$T/other"
	T=$T/other ephemeral_step "$T/cluster2" 1 'echo ran'
	local rc=0
	wait "$STEPD_PID" || rc=$?
	[[ $rc -eq 125 ]] || fail "exit status $rc, not 125: $(cat "$T/other/task0.err")"
	run cat "$T/other/task0.err"
	assert_output "enter-devroot: run --ephemeral: $(store)/locks/$name.step counts the tasks of slurmstepd $other, which runs, and this task's is $STEPD_PID: two Slurm clusters with the same node names share this store?"
	[[ ! -s $T/other/task0.out ]] || fail "the command ran"
	STEPD_PID=$other
	kill_step
}
