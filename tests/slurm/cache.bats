#!/usr/bin/env bats
# One download cache for a whole cluster (`cache = DIR`, ENTER_DEVROOT_CACHE): the tasks of
# a job, on every node, fetch each file once, through fcntl locks that NFS carries between
# nodes; a pull killed half-way leaves the cache valid.

load common

setup_file() {
	http_serve_template
	# 1 MB at 400 kB/s: about 2.5 s, long enough for every task to be waiting on the lock.
	printf '[t]\nurl = @rate=400000/t.tar.gz\nsha256 = %s\nsize = %s\ndescription = t\n' \
		"$TSHA" "$TSIZE" >"$WWW/index"
	printf '[t]\nurl = @rate=50000/t.tar.gz\nsha256 = %s\nsize = %s\ndescription = t\n' \
		"$TSHA" "$TSIZE" >"$WWW/slow-index"
	printf '[t]\nurl = t.tar.gz\nsha256 = %s\nsize = %s\ndescription = t\n' \
		"$TSHA" "$TSIZE" >"$WWW/fast-index"
}

teardown_file() { http_stop; }

setup() {
	slurm_setup
	SHARED=$T/shared-cache # what would be a directory on NFS
	MARK=$(wc -l <"$S/http.log")
}
teardown() { slurm_teardown; }

assert_cached_once() { # CACHE_DIR
	local files
	files=$(ls "$1/sha256")
	[[ $files == "$TSHA" ]] || fail "cache holds '$files', not only $TSHA"
	[[ $(sha256sum <"$1/sha256/$TSHA" | cut -d' ' -f1) == "$TSHA" ]] ||
		fail "the cached file does not hash to its name"
	[[ -z $(ls -A "$1/partial") ]] || fail "partial downloads left: $(ls -A "$1/partial")"
}

