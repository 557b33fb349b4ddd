# A two-node Slurm cluster on loopback, for the Slurm suites. Sourced by tests/slurm/run.
#
# cluster_start DIR USER starts, as root, one munged (a key generated for the run), one
# slurmctld and two slurmd (n1, n2: this Slurm is built with multiple-slurmd support, so two
# daemons on one host are two nodes), every file in DIR, every port free and chosen now,
# every address 127.0.0.1. It waits (bounded) until both nodes are idle. cluster_stop
# cancels what is left and stops every daemon by the PID it recorded. Both print their
# failures on stderr and return non-zero; the logs stay in DIR for the report.
#
# Exports SLURM_CONF (clients read it: srun, sbatch, salloc, squeue, scontrol) and
# CLUSTER_NODES (n1,n2).
#
# Each node has CLUSTER_GPUS generic resources "gpu" (GRES), the character devices
# DIR/gpus/gpu0 and gpu1 that cluster_start makes (mknod: /dev/null's and /dev/zero's numbers,
# so a job can tell them apart by their rdev), named by gres.conf's File=, as GPUs of a real
# node are by their /dev/nvidiaN. Exports CLUSTER_GPU_DIR.

CLUSTER_WAIT=30        # seconds for a daemon to come up or for both nodes to go idle
CLUSTER_STOP_WAIT=20   # seconds for the jobs to end and the daemons to exit on SIGTERM
CLUSTER_CPUS=4         # per node: srun -N2 -n8 must fit without oversubscribing
CLUSTER_GPUS=2         # per node: gres/gpu, DIR/gpus/gpu0 and gpu1
CLUSTER_PIDS=()       # every daemon started, in order
CLUSTER_CTLD_PID=
CLUSTER_PLUGSTACK=${CLUSTER_PLUGSTACK:-} # plugstack.conf's lines (the SPANK plugins to load)

cluster_free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# cluster_wait SECONDS WHAT COMMAND...: poll COMMAND every 0.2 s until it succeeds.
cluster_wait() {
	local limit=$(( $1 * 5 )) what=$2 i
	shift 2
	for ((i = 0; i < limit; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "cluster: $what: not ready after ${limit}/5 s" >&2
	return 1
}

cluster_conf() { # DIR PORT_CTLD PORT_N1 PORT_N2
	local d=$1
	cat <<EOC
ClusterName=devroot
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmctldPort=$2
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
TmpFS=$d/tmp/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ReturnToService=2
MpiDefault=none
GresTypes=gpu
PlugStackConfig=$d/plugstack.conf
MaxJobCount=1000
MinJobAge=2
KillWait=5
InactiveLimit=0
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$3 CPUs=$CLUSTER_CPUS Gres=gpu:$CLUSTER_GPUS State=UNKNOWN
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$4 CPUs=$CLUSTER_CPUS Gres=gpu:$CLUSTER_GPUS State=UNKNOWN
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOC
}

cluster_nodes_idle() {
	local states
	states=$(sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
	[[ $(grep -c ' idle$' <<<"$states") -eq 2 ]]
}

cluster_start() { # DIR USER
	local d=$1 user=$2 p_ctld p_n1 p_n2 n
	mkdir -m 755 -p "$d" "$d/state" "$d/spool"
	printf '%s\n' "$CLUSTER_PLUGSTACK" >"$d/plugstack.conf"

	# munged refuses a key or socket directory others can write; it runs as its own user.
	install -d -m 755 -o munge -g munge "$d/munge"
	dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
	chown munge:munge "$d/munge/munge.key" && chmod 600 "$d/munge/munge.key"
	# setpriv execs munged, so $! is munged's own PID.
	setpriv --reuid=munge --regid=munge --clear-groups /usr/sbin/munged -F \
		--key-file="$d/munge/munge.key" --socket="$d/munge/munge.socket" \
		--pid-file="$d/munge/munged.pid" --log-file="$d/munge/munged.log" \
		--seed-file="$d/munge/munged.seed" 2>>"$d/munge/munged.log" &
	CLUSTER_PIDS+=($!)
	cluster_wait "$CLUSTER_WAIT" "munged ($d/munge/munged.log)" \
		munge -S "$d/munge/munge.socket" -n || return 1

	p_ctld=$(cluster_free_port) && p_n1=$(cluster_free_port) && p_n2=$(cluster_free_port) || return 1
	cluster_conf "$d" "$p_ctld" "$p_n1" "$p_n2" >"$d/slurm.conf"
	# The nodes' GPUs: device nodes of this run, as a real node's are /dev/nvidiaN.
	mkdir -m 755 "$d/gpus"
	mknod -m 666 "$d/gpus/gpu0" c 1 3 && mknod -m 666 "$d/gpus/gpu1" c 1 5 || return 1
	echo "Name=gpu File=$d/gpus/gpu[0-1]" >"$d/gres.conf"
	export CLUSTER_GPU_DIR=$d/gpus
	export SLURM_CONF=$d/slurm.conf CLUSTER_NODES=n1,n2
	/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >>"$d/slurmctld.out" 2>&1 &
	CLUSTER_CTLD_PID=$!
	CLUSTER_PIDS+=($!)
	cluster_wait "$CLUSTER_WAIT" "slurmctld ($d/slurmctld.log)" scontrol ping || return 1
	for n in n1 n2; do
		mkdir -p "$d/spool/$n"
		mkdir -m 1777 -p "$d/tmp/$n"
		/usr/sbin/slurmd -D -N "$n" -f "$SLURM_CONF" >>"$d/slurmd-$n.out" 2>&1 &
		CLUSTER_PIDS+=($!)
	done
	cluster_wait "$CLUSTER_WAIT" "nodes n1 and n2 idle ($d/slurmd-n*.log)" cluster_nodes_idle
}

cluster_stop() {
	local pid alive i
	if [[ -n $CLUSTER_CTLD_PID ]] && kill -0 "$CLUSTER_CTLD_PID" 2>/dev/null; then
		scancel --quiet --partition=debug 2>/dev/null
		cluster_wait "$CLUSTER_STOP_WAIT" "jobs ending" bash -c '[[ -z $(squeue -h) ]]'
	fi
	# slurmd, then slurmctld, then munged: the reverse order of their start.
	for ((i = ${#CLUSTER_PIDS[@]} - 1; i >= 0; i--)); do
		kill -TERM "${CLUSTER_PIDS[i]}" 2>/dev/null
	done
	for ((i = 0; i < CLUSTER_STOP_WAIT * 5; i++)); do
		alive=0
		for pid in "${CLUSTER_PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		((alive)) || break
		sleep 0.2
	done
	for pid in "${CLUSTER_PIDS[@]}"; do
		kill -0 "$pid" 2>/dev/null && { echo "cluster: pid $pid ignored SIGTERM, killing it" >&2; kill -KILL "$pid"; }
	done
	wait "${CLUSTER_PIDS[@]}" 2>/dev/null
	CLUSTER_PIDS=()       # every daemon started, in order
CLUSTER_CTLD_PID=
CLUSTER_PLUGSTACK=${CLUSTER_PLUGSTACK:-} # plugstack.conf's lines (the SPANK plugins to load)
}
