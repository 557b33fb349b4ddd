#!/usr/bin/env bats
# enter-devroot under plain srun, with no plugin and no admin: a root the user made with
# `create` is entered by every task of a job, on every node, by the binary the user runs
# by hand.

load common

setup() { slurm_setup; }
teardown() { slurm_teardown; }

MINIMAL='PRETTY_NAME="enter-devroot minimal (busybox)"'

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
