# Helpers shared by the Slurm bats suites. Load with `load common`.
#
# The suites run through tests/slurm/run, which starts a two-node cluster (n1, n2) and
# exports:
#   SLURM_CONF    the cluster's slurm.conf (srun, sbatch, salloc, squeue read it)
#   CLUSTER_LOGS  the directory of the daemons' logs
#   EDR_BIN       the enter-devroot binary under test
#   EDR_TEMPLATE  the embedded default template tarball
# Both nodes are this host: what a task sees of "its node" comes from SLURMD_NODENAME.
# Every test gets its own HOME and XDG directories under BATS_TEST_TMPDIR; srun passes
# the whole environment to the tasks, so they share them, as a home on NFS is shared.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load ../lib/layout

SLURM_TIMEOUT=90 # seconds for one srun, sbatch --wait or salloc, queueing included

slurm_setup() {
	[[ -n ${SLURM_CONF:-} && -x ${EDR_BIN:-} ]] || fail "run the suites through tests/slurm/run"
	edr_home_setup
	export ENTER_DEVROOT_DEFAULT_TEMPLATE=$EDR_TEMPLATE
	PATH=$(dirname "$EDR_BIN"):$PATH
	umask 022
	cd "$T" || return
}

# Cancel what a failed test left queued or running, and let bats remove read-only roots.
slurm_teardown() {
	local jobs
	jobs=$(squeue -h -u "$(id -un)" -o %i 2>/dev/null) || true
	[[ -z $jobs ]] || scancel $jobs 2>/dev/null || true
	chmod -R u+rwX "$BATS_TEST_TMPDIR" 2>/dev/null || true
}

# Every client command is bounded: a test that hangs fails instead.
bounded() { timeout -k 5 "$SLURM_TIMEOUT" "$@"; }
srun_() { bounded srun "$@"; }

# The plugin's calls of enter-devroot since CALLS_MARK (a suite's setup sets it), as the
# runner's wrapper logs them.
calls() { tail -n +"$((CALLS_MARK + 1))" "$EDR_SPANK_CALLS"; }

# Show what the last `run` printed, for failure messages.
last_run() {
	printf 'status: %s\n--- stdout\n%s\n--- stderr\n%s\n' "$status" "$output" "${stderr-}"
}

assert_status() {
	[[ $status -eq $1 ]] || fail "expected exit status $1, got $status
$(last_run)"
}

MINIMAL='PRETTY_NAME="enter-devroot minimal (busybox)"' # the template's os-release line

# ---- The plugin's suites (spank.bats, batch.bats): the same file setup and per-test setup.
# plugin_setup_file: the template served at $HTTP, and a catalogue index naming it "t".
plugin_setup_file() {
	[[ -n ${EDR_SPANK:-} ]] || return 0
	http_serve_template
	printf '[t]\nurl = t.tar.gz\nsha256 = %s\nsize = %s\ndescription = t\n' \
		"$TSHA" "$TSIZE" >"$WWW/index"
}

# plugin_setup: skip unless the plugin was built; the test's directories, and the marks
# `downloads` and `calls` count from; ROOTS is the test's store of roots.
plugin_setup() {
	[[ -n ${EDR_SPANK:-} ]] || skip "spank_enter_devroot.so was not built (apt-get install libslurm-dev, then configure)"
	slurm_setup
	MARK=$(wc -l <"$S/http.log")
	CALLS_MARK=$(wc -l <"$EDR_SPANK_CALLS")
	ROOTS=$XDG_DATA_HOME/enter-devroot/roots
}

roots_left() { ls -A "$ROOTS" 2>/dev/null || true; }

# wait_gone GLOB: bounded wait (30 s) until no root matches GLOB (the epilog runs after the
# job, after sbatch --wait has returned).
wait_gone() {
	local i
	for ((i = 0; i < 300; i++)); do
		compgen -G "$ROOTS/$1" >/dev/null || return 0
		sleep 0.1
	done
	fail "still there after 30 s: $(cd "$ROOTS" && echo $1)"
}

