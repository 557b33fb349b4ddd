#!/usr/bin/env bats
# MPI jobs whose ranks run in roots, on the two-node cluster: Debian's Open MPI through
# slurmstepd's PMIx server (srun --mpi=pmix: mpi_pmix_v4, which needs libpmix-dev), and a
# PMI-2 client on Slurm's libpmi2 (srun --mpi=pmi2), in the plugin's form
# (--devroot-image) and in plain `srun enter-devroot run --ephemeral`. The root is the
# embedded busybox template with the host's /usr, /lib, /lib64, /etc/openmpi and
# /etc/alternatives bound read-only (no downloads), and the programs, compiled here, at
# their own path. Each test runs the same srun on the bare host first: the ranks in roots
# must print what it printed, and nothing on stderr that it did not (srun -Q: not srun's
# own "queued and waiting for resources", which depends on the previous test's job).
#
# Both nodes are this host, under one host name: on the bare host the ranks of n1 and n2
# would meet in its one /dev/shm, where Open MPI names its shared-memory segments by host
# name and local rank, so that n1's rank 0 and n2's take each other's (a crash, or a hang,
# now and then). So the two-node tests use TCP only (btl self,tcp), and shared memory is
# tested between the two ranks of one node. (In roots each node has a /dev/shm of its own.)

load common

ROOT_BINDS=(/usr /lib /lib64 /etc/openmpi /etc/alternatives)

