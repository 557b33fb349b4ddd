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

SLURM_TIMEOUT=90 # seconds for one srun, sbatch --wait or salloc, queueing included

slurm_setup() {
	[[ -n ${SLURM_CONF:-} && -x ${EDR_BIN:-} ]] || fail "run the suites through tests/slurm/run"
	T=$BATS_TEST_TMPDIR
	export HOME=$T/home
	export XDG_DATA_HOME=$T/data XDG_CACHE_HOME=$T/cache XDG_CONFIG_HOME=$T/config
	export ENTER_DEVROOT_DEFAULT_TEMPLATE=$EDR_TEMPLATE
	mkdir -p "$HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME"
	PATH=$(dirname "$EDR_BIN"):$PATH
	umask 022
	cd "$T" || return
}

# Cancel what a failed test left queued or running, and let bats remove read-only roots.
slurm_teardown() {
	local jobs
	jobs=$(squeue -h -u "$(id -un)" -o %i 2>/dev/null) || true
	[[ -z $jobs ]] || scancel $jobs 2>/dev/null || true
	chmod -R u+w "$BATS_TEST_TMPDIR" 2>/dev/null || true
}

# Every client command is bounded: a test that hangs fails instead.
bounded() { timeout -k 5 "$SLURM_TIMEOUT" "$@"; }
srun_() { bounded srun "$@"; }

# Show what the last `run` printed, for failure messages.
last_run() {
	printf 'status: %s\n--- stdout\n%s\n--- stderr\n%s\n' "$status" "$output" "${stderr-}"
}

assert_status() {
	[[ $status -eq $1 ]] || fail "expected exit status $1, got $status
$(last_run)"
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
