#!/usr/bin/env bats
# spank_enter_devroot.so on the two-node cluster: srun/sbatch/salloc --devroot-image run
# the tasks of a step in a devroot that enter-devroot creates once per node and removes at
# the step's end (each task becomes `enter-devroot run --ephemeral`, as the user). The tests
# assert what a user sees (the root, its sharing, its end), not the calls that make it. The runner loads the plugin twice (ours, and a copy with pyxis_compat=1),
# with enter_devroot= pointing at a wrapper that logs the ids and arguments of every call
# to $EDR_SPANK_CALLS before it execs the binary.

load common

setup_file() {
	plugin_setup_file || return
	[[ -n ${EDR_SPANK:-} ]] || return 0
	# 1 MB at 50 kB/s: a pull that takes 20 s, to be cancelled half-way.
	printf '[t]\nurl = @rate=50000/t.tar.gz\nsha256 = %s\nsize = %s\ndescription = t\n' \
		"$TSHA" "$TSIZE" >"$WWW/slow-index"
}

teardown_file() { http_stop; }

setup() { plugin_setup; }
teardown() {
	rm -f "$EDR_SPANK_HOOK"
	# A removal a test stopped is the user's own process: let it go on (or die).
	pkill -CONT -u "$(id -un)" -f ' remove slurm-' 2>/dev/null || true
	slurm_teardown
}

@test "spank: srun --help lists the options, ours and pyxis's" {
	run srun --help
	assert_success
	assert_output --partial '--devroot-image=SOURCE'
	assert_output --partial '--devroot-workdir=DIR'
	assert_output --partial '--devroot-root'
	assert_output --partial '--container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH'
	assert_output --partial '--container-remap-root'
}

@test "spank: srun -N2 -n4 --devroot-image: every task in the root, one root per node, gone at the step's end" {
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 -l --devroot-image="$EDR_TEMPLATE" \
		/bin/sh -c 'grep PRETTY /etc/os-release'
	assert_success
	for i in 0 1 2 3; do assert_line "$i: $MINIMAL"; done
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
}

# The submit directory, which holds the store, is bound at the same path: a task sees its
# root in the store.
@test "spank: a step's root on a node is named for the job, the step and the node, exists while its tasks run, and is gone when srun returns" {
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 -l --devroot-image="$EDR_TEMPLATE" \
		/bin/sh -c 'test -d "'"$ROOTS"'/$ENTER_DEVROOT_NAME" && echo "$SLURMD_NODENAME $ENTER_DEVROOT_NAME"'
	assert_success
	local job
	job=$(sed -n 's/^0: n[12] ephemeral-slurm-\([0-9]*\)\..*/\1/p' <<<"$output")
	[[ -n $job ]] || fail "no step root name: $(last_run)"
	[[ $(grep -c ": n1 ephemeral-slurm-$job\.0\.n1$" <<<"$output") -eq 2 &&
		$(grep -c ": n2 ephemeral-slurm-$job\.0\.n2$" <<<"$output") -eq 2 ]] ||
		fail "not one root per node shared by its two tasks: $(last_run)"
	[[ -z $(roots_left) ]] || fail "roots left when srun returned: $(roots_left)"
}

@test "spank: the tasks of a step on one node share its root; the other node has its own" {
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 --devroot-image="$EDR_TEMPLATE" \
		/bin/sh -c 'echo "$SLURMD_NODENAME $(ls -di / | cut -d" " -f1)"; : >"/tmp/task.$SLURM_PROCID"; sleep 1; ls /tmp | grep -c "^task\."'
	assert_success
	# Each task wrote one file in the root's /tmp: the two tasks of a node see both.
	[[ $(grep -cx '2' <<<"$output") -eq 4 ]] || fail "tasks of a node do not share /tmp
$(last_run)"
	n1=$(grep '^n1 ' <<<"$output" | sort -u | wc -l)
	n2=$(grep '^n2 ' <<<"$output" | sort -u | wc -l)
	[[ $n1 -eq 1 && $n2 -eq 1 ]] || fail "a node's tasks are in different roots
$(last_run)"
}

@test "spank: the tasks of a step on one node share one /proc and /dev/shm (userns mode)" {
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 --devroot-image="$EDR_TEMPLATE" \
		/bin/sh -c "$SHARE_PROBE"
	assert_success
	assert_namespaces_shared
	assert_no_step_namespaces_left
}