setup_file() {
	export PROG=$BATS_FILE_TMPDIR/prog MPI_MISSING= PMI2_MISSING=
	mkdir -p "$PROG"
	if ! command -v mpicc >/dev/null; then
		MPI_MISSING="no mpicc (apt-get install openmpi-bin libopenmpi-dev)"
	elif [[ $(cc -print-file-name=libpmix.so) != /* ]]; then
		MPI_MISSING="no libpmix.so, which slurmd's mpi_pmix_v4 loads (apt-get install libpmix-dev)"
	elif ! mpicc -o "$PROG/mpi-hello" "$BATS_TEST_DIRNAME/mpi-hello.c" 2>"$PROG/mpicc.err"; then
		MPI_MISSING="mpicc failed: $(head -1 "$PROG/mpicc.err")"
	fi
	if [[ ! -e /usr/include/slurm/pmi2.h || $(cc -print-file-name=libpmi2.so) != /* ]]; then
		PMI2_MISSING="no Slurm PMI-2 library (apt-get install libpmi2-0-dev)"
	elif ! cc -o "$PROG/pmi2-kvs" "$BATS_TEST_DIRNAME/pmi2-kvs.c" -lpmi2 2>"$PROG/cc.err"; then
		PMI2_MISSING="cc failed: $(head -1 "$PROG/cc.err")"
	fi
	chmod -R a+rX "$BATS_FILE_TMPDIR"
}

setup() {
	slurm_setup
	# The cluster's network namespace has the loopback only, which Open MPI's TCP transport
	# leaves out unless told: the bare host and the roots alike.
	export OMPI_MCA_btl_tcp_if_include=lo
	PLAIN=(enter-devroot run --ephemeral --from "$EDR_TEMPLATE")
	PLUGIN=(--devroot-image="$EDR_TEMPLATE")
	local dir mounts=
	for dir in "${ROOT_BINDS[@]}" "$PROG"; do
		[[ -d $dir ]] || continue
		PLAIN+=(--bind "$dir:$dir:ro")
		mounts+=${mounts:+,}$dir:$dir:ro
	done
	PLAIN+=(--)
	PLUGIN+=(--devroot-mounts="$mounts")
}
teardown() { slurm_teardown; }

needs_mpi() { [[ -z $MPI_MISSING ]] || skip "$MPI_MISSING"; }
needs_pmi2() { [[ -z $PMI2_MISSING ]] || skip "$PMI2_MISSING"; }
needs_plugin() {
	[[ -n ${EDR_SPANK:-} ]] || skip "spank_enter_devroot.so was not built (apt-get install libslurm-dev, then configure)"
}

# A rank that is not in the root says so (the root's os-release is the template's).
IN_ROOT='grep -q "enter-devroot minimal" /etc/os-release || echo "task $SLURM_PROCID is not in the root"; exec "$@"'

# bare SRUN_ARGS...: the same srun on the bare host; it must succeed. Its stdout, sorted,
# into BARE_OUT, its stderr into BARE_ERR.
bare() {
	run --separate-stderr srun_ -Q "$@"
	assert_success
	BARE_OUT=$(sort <<<"$output")
	BARE_ERR=$stderr
}

# in_roots SRUN_ARGS...: srun with the ranks in roots (the caller's arguments say how); it
# must succeed, print what the bare host printed, each line once, and on stderr nothing
# the bare host did not.
in_roots() {
	run --separate-stderr srun_ -Q "$@"
	assert_success
	assert_equal "$(sort <<<"$output")" "$BARE_OUT"
	assert_equal "$stderr" "$BARE_ERR"
}

ranks_of() { # N: what every rank of N prints, sorted
	local i
	for ((i = 0; i < $1; i++)); do echo "rank $i of $1: sum $(($1 * ($1 + 1) / 2))"; done | sort
}

# four_ranks_over_tcp ENTER...: mpi-hello's four ranks on the two nodes over TCP only (btl
# self,tcp), on the bare host, then in the roots ENTER... gives them (PLUGIN's options or
# PLAIN's command): every rank once, the Allreduce right.
four_ranks_over_tcp() {
	export OMPI_MCA_btl=self,tcp
	bare --mpi=pmix -N2 -n4 --ntasks-per-node=2 "$PROG/mpi-hello"
	assert_equal "$BARE_OUT" "$(ranks_of 4)"
	in_roots --mpi=pmix -N2 -n4 --ntasks-per-node=2 "$@" sh -c "$IN_ROOT" sh "$PROG/mpi-hello"
}

# two_ranks_over_shared_memory ENTER...: mpi-hello's two ranks on one node over shared memory
# only (btl self,vader), a 16 MiB message too, on the bare host, then in the roots ENTER...
# gives them.
two_ranks_over_shared_memory() {
	export OMPI_MCA_btl=self,vader
	bare --mpi=pmix -N1 -n2 "$PROG/mpi-hello" big
	assert_equal "$BARE_OUT" "$(ranks_of 2; echo 'rank 1: 4194304 words received, 0 wrong')"
	in_roots --mpi=pmix -N1 -n2 "$@" sh -c "$IN_ROOT" sh "$PROG/mpi-hello" big
}

@test "mpi: srun --mpi=pmix -N2 -n4 --devroot-image (the plugin): every rank once, in the root, the Allreduce right, nothing on stderr the bare host does not print" {
	needs_mpi
	needs_plugin
	four_ranks_over_tcp "${PLUGIN[@]}"
}

@test "mpi: srun --mpi=pmix -N2 -n4 enter-devroot run --ephemeral: every rank once, in the root, the Allreduce right, nothing on stderr the bare host does not print" {
	needs_mpi
	four_ranks_over_tcp "${PLAIN[@]}"
}

@test "mpi: two ranks on one node over shared memory only (btl self,vader), a 16 MiB message too: in the plugin's roots as on the bare host" {
	needs_mpi
	needs_plugin
	two_ranks_over_shared_memory "${PLUGIN[@]}"
}

@test "mpi: two ranks on one node over shared memory only (btl self,vader), a 16 MiB message too: in run --ephemeral's roots as on the bare host" {
	needs_mpi
	two_ranks_over_shared_memory "${PLAIN[@]}"
}

@test "mpi: srun --mpi=pmi2 -N2 -n4: a PMI-2 client in the plugin's roots and in run --ephemeral's reads the other tasks' keys, as on the bare host" {
	needs_pmi2
	bare --mpi=pmi2 -N2 -n4 --ntasks-per-node=2 "$PROG/pmi2-kvs"
	assert_equal "$BARE_OUT" "$(for i in 0 1 2 3; do echo "rank $i of 4: key$(((i + 1) % 4))=value$((((i + 1) % 4) * 10))"; done)"
	in_roots --mpi=pmi2 -N2 -n4 --ntasks-per-node=2 "${PLAIN[@]}" sh -c "$IN_ROOT" sh "$PROG/pmi2-kvs"
	[[ -z ${EDR_SPANK:-} ]] ||
		in_roots --mpi=pmi2 -N2 -n4 --ntasks-per-node=2 "${PLUGIN[@]}" sh -c "$IN_ROOT" sh "$PROG/pmi2-kvs"
}
