#!/usr/bin/env bats
# CI build environments in userns mode (issue 15): /proc in the job's own PID
# namespace, --bind, cancellation and --timeout, throwaway roots (run --ephemeral).
# chroot mode: tests/guest/ci.bats.

load common
load ../lib/jobs

setup() {
	edr_setup
	is_root && skip "userns mode is about unprivileged callers (root chroots: root.bats)"
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	create_default r
}
teardown() {
	kill_job_processes
	edr_teardown
}

# --- /proc ---------------------------------------------------------------------

@test "proc: the job has its own PID namespace and a fresh /proc: the command is PID 2 under our PID 1" {
	export ENTER_DEVROOT_KEEP_IDLE=0 # a cold run (a warm run's PID 1 is the keeper: warm.bats)
	edr_run run r -- sh -c 'echo $$; cat /proc/1/cmdline | tr "\0" " "; echo; ls /proc | grep -c "^[0-9]"'
	assert_status 0
	assert_equal "${lines[0]}" 2
	assert_regex "${lines[1]}" "enter-devroot run r"
	# PID 1, the shell and ls: nothing of the host
	(( lines[2] <= 4 )) || fail "the job sees ${lines[2]} processes in /proc"
}

@test "proc: ps works inside and shows the job's processes only" {
	export ENTER_DEVROOT_KEEP_IDLE=0 # a cold run (a warm one's /proc shows its keeper too)
	edr_run run r -- ps -o pid,args
	assert_status 0
	assert_equal "${#lines[@]}" 3
	assert_regex "${lines[2]}" "^ *2 ps -o pid,args$"
}

@test "proc: PID 1 holds no capability" {
	edr_run run r -- grep -E '^Cap(Inh|Prm|Eff|Amb):' /proc/1/status
	assert_status 0
	assert_equal "$(echo "$output" | awk '{print $2}' | sort -u)" 0000000000000000
}

@test "proc: /sys stays absent (the root's empty directory)" {
	edr_run run r -- ls -A /sys
	assert_status 0
	assert_output ""
}

@test "proc: PID 1 reaps orphans (no zombie while the command runs)" {
	edr_run run r -- sh -c '(sleep 0.1 &); sleep 0.6; grep -l "^State:.*Z" /proc/[0-9]*/status | wc -l'
	assert_status 0
	assert_output 0
}

@test "proc: exit statuses and signals pass through PID 1 and the supervisor" {
	edr_run run r -- sh -c 'exit 42'
	assert_status 42
	run -143 "$EDR_BIN" run r -- sh -c 'kill -TERM $$'
	run -137 "$EDR_BIN" run r -- sh -c 'kill -KILL $$'
	edr_run_127 run r -- no-such-command
	assert_status 127
}

# --- cancellation ----------------------------------------------------------------

@test "cancel: SIGTERM to run kills the command and its daemonised grandchild (setsid, double fork, SIGTERM ignored); run dies of SIGTERM" {
	need_probe
	install_probe r
	start_daemon_job r
	[[ -n $(job_processes) ]] || fail "no daemon running before the cancellation"
	kill -TERM "$JOB"
	wait_job
	assert_equal "$JOB_STATUS" 143
	assert_equal "$(job_processes)" ""
}

