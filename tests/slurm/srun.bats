#!/usr/bin/env bats
# enter-devroot under plain srun, with no plugin and no admin: a root the user made with
# `create` is entered by every task of a job, on every node, by the binary the user runs
# by hand.

load common

setup_file() { http_serve_template; }
teardown_file() { http_stop; }
setup() {
	slurm_setup
	MARK=$(wc -l <"$S/http.log")
}
teardown() { slurm_teardown; }

@test "srun: doctor runs in a job step" {
	run --separate-stderr srun_ -N1 -n1 enter-devroot doctor
	assert_success
}

@test "srun: every task of -N2 -n4 runs inside the root made by create" {
	enter-devroot create dev
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 -l \
		enter-devroot run dev -- grep PRETTY /etc/os-release
	assert_success
	[[ ${#lines[@]} -eq 4 ]] || fail "expected 4 lines, got: $output"
	for i in 0 1 2 3; do assert_line "$i: $MINIMAL"; done
}

@test "srun: a task's exit status comes back through srun" {
	enter-devroot create dev
	run --separate-stderr srun_ -N1 -n1 enter-devroot run dev -- sh -c 'exit 7'
	assert_status 7
}

@test "srun: a missing root fails the step with enter-devroot's error on srun's stderr" {
	run --separate-stderr srun_ -N1 -n1 enter-devroot run nosuch -- true
	assert_status 125
	[[ $stderr == *"enter-devroot: "*nosuch* ]] || fail "no error naming the root
$(last_run)"
}

@test "srun: sbatch --wait runs enter-devroot in the batch step" {
	enter-devroot create dev
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
enter-devroot run dev -- grep PRETTY /etc/os-release
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_output "$MINIMAL"
}

@test "srun: run --ephemeral: a step's tasks on a node share one root, made once per node, gone at the end" {
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 \
		enter-devroot run --ephemeral --from "$EDR_TEMPLATE" -- \
		/bin/sh -c 'me=$$.$(cat /proc/sys/kernel/random/uuid 2>/dev/null || echo x); : >"/tmp/task.$me"; sleep 2; echo "$(ls -di / | cut -d" " -f1) $(ls /tmp | grep -c "^task\.")"'
	assert_success
	[[ ${#lines[@]} -eq 4 ]] || fail "expected 4 lines
$(last_run)"
	# Two roots (one per node), each holding the files of its node's two tasks.
	[[ $(cut -d' ' -f1 <<<"$output" | sort -u | wc -l) -eq 2 ]] || fail "not one root per node
$(last_run)"
	[[ $(cut -d' ' -f2 <<<"$output" | sort -u) == 2 ]] || fail "a node's tasks do not share the root
$(last_run)"
	[[ -z $(ls -A "$XDG_DATA_HOME/enter-devroot/roots") ]] || fail "roots left: $(ls -A "$XDG_DATA_HOME/enter-devroot/roots")"
	[[ -z $(ls "$XDG_DATA_HOME/enter-devroot/locks" | grep '\.step$') ]] || fail "step state left"
}

@test "srun: run --ephemeral: a root that cannot be made fails every task of the node, once each" {
	echo "not an archive" >"$T/bad.tar.gz"
	run --separate-stderr srun_ -N1 -n2 enter-devroot run --ephemeral --from "$T/bad.tar.gz" -- /bin/sh -c ": >$T/ran"
	assert_status 125
	[[ $stderr == *"bad.tar.gz"* ]] || fail "no error naming the archive
$(last_run)"
	[[ $stderr == *"the root of this job step on this node could not be created"* ]] ||
		fail "the second task did not learn of the first one's failure
$(last_run)"
	[[ ! -e $T/ran ]] || fail "the command ran"
	[[ -z $(ls -A "$XDG_DATA_HOME/enter-devroot/roots") ]] || fail "roots left"
	[[ -z $(ls "$XDG_DATA_HOME/enter-devroot/locks" | grep '\.step$') ]] || fail "step state left"
}

@test "srun: userns mode: a step's tasks on a node share one /proc and /dev/shm, each node its own" {
	enter-devroot create dev
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 \
		enter-devroot run --mode userns dev -- /bin/sh -c "$SHARE_PROBE"
	assert_success
	assert_namespaces_shared
	assert_no_step_namespaces_left
}

@test "srun: run --ephemeral: the tasks of a node share namespaces too, and all goes at the end" {
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 \
		enter-devroot run --mode userns --ephemeral --from "$EDR_TEMPLATE" -- /bin/sh -c "$SHARE_PROBE"
	assert_success
	assert_namespaces_shared
	assert_no_step_namespaces_left
	[[ -z $(ls -A "$XDG_DATA_HOME/enter-devroot/roots") ]] || fail "roots left"
}

@test "srun: a process one task leaves running in the shared namespaces ends with the step" {
	enter-devroot create dev
	local nap=$((100000 + RANDOM))
	run --separate-stderr srun_ -N1 -n2 enter-devroot run --mode userns dev -- \
		/bin/sh -c "[ \$SLURM_PROCID = 0 ] && setsid sleep $nap </dev/null >/dev/null 2>&1 & sleep 1"
	assert_success
	assert_no_step_namespaces_left "sleep $nap"
}

@test "srun: ENTER_DEVROOT_STEP_PRIVATE=1 gives each task namespaces of its own" {
	enter-devroot create dev
	ENTER_DEVROOT_STEP_PRIVATE=1 run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 \
		enter-devroot run --mode userns dev -- /bin/sh -c "$SHARE_PROBE"
	assert_success
	[[ $(grep -cE '^n[12] 1 1$' <<<"$output") -eq 4 ]] || fail "tasks shared namespaces
$(last_run)"
}

@test "srun: run --ephemeral --name: the job's root on each node outlives its steps, and goes after the job" {
	local roots=$XDG_DATA_HOME/enter-devroot/roots
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N2 --ntasks-per-node=2
#SBATCH --output=$T/batch.out
srun enter-devroot run --ephemeral --name build --from "$EDR_TEMPLATE" -- /bin/sh -c ': >/step1.\$SLURM_PROCID'
# Between the steps: the roots are free, but their job runs: a reaper keeps them.
enter-devroot doctor >/dev/null
srun enter-devroot run --ephemeral --name build -- /bin/sh -c 'echo "\$SLURMD_NODENAME \$(ls / | grep -c "^step1\\\\.")"'
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	# Each task of step 2 sees what the two step-1 tasks of its node left.
	[[ $(grep -cE '^n[12] 2$' <<<"$output") -eq 4 ]] || fail "step 2 did not find step 1's root
$(last_run)"
	[[ $(ls "$roots" | grep -c '^ephemeral-slurm-[0-9]*-build\.n[12]$') -eq 2 ]] || fail "not one root per node kept: $(ls -A "$roots")"
	[[ -z $(ls "$XDG_DATA_HOME/enter-devroot/locks" | grep '\.step$') ]] || fail "step state left"
	# Once Slurm says the job is over, the next doctor removes them.
	local i
	for i in $(seq 20); do
		enter-devroot doctor >/dev/null 2>&1 || true
		[[ -n $(ls -A "$roots") ]] || break
		sleep 0.5
	done
	[[ -z $(ls -A "$roots") ]] || fail "the job's roots outlived it: $(ls -A "$roots")"
}

@test "srun: run --ephemeral --name outside a job step fails, saying why" {
	run --separate-stderr env -u SLURM_JOB_ID enter-devroot run --ephemeral --name build -- true
	assert_status 125
	[[ $stderr == *"--name build: only a task of a Slurm job step"* ]] || fail "$(last_run)"
	run --separate-stderr enter-devroot run --ephemeral --name 'a/b' -- true
	assert_status 125
	[[ $stderr == *"invalid --name 'a/b'"* ]] || fail "$(last_run)"
}

@test "srun: scancel while run --ephemeral --from URL downloads: srun ends, no root, a sound cache; the next job resumes" {
	local cache=$XDG_CACHE_HOME/enter-devroot url=$HTTP/@rate=50000/t.tar.gz # 20 s for 1 MB
	srun_ -N2 -n4 --ntasks-per-node=2 enter-devroot run --ephemeral --from "$url" --sha256 "$TSHA" -- \
		/bin/sh -c ": >$T/ran" >"$T/first.out" 2>&1 &
	# The rest of the download takes 18 s.
	cancel_pull $! "$cache" 10 "$T/first.out"
	[[ ! -e $T/ran ]] || fail "the command ran"
	[[ -z $(ls -A "$XDG_DATA_HOME/enter-devroot/roots") ]] || fail "roots left: $(ls -A "$XDG_DATA_HOME/enter-devroot/roots")"
	[[ -z $(ls "$XDG_DATA_HOME/enter-devroot/locks" | grep '\.step$') ]] || fail "step state left"

	MARK=$(wc -l <"$S/http.log")
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 \
		enter-devroot run --ephemeral --from "$url" --sha256 "$TSHA" -- grep PRETTY /etc/os-release
	assert_success
	[[ $(grep -cx "$MINIMAL" <<<"$output") -eq 4 ]] || fail "$(last_run)"
	# Only what was missing: one request, from the byte the cancelled download had reached.
	assert_resumed "$cache"
	[[ -z $(ls -A "$XDG_DATA_HOME/enter-devroot/roots") ]] || fail "roots left"
	[[ -z $(ls "$XDG_DATA_HOME/enter-devroot/locks" | grep '\.step$') ]] || fail "step state left"
}

@test "srun: a step's count its tasks killed with SIGKILL left: remove takes it with the root, and a later job of the same id is not misled by it (job ids restart on a new cluster)" {
	local locks=$XDG_DATA_HOME/enter-devroot/locks roots=$XDG_DATA_HOME/enter-devroot/roots
	local job next name i nap=$((100000 + RANDOM))
	srun_ -w n1 -N1 -n2 enter-devroot run --ephemeral --from "$EDR_TEMPLATE" -- \
		/bin/sh -c "echo started; sleep $nap" >"$T/killed.out" 2>&1 &
	local s=$!
	for i in $(seq 300); do
		[[ $(grep -c '^started$' "$T/killed.out" 2>/dev/null) -eq 2 ]] && break
		sleep 0.1
	done
	[[ $(grep -c '^started$' "$T/killed.out") -eq 2 ]] || fail "the step did not start: $(cat "$T/killed.out")"
	job=$(squeue -h -u "$(id -un)" -o %i)
	[[ $job =~ ^[0-9]+$ ]] || fail "not one job: '$job'"
	name=ephemeral-slurm-$job.0.n1
	# SIGKILL to every process of the tasks (their enter-devroot, its keeper and holder, the
	# command), as the OOM killer or KillWait's end would: no task can tidy up. (scancel
	# --signal=KILL of a job srun made cancels its step with SIGTERM first.)
	pkill -KILL -u "$(id -un)" -f "sleep $nap"
	wait "$s" || true
	for i in $(seq 600); do
		[[ -z $(squeue -h -j "$job" -o %T 2>/dev/null) ]] && break
		sleep 0.1
	done
	[[ -s $locks/$name.step && -d $roots/$name ]] || fail "the killed step left no count or root: $(ls -A "$locks" "$roots")"
	# A later job whose step 0 on n1 has the killed one's name, as a new cluster's job of
	# the same id would: held until its count is the killed step's.
	next=$(sbatch --parsable --hold -w n1 -N1 -n2 --output="$T/next.out" \
		--wrap "srun enter-devroot run --ephemeral --from $EDR_TEMPLATE -- grep PRETTY /etc/os-release")
	cp "$locks/$name.step" "$locks/ephemeral-slurm-$next.0.n1.step"
	run --separate-stderr enter-devroot remove "$name"
	assert_success
	[[ ! -e $locks/$name.step ]] || fail "remove left the step's count"
	scontrol release "$next"
	for i in $(seq 600); do
		[[ -z $(squeue -h -j "$next" -o %T 2>/dev/null) ]] && break
		sleep 0.1
	done
	run cat "$T/next.out"
	assert_output "$MINIMAL"$'\n'"$MINIMAL"
	[[ -z $(ls -A "$roots") ]] || fail "roots left: $(ls -A "$roots")"
	[[ -z $(ls "$locks" | grep '\.step$') ]] || fail "step state left: $(ls -A "$locks")"
}
