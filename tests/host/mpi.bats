#!/usr/bin/env bats
# What a task of an MPI job finds inside (src/enter/mpi.c), driven without a launcher: a
# run given the variables a PMIx server (srun --mpi=pmix's slurmstepd, mpirun) or PMI-2
# (srun --mpi=pmi2) gives a task. The same with a real Slurm and Open MPI: tests/slurm/mpi.bats.

load common

setup() {
	edr_setup
	create_default dev
}
# Its runs' warm keepers (the runs here have no terminal) go with the root, not 10 s later
# in another suite's test.
teardown() {
	"$EDR_BIN" remove dev >/dev/null 2>&1 || true
	edr_teardown
}

# pmix_client VAR=VALUE... -- ARGS...: enter-devroot ARGS as a PMIx server's client would
# be started: PMIX_NAMESPACE and PMIX_RANK set, and the variables given.
pmix_client() {
	local vars=()
	while [[ $1 != -- ]]; do
		vars+=("$1")
		shift
	done
	shift
	run --separate-stderr env PMIX_NAMESPACE=slurm.pmix.7.0 PMIX_RANK=0 "${vars[@]}" "$EDR_BIN" "$@"
}

userns_only() {
	is_root && skip "userns mode is about unprivileged callers"
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
}

@test "mpi: the PMIx server's directories (PMIX_SERVER_TMPDIR, Slurm's spmix_appdir in PMIX_SYSTEM_TMPDIR) are bound at their own paths, read-write" {
	userns_only
	local server=$W/spool/n1/pmix.7.0 appdir=$W/tmpfs/spmix_appdir_$(id -u)_7.0
	mkdir -p "$W/spool/n1" "$W/tmpfs"
	mkdir -m 700 "$server" "$server/pmix_dstor_ds21_42" "$appdir"
	echo from-server >"$server/pmix_dstor_ds21_42/initial-pmix_shared-segment-0"
	# As slurmstepd names them: a trailing slash, a dstore path beneath the server's.
	pmix_client PMIX_SERVER_TMPDIR="$server/" PMIX_DSTORE_21_BASE_PATH="$server//pmix_dstor_ds21_42" \
		PMIX_SYSTEM_TMPDIR="$W/tmpfs" SLURM_JOB_ID=7 SLURM_STEP_ID=0 SLURM_JOB_UID="$(id -u)" \
		-- run --mode userns dev -- sh -c "
			cat $server/pmix_dstor_ds21_42/initial-pmix_shared-segment-0
			echo from-client >$server/client && echo rank-0 >$appdir/0 && echo wrote
			cut -d' ' -f5 /proc/self/mountinfo | grep -c '^$W/'
			grep ' $server ' /proc/self/mountinfo | cut -d' ' -f6"
	assert_success
	assert_equal "$stderr" ""
	# Two mounts: the server's directory (its dstore beneath it not again) and the appdir.
	assert_line --index 0 from-server
	assert_line --index 1 wrote
	assert_line --index 2 2
	# Mounted as enroot's hook mounts it: data for the clients, nothing to run.
	assert_line --index 3 --regexp '^rw,nosuid,nodev,noexec(,|$)'
	[[ ${#lines[@]} -eq 4 ]] || fail "$output"
	assert_equal "$(cat "$server/client")" from-client
	assert_equal "$(cat "$appdir/0")" rank-0
}

@test "mpi: only a PMIx client's directories of the caller's own that no one else may write are bound: never a shared one, nor without PMIX_NAMESPACE" {
	userns_only
	local open=$W/open/pmix.7.0 mine=$W/mine/pmix.7.0
	mkdir -p "$W/open" "$W/mine"
	mkdir -m 777 "$open"
	chmod 777 "$open" # whatever the umask
	: >"$open/seen-if-bound"
	mkdir -m 700 "$mine"
	# /tmp: root's, and everyone's to write; $open: ours, but others may write it.
	for dir in /tmp "$open"; do
		pmix_client PMIX_SERVER_TMPDIR="$dir" -- run --mode userns dev -- \
			sh -c "ls -A $dir 2>/dev/null | head -3; echo listed"
		assert_success
		assert_equal "$stderr" ""
		assert_output listed # the root's own /tmp is empty; $open is not in the root
	done
	# No PMIX_NAMESPACE: not a PMIx server's client.
	run --separate-stderr env PMIX_RANK=0 PMIX_SERVER_TMPDIR="$mine" "$EDR_BIN" run --mode userns dev -- \
		sh -c "[ -e $mine ] && echo bound || echo absent"
	assert_success
	assert_output absent
}

@test "mpi: a PMIx server's directory the root cannot show (a symlink on its path inside) is one warning line, and the command runs" {
	userns_only
	flat_only "plants a symlink in the root's tree"
	local server=$W/spool/pmix.7.0 first
	mkdir -p "$W/spool"
	mkdir -m 700 "$server"
	# The path's first component past /tmp, in the root, a symlink to elsewhere.
	first=$(cut -d/ -f1-3 <<<"$W")
	[[ $first == /tmp/* ]] || skip "the test directory $W is not under /tmp"
	ln -s /elsewhere "$(root_of dev)$first"
	pmix_client PMIX_SERVER_TMPDIR="$server" -- run --mode userns dev -- echo ran
	assert_success
	assert_output ran
	assert_equal "$stderr" "enter-devroot: warning: root 'dev': $server is not bound on $server: '${first#/tmp/}' is a symlink in the root (never followed)"
	[[ ! -e $(root_of dev)/elsewhere ]] || fail "something was made through the symlink"
}

@test "mpi: an MPI task in a Landlock domain runs with Open MPI's single copy between ranks off (CMA would need ptrace across domains); the caller's own choice and --no-landlock keep it" {
	userns_only
	pmix_client -- run --mode userns dev -- sh -c 'echo "${OMPI_MCA_btl_vader_single_copy_mechanism-unset}"'
	assert_success
	if "$EDR_BIN" doctor 2>/dev/null | grep -q '^Landlock ABI  *[0-9]'; then
		assert_output none
	else
		assert_output unset # no Landlock: the ranks may read each other's memory
	fi
	pmix_client OMPI_MCA_btl_vader_single_copy_mechanism=cma -- run --mode userns dev -- \
		sh -c 'echo "$OMPI_MCA_btl_vader_single_copy_mechanism"'
	assert_output cma
	pmix_client -- run --mode userns --no-landlock dev -- sh -c 'echo "${OMPI_MCA_btl_vader_single_copy_mechanism-unset}"'
	assert_output unset
	# Not an MPI task: nothing.
	edr_run run --mode userns dev -- sh -c 'echo "${OMPI_MCA_btl_vader_single_copy_mechanism-unset}"'
	assert_output unset
}

@test "mpi: the socket PMI_FD names (PMI-2's: srun --mpi=pmi2, MPICH's hydra) stays open for the command, moved above fd 9 with PMI_FD to match; a directory fd named so is closed" {
	cat >"$W/pmi-fd.py" <<'EOF_PY'
import os, socket, subprocess, sys
ours, theirs = socket.socketpair()
low = next(n for n in range(3, 10) if n not in (ours.fileno(), theirs.fileno()))
os.dup2(theirs.fileno(), low)  # below 10: enter-devroot moves it
theirs.close()
env = dict(os.environ, PMI_FD=str(low))
r = subprocess.run([sys.argv[1], "run", "dev", "--", "sh", "-c", 'echo "pmi-fd=$PMI_FD" >&"$PMI_FD"'],
                   pass_fds=[low], env=env)
os.close(low)
print(ours.recv(100).decode().strip() or "nothing received", "exit", r.returncode, flush=True)
d = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
r = subprocess.run([sys.argv[1], "run", "dev", "--", "sh", "-c",
                    '(true <&"$PMI_FD") 2>/dev/null && echo open || echo closed'],
                   pass_fds=[d], env=dict(os.environ, PMI_FD=str(d)))
print("exit", r.returncode, flush=True)
EOF_PY
	run --separate-stderr python3 "$W/pmi-fd.py" "$EDR_BIN"
	assert_equal "$stderr" ""
	assert_success
	assert_line --index 0 --regexp '^pmi-fd=[1-9][0-9]+ exit 0$'
	assert_line --index 1 closed
	assert_line --index 2 "exit 0"
}