@test "spank: the plugin's calls run as the job's user and groups, never as root" {
	run --separate-stderr srun_ -N1 -n2 --devroot-image="$EDR_TEMPLATE" /bin/true
	assert_success
	want="uid=$(id -u) gid=$(id -g) groups=$(id -G)"
	[[ $(calls | wc -l) -gt 0 ]] || fail "the plugin ran no enter-devroot"
	while read -r line; do
		[[ $line == "$want "* ]] || fail "a call not as the job's user: $line"
	done < <(calls)
}

@test "spank: a template is fetched once, by srun, before the tasks of two nodes launch" {
	run --separate-stderr env ENTER_DEVROOT_INDEX="$HTTP/index" ENTER_DEVROOT_CACHE="$T/shared" \
		timeout -k 5 "$SLURM_TIMEOUT" srun -N2 -n4 --ntasks-per-node=2 --devroot-image=t \
		/bin/sh -c 'grep PRETTY /etc/os-release'
	assert_success
	[[ $(grep -c "$MINIMAL" <<<"$output") -eq 4 ]] || fail "$(last_run)"
	[[ $(downloads) -eq 1 ]] || fail "downloaded $(downloads) times"
	[[ $(calls | grep -c ' fetch t$') -eq 1 ]] || fail "fetch ran other than once: $(calls)"
	# fetch prints the cached file's path on its stdout: not on srun's stderr.
	[[ $stderr != *"$TSHA"* ]] || fail "the cache path reached srun's stderr: $stderr"
}

@test "spank: --devroot-image=minimal, the embedded built-in template, needs no catalogue" {
	run --separate-stderr srun_ -N1 -n1 --devroot-image=minimal /bin/sh -c 'grep PRETTY /etc/os-release'
	assert_success
	assert_output "$MINIMAL"
	[[ -z $stderr || $stderr != *"catalogue"* ]] || fail "$(last_run)"
	[[ $stderr != *"minimal.tar.gz"* ]] || fail "the template's path reached srun's stderr: $stderr"
}

@test "spank: scancel while srun fetches the template: srun ends, no root, a sound cache; the next job resumes the fetch" {
	export ENTER_DEVROOT_INDEX=$HTTP/slow-index ENTER_DEVROOT_CACHE=$T/shared
	srun_ -N2 -n2 --ntasks-per-node=1 --devroot-image=t /bin/sh -c ": >$T/ran" >"$T/first.out" 2>&1 &
	# The rest of the download takes 18 s: srun must not wait for it (it did: 19 s).
	cancel_pull $! "$ENTER_DEVROOT_CACHE" 6 "$T/first.out"
	grep -q "job $JOB ended while template t was being fetched" "$T/first.out" || fail "$(cat "$T/first.out")"
	[[ ! -e $T/ran ]] || fail "the command ran"
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"

	MARK=$(wc -l <"$S/http.log")
	run --separate-stderr srun_ -N2 -n2 --ntasks-per-node=1 --devroot-image=t /bin/sh -c 'grep PRETTY /etc/os-release'
	assert_success
	assert_output "$(printf '%s\n%s' "$MINIMAL" "$MINIMAL")"
	# Only what was missing: one request, from the byte the cancelled fetch had reached.
	assert_resumed "$ENTER_DEVROOT_CACHE"
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
}

@test "spank: a template that cannot be fetched fails srun before any task, the cause on its stderr" {
	run --separate-stderr env ENTER_DEVROOT_INDEX="$HTTP/index" \
		timeout -k 5 "$SLURM_TIMEOUT" srun -N1 -n1 --devroot-image=nosuch /bin/sh -c ": >$T/ran"
	[[ $status -ne 0 ]] || fail "srun succeeded"
	[[ $stderr == *"enter-devroot: template 'nosuch': not in catalogue"* ]] || fail "no cause
$(last_run)"
	[[ ! -e $T/ran ]] || fail "the command ran"
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
}