# ---- A web server on 127.0.0.1 for a suite (the network namespace has nothing else):
# tests/fetch/server.py serving $WWW/t.tar.gz (the template; digest TSHA, size TSIZE) at
# $HTTP. Call http_serve_template from setup_file and http_stop from teardown_file; a test
# sets MARK=$(wc -l <"$S/http.log") first, and `downloads` counts its template requests.
http_serve_template() {
	export S=$BATS_FILE_TMPDIR WWW=$BATS_FILE_TMPDIR/www
	mkdir -p "$WWW"
	: >"$S/http.log"
	cp "$EDR_TEMPLATE" "$WWW/t.tar.gz"
	TSHA=$(sha256sum "$WWW/t.tar.gz" | cut -d' ' -f1)
	TSIZE=$(stat -c %s "$WWW/t.tar.gz")
	python3 "$EDR_HTTP_SERVER" --log "$S/http.log" --port-file "$S/http.port" "$WWW" \
		>/dev/null 2>"$S/http.err" &
	echo $! >"$S/http.pid"
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -s $S/http.port ]] && break
		sleep 0.1
	done
	[[ -s $S/http.port ]] || { cat "$S/http.err" >&2; return 1; }
	export HTTP=http://127.0.0.1:$(cat "$S/http.port") TSHA TSIZE
}

http_stop() {
	[[ -f $S/http.pid ]] && kill "$(cat "$S/http.pid")" 2>/dev/null
	true
}

downloads() { tail -n +"$((MARK + 1))" "$S/http.log" | grep -c 't\.tar\.gz ' || true; }

# ---- Do a step's tasks on a node share the root's namespaces? SHARE_PROBE, run by every
# task under /bin/sh inside the root, leaves its PID (as its PID namespace numbers it) in
# /dev/shm, waits (at most 30 s) until /dev/shm holds as many as the node has tasks
# ($SLURM_STEP_TASKS_PER_NODE's first count: the tests give every node the same), looks
# each of them up in /proc, and waits for the others to have looked before it exits. It
# prints "NODE FILES SEEN": the task files in /dev/shm, and how many of their PIDs /proc
# shows. Tasks with namespaces of their own print "NODE 1 1" after the wait.
SHARE_PROBE='want=${SLURM_STEP_TASKS_PER_NODE%%[(,]*}
echo $$ >/dev/shm/task.$SLURM_PROCID
i=0; while [ $(ls /dev/shm | grep -c "^task\.") -lt $want ] && [ $i -lt 30 ]; do sleep 1; i=$((i+1)); done
n=0; seen=0
for f in /dev/shm/task.*; do n=$((n+1)); [ -d /proc/$(cat $f) ] && seen=$((seen+1)); done
: >/dev/shm/looked.$SLURM_PROCID
i=0; while [ $(ls /dev/shm | grep -c "^looked\.") -lt $n ] && [ $i -lt 30 ]; do sleep 1; i=$((i+1)); done
echo "$SLURMD_NODENAME $n $seen"'