@test "cache: eight tasks on two nodes fetch one template cold: one download, one verified file" {
	run --separate-stderr env ENTER_DEVROOT_CACHE="$SHARED" \
		timeout -k 5 "$SLURM_TIMEOUT" srun -N2 -n8 --ntasks-per-node=4 \
		enter-devroot fetch t --index "$HTTP/index"
	assert_success
	[[ ${#lines[@]} -eq 8 ]] || fail "expected 8 paths, got: $output"
	[[ $(sort -u <<<"$output") == "$SHARED/sha256/$TSHA" ]] || fail "not all the shared file: $output"
	[[ $(downloads) -eq 1 ]] || fail "downloaded $(downloads) times: $(tail -n +"$((MARK + 1))" "$S/http.log")"
	assert_cached_once "$SHARED"
}

@test "cache: 'cache = DIR' in the config file: each node creates its root from the one download" {
	mkdir -p "$XDG_CONFIG_HOME/enter-devroot"
	echo "cache = $SHARED" >"$XDG_CONFIG_HOME/enter-devroot/config"
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 sh -c \
		'enter-devroot create --quiet "r$SLURM_PROCID" --template t --index "$0/index" &&
		 enter-devroot run "r$SLURM_PROCID" -- grep -c busybox /etc/os-release' "$HTTP"
	assert_success
	assert_output "$(printf '1\n1\n1\n1')"
	[[ $(downloads) -eq 1 ]] || fail "downloaded $(downloads) times"
	assert_cached_once "$SHARED"
	[[ ! -e $XDG_CACHE_HOME/enter-devroot/sha256 ]] || fail "the default cache was used too"
}

@test "cache: a pull cancelled half-way leaves the cache valid, and the next one completes it" {
	export ENTER_DEVROOT_CACHE=$SHARED
	srun_ -N1 -n1 enter-devroot fetch t --index "$HTTP/slow-index" >"$T/first.out" 2>&1 &
	local i
	for ((i = 0; i < 200; i++)); do
		[[ -n $(ls -A "$SHARED/partial" 2>/dev/null) ]] && break
		sleep 0.1
	done
	[[ -n $(ls -A "$SHARED/partial" 2>/dev/null) ]] || fail "the download never started: $(cat "$T/first.out")"
	sleep 1
	scancel "$(squeue -h -u "$(id -un)" -o %i)"
	wait || true
	[[ -z $(ls -A "$SHARED/sha256") ]] || fail "a file entered the cache before it was complete"
	run --separate-stderr srun_ -N1 -n1 enter-devroot fetch t --index "$HTTP/index"
	assert_success
	assert_output "$SHARED/sha256/$TSHA"
	assert_cached_once "$SHARED"
}

@test "cache: a fetch waits while a process holds the file's fcntl lock (as another node would)" {
	export ENTER_DEVROOT_CACHE=$SHARED
	enter-devroot fetch t --index "$HTTP/fast-index" >/dev/null
	# A POSIX lock from a process that is not enter-devroot: it conflicts with the fetch's
	# lock only if that lock is an fcntl lock too (an flock would not see it). The holder
	# writes the time it lets go; the fetch, cached already, must end after that.
	python3 -c '
import fcntl, sys, time
f = open(sys.argv[1], "a")
fcntl.lockf(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(2)
open(sys.argv[3], "w").write("%.3f" % time.time())
f.close()' "$SHARED/locks/$TSHA.lock" "$T/held" "$T/released" &
	local holder=$! i
	for ((i = 0; i < 50; i++)); do
		[[ -e $T/held ]] && break
		sleep 0.1
	done
	[[ -e $T/held ]] || fail "the lock holder did not start"
	run --separate-stderr bounded enter-devroot fetch t --index "$HTTP/fast-index"
	local done_at
	done_at=$(date +%s.%N)
	wait "$holder"
	assert_success
	assert_output "$SHARED/sha256/$TSHA"
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' \
		"$done_at" "$(cat "$T/released")" || fail "the fetch did not wait for the fcntl lock"
}

@test "cache: a fetch waiting for another process's lock ends at once on SIGTERM" {
	export ENTER_DEVROOT_CACHE=$SHARED
	mkdir -p "$SHARED/locks"
	# The lock held as another node's download would hold it, for longer than the test.
	python3 -c '
import fcntl, sys, time
f = open(sys.argv[1], "a")
fcntl.lockf(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(60)' "$SHARED/locks/$TSHA.lock" "$T/held" &
	local holder=$! i fetch rc=0
	for ((i = 0; i < 50; i++)); do
		[[ -e $T/held ]] && break
		sleep 0.1
	done
	[[ -e $T/held ]] || fail "the lock holder did not start"
	enter-devroot fetch t --index "$HTTP/fast-index" >/dev/null 2>"$T/fetch.err" &
	fetch=$!
	# Not a terminal: the fetch waits without a word. Cached in no time once it has the lock.
	sleep 1
	kill -0 "$fetch" 2>/dev/null || { kill "$holder"; fail "the fetch did not wait: $(cat "$T/fetch.err")"; }
	SECONDS=0
	kill -TERM "$fetch"
	wait "$fetch" || rc=$?
	kill "$holder" 2>/dev/null || true
	wait "$holder" || true
	[[ $rc -eq 143 && $SECONDS -le 2 ]] || fail "status $rc after $SECONDS s: $(cat "$T/fetch.err")"
	grep -q 'interrupted: nothing created' "$T/fetch.err" || fail "$(cat "$T/fetch.err")"
	assert_cache_sound "$SHARED"
}

@test "cache: a file altered in the shared cache is caught before use, deleted and fetched again" {
	export ENTER_DEVROOT_CACHE=$SHARED
	enter-devroot fetch t --index "$HTTP/fast-index" >/dev/null
	# Same size, other bytes: what a bad disk or another writer of the share could leave.
	head -c "$TSIZE" /dev/zero >"$SHARED/sha256/$TSHA"
	MARK=$(wc -l <"$S/http.log")
	run --separate-stderr srun_ -N2 -n2 enter-devroot fetch t --index "$HTTP/fast-index"
	assert_success
	[[ $stderr == *"cached file $SHARED/sha256/$TSHA is corrupt"* ]] || fail "no warning
$(last_run)"
	[[ $(downloads) -eq 1 ]] || fail "fetched $(downloads) times"
	assert_cached_once "$SHARED"
}

@test "cache: ENTER_DEVROOT_CACHE must be an absolute path" {
	run --separate-stderr env ENTER_DEVROOT_CACHE=rel/dir enter-devroot fetch t --index "$HTTP/index"
	assert_status 125
	assert_equal "$stderr" "enter-devroot: ENTER_DEVROOT_CACHE 'rel/dir': not an absolute path"
	[[ ! -e rel ]] || fail "created something at the relative path"
}