@test "spank: an image that cannot be unpacked fails the step, the cause on srun's stderr, the command not run" {
	echo "not an archive" >"$T/bad.tar.gz"
	run --separate-stderr srun_ -N1 -n2 --devroot-image="$T/bad.tar.gz" /bin/sh -c ": >$T/ran"
	[[ $status -ne 0 ]] || fail "srun succeeded"
	[[ $stderr == *"enter-devroot: "*"bad.tar.gz"* ]] || fail "no enter-devroot error naming the image
$(last_run)"
	# One task tried (one line from the unpacking), the other waited for it and says so.
	[[ $(grep -c "^enter-devroot: .*bad.tar.gz" <<<"$stderr") -eq 1 ]] || fail "not one creation: $(last_run)"
	[[ $stderr == *"the root of this job step on this node could not be created (the task that tried said why)"* ]] ||
		fail "$(last_run)"
	[[ ! -e $T/ran ]] || fail "the command ran"
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
}

@test "spank: DEVROOT_IMAGE stands in for the option, in salloc's steps too" {
	run --separate-stderr env DEVROOT_IMAGE="$EDR_TEMPLATE" \
		timeout -k 5 "$SLURM_TIMEOUT" salloc -N2 srun -l /bin/sh -c 'grep PRETTY /etc/os-release'
	assert_success
	assert_line "0: $MINIMAL"
	assert_line "1: $MINIMAL"
}

@test "spank: pyxis_compat=1 accepts --container-image and PYXIS_CONTAINER_IMAGE" {
	run --separate-stderr srun_ -N1 -n1 --container-image="$EDR_TEMPLATE" /bin/sh -c 'grep PRETTY /etc/os-release'
	assert_success
	assert_output "$MINIMAL"
	run --separate-stderr env PYXIS_CONTAINER_IMAGE="$EDR_TEMPLATE" \
		timeout -k 5 "$SLURM_TIMEOUT" srun -N1 -n1 /bin/sh -c 'grep PRETTY /etc/os-release'
	assert_success
	assert_output "$MINIMAL"
}

@test "spank: --devroot-workdir, --devroot-env and the SLURM_ variables reach the command" {
	run --separate-stderr env KEEP=kept DROP=dropped timeout -k 5 "$SLURM_TIMEOUT" \
		srun -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-workdir=/etc --devroot-env=KEEP \
		/bin/sh -c 'echo "$(pwd) ${KEEP-unset} ${DROP-unset} $SLURM_PROCID"'
	assert_success
	assert_output "/etc kept unset 0"
}

@test "spank: --devroot-root looks like root inside" {
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-root /usr/bin/id -u
	assert_success
	assert_output "0"
}

# start_job_b [OPTION...]: a job B in the background (its srun's pid in b) whose command runs
# 6 s in a root; returns once the command has started, so the root is there.
start_job_b() {
	srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" "$@" /bin/sh -c 'echo up; sleep 6' >"$T/b.out" 2>&1 &
	b=$!
	local i
	for ((i = 0; i < 300; i++)); do
		grep -q up "$T/b.out" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "job B did not start: $(cat "$T/b.out")"
}

@test "spank: the end of job A's step leaves job B's root alone" {
	local b b_root
	start_job_b
	b_root=$(roots_left)
	[[ -n $b_root ]] || fail "job B's root is not there: $(cat "$T/b.out")"
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" /bin/true
	assert_success
	[[ $(roots_left) == "$b_root" ]] || fail "job B's root changed under it: '$(roots_left)' (was '$b_root')"
	wait "$b" || fail "job B failed: $(cat "$T/b.out")"
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
}

@test "spank: a relative --devroot-workdir or a bad --devroot-env fails srun, naming the option" {
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-workdir=etc /bin/true
	[[ $status -ne 0 ]] || fail "srun succeeded"
	[[ $stderr == *"--devroot-workdir 'etc': not an absolute path"* ]] || fail "$(last_run)"
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-env='A,B=1' /bin/true
	[[ $status -ne 0 ]] || fail "srun succeeded"
	[[ $stderr == *"--devroot-env 'A,B=1': not a list of variable names"* ]] || fail "$(last_run)"
	[[ $(calls | wc -l) -eq 0 ]] || fail "enter-devroot ran: $(calls)"
}

