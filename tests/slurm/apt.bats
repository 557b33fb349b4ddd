#!/usr/bin/env bats
# The plugin's --devroot-root with a real package manager: a job installs a package with
# apt-get from the --root suites' hermetic repository (tests/rootemu/mkrepo, served by nginx
# on 127.0.0.1) into a Debian root (tests/rootemu/debian-root), as the unprivileged test
# user, and a later step of the same job runs the installed program in that named root.

load common
# serve_dir, nginx_stop.
source "$BATS_TEST_DIRNAME/../fetch/nginx.bash"

setup_file() {
	export S=$BATS_FILE_TMPDIR
	[[ -n ${EDR_SPANK:-} && -z ${EDR_DEBIAN_MISSING:-} ]] || return 0
	serve_dir "$EDR_REPO"
	export SERVE_URL
}

teardown_file() { nginx_stop; }

setup() {
	[[ -n ${EDR_SPANK:-} ]] || skip "spank_enter_devroot.so was not built (apt-get install libslurm-dev, then configure)"
	[[ -z ${EDR_DEBIAN_MISSING:-} ]] || skip "$EDR_DEBIAN_MISSING"
	slurm_setup
}
teardown() { slurm_teardown; }

@test "apt: srun --devroot-root apt-get install -y, then a later step runs the program in the named root" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
srun --devroot-image=$EDR_DEBIAN --devroot-name=deb --devroot-root /bin/sh -c '
	rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*
	echo "deb [trusted=yes] $SERVE_URL/ ./" >/etc/apt/sources.list.d/edr-test.list
	echo "installing as uid \$(id -u)"
	apt-get update && apt-get install -y edr-greet' || exit 10
srun --devroot-name=deb /bin/sh -c 'echo "running as uid \$(id -u)"; edr-greet' || exit 11
EOS
	# Two steps and an install: more than one client command's bound.
	run timeout -k 5 $((3 * SLURM_TIMEOUT)) sbatch --wait "$T/job.sh"
	[[ $status -eq 0 ]] || fail "the job failed (status $status): $(cat "$T/batch.out")"
	run cat "$T/batch.out"
	assert_line "installing as uid 0"
	assert_line --partial "Setting up edr-greet (1.0)"
	assert_line "running as uid $(id -u)"
	assert_line "hello from a package installed with --root"
}
