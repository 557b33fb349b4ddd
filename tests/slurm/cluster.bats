#!/usr/bin/env bats
# The cluster the other suites stand on: two nodes, jobs run as the test user.

load common

setup() { slurm_setup; }
teardown() { slurm_teardown; }

@test "cluster: two nodes are idle" {
	run sinfo -h -N -o '%N %t'
	assert_success
	assert_line 'n1 idle'
	assert_line 'n2 idle'
}

@test "cluster: srun -N2 -n4 runs two tasks on each node, as the test user" {
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 -l \
		sh -c 'echo "$SLURMD_NODENAME $SLURM_LOCALID $(id -un)"'
	assert_success
	[[ ${#lines[@]} -eq 4 ]] || fail "expected 4 lines, got: $output"
	me=$(id -un)
	assert_line --regexp "^[0-9]: n1 0 $me$"
	assert_line --regexp "^[0-9]: n1 1 $me$"
	assert_line --regexp "^[0-9]: n2 0 $me$"
	assert_line --regexp "^[0-9]: n2 1 $me$"
}

@test "cluster: sbatch --wait runs a batch script and returns its status" {
	printf '#!/bin/sh\n#SBATCH -N1\n#SBATCH --output=%s\necho batch on $SLURMD_NODENAME\nexit 3\n' \
		"$T/batch.out" >"$T/job.sh"
	run bounded sbatch --wait "$T/job.sh"
	assert_status 3
	run cat "$T/batch.out"
	assert_output --regexp '^batch on n[12]$'
}

@test "cluster: salloc runs srun inside the allocation" {
	run --separate-stderr bounded salloc -N2 srun -l hostname
	assert_success
	[[ ${#lines[@]} -eq 2 ]] || fail "expected 2 tasks, got: $output"
}