@test "spank: a named root persists across the steps of a job, and the job's epilog removes it" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
srun --devroot-image=$EDR_TEMPLATE --devroot-name=keep /bin/sh -c 'echo first step >/kept'
srun --devroot-name=keep /bin/sh -c 'cat /kept'
ls $ROOTS
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "first step"
	assert_line --regexp '^slurm-[0-9]+-keep\.[A-Za-z0-9_-]+$'
	# Finding that the first step must create it is no error of the job's.
	refute_output --partial "cannot find"
	wait_gone 'slurm-*-keep.*'
	[[ $(calls | grep -c ' remove slurm-[0-9]*-keep\.') -eq 1 ]] || fail "$(calls)"
	[[ $(calls | grep ' remove ' | cut -d' ' -f1-3) == "uid=$(id -u) gid=$(id -g) groups=$(id -G)" ]] ||
		fail "the epilog's removal did not run as the job's user: $(calls)"
}

@test "spank: :exec attaches to the named root another step of the job is using (srun --overlap)" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
srun --devroot-image=$EDR_TEMPLATE --devroot-name=live:create /bin/sh -c 'echo running >/state; sleep 3' &
while ! ls $ROOTS/*live*/state >/dev/null 2>&1; do sleep 0.1; done
srun --overlap --devroot-name=live:exec /bin/sh -c 'echo "attached: \$(cat /state)"'
wait
EOS
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	assert_line "attached: running"
}

@test "spank: :exec of a name the job does not have, and :create of one it has, fail the step" {
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
srun --devroot-name=nope:exec /bin/true; echo "exec: \$?"
srun --devroot-image=$EDR_TEMPLATE --devroot-name=once:create /bin/true; echo "create: \$?"
srun --devroot-image=$EDR_TEMPLATE --devroot-name=once:create /bin/true; echo "again: \$?"
EOS
	run bounded sbatch --wait "$T/job.sh"
	run cat "$T/batch.out"
	assert_line "exec: 1"
	assert_line "create: 0"
	assert_line "again: 1"
	assert_output --partial "--devroot-name=nope:exec: no such devroot in this job on this host"
	assert_output --partial "--devroot-name=once:create: the job has it already"
}

@test "spank: job A's epilog leaves job B's root of the same name alone" {
	local b b_root
	start_job_b --devroot-name=same
	b_root=$(roots_left)
	[[ $b_root == slurm-*-same.* ]] || fail "job B's root is not there: '$b_root' $(cat "$T/b.out")"
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-name=same /bin/true
	assert_success
	local a_root
	a_root=$(calls | grep -o ' create slurm-[0-9]*-same\.[^ ]*' | grep -v "$b_root" | cut -d' ' -f3)
	[[ -n $a_root ]] || fail "job A made no root of its own: $(calls)"
	wait_gone "$a_root"
	[[ -d $ROOTS/$b_root ]] || fail "job A's epilog removed job B's root"
	wait "$b" || fail "job B failed: $(cat "$T/b.out")"
	wait_gone "$b_root"
}

@test "spank: --devroot-save exports the root when the step ends, before srun returns" {
	run --separate-stderr srun_ -N1 -n2 --devroot-image="$EDR_TEMPLATE" --devroot-save="$T/saved.tar.zst" \
		/bin/sh -c 'echo "made in $SLURM_JOB_ID" >"/made$SLURM_PROCID"'
	assert_success
	[[ -f $T/saved.tar.zst ]] || fail "no archive when srun returned"
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
	enter-devroot create again --from "$T/saved.tar.zst" --quiet
	run enter-devroot run again -- /bin/sh -c 'cat /made0 /made1'
	assert_success
	# Both tasks' files: the last task saved the root they shared.
	assert_output --regexp '^made in [0-9]+
made in [0-9]+$'
}

@test "spank: a --devroot-save that fails when the step ends fails srun, the cause on its stderr" {
	mkdir "$T/out"
	# The submit directory is bound: the command itself takes the write permission away.
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-save="$T/out/saved.tar.zst" \
		/bin/sh -c "chmod 555 '$T/out'"
	chmod 755 "$T/out"
	[[ $status -ne 0 ]] || fail "srun succeeded although the save failed
$(last_run)"
	[[ $stderr == *"was not saved to $T/out/saved.tar.zst"* && $stderr == *"its directory is missing or not writable"* ]] || fail "no word of the failed save on srun's stderr
$(last_run)"
	[[ ! -e $T/out/saved.tar.zst ]] || fail "an archive was written"
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
}

