#!/usr/bin/env bats
# sbatch with #SBATCH --devroot-image (spank_enter_devroot.so): by default the batch script
# runs on the host, where srun is, and the srun steps it starts inherit the options and run
# in roots; --devroot-batch=root runs the script itself in the root (pyxis's way, the
# default with pyxis_compat=1). The runner loads the plugin twice: ours, and a copy with
# pyxis_compat=1 (--container-*).

load common

setup_file() { plugin_setup_file; }
teardown_file() { http_stop; }
setup() { plugin_setup; }
teardown() { slurm_teardown; }

# A file only the host has (tests/slurm/run needs it); the minimal root has no /usr/sbin.
HOST_ONLY=/usr/sbin/slurmd
# What only the root has: its /etc/os-release says $MINIMAL.
WHERE='if [ -e '$HOST_ONLY' ]; then echo host; else echo "root: $(grep PRETTY /etc/os-release)"; fi'

@test "batch: #SBATCH --devroot-image: the script runs on the host, its srun steps on two nodes in the root" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N2
#SBATCH --output=$T/batch.out
#SBATCH --devroot-image=$EDR_TEMPLATE
echo "script: \$($WHERE)"
srun -N2 -n2 -l /bin/sh -c '$WHERE'
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "script: host"
	assert_line "0: root: $MINIMAL"
	assert_line "1: root: $MINIMAL"
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
}

@test "batch: a failing srun step fails the job with its status; its root is removed" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
#SBATCH --devroot-image=$EDR_TEMPLATE
srun /bin/sh -c 'grep -q "minimal (busybox)" /etc/os-release && exit 3'
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_status 3
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
}

@test "batch: a template named by #SBATCH is fetched by each srun step, once, before its tasks" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N2
#SBATCH --output=$T/batch.out
#SBATCH --devroot-image=t
srun -N2 -n2 -l /bin/sh -c '$WHERE'
EOS
	run env ENTER_DEVROOT_INDEX="$HTTP/index" ENTER_DEVROOT_CACHE="$T/shared" \
		timeout -k 5 "$SLURM_TIMEOUT" sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "0: root: $MINIMAL"
	assert_line "1: root: $MINIMAL"
	[[ $(calls | grep -c ' fetch t$') -eq 1 ]] || fail "srun did not fetch once: $(calls)"
	[[ $(downloads) -eq 1 ]] || fail "downloaded $(downloads) times"
}

@test "batch: #SBATCH --devroot-name: the job's steps share one root, made once, removed by the epilog" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
#SBATCH --devroot-image=$EDR_TEMPLATE
#SBATCH --devroot-name=build
echo "script: \$($WHERE)"
srun /bin/sh -c 'echo first step >/kept'
srun /bin/sh -c 'cat /kept'
ls $ROOTS
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "script: host"
	assert_line "first step"
	assert_line --regexp '^slurm-[0-9]+-build\.[A-Za-z0-9_-]+$'
	[[ $(calls | grep -c ' create ') -eq 1 ]] || fail "not created once: $(calls)"
	wait_gone 'slurm-*-build.*'
}

@test "batch: --devroot-batch=root runs the script in the root; a bad value fails sbatch" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
#SBATCH --devroot-image=$EDR_TEMPLATE
#SBATCH --devroot-batch=root
echo "script: \$($WHERE)"
echo "job \$SLURM_JOB_ID"
exit 4
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_status 4
	run cat "$T/batch.out"
	assert_line "script: root: $MINIMAL"
	assert_line --regexp '^job [0-9]+$'
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
	run --separate-stderr bounded sbatch --devroot-batch=inside --wrap true
	assert_failure
	[[ $stderr == *"--devroot-batch 'inside': not host or root"* ]] || fail "$(last_run)"
}

@test "batch: DEVROOT_BATCH=root stands in for the option, --devroot-batch=host overrides it" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
#SBATCH --devroot-image=$EDR_TEMPLATE
echo "script: \$($WHERE)"
EOS
	run env DEVROOT_BATCH=root timeout -k 5 "$SLURM_TIMEOUT" sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "script: root: $MINIMAL"
	run env DEVROOT_BATCH=root timeout -k 5 "$SLURM_TIMEOUT" sbatch --wait --devroot-batch=host "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "script: host"
}

@test "batch: pyxis_compat=1: #SBATCH --container-image runs the script in the root, as pyxis does; --container-batch=host does not" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
#SBATCH --container-image=$EDR_TEMPLATE
echo "script: \$($WHERE)"
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "script: root: $MINIMAL"
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
#SBATCH --container-image=$EDR_TEMPLATE
#SBATCH --container-batch=host
echo "script: \$($WHERE)"
srun /bin/sh -c '$WHERE'
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "script: host"
	assert_line "root: $MINIMAL"
}

@test "batch: salloc --devroot-image: the shell is the host's, srun steps in the root" {
	run --separate-stderr timeout -k 5 "$SLURM_TIMEOUT" salloc -N1 --devroot-image="$EDR_TEMPLATE" \
		/bin/sh -c "echo \"shell: \$($WHERE)\"; srun /bin/sh -c '$WHERE'"
	assert_success
	assert_line "shell: host"
	assert_line "root: $MINIMAL"
}

@test "batch: a step's own options override the script's (--no-devroot-root after #SBATCH --devroot-root); without DEVROOT_IMAGE a step runs on the host" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
#SBATCH --devroot-image=$EDR_TEMPLATE
#SBATCH --devroot-root
srun /bin/sh -c 'echo "inherited: \$(id -u)"'
srun --no-devroot-root /bin/sh -c 'echo "turned off: \$(id -u)"'
env -u DEVROOT_IMAGE srun /bin/sh -c 'echo "unset: \$($WHERE)"'
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "inherited: 0"
	assert_line "turned off: $(id -u)"
	assert_line "unset: host"
}