# Fail unless every one of the 2 nodes printed "NODE 2 2" for each of its 2 tasks.
assert_namespaces_shared() {
	[[ ${#lines[@]} -eq 4 ]] || fail "expected 4 lines
$(last_run)"
	local node
	for node in n1 n2; do
		[[ $(grep -cx "$node 2 2" <<<"$output") -eq 2 ]] ||
			fail "the tasks on $node do not share /dev/shm and /proc
$(last_run)"
	done
}

# Fail if a keeper of shared namespaces or its holder (an enter-devroot of this suite's, by
# the path of the binary under test or the plugin's argv[0]: other suites may run as the
# same user, but not as either; their environment cannot tell, for a process
# that changed user namespace has its /proc/PID/environ closed), their state, or a process
# whose command line holds $1 (what a task left behind) is still there. The holder may
# take a moment to go: 5 s.
assert_no_step_namespaces_left() {
	local i left
	for i in $(seq 50); do
		# (The plugin runs it as plain "enter-devroot"; srun gives the path.)
		left=$(pgrep -u "$(id -un)" -f "^($EDR_BIN|enter-devroot) " | tr '\n' ' ')
		[[ -z ${1:-} ]] || left+=$(pgrep -u "$(id -un)" -f "$1" | tr '\n' ' ')
		[[ -n ${left// /} ]] || break
		sleep 0.1
	done
	[[ -z ${left// /} ]] || fail "processes left: $(ps -o pid=,args= -p "$(xargs <<<"$left" | tr ' ' ,)" 2>/dev/null)"
	left=$(ls "$XDG_DATA_HOME/enter-devroot/locks" 2>/dev/null | grep -E '\.ns(hold)?$' || true)
	[[ -z $left ]] || fail "namespace state left: $left"
}

# ---- A pull cancelled half-way (cache.bats, spank.bats, srun.bats). The cache's design
# (src/store/cache/cache.h): sha256/HEX is renamed in whole and verified; partial/KEY with
# KEY.validators is a download kept to be resumed, hashed again in whole before it is
# renamed, so a later run never takes it for a complete file.

# wait_partial CACHE KEY BYTES: bounded wait until partial/KEY holds BYTES at least.
wait_partial() {
	local i
	for ((i = 0; i < 300; i++)); do
		[[ $(stat -c %s "$1/partial/$2" 2>/dev/null || echo 0) -ge $3 ]] && return 0
		sleep 0.1
	done
	return 1
}

# cancel_pull PID CACHE SECONDS OUT: once srun PID (its output in OUT) has downloaded
# 100 kB of the template into CACHE, scancel the user's one job; fail unless srun ends
# non-zero within SECONDS, leaving a sound cache: nothing complete in sha256/ and the part
# downloaded kept in partial/. Sets JOB and KEPT (the size of that part).
cancel_pull() {
	local pid=$1 cache=$2 bound=$3 out=$4 rc=0 took
	wait_partial "$cache" "$TSHA" 100000 || fail "the download did not get going: $(cat "$out")"
	JOB=$(squeue -h -u "$(id -un)" -o %i)
	[[ $JOB =~ ^[0-9]+$ ]] || fail "not one job: '$JOB'"
	SECONDS=0
	scancel "$JOB"
	wait "$pid" || rc=$?
	took=$SECONDS
	[[ $rc -ne 0 ]] || fail "srun succeeded: $(cat "$out")"
	[[ $took -le $bound ]] || fail "srun ended $took s after scancel: $(cat "$out")"
	assert_cache_sound "$cache"
	[[ -z $(ls -A "$cache/sha256") ]] || fail "a file entered the cache before it was complete"
	KEPT=$(stat -c %s "$cache/partial/$TSHA") || fail "the downloaded part was not kept"
}

# assert_resumed CACHE: since MARK, the template was requested once, from byte KEPT
# (cancel_pull), and CACHE now holds it whole, and nothing else.
assert_resumed() {
	[[ $(downloads) -eq 1 ]] || fail "downloaded $(downloads) times"
	grep -q "t\.tar\.gz range=bytes=$KEPT- .* status=206" <(tail -n +"$((MARK + 1))" "$S/http.log") ||
		fail "not resumed at byte $KEPT: $(tail -n +"$((MARK + 1))" "$S/http.log")"
	assert_cache_sound "$1"
	[[ $(ls "$1/sha256") == "$TSHA" ]] || fail "cached: $(ls "$1/sha256")"
}

# assert_cache_sound CACHE: every file in sha256/ is named by a digest and hashes to it;
# partial/ holds only downloads kept for resuming (a digest, with its validators); and no
# process still holds a fetch lock (a classic POSIX lock conflicts with the fetch's OFD lock).
assert_cache_sound() {
	local f name
	for f in "$1"/sha256/* "$1"/sha256/.[!.]*; do
		[[ -e $f ]] || continue
		name=${f##*/}
		[[ $name =~ ^[0-9a-f]{64}$ ]] || fail "a file in the cache not named by a digest: $f"
		[[ $(sha256sum <"$f" | cut -d' ' -f1) == "$name" ]] || fail "$f does not hash to its name"
	done
	for f in "$1"/partial/* "$1"/partial/.[!.]*; do
		[[ -e $f ]] || continue
		name=${f##*/}
		name=${name%.validators}
		[[ $name =~ ^[0-9a-f]{64}$ && -e $1/partial/$name.validators ]] ||
			fail "a partial file that cannot be resumed: $f ($(ls -A "$1/partial"))"
	done
	for f in "$1"/locks/*.lock; do
		[[ -e $f ]] || continue
		python3 -c 'import fcntl, sys; fcntl.lockf(open(sys.argv[1], "a"), fcntl.LOCK_EX | fcntl.LOCK_NB)' "$f" ||
			fail "a fetch still holds $f"
	done
}
