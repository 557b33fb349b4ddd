#!/usr/bin/env bats
# Warm runs in userns mode (src/enter/stepns.c, issue 28): `run` keeps the namespaces it made
# (the keeper) for ENTER_DEVROOT_KEEP_IDLE seconds and the next run of the same view joins
# them. What they must keep: a run joins only the view it asked for, its command's processes
# die with it (each run has a PID namespace and /proc of its own in the kept user and mount
# namespaces), no keeper outlives its idle time or `remove`, and `list` shows what is kept.
# Two users never share: root.bats (it needs a second user). tests/host/run runs this file
# on both layouts (tests/lib/layout.bash).

load common

setup() {
	edr_setup
	is_root && skip "userns mode is about unprivileged callers"
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	create_default r
	export ENTER_DEVROOT_KEEP_IDLE=300
	# The default root has no etc/resolv.conf: a run makes it empty to bind on, and a run
	# whose view would create a mount point runs cold (what it keys on would change).
	prime r
}

# prime NAME ARGS...: a cold run that makes the mount points of NAME's view with ARGS.
prime() {
	local name=$1
	shift
	ENTER_DEVROOT_KEEP_IDLE=0 "$EDR_BIN" run --mode userns "$name" "$@" -- true </dev/null
}

teardown() {
	# No keeper of this test may outlive it, whatever failed.
	[[ ! -d $(store)/roots/r ]] || "$EDR_BIN" remove --force r >/dev/null 2>&1 || true
	[[ ! -d $(store)/roots/r2 ]] || "$EDR_BIN" remove --force r2 >/dev/null 2>&1 || true
	edr_teardown
}

# holder NAME: the PID that holds overlay root NAME's mount, if `list` shows it keeping NAME
# warm (its state file, locks/NAME@warm-root.ns, names it).
holder() {
	local pid
	pid=$(sed -n 's/^\([0-9]*\) .*/\1/p' "$(store)/locks/$1@warm-root.ns" 2>/dev/null)
	[[ -n $pid && " $(warm_pids "$1") " == *" $pid "* ]] && echo "$pid"
	return 0
}

# keepers NAME: the PIDs `list` says keep NAME's warm runs' namespaces (its WARM column
# less the holder), one a line.
keepers() {
	local h p
	h=$(holder "$1")
	for p in $(warm_pids "$1"); do [[ $p == "$h" ]] || echo "$p"; done
}

# userns PID: the user namespace of host process PID.
userns() { readlink "/proc/$1/ns/user"; }

# VIEW_ID: what names the view a command runs in, from inside: its user namespace (a
# keeper's, or a cold run's own) and the device of its /dev (the tmpfs the view's maker
# mounted: an overlay root's keepers share the user namespace of the root's holder).
VIEW_ID='echo "$(readlink /proc/self/ns/user) $(stat -c %d /dev)"'

# ns_of_run ARGS...: the view a `run ARGS -- ...` command is in.
ns_of_run() { "$EDR_BIN" run --mode userns "$@" -- sh -c "$VIEW_ID" </dev/null; }

# in_ns_of PID COMM: the caller's processes named COMM in host process PID's user
# namespace (other tests of this user may run their own sleeps).
in_ns_of() {
	local ns p
	ns=$(userns "$1") || return 0
	for p in $(pgrep -u "$(id -u)" -x "$2"); do
		[[ $(userns "$p" 2>/dev/null) == "$ns" ]] && echo "$p"
	done
	return 0
}

# running PID: host process PID exists and is not a zombie (an exited process whose new
# parent, PID 1 of this host or container, has not reaped it yet).
running() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ ${st%% *} != Z ]]
}

# gone PID: wait up to 10 s for host process PID to exit.
gone() {
	local i
	for i in $(seq 100); do
		running "$1" || return 0
		sleep 0.1
	done
	return 1
}

