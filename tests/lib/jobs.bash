# Helpers for the suites that cancel jobs (tests/host/ci.bats, tests/guest/ci.bats): the
# probe's daemon (tests/host/probe.c: setsid, double fork, SIGTERM ignored) run through
# enter-devroot in the background, and a bounded wait for it. Load with `load ../lib/jobs`.
# Needs EDR_BIN and T; the root must hold the probe as /edr-probe.
#
# Every test run shares the test user, and other runs may be cancelling jobs of their own
# at the same time: a daemon is found by the token JOB_TOKEN, unique to this test, which
# it carries as an argument (the probe ignores it).
JOB_TOKEN=edr-job-$$-$RANDOM-${BATS_TEST_NUMBER:-0}

# job_processes: the pids of this test's probe daemons still running (the probe's own
# command line, not enter-devroot's, which names it too).
job_processes() { pgrep -u "$(id -u)" -f "^/edr-probe daemon .*$JOB_TOKEN" || true; }

# kill_job_processes: SIGKILL them (teardown: a failed test must not leave them).
kill_job_processes() {
	local p
	for p in $(job_processes); do kill -KILL "$p" 2>/dev/null || true; done
}

# start_daemon_job ROOT [stubborn] [RUN OPTIONS...]: run the daemon in ROOT; returns once
# it runs (within 30 s). Sets JOB, run's pid.
start_daemon_job() {
	local root=$1 mode= i
	shift
	[[ ${1:-} == stubborn ]] && { mode=stubborn; shift; }
	"$EDR_BIN" run "$@" "$root" -- /edr-probe daemon $mode "$JOB_TOKEN" > "$T/job.out" 2> "$T/job.err" &
	JOB=$!
	for i in $(seq 300); do
		grep -q ready "$T/job.out" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "the daemon job never said ready: $(cat "$T/job.err")"
}

# wait_job: wait for JOB (at most 60 s: a job that outlives its cancellation fails the
# test rather than hanging it), leaving its exit status in JOB_STATUS.
wait_job() {
	local i
	for i in $(seq 600); do
		kill -0 "$JOB" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$JOB" 2>/dev/null; then
		kill -KILL "$JOB"
		fail "enter-devroot (pid $JOB) still runs 60 s after its cancellation"
	fi
	JOB_STATUS=0
	wait "$JOB" || JOB_STATUS=$?
}