@test "spank: --devroot-save refuses a directory and a file that is not an archive, before the command" {
	mkdir "$T/dir"
	echo "keep me" >"$T/dir/file"
	echo "my notes" >"$T/notes.txt"
	local target
	for target in "$T/dir" "$T/notes.txt"; do
		run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-save="$target" \
			/bin/sh -c ": >$T/ran"
		[[ $status -ne 0 ]] || fail "srun succeeded for $target"
		[[ $stderr == *"--devroot-save=$target: refused, "* ]] || fail "$(last_run)"
		[[ ! -e $T/ran ]] || fail "the command ran"
	done
	[[ $(cat "$T/dir/file") == "keep me" && $(cat "$T/notes.txt") == "my notes" ]] ||
		fail "a refused target changed"
	[[ -z $(roots_left) ]] || fail "roots left: $(roots_left)"
}

@test "spank: the tasks start in the submit directory, bound at the same path" {
	mkdir -p "$T/work"
	echo "from the host" >"$T/work/in"
	cd "$T/work"
	run --separate-stderr srun_ -N1 -n2 --devroot-image="$EDR_TEMPLATE" \
		/bin/sh -c 'pwd; cat in; echo "task $SLURM_PROCID" >"out.$SLURM_PROCID"'
	assert_success
	assert_line "$T/work"
	assert_line "from the host"
	[[ $(cat "$T/work/out.0" "$T/work/out.1") == "task 0
task 1" ]] || fail "the tasks' files are not on the host"
}

@test "spank: --devroot-mounts: a path with a space and an escaped comma, :ro refuses writes" {
	mkdir -p "$T/a b,c" "$T/rw"
	echo "spaced" >"$T/a b,c/x"
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" \
		--devroot-mounts="$T/a b\\,c:/data:ro,$T/rw:/rw" \
		/bin/sh -c 'cat /data/x; echo y >/rw/y; echo z >/data/z && echo wrote-ro || echo refused-ro'
	assert_success
	assert_line "spaced"
	assert_line "refused-ro"
	[[ $(cat "$T/rw/y") == y ]] || fail "the read-write mount was not written"
	[[ ! -e "$T/a b,c/z" ]] || fail "the read-only mount was written"
}

@test "spank: a malformed --devroot-mounts fails srun, naming it" {
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-mounts="/tmp:/x:rw+rprivate" /bin/true
	[[ $status -ne 0 ]] || fail "srun succeeded"
	[[ $stderr == *"--devroot-mounts '/tmp:/x:rw+rprivate': the only flag is ro"* ]] || fail "$(last_run)"
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-mounts="/tmp:rel" /bin/true
	[[ $stderr == *"DST is not an absolute path"* ]] || fail "$(last_run)"
}

# The tests of the home run with --devroot-workdir=/, so that the working directory, which
# holds $HOME, is not bound (the tasks start in the submit directory, bound at the same path).
home_step() {
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-workdir=/ "$@" \
		/bin/sh -c "cat '$HOME/in' 2>/dev/null || echo 'no home'; echo \"HOME=\$HOME\"; echo from-task >'$HOME/out' 2>/dev/null || echo 'not written'"
}

@test "spank: --devroot-mount-home binds the job's HOME at the same path, both ways, as HOME" {
	echo "from the host" >"$HOME/in"
	home_step --devroot-mount-home
	assert_success
	assert_line "from the host"
	assert_line "HOME=$HOME"
	[[ $(cat "$HOME/out") == from-task ]] || fail "the task's file is not in the host's HOME"
	[[ $(calls | grep -c -- " run .*--bind $HOME:$HOME ") -eq 1 ]] || fail "$(calls)"
}

@test "spank: without --devroot-mount-home the job's HOME is not bound" {
	echo "from the host" >"$HOME/in"
	home_step
	assert_success
	assert_line "no home"
	assert_line "not written"
	refute_line "HOME=$HOME"
	[[ ! -e $HOME/out ]] || fail "the task wrote into the host's HOME"
	[[ $(calls | grep -c -- "--bind $HOME:") -eq 0 ]] || fail "$(calls)"
}

@test "spank: DEVROOT_MOUNT_HOME=1 binds the home, --no-devroot-mount-home overrides it" {
	echo "from the host" >"$HOME/in"
	DEVROOT_MOUNT_HOME=1 home_step
	assert_success
	assert_line "from the host"
	rm "$HOME/out"
	DEVROOT_MOUNT_HOME=1 home_step --no-devroot-mount-home
	assert_success
	assert_line "no home"
	[[ ! -e $HOME/out ]] || fail "the task wrote into the host's HOME"
}

@test "spank: pyxis_compat=1 accepts --container-mount-home, PYXIS_CONTAINER_MOUNT_HOME and the no- form" {
	echo "from the host" >"$HOME/in"
	run --separate-stderr srun_ -N1 -n1 --container-image="$EDR_TEMPLATE" --container-workdir=/ \
		--container-mount-home /bin/sh -c "cat '$HOME/in'"
	assert_success
	assert_output "from the host"
	run --separate-stderr env PYXIS_CONTAINER_MOUNT_HOME=yes timeout -k 5 "$SLURM_TIMEOUT" \
		srun -N1 -n1 --container-image="$EDR_TEMPLATE" --container-workdir=/ /bin/sh -c "cat '$HOME/in'"
	assert_success
	assert_output "from the host"
	run --separate-stderr env PYXIS_CONTAINER_MOUNT_HOME=yes timeout -k 5 "$SLURM_TIMEOUT" \
		srun -N1 -n1 --container-image="$EDR_TEMPLATE" --container-workdir=/ --no-container-mount-home \
		/bin/sh -c "cat '$HOME/in' 2>/dev/null || echo 'no home'"
	assert_success
	assert_output "no home"
}

@test "spank: both forms, a word not yes or no, a HOME that is not a directory: srun fails, saying which" {
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" --devroot-mount-home \
		--no-devroot-mount-home /bin/true
	[[ $status -ne 0 ]] || fail "srun succeeded"
	[[ $stderr == *"both --devroot-mount-home and --no-devroot-mount-home were given"* ]] || fail "$(last_run)"
	DEVROOT_MOUNT_HOME=maybe home_step
	[[ $status -ne 0 ]] || fail "srun succeeded"
	[[ $stderr == *"DEVROOT_MOUNT_HOME 'maybe': not one of 1 y yes true 0 n no false"* ]] || fail "$(last_run)"
	[[ $(calls | wc -l) -eq 0 ]] || fail "enter-devroot ran: $(calls)"
	HOME=$T/nothere home_step --devroot-mount-home
	[[ $status -ne 0 ]] || fail "srun succeeded"
	[[ $stderr == *"--devroot-mount-home: HOME '$T/nothere': No such file or directory; the command was not run"* ]] ||
		fail "$(last_run)"
	[[ $(calls | grep -c ' run ') -eq 0 ]] || fail "enter-devroot run ran: $(calls)"
}

# ---- The plugin's children as the job's user sees them: the root side starts them (the
# epilog's removal of a job's named root; a step's own root is removed by the task's run
# --ephemeral, the user's process from the start), but once dropped they are the user's, who
# may trace them or stop them. The runner's wrapper sources $EDR_SPANK_HOOK as the child,
# before it execs enter-devroot: a hook that stops the child holds it still for the test,
# as a user watching for it with pgrep would (which races, but wins often enough).

# stop_removals: every `enter-devroot remove` the plugin runs from now on stops itself.
stop_removals() {
	echo 'case "$1" in remove) kill -STOP $$ ;; esac' >"$EDR_SPANK_HOOK"
}

# stopped_removal PATTERN: the PID of a stopped `remove` whose arguments match PATTERN,
# waited for (60 s at most).
stopped_removal() {
	local i pid
	for ((i = 0; i < 600; i++)); do
		for pid in $(pgrep -u "$(id -un)" -f " remove $1" || true); do
			[[ $(ps -o stat= -p "$pid" 2>/dev/null) == T* ]] && { echo "$pid"; return 0; }
		done
		sleep 0.1
	done
	return 1
}

# grab_fds PID MARKER: as the job's user, take every fd of PID with pidfd_getfd and write
# MARKER into each; print "FD TARGET" for each.
grab_fds() {
	python3 - "$1" "$2" <<'EOP'
import ctypes, os, sys
pid, marker = int(sys.argv[1]), sys.argv[2].encode() + b"\n"
libc = ctypes.CDLL(None, use_errno=True)
SYS_pidfd_getfd = 438  # the same number on every architecture
pidfd = os.pidfd_open(pid)
for fd in sorted(int(f) for f in os.listdir(f"/proc/{pid}/fd")):
    try:
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    got = libc.syscall(SYS_pidfd_getfd, pidfd, fd, 0)
    if got < 0:
        sys.exit(f"pidfd_getfd({pid}, {fd}): {os.strerror(ctypes.get_errno())}")
    try:
        os.set_blocking(got, False)
        os.write(got, marker)
    except OSError:
        pass
    os.close(got)
    print(fd, target)
EOP
}

# assert_fds_not_root_side: the fds grab_fds listed ($output) are /dev/null, or the
# wrapper's own script and hook (sh opens them); never slurmd's output, log or pipes.
assert_fds_not_root_side() {
	local fd target
	while read -r fd target; do
		[[ $target == /dev/null || $target == "$(dirname "$EDR_SPANK_CALLS")"/* ||
			$target == "$(dirname "$EDR_BIN")"/* ]] ||
			fail "the removal, the user's process, holds fd $fd: $target
$output"
	done <<<"$output"
}

@test "spank: the epilog's removal holds no fd of slurmd's: pidfd_getfd takes nothing of root's" {
	local marker pid job
	marker="edr-racer-$BATS_TEST_NUMBER-$RANDOM$RANDOM"
	stop_removals
	# The epilog's removal of a job's named root.
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
srun --devroot-image=$EDR_TEMPLATE --devroot-name=fds /bin/true
EOS
	job=$(sbatch --parsable "$T/job.sh")
	pid=$(stopped_removal "slurm-$job-fds\\.") || fail "no stopped removal: $(cat "$T/batch.out")"
	run grab_fds "$pid" "$marker"
	assert_success
	assert_fds_not_root_side
	kill -CONT "$pid"
	wait_gone "slurm-$job-fds.*"
	run grep -l "$marker" "$CLUSTER_LOGS"/*.log "$CLUSTER_LOGS"/*.out
	[[ -z $output ]] || fail "the racer wrote into the daemons' output: $output"
}

# job_forgotten JOB SECONDS: bounded wait until squeue no longer shows job JOB.
job_forgotten() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[[ -z $(squeue -h -j "$1" -o %T 2>/dev/null) ]] && return 0
		sleep 0.1
	done
	fail "job $1 still $(squeue -h -j "$1" -o %T) after $2 s"
}

@test "spank: a stopped removal is killed at child_timeout: the epilog ends; doctor reaps what was left" {
	local job named_root
	stop_removals
	cat >"$T/job.sh" <<EOS
#!/bin/sh
#SBATCH -N1
#SBATCH --output=$T/batch.out
srun --devroot-image=$EDR_TEMPLATE --devroot-name=stall /bin/true
EOS
	job=$(sbatch --parsable "$T/job.sh")
	SECONDS=0
	# The epilog's removal, stopped: without it, nothing here is about a stalled epilog.
	stopped_removal "slurm-$job-stall\\." >/dev/null ||
		fail "no stopped removal of the job's named root: $(cat "$T/batch.out"; roots_left)"
	# child_timeout=15 (the runner's plugstack.conf); a stalled epilog takes much longer.
	job_forgotten "$job" 60
	[[ $SECONDS -le 45 ]] || fail "the job took $SECONDS s to end"
	named_root=$(cd "$ROOTS" && echo slurm-"$job"-stall.*)
	[[ -d $ROOTS/$named_root ]] || fail "no named root left: $(roots_left)"
	[[ -z $(pgrep -u "$(id -un)" -f ' remove slurm-') ]] || fail "a stopped removal is still there"
	rm -f "$EDR_SPANK_HOOK"
	run "$EDR_BIN" doctor
	assert_success
	[[ ! -e $ROOTS/$named_root ]] || fail "doctor left the named root $named_root: $output"
}

# start_step_root: a step in the background (srun's pid in s) whose task runs 60 s in its
# root; returns the root's name in step_root once the task has started (30 s at most).
start_step_root() {
	srun_ -N1 -n1 --devroot-image="$EDR_TEMPLATE" /bin/sh -c 'echo "up $ENTER_DEVROOT_NAME"; sleep 60' >"$T/s.out" 2>&1 &
	s=$!
	local i
	for ((i = 0; i < 300; i++)); do
		# The background srun_ may not have made s.out yet: sed's status 2 must not end
		# the function under bats's errexit (it did, once, under make -j2 check).
		step_root=$(sed -n 's/^up //p' "$T/s.out" 2>/dev/null || true)
		[[ -n $step_root ]] && return 0
		sleep 0.1
	done
	fail "the step did not start: $(cat "$T/s.out")"
}

@test "spank: scancel of a running step: srun ends and the step's root is gone" {
	local s step_root job
	start_step_root
	[[ -d $ROOTS/$step_root ]] || fail "no root $step_root while the step runs"
	job=${step_root#ephemeral-slurm-}
	scancel "${job%%.*}"
	wait "$s" || true
	[[ ! -e $ROOTS/$step_root ]] || fail "the root outlived its cancelled step: $(roots_left)"
}

@test "spank: a step whose task is killed with SIGKILL leaves its root to doctor, which removes it" {
	local s step_root job
	start_step_root
	job=${step_root#ephemeral-slurm-}
	job=${job%%.*}
	scancel --signal=KILL "$job"
	wait "$s" || true
	job_forgotten "$job" 60
	run "$EDR_BIN" doctor
	assert_success
	[[ -z $(roots_left) ]] || fail "doctor left $(roots_left): $output"
	run ls -A "$XDG_DATA_HOME/enter-devroot/locks"
	refute_output --partial "$step_root"
}

@test "spank: every named root of a job is removed by its epilog, however long the job's HOME" {
	local i job
	# 12 roots whose records (HOME and XDG_DATA_HOME, near 6 kB each) add up to 70 kB.
	export HOME=$(printf '/.%.0s' {1..2000})$HOME
	export XDG_DATA_HOME=$(printf '/.%.0s' {1..900})$XDG_DATA_HOME
	{
		printf '#!/bin/sh\n#SBATCH -N1\n#SBATCH --output=%s\n' "$T/batch.out"
		for i in $(seq 12); do
			echo "srun --devroot-image=$EDR_TEMPLATE --devroot-name=many$i /bin/true || echo failed $i"
		done
		echo "ls $ROOTS"
	} >"$T/job.sh"
	run bounded sbatch --wait "$T/job.sh"
	assert_success
	run cat "$T/batch.out"
	refute_output --partial failed
	[[ $(grep -c '^slurm-[0-9]*-many' "$T/batch.out") -eq 12 ]] || fail "not 12 roots: $output"
	wait_gone 'slurm-*-many*'
}

@test "spank: an option or DEVROOT_ value longer than slurmstepd reads fails, the command never runs outside a root" {
	local long
	long=$(printf '/.%.0s' {1..2500})$EDR_TEMPLATE
	# In srun's environment: srun refuses it, before any task.
	DEVROOT_IMAGE=$long run --separate-stderr srun_ -N1 -n1 /bin/sh -c 'echo ran on the host'
	[[ $status -ne 0 ]] || fail "srun succeeded: $(last_run)"
	refute_output --partial 'ran on the host'
	[[ $stderr == *"DEVROOT_IMAGE: longer than 4095 bytes"* ]] || fail "$(last_run)"
	# Only in the tasks' environment: slurmstepd refuses it.
	run --separate-stderr srun_ -N1 -n1 --export="ALL,DEVROOT_IMAGE=$long" /bin/sh -c 'echo ran on the host'
	[[ $status -ne 0 ]] || fail "srun succeeded: $(last_run)"
	refute_output --partial 'ran on the host'
	[[ $stderr == *"DEVROOT_IMAGE: longer than 4095 bytes; the command was not run"* ]] || fail "$(last_run)"
	# The option itself.
	run --separate-stderr srun_ -N1 -n1 --devroot-image="$long" /bin/sh -c 'echo ran on the host'
	[[ $status -ne 0 ]] || fail "srun succeeded: $(last_run)"
	refute_output --partial 'ran on the host'
	[[ $stderr == *"--devroot-image: longer than 4095 bytes"* ]] || fail "$(last_run)"
	[[ $(calls | grep -c ' run ') -eq 0 ]] || fail "enter-devroot run ran: $(calls)"
}