@test "cancel: SIGINT and SIGHUP are passed on too, with their conventional statuses" {
	local sig want
	for sig in INT:130 HUP:129; do
		want=${sig#*:}
		"$EDR_BIN" run r -- sleep 30 &
		JOB=$!
		sleep 0.5
		kill -"${sig%:*}" "$JOB"
		wait_job
		assert_equal "$JOB_STATUS" "$want"
	done
}

@test "cancel: a command that ignores SIGTERM is killed 5 s later, with everything it started" {
	need_probe
	install_probe r
	start_daemon_job r stubborn
	local t0=$SECONDS
	kill -TERM "$JOB"
	wait_job
	assert_equal "$JOB_STATUS" 143
	(( SECONDS - t0 >= 4 )) || fail "killed after $((SECONDS - t0)) s, before the grace period"
	assert_equal "$(job_processes)" ""
}

@test "cancel: when the command exits, what it left running is killed" {
	need_probe
	install_probe r
	edr_run run r -- sh -c '/edr-probe daemon "$1" > /dev/null & sleep 0.5; exit 3' sh "$JOB_TOKEN"
	assert_status 3
	assert_equal "$(job_processes)" ""
}

@test "timeout: --timeout stops the command and everything it started, exit 124 with one line" {
	need_probe
	install_probe r
	start_daemon_job r --timeout 1
	wait_job
	assert_equal "$JOB_STATUS" 124
	assert_equal "$(cat "$T/job.err")" "enter-devroot: warning: timed out after 1 s: stopping the command"
	assert_equal "$(job_processes)" ""
}

@test "timeout: a command that ends in time keeps its status" {
	edr_run run --timeout 30 r -- sh -c 'exit 7'
	assert_status 7
}

@test "timeout: a value that is not whole seconds from 1 is a usage error" {
	local v
	for v in 0 -1 abc 1.5 "" 99999999999; do
		edr_run run --timeout "$v" r -- true
		assert_edr_error "$EDR_TOOL_EXIT" "--timeout"
	done
}

# --- --bind ----------------------------------------------------------------------

@test "bind: a host directory appears at DST (created in the root), writes reach the host" {
	mkdir -p "$W/src"
	echo hello > "$W/src/in"
	edr_run run --bind "$W/src:/work/src" r -- sh -c 'cat /work/src/in; echo out > /work/src/out'
	assert_status 0
	assert_output hello
	assert_equal "$(cat "$W/src/out")" out
	[[ -d $(root_of r)/work/src ]] || fail "DST was not created in the root"
	[[ ! -e $(root_of r)/work/src/in ]] || fail "the root's DST holds the host's files after the run"
}

@test "bind: several binds, :ro is read-only inside (submounts included)" {
	mkdir -p "$W/a" "$W/b"
	echo a > "$W/a/f"
	edr_run run --bind "$W/a:/a:ro" --bind "$W/b:/b" r -- sh -c 'cat /a/f; echo x > /a/g || echo refused; echo y > /b/g'
	assert_status 0
	assert_line --index 0 a
	assert_line --index 1 refused
	[[ ! -e $W/a/g ]] || fail "a :ro bind was written"
	assert_equal "$(cat "$W/b/g")" y
}

@test "bind: bad input is one line naming it, exit 125, nothing created in the root" {
	mkdir -p "$W/src" "$(root_of r)/opt"
	echo f > "$W/file"
	ln -s /tmp "$(root_of r)/opt/link"
	echo x > "$(root_of r)/opt/plain"
	local before spec
	before=$(snapshot "$(root_of r)")
	for spec in "src:/x" "$W/missing:/x" "/dev/null:/x" "$W/src:x" "$W/src:/a/../x" "$W/src:/" \
		"$W/src" "$W/src:/opt/link/x" "$W/src:/opt/plain/x"; do
		edr_run run --bind "$spec" --bind "$W/src:/fresh" r -- true
		assert_edr_error "$EDR_TOOL_EXIT" "${spec%%:*}"
		assert_equal "$(snapshot "$(root_of r)")" "$before"
	done
}

@test "bind: a host file and a socket (~/.gitconfig, \$SSH_AUTH_SOCK) appear at DST, made an empty file in the root" {
	printf '[user]\n\tname = Me\n' > "$W/gitconfig"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$W/agent.sock"
	edr_run run --bind "$W/gitconfig:/home/me/.gitconfig:ro" --bind "$W/agent.sock:/run/agent.sock" r \
		-- sh -c 'cat /home/me/.gitconfig; [ -S /run/agent.sock ] && echo socket'
	assert_status 0
	assert_output "$(printf '[user]\n\tname = Me\nsocket')"
	[[ -f $(root_of r)/home/me/.gitconfig && ! -s $(root_of r)/home/me/.gitconfig ]] ||
		fail "DST was not made an empty file in the root"
	[[ -f $(root_of r)/run/agent.sock ]] || fail "the socket's DST is not an empty file in the root"
}

@test "bind: a file on a directory of the root, or a directory on a file, is one line naming DST" {
	mkdir -p "$W/src" "$(root_of r)/opt/dir"
	echo f > "$W/file"
	echo x > "$(root_of r)/opt/plain"
	edr_run run --bind "$W/file:/opt/dir" r -- true
	assert_edr_error "$EDR_TOOL_EXIT" "'dir' is a directory"
	edr_run run --bind "$W/src:/opt/plain" r -- true
	assert_edr_error "$EDR_TOOL_EXIT" "'plain' is not a directory"
	ln -s /etc/passwd "$(root_of r)/opt/flink"
	edr_run run --bind "$W/file:/opt/flink" r -- true
	assert_edr_error "$EDR_TOOL_EXIT" "'flink' is a symlink in the root"
}

@test "bind: a DST through a symlink in the root names the symlink" {
	mkdir -p "$W/src" "$(root_of r)/opt"
	ln -s / "$(root_of r)/opt/up"
	edr_run run --bind "$W/src:/opt/up/etc" r -- true
	assert_edr_error "$EDR_TOOL_EXIT" "'up' is a symlink in the root"
	[[ ! -e $(root_of r)/etc/up ]]
}

@test "bind: --mode chroot refuses --bind with one line before anything happens" {
	mkdir -p "$W/src"
	edr_run run --mode chroot --bind "$W/src:/x" r -- true
	assert_edr_error "$EDR_TOOL_EXIT" "--bind" "chroot mode makes no mounts"
	[[ ! -e $(root_of r)/x ]]
}

# --- run --ephemeral -----------------------------------------------------------------

# assert_no_roots: list shows nothing and the store holds no root, metadata or lock of a
# throwaway root.
assert_no_roots() {
	assert_equal "$("$EDR_BIN" list)" ""
	assert_equal "$(ls -A "$(store)/roots")" ""
	assert_equal "$(ls -A "$(store)/meta" | grep -v '^r\.json$' || true)" ""
	assert_equal "$(ls -A "$(store)/locks" | grep ephemeral || true)" ""
	assert_equal "$(ls -A "$(store)/staging" || true)" ""
}

@test "ephemeral: run --ephemeral creates a root with a unique name, runs in it, removes it" {
	"$EDR_BIN" remove r
	edr_run run --ephemeral --from "$EDR_TEMPLATE" -- sh -c 'echo $ENTER_DEVROOT_NAME; cat /etc/os-release 2>/dev/null | head -1; ls /bin/busybox'
	assert_status 0
	assert_regex "${lines[0]}" '^ephemeral-[0-9a-f]{16}$'
	assert_line /bin/busybox
	assert_no_roots
}

@test "ephemeral: two runs get two names" {
	"$EDR_BIN" remove r
	local a b
	a=$("$EDR_BIN" run --ephemeral -- sh -c 'echo $ENTER_DEVROOT_NAME')
	b=$("$EDR_BIN" run --ephemeral -- sh -c 'echo $ENTER_DEVROOT_NAME')
	[[ $a == ephemeral-* && $b == ephemeral-* && $a != "$b" ]] || fail "names: '$a' '$b'"
	assert_no_roots
}

@test "ephemeral: removed after a failing command, which keeps its status" {
	"$EDR_BIN" remove r
	edr_run run --ephemeral -- sh -c 'exit 9'
	assert_status 9
	assert_no_roots
}

@test "ephemeral: removed after a cancellation (SIGTERM), run dies of SIGTERM" {
	"$EDR_BIN" remove r
	"$EDR_BIN" run --ephemeral -- sh -c 'echo $ENTER_DEVROOT_NAME > /tmp/up; sleep 60' &
	JOB=$!
	local i
	for i in $(seq 100); do compgen -G "$(store)/roots/*/tmp/up" >/dev/null && break; sleep 0.1; done
	kill -TERM "$JOB"
	wait_job
	assert_equal "$JOB_STATUS" 143
	assert_no_roots
}

@test "ephemeral: a failing create exits 125 with its one line and leaves nothing" {
	"$EDR_BIN" remove r
	echo "not an archive" > "$W/bad.tar"
	edr_run run --ephemeral --from "$W/bad.tar" -- true
	assert_edr_error "$EDR_TOOL_EXIT" "bad.tar"
	assert_no_roots
}

# abandon_ephemeral_root: a run --ephemeral killed with SIGKILL once its root exists. Its
# source is one no create recorded: a cached image's throwaway root has no directory on
# the host at all (overlay.bats), this one is made by the store helper.
abandon_ephemeral_root() {
	"$EDR_BIN" remove r
	cp "$EDR_TEMPLATE" "$W/unrecorded.tar.gz"
	"$EDR_BIN" run --ephemeral --from "$W/unrecorded.tar.gz" -- sleep 60 &
	JOB=$!
	local i
	for i in $(seq 100); do [[ -n $(ls -A "$(store)/roots") ]] && break; sleep 0.1; done
	kill -KILL "$JOB"
	wait_job
}

@test "ephemeral: a run killed with SIGKILL leaves a root that list hides and the next create reaps" {
	abandon_ephemeral_root
	[[ -n $(ls -A "$(store)/roots") ]] || fail "no root left by the killed run"
	assert_equal "$("$EDR_BIN" list)" ""
	create_default later
	assert_equal "$(ls -A "$(store)/roots")" later
}

@test "ephemeral: doctor reaps an abandoned throwaway root too" {
	abandon_ephemeral_root
	edr_run doctor
	assert_status 0
	assert_line --regexp '^abandoned throwaway roots removed +1$'
	assert_no_roots
}

@test "ephemeral: doctor reaps the Slurm plugin's roots whose job squeue no longer knows, named ones of this host only, and half-removed ones" {
	local host
	"$EDR_BIN" remove r
	# squeue knows job 111 (running); of 222 it says what it says of a job it forgot.
	mkdir -p "$W/bin"
	cat >"$W/bin/squeue" <<'EOS'
#!/bin/sh
for a; do job=$a; done
[ "$job" = 111 ] && { echo RUNNING; exit 0; }
echo "slurm_load_jobs error: Invalid job id specified" >&2
exit 1
EOS
	chmod +x "$W/bin/squeue"
	# The plugin's name for this host (src/spank/options.c, host_part).
	host=$(hostname)
	host=${host%%.*}
	host=${host:0:20}
	host=${host//[^A-Za-z0-9-]/_}
	for name in slurm-111.0.0 slurm-222.0.0 "slurm-222-keep.$host" slurm-222-keep.elsewhere; do
		create_default "$name"
	done
	# And a root whose removal was killed half-way: moved aside into staging/, part deleted.
	mkdir -p "$(store)/staging/slurm-222.0.1.Ab3dEf/etc"
	PATH=$W/bin:$PATH edr_run doctor
	assert_status 0
	assert_line --regexp '^abandoned throwaway roots removed +2$'
	assert_equal "$(ls "$(store)/roots" | tr '\n' ' ')" "slurm-111.0.0 slurm-222-keep.elsewhere "
	assert_equal "$(ls -A "$(store)/staging")" ""
}

@test "ephemeral: usage errors: a NAME with --ephemeral, create options without it" {
	edr_run run r --ephemeral -- true
	assert_edr_error "$EDR_TOOL_EXIT" "--ephemeral" "'r'"
	edr_run run --template minimal r -- true
	assert_edr_error "$EDR_TOOL_EXIT" "--ephemeral"
	edr_run run --ephemeral --from a --template b -- true
	assert_edr_error "$EDR_TOOL_EXIT" "mutually exclusive"
	# As podman run --rm IMAGE CMD reads: r is no command to make a root for and then not
	# find inside; nothing is created.
	edr_run run --ephemeral r -- sh -c 'touch /made'
	assert_edr_error "$EDR_TOOL_EXIT" "--ephemeral" "takes no NAME" "'r' before '--'"
	assert_equal "$(ls -A "$(store)/roots")" r
}

@test "ephemeral: on a terminal, run --ephemeral does not advertise entering the root it deletes (create does)" {
	command -v script >/dev/null || skip "script(1) not installed (util-linux)"
	run script -qec "$EDR_BIN run --ephemeral -- true" /dev/null
	assert_success
	refute_output --partial "enter it with"
	run script -qec "$EDR_BIN create made" /dev/null
	assert_success
	assert_output --partial "enter it with 'enter-devroot enter made'"
}

@test "ephemeral: with --bind, artifacts land on the host and the root is gone" {
	"$EDR_BIN" remove r
	mkdir -p "$W/out"
	edr_run run --ephemeral --bind "$W/out:/out" -- sh -c 'echo built > /out/artifact'
	assert_status 0
	assert_equal "$(cat "$W/out/artifact")" built
	assert_no_roots
}

@test "ephemeral: --save exports the root after the command, before its removal; a failing command keeps its status and is saved too" {
	"$EDR_BIN" remove r
	edr_run run --ephemeral --save "$W/saved.tar.gz" -- sh -c 'echo made >/made'
	assert_status 0
	assert_no_roots
	[[ $(head -c2 "$W/saved.tar.gz" | od -An -tx1 | tr -d ' ') == 1f8b ]] || fail "not gzip (by the suffix)"
	"$EDR_BIN" create again --from "$W/saved.tar.gz" --quiet
	assert_equal "$(cat "$(root_of again)/made")" made
	"$EDR_BIN" remove again
	edr_run run --ephemeral --save "$W/saved.tar.zst" -- sh -c 'echo second >/made; exit 7'
	assert_status 7
	[[ $(head -c4 "$W/saved.tar.zst" | od -An -tx1 | tr -d ' ') == 28b52ffd ]] || fail "not zstd"
	"$EDR_BIN" create again --from "$W/saved.tar.zst" --quiet
	assert_equal "$(cat "$(root_of again)/made")" second
}

@test "ephemeral: --save refuses a directory, a file that is not an archive and a missing directory before anything runs" {
	"$EDR_BIN" remove r
	mkdir "$W/dir"
	echo "my notes" >"$W/notes.txt"
	local target
	for target in "$W/dir" "$W/notes.txt" "$W/nodir/x.tar"; do
		edr_run run --ephemeral --save "$target" -- sh -c ": >$W/ran"
		assert_status 125
		[[ $stderr == "enter-devroot: run --save $target: "*"nothing was run" ]] || fail "$(last_run)"
		[[ ! -e $W/ran ]] || fail "the command ran"
		assert_no_roots
	done
	assert_equal "$(cat "$W/notes.txt")" "my notes"
	edr_run run --save "$W/x.tar" r -- true
	assert_status 125
	[[ $stderr == *"--save exports the root --ephemeral creates"* ]] || fail "$(last_run)"
}

@test "ephemeral: a --save that fails after a successful command exits 125, says why, and the root is removed" {
	"$EDR_BIN" remove r
	mkdir "$W/out"
	edr_run run --ephemeral --bind "$W/out:$W/out" --save "$W/out/saved.tar" -- chmod 555 "$W/out"
	chmod 755 "$W/out"
	assert_status 125
	[[ $stderr == *"run --save: devroot ephemeral-"*" was not saved to $W/out/saved.tar (the line above says why)"* ]] ||
		fail "$(last_run)"
	[[ ! -e $W/out/saved.tar ]] || fail "an archive was written"
	assert_no_roots
}

@test "ephemeral: --save in a Slurm step: the last of the node's tasks to leave exports the root they shared" {
	"$EDR_BIN" remove r
	export SLURM_JOB_ID=$((RANDOM + 1000)) SLURM_STEP_ID=0 SLURMD_NODENAME=n1 SLURM_NODEID=0
	export SLURM_STEP_TASKS_PER_NODE=2
	SLURM_PROCID=0 edr_run run --ephemeral --save "$W/step.tar" -- sh -c 'echo 0 >/task0'
	assert_status 0
	[[ ! -e $W/step.tar ]] || fail "the first task to leave saved the root"
	[[ -d $(root_of "ephemeral-slurm-$SLURM_JOB_ID.0.n1") ]] || fail "the step's root is gone before its last task"
	SLURM_PROCID=1 edr_run run --ephemeral --save "$W/step.tar" -- sh -c 'echo 1 >/task1'
	assert_status 0
	assert_no_roots
	"$EDR_BIN" create again --from "$W/step.tar" --quiet
	assert_equal "$(cat "$(root_of again)/task0" "$(root_of again)/task1")" $'0\n1'
}