@test "warm: an overlay root's runs join a keeper too (its mount points are in the upper and the layers)" {
	"$EDR_BIN" create r2 --overlay --from "$EDR_TEMPLATE" --quiet || skip "no overlay roots here"
	prime r2
	first=$(ns_of_run r2)
	mapfile -t k < <(keepers r2)
	[[ ${#k[@]} -eq 1 ]] || fail "expected one keeper of the overlay root's runs in list, got: ${k[*]}"
	[[ -n $(holder r2) ]] || fail "list does not show the root's holder: $("$EDR_BIN" list)"
	assert_equal "$(userns "${k[0]}")" "${first%% *}"
	assert_equal "$(ns_of_run r2)" "$first"
	# Deleted inside (a whiteout over the layer's file) and made again: a new view, not the kept one.
	ENTER_DEVROOT_KEEP_IDLE=0 "$EDR_BIN" run --mode userns --no-host-dns r2 -- rm /etc/hosts </dev/null
	prime r2
	[[ $(ns_of_run r2) != "$first" ]] || fail "joined a view whose /etc/hosts was replaced"
}

@test "warm: list's standard output is its table only, the keeper's PID in the WARM column and in --json" {
	"$EDR_BIN" run --mode userns r -- true </dev/null
	create_default cold
	edr_run list
	assert_status 0
	[[ -z $stderr ]] || fail "list said: $stderr"
	# What scripts do with the table: the first column is the names, nothing else.
	assert_equal "$(awk 'NR > 1 { print $1 }' <<<"$output" | sort | tr '\n' ' ')" "cold r "
	assert_equal "$(head -1 <<<"$output" | awk '{ print $6 }')" WARM
	# A keeper of its warm runs (and, for an overlay root, the holder of its one mount, in
	# whose user namespace the keeper is made).
	local pids pid ns
	pids=$(warm_column r <<<"$output")
	[[ $pids =~ ^[0-9]+( [0-9]+)?$ ]] || fail "not one or two PIDs in r's WARM column: $output"
	ns=$("$EDR_BIN" run --mode userns r -- readlink /proc/self/ns/user </dev/null)
	for pid in $pids; do
		running "$pid" && [[ $(userns "$pid") == "$ns" ]] || fail "process $pid does not keep r's namespaces"
	done
	assert_equal "$(awk '$1 == "cold" { print $6 }' <<<"$output")" -
	edr_run list --json
	assert_status 0
	assert_equal "$(python3 -c 'import json, sys
for r in sorted(json.load(sys.stdin), key=lambda r: r["name"]): print(r["name"], r["warm_pids"])' <<<"$output")" \
		"cold []"$'\n'"r [${pids// /, }]"
}

@test "warm: a second run joins the namespaces the first one left to a keeper" {
	first=$(ns_of_run r)
	mapfile -t k < <(keepers r)
	[[ ${#k[@]} -eq 1 ]] || fail "expected one keeper in list, got: ${k[*]}"
	# The keeper holds the first run's view...
	[[ $(userns "${k[0]}") == "${first%% *}" ]] || fail "the keeper is not in the run's user namespace"
	# ...the second run's command is in it, and no new keeper was made.
	assert_equal "$(ns_of_run r)" "$first"
	assert_equal "$(keepers r)" "${k[0]}"
	# It sees what a run promises: a /proc of its own, in a PID namespace of its own (our
	# init its PID 1, the command 2, nothing of another run), /dev, the DNS files.
	edr_run run --mode userns r -- sh -c 'cat /proc/1/comm; echo $$; set -- /proc/[0-9]*; echo $#;
		test -c /dev/null && test -c /dev/urandom &&
		test -d /dev/pts && cmp -s /etc/resolv.conf /etc/resolv.conf && echo dev-ok;
		grep -c . /etc/hosts >/dev/null && echo dns-ok'
	assert_status 0
	assert_equal "$output" $'enter-devroot\n2\n2\ndev-ok\ndns-ok'
	[[ $(readlink "/proc/${k[0]}/ns/pid") != "$("$EDR_BIN" run --mode userns r -- readlink /proc/self/ns/pid </dev/null)" ]] ||
		fail "a warm run's command is in the keeper's PID namespace"
	# -v says so; the one mount a warm run makes is its /proc.
	edr_run -v run --mode userns r -- true
	assert_status 0
	[[ $stderr == *"warm run: joining the namespaces kept by process ${k[0]} "* ]] || fail "$(last_run)"
	[[ $(grep -c ": mount " <<<"$stderr") -le 1 && ( $stderr != *": mount "* || $stderr == *": mount proc -> "* ) ]] ||
		fail "a warm run mounted more than its /proc: $(last_run)"
	# The exit statuses are a cold run's.
	edr_run run --mode userns r -- sh -c 'exit 7'
	assert_status 7
	edr_run run --mode userns r -- sh -c 'kill -TERM $$'
	assert_status 143
	edr_run_127 run --mode userns r -- no-such-command
	assert_status 127
	assert_equal "$(keepers r)" "${k[0]}"
}

@test "warm: ENTER_DEVROOT_KEEP_IDLE=0 and keep-idle = 0 keep nothing; a bad value is one line" {
	ENTER_DEVROOT_KEEP_IDLE=0 ns_of_run r >/dev/null
	assert_equal "$(keepers r)" ""
	unset ENTER_DEVROOT_KEEP_IDLE
	mkdir -p "$XDG_CONFIG_HOME/enter-devroot"
	printf '# warm runs off\nkeep-idle = 0\n' >"$XDG_CONFIG_HOME/enter-devroot/config"
	ns_of_run r >/dev/null
	assert_equal "$(keepers r)" ""
	# The store reads the same file: the key is known to it.
	edr_run cache list
	[[ $stderr != *"unknown key"* ]] || fail "$(last_run)"
	printf 'keep-idle = 5\n' >"$XDG_CONFIG_HOME/enter-devroot/config"
	ns_of_run r >/dev/null
	[[ -n $(keepers r) ]] || fail "keep-idle = 5 kept nothing"
	ENTER_DEVROOT_KEEP_IDLE=soon edr_run run --mode userns r -- true
	assert_edr_error "$EDR_TOOL_EXIT" ENTER_DEVROOT_KEEP_IDLE soon
}

@test "warm: no keeper once the idle time has passed with no run; a run restarts the clock" {
	export ENTER_DEVROOT_KEEP_IDLE=2
	ns_of_run r >/dev/null
	k=$(keepers r)
	[[ -n $k ]] || fail "no keeper"
	sleep 1
	ns_of_run r >/dev/null
	sleep 1.5 # 2.5 s after the first run, 1.5 s after the second
	assert_equal "$(keepers r)" "$k"
	h=$(holder r)
	[[ -n $h || $(edr_layout) == flat ]] || fail "no holder of the overlay root's mount"
	gone "$k" || fail "keeper $k still runs 10 s after the last run with a 2 s idle time"
	# An overlay root's holder outlives the keepers made in its namespaces, then idles too.
	[[ -z $h ]] || gone "$h" || fail "the root's holder $h still runs 10 s after the keeper"
	assert_equal "$(keepers r)" ""
	run ls "$(store)/locks"
	refute_output --partial "@warm-"
}

@test "warm: a run is not ended by the idle time, however long it takes" {
	export ENTER_DEVROOT_KEEP_IDLE=1
	edr_run run --mode userns r -- sh -c 'sleep 3; echo done'
	assert_status 0
	assert_output done
}

@test "warm: remove and remove --force kill the keeper and everything in its namespaces" {
	ns_of_run r >/dev/null
	k=$(keepers r)
	[[ -n $k ]] || fail "no keeper"
	edr_run remove r
	assert_status 0
	running "$k" && fail "keeper $k survived remove"
	# --force, with a run still in it.
	create_default r
	prime r
	"$EDR_BIN" run --mode userns r -- sleep 300 </dev/null &
	bg=$!
	# Up to 30 s on a loaded machine (the CI runs suites side by side), the keeper read again
	# each time: one PID, its run's sleep in its namespaces.
	s=
	for i in $(seq 300); do
		k=$(keepers r)
		[[ $(wc -w <<<"$k") -eq 1 ]] && s=$(in_ns_of "$k" sleep) && [[ -n $s ]] && break
		sleep 0.1
	done
	[[ -n $k ]] || fail "no keeper"
	[[ -n $s ]] || fail "the run's sleep never started (keepers: $k)"
	edr_run remove --force r
	assert_status 0
	running "$k" && fail "keeper $k survived remove --force"
	running "$s" && fail "the run's sleep $s survived remove --force"
	wait "$bg" || true
}

@test "warm: runs with other binds, --root or --no-host-dns never join; the same ones do" {
	mkdir -p "$W/a" "$W/b"
	ENTER_DEVROOT_KEEP_IDLE=0 "$EDR_BIN" run --mode userns r -- mkdir -p /mnt </dev/null
	plain=$(ns_of_run r)
	a=$(ns_of_run r --bind "$W/a:/mnt")
	b=$(ns_of_run r --bind "$W/b:/mnt")
	ro=$(ns_of_run r --bind "$W/a:/mnt:ro")
	root=$(ns_of_run r --root)
	nodns=$(ns_of_run r --no-host-dns)
	run sort -u < <(printf '%s\n' "$plain" "$a" "$b" "$ro" "$root" "$nodns")
	[[ ${#lines[@]} -eq 6 ]] || fail "views shared namespaces: $plain $a $b $ro $root $nodns"
	assert_equal "$(ns_of_run r --bind "$W/a:/mnt")" "$a"
	assert_equal "$(keepers r | wc -l)" 6
	# What a joined run sees under /mnt is its own bind's.
	touch "$W/b/only-b"
	edr_run run --mode userns r --bind "$W/b:/mnt" -- ls /mnt
	assert_output only-b
	# Another directory under the root's path (the old one's keeper still running, its view
	# that of the old directory) is another view.
	[[ $(edr_layout) == flat ]] || return 0 # an overlay root's directory is its mount point
	mv "$(root_of r)" "$W/old-r"
	cp -a "$W/old-r" "$(root_of r)"
	touch "$(root_of r)/new-one"
	prime r
	edr_run run --mode userns r -- sh -c "$VIEW_ID; ls /new-one"
	assert_status 0
	[[ ${lines[0]} != "$plain" ]] || fail "a new directory joined the old one's keeper"
}

@test "warm: what a run's command leaves running dies with it, even with the run killed" {
	ns_of_run r >/dev/null
	k=$(keepers r)
	# Daemonised (setsid, double fork) and left behind at exit: gone with the run's PID
	# namespace.
	edr_run run --mode userns r -- sh -c 'setsid sh -c "sleep 300 &" ; sleep 300 &'
	assert_status 0
	count() { in_ns_of "$k" sleep | wc -l; }
	assert_equal "$(count)" 0
	# The run killed with SIGKILL: its init (PID 1 of the run's namespace) dies with it,
	# and so does everything in the namespace.
	"$EDR_BIN" run --mode userns r -- sh -c 'setsid sh -c "sleep 300 &"; sleep 300' </dev/null &
	bg=$!
	for i in $(seq 100); do [[ $(count) -ge 2 ]] && break; sleep 0.1; done
	[[ $(count) -ge 2 ]] || fail "the run's sleeps never started"
	kill -KILL "$bg"
	for i in $(seq 50); do [[ $(count) -eq 0 ]] && break; sleep 0.1; done
	assert_equal "$(count)" 0
	assert_equal "$(keepers r)" "$k"
}

@test "warm: a cancelled run ends whole: what ignored SIGTERM, called setsid or double-forked is gone when it returns" {
	ns_of_run r >/dev/null
	k=$(keepers r)
	[[ -n $k ]] || fail "no keeper"
	count() { pgrep -u "$(id -u)" -f "^sleep 37[78]\$" | wc -l; }
	local job='trap "" TERM; (setsid sh -c "trap \"\" TERM; exec sleep 377" &); exec sleep 377'
	run timeout -s TERM 3 "$EDR_BIN" run --mode userns r -- sh -c "$job" </dev/null
	assert_status 124
	assert_equal "$(count)" 0
	# --timeout the same, and the keeper outlives the job.
	edr_run run --mode userns --timeout 2 r -- sh -c "${job//377/378}"
	assert_status 124
	assert_equal "$(count)" 0
	assert_equal "$(keepers r)" "$k"
}

@test "warm: a keeper recorded for a process that is not it is never joined" {
	first=$(ns_of_run r)
	k=$(keepers r)
	state=$(ls "$(store)"/locks/r@warm-*.ns | grep -v '@warm-root\.ns$')
	# The state names our own shell (alive, ours, but another start time than recorded).
	sed -i "s/^$k /$$ /" "$state"
	assert_equal "$(keepers r)" ""
	n=$(ns_of_run r)
	[[ $n != "$first" && ${n%% *} != "$(userns $$)" ]] || fail "joined a process not the keeper"
	[[ -n $(keepers r) && $(keepers r) != "$k" ]] || fail "no new keeper: $(keepers r)"
}

@test "warm: a file the view mounts on, deleted or replaced on the host since, makes a new view" {
	[[ -f /etc/resolv.conf ]] || skip "the host has no /etc/resolv.conf"
	flat_only "it replaces the root's files from the host"
	first=$(ns_of_run r)
	# Deleted on the host: in the keeper's mount namespace the bind on it went with it.
	rm -f "$(root_of r)/etc/resolv.conf"
	edr_run run --mode userns r -- sh -c "$VIEW_ID; grep . /etc/resolv.conf"
	assert_status 0
	[[ ${lines[0]} != "$first" ]] || fail "joined a view whose /etc/resolv.conf is gone"
	assert_equal "$(printf '%s\n' "${lines[@]:1}")" "$(grep . /etc/resolv.conf)"
	# A bind's destination replaced likewise.
	mkdir -p "$W/a"
	touch "$W/a/mark"
	prime r --bind "$W/a:/mnt/a"
	a=$(ns_of_run r --bind "$W/a:/mnt/a")
	assert_equal "$(ns_of_run r --bind "$W/a:/mnt/a")" "$a"
	rm -rf "$(root_of r)/mnt/a"
	mkdir "$(root_of r)/mnt/a"
	edr_run run --mode userns r --bind "$W/a:/mnt/a" -- sh -c "$VIEW_ID; ls /mnt/a"
	assert_status 0
	[[ ${lines[0]} != "$a" ]] || fail "joined a view whose bind destination was replaced"
	assert_equal "${lines[1]}" mark
}

@test "warm: a mount point beyond a symlink in the root is no identity: every run makes its own view" {
	flat_only "it replaces the root's etc from the host"
	# What a run keys on is looked up beneath the root through no symlink: the root is the
	# job's to change, and a symlink on the way leads wherever it likes (here, to a
	# directory of the host, whose resolv.conf would be the identity of the root's).
	root=$(root_of r)
	mkdir -p "$W/etc"
	cp "$root/etc/passwd" "$root/etc/group" "$W/etc/"
	touch "$W/etc/resolv.conf" "$W/etc/hosts"
	mv "$root/etc" "$root/etc.real"
	ln -s "$W/etc" "$root/etc"
	edr_run run --mode userns r -- true
	assert_status 0
	edr_run -v run --mode userns r -- true
	assert_status 0
	[[ $stderr != *"warm run: joining"* ]] || fail "joined a view keyed through a symlink: $(last_run)"
	# (Not the runs' PID namespaces compared: a cold run's is gone when it ends, and the
	# next one may get its inode number.)
	[[ -z $(keepers r) ]] || fail "a keeper holds a view keyed through a symlink: $(keepers r)"
	rm "$root/etc"
	mv "$root/etc.real" "$root/etc"
}

# With user.max_user_namespaces=0 (set here in a user namespace of the test's own, where it
# is per namespace) no namespace can be kept: the run starts no keeper and fails at its own
# clone. The old code forked a keeper's holder first, whose clone failed too, and exited on
# a flag that a flaky TCG guest once saw set: 125 and nothing said (guest modes.bats 24).
@test "warm: where user.max_user_namespaces=0 a run starts no keeper: one clone, one line, 125" {
	command -v strace >/dev/null || skip "strace not installed (apt-get install strace)"
	run --separate-stderr unshare -U -r sh -c '
		echo 0 > /proc/sys/user/max_user_namespaces || exit 99
		exec strace -f -qq -o "$1" -e trace=clone,clone3,fork,vfork "$2" run --mode userns r -- true
	' sh "$T/trace" "$EDR_BIN"
	[[ $status -ne 99 ]] || skip "user.max_user_namespaces cannot be set in a user namespace here"
	assert_edr_error 125 "cannot enter root 'r'" "user.max_user_namespaces=0"
	run grep -c 'clone' "$T/trace"
	[[ $output == 1 ]] || fail "expected one clone (the job's, refused), got: $(cat "$T/trace")"
	grep -q 'CLONE_NEWUSER.*ENOSPC' "$T/trace" || fail "the one clone is not the refused job's: $(cat "$T/trace")"
	[[ -z $(keepers r) ]] || fail "a keeper was left: $(keepers r)"
}
