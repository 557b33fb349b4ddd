#!/usr/bin/env bats
# Overlay roots (issue 28, LAYERS-CONTRACT): a root that is an overlay of its image's
# layers from the layer store and an upper of its own, mounted only inside the job's (or
# the store's) namespaces. The roots here are made as create makes them (layer trees in
# the store, roots/NAME empty, overlays/NAME/upper and work, metadata with "layers" and
# "layout":"overlay"), so that entering, export and remove are specified apart from the
# layer store's unpacking.

load common

userns_works() { unshare -U true 2>/dev/null; }

setup() {
	edr_setup
	userns_works || skip "unprivileged user namespaces are not available on this host"
	# The base layer: the default template; a second layer on top, per test.
	layer base
	BASE=$LID
	BASE_TREE=$LT
	tar -xzf "$EDR_TEMPLATE" -C "$BASE_TREE"
	mkdir -p "$BASE_TREE/data/sub" "$BASE_TREE/opq"
	echo lower > "$BASE_TREE/data/sub/f"
	echo gone > "$BASE_TREE/data/gone"
	echo hidden > "$BASE_TREE/opq/below"
}
teardown() { edr_teardown; }

# layer LABEL: an empty layer directory in the store, named by LABEL's SHA-256 (a fixture:
# the store does not check a tree against its name when it mounts it). Sets LID (the
# diff_id) and LT (its tree).
layer() {
	LID=sha256:$(printf %s "$1" | sha256sum | cut -d' ' -f1)
	LT=$XDG_CACHE_HOME/enter-devroot/layers/sha256/${LID#sha256:}/tree
	mkdir -p "$LT"
}

# overlay_root NAME DIFF_ID...: the root as create leaves it, layers bottom first.
overlay_root() {
	local name=$1 d layers
	d=$(store)
	shift
	mkdir -p "$d/roots/$name" "$d/overlays/$name/upper" "$d/overlays/$name/work" "$d/meta" \
		"$d/locks" "$d/staging"
	layers=$(printf '"%s", ' "$@")
	printf '{"name": "%s", "source": "fixture", "sha256": "", "created": "2026-01-01T00:00:00Z", "size_bytes": 0, "layers": [%s], "layout": "overlay"}\n' \
		"$name" "${layers%, }" > "$d/meta/$name.json"
}

# tree_state DIR: every entry's type, mode, size and content hash, to see that a layer is
# never written.
tree_state() {
	(cd "$1" && find . -printf '%p %y %m %s\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}

# Nothing of this test's is mounted on the host: no mount point and no overlay option
# names a path under its directory (the whole table is not compared: other suites on
# this machine mount and unmount at the same time).
assert_nothing_mounted_on_host() {
	! grep -F -- "$T" /proc/self/mountinfo ||
		fail "mounted on the host: $(grep -F -- "$T" /proc/self/mountinfo)"
}

@test "overlay: two roots of one image are isolated, and the layer is never written" {
	overlay_root a "$BASE"
	overlay_root b "$BASE"
	local before
	before=$(tree_state "$BASE_TREE")
	edr_run run a -- sh -c 'echo mine > /data/new; echo changed > /data/sub/f; rm /data/gone'
	assert_status 0
	edr_run run b -- sh -c 'ls /data; cat /data/sub/f'
	assert_status 0
	assert_output "gone
sub
lower"
	edr_run run a -- sh -c 'cat /data/new /data/sub/f; ls /data'
	assert_output "mine
changed
new
sub"
	[[ $(tree_state "$BASE_TREE") == "$before" ]] || fail "the layer changed"
	[[ $(cat "$(store)/overlays/a/upper/data/new") == mine ]] || fail "the write is not in a's upper"
	[[ -z $(ls -A "$(root_of a)") ]] || fail "the mount point on the host is not empty"
	assert_nothing_mounted_on_host
}

@test "overlay: a whiteout hides a lower file, an opaque directory the lower directory's entries" {
	layer top
	mknod "$LT/data" c 0 0 2>/dev/null && rm "$LT/data" || skip "no unprivileged 0/0 whiteouts (Linux < 5.8)"
	mkdir -p "$LT/data" "$LT/opq"
	mknod "$LT/data/gone" c 0 0
	echo above > "$LT/opq/above"
	setfattr -n user.overlay.opaque -v y "$LT/opq"
	overlay_root r "$BASE" "$LID"
	edr_run run r -- sh -c 'ls -a /data /opq; cat /data/gone'
	assert_status 1
	assert_output --partial "/data:
.
..
sub

/opq:
.
..
above"
	refute_output --partial below
}

@test "overlay: removing one root leaves another of the same layers whole, and no overlays/NAME" {
	overlay_root a "$BASE"
	overlay_root b "$BASE"
	edr_run run a -- sh -c 'echo a > /a; mkdir -p /d/e'
	edr_run run b -- sh -c 'echo b > /b'
	# overlayfs leaves work/work mode 000: remove must still get through it.
	[[ -d $(store)/overlays/a/work/work ]] || fail "no work/work to remove"
	edr_run remove a
	assert_status 0
	[[ ! -e $(store)/overlays/a && ! -e $(root_of a) && ! -e $(store)/meta/a.json ]] ||
		fail "a's overlays, root or metadata left: $(ls -R "$(store)")"
	[[ -z $(ls -A "$(store)/staging") ]] || fail "debris in staging: $(ls -A "$(store)/staging")"
	edr_run run b -- sh -c 'cat /b; cat /data/sub/f; ls /a 2>&1'
	assert_status 1
	assert_line --index 0 b
	assert_line --index 1 lower
	[[ -d $BASE_TREE/data ]] || fail "the layer went with the root"
	assert_nothing_mounted_on_host
}

@test "overlay: export writes the merged tree (layers, upper, whiteouts applied)" {
	layer top
	mkdir -p "$LT/data"
	mknod "$LT/data/gone" c 0 0 || skip "no unprivileged 0/0 whiteouts"
	overlay_root r "$BASE" "$LID"
	edr_run run r -- sh -c 'echo up > /data/up'
	edr_run export r "$W/r.tar" --compress none
	assert_status 0
	run tar -tf "$W/r.tar"
	assert_line ./data/up
	assert_line ./data/sub/f
	assert_line ./bin/busybox
	refute_line ./data/gone
	[[ $(tar -xOf "$W/r.tar" ./data/up) == up ]] || fail "the upper's file is not exported"
	assert_nothing_mounted_on_host
}

@test "overlay: --mode chroot refuses an overlay root in one line" {
	overlay_root r "$BASE"
	edr_run run r --mode chroot -- true
	assert_edr_error "$EDR_TOOL_EXIT" "'r'" "chroot mode" "user namespaces"
	[[ -z $(ls -A "$(store)/overlays/r/upper") ]] || fail "the upper changed"
}

@test "overlay: --mode auto and userns enter it; --root works on it" {
	overlay_root r "$BASE"
	edr_run run r --mode auto -- cat /data/sub/f
	assert_status 0
	assert_output lower
	edr_run run r --mode userns --root -- sh -c 'id -u; touch /as-root; ls -n /as-root'
	assert_status 0
	assert_line --index 0 0
	[[ -f $(store)/overlays/r/upper/as-root ]] || fail "--root's file is not in the upper"
	assert_nothing_mounted_on_host
}

@test "overlay: a layer missing from the store is one line naming it" {
	layer absent
	rm -r "${LT%/tree}"
	overlay_root r "$BASE" "$LID"
	edr_run run r -- true
	assert_edr_error "$EDR_TOOL_EXIT" "'r'" "$LID" "layer store"
}

@test "overlay: more layers than overlayfs stacks is one line" {
	local ids=() i
	for i in $(seq 501); do ids+=("sha256:$(printf '%064x' "$i")"); done
	overlay_root r "${ids[@]}"
	edr_run run r -- true
	assert_edr_error "$EDR_TOOL_EXIT" "'r'" "501 layers"
}

@test "overlay: the upper's user.overlay.redirect and metacopy are not followed, nor settable inside" {
	need_probe
	layer top
	mkdir -p "$BASE_TREE/secret" "$LT"
	echo lower-secret > "$BASE_TREE/secret/s"
	echo lower-data > "$BASE_TREE/meta-victim"
	overlay_root r "$BASE" "$LID"
	local up
	up=$(store)/overlays/r/upper
	# What a hostile upper could hold (written on the host, as the root's owner can): a
	# directory redirected to another lower path, an empty file claiming the lower's data.
	mkdir "$up/pub"
	setfattr -n user.overlay.redirect -v /secret "$up/pub"
	: > "$up/meta-victim"
	setfattr -n user.overlay.metacopy -v "" "$up/meta-victim"
	cp "$EDR_PROBE" "$up/edr-probe"
	edr_run run r -- sh -c 'echo "pub:[$(ls -A /pub)]"; echo "meta:[$(cat /meta-victim 2>&1)]"; /edr-probe setxattr /data user.overlay.opaque y; /edr-probe setxattr /pub user.overlay.redirect /secret'
	assert_line --index 0 "pub:[]"
	refute_output --partial lower-data
	refute_output --partial lower-secret
	# A process inside may try to set overlay xattrs through the merged tree: refused
	# (EOPNOTSUPP, or EPERM on a redirecting directory) before Linux 6.7, stored escaped (user.overlay.overlay.*) since, for a
	# nested overlay to read; either way never as this overlay's own.
	assert_line --index 2 --regexp '^(set|Operation not (supported|permitted))$'
	assert_line --index 3 --regexp '^(set|Operation not (supported|permitted))$'
	local x
	for x in "$up/data" "$up/pub"; do
		[[ ! -e $x ]] || ! getfattr --absolute-names -d -m - "$x" 2>/dev/null |
			grep -E '^user\.overlay\.(opaque|redirect)=' | grep -v -- /secret ||
			fail "an overlay xattr of this overlay's own reached $x from inside"
	done
	edr_run run r -- sh -c 'ls /data'
	assert_output "gone
sub"
}

@test "overlay: a Slurm step's tasks share one mount of it, made by the keeper" {
	is_root && skip "userns mode is about unprivileged callers (auto mode enters as root in chroot)"
	overlay_root r "$BASE"
	export SLURM_JOB_ID=$((RANDOM + 1000)) SLURM_STEP_ID=0 SLURMD_NODENAME=n1 SLURM_NODEID=0
	export SLURM_STEP_TASKS_PER_NODE=2
	local n
	for n in 0 1; do
		SLURM_PROCID=$n "$EDR_BIN" run --mode userns r -- sh -c \
			'cat /data/sub/f; readlink /proc/self/ns/mnt; sleep 2' >"$T/task$n.out" 2>"$T/task$n.err" &
	done
	wait
	[[ ! -s $T/task0.err && ! -s $T/task1.err ]] || fail "a task complained: $(cat "$T"/task*.err)"
	[[ $(head -1 "$T/task0.out") == lower && $(head -1 "$T/task1.out") == lower ]] ||
		fail "a task did not see the layer: $(cat "$T"/task*.out)"
	[[ $(sed -n 2p "$T/task0.out") == "$(sed -n 2p "$T/task1.out")" ]] ||
		fail "the tasks are in different mount namespaces: $(cat "$T"/task*.out)"
	assert_nothing_mounted_on_host
}

@test "overlay: remove refuses an overlay root a process runs in, and --force stops it" {
	overlay_root r "$BASE"
	"$EDR_BIN" run r -- sh -c 'touch /started; sleep 60' 3>&- &
	local pid=$! i
	for i in $(seq 100); do
		[[ -e $(store)/overlays/r/upper/started ]] && break
		sleep 0.1
	done
	edr_run remove r
	assert_edr_error "$EDR_TOOL_EXIT" "'r'" sleep
	[[ -d $(store)/overlays/r/upper ]] || fail "the refused remove took the upper"
	edr_run remove --force r
	assert_status 0
	wait "$pid" || true
	[[ ! -e $(store)/overlays/r && ! -e $(root_of r) ]] || fail "left: $(ls -R "$(store)")"
	assert_nothing_mounted_on_host
}

@test "overlay: remove --force of a root with keepers and its holder stops the run only, kills them, says nothing else" {
	overlay_root r "$BASE"
	export ENTER_DEVROOT_KEEP_IDLE=300
	edr_run run r -- true
	edr_run run r --root -- true # a keeper of each view, made in the holder's namespaces
	"$EDR_BIN" run r -- sh -c 'touch /started; sleep 60' </dev/null 3>&- &
	local pid=$! i
	for i in $(seq 100); do
		[[ -e $(store)/overlays/r/upper/started ]] && break
		sleep 0.1
	done
	local kept
	kept=$(warm_pids r)
	[[ $(wc -w <<<"$kept") -ge 2 ]] || fail "no keepers: $("$EDR_BIN" list)"
	edr_run remove --force r
	assert_status 0
	[[ -z $stderr ]] || fail "remove --force said: $stderr"
	wait "$pid" || true
	for i in $kept; do [[ ! -d /proc/$i ]] || fail "keeper $i survived"; done
	[[ ! -e $(store)/overlays/r && ! -e $(root_of r) ]] || fail "left: $(ls -R "$(store)")"
}

# dev_of_root NAME ARGS...: the device number of / as a run of NAME with ARGS sees it: one
# overlayfs mount (a superblock) has one, a second mount of the same upper another.
dev_of_root() {
	local name=$1
	shift
	"$EDR_BIN" run --mode userns "$name" "$@" -- stat -c %d / </dev/null
}

@test "overlay: every run of a root sees one mount of it: plain, --root, --bind, cold, warm, at once or in turn" {
	overlay_root a "$BASE"
	export ENTER_DEVROOT_KEEP_IDLE=300
	mkdir -p "$W/b"
	local plain root bind cold
	plain=$(dev_of_root a) || fail "plain run failed"
	root=$(dev_of_root a --root) || fail "--root run failed"
	bind=$(dev_of_root a --bind "$W/b:/mnt") || fail "--bind run failed"
	cold=$(ENTER_DEVROOT_KEEP_IDLE=0 dev_of_root a) || fail "cold run failed"
	# An interactive enter (a cold run of its own) beside a warm job that holds it.
	"$EDR_BIN" run --mode userns a -- sleep 30 </dev/null &
	local bg=$! enter
	enter=$(echo 'stat -c %d /' | "$EDR_BIN" enter --mode userns a) || fail "enter failed"
	kill "$bg"
	wait "$bg" || true
	[[ -n $plain && $plain == "$root" && $plain == "$bind" && $plain == "$cold" && $plain == "$enter" ]] ||
		fail "runs saw different mounts: plain $plain, --root $root, --bind $bind, cold $cold, enter $enter"
	# Its holder is one of the processes list shows as keeping the root warm.
	local holder
	holder=$(sed -n 's/^\([0-9]*\) .*/\1/p' "$(store)/locks/a@warm-root.ns" 2>/dev/null)
	[[ -n $holder && " $(warm_pids a) " == *" $holder "* ]] ||
		fail "list shows no holder of the mount (${holder:-no state file}): $("$EDR_BIN" list)"
	"$EDR_BIN" remove --force a
}

@test "overlay: what --root installs, the next plain run finds at once (within the keep-idle window)" {
	overlay_root a "$BASE"
	export ENTER_DEVROOT_KEEP_IDLE=300
	# The plain view (kept: its first run makes the mount points, the second keys on them)
	# looks the program up, and lists its directory, before it exists.
	edr_run run a -- true
	assert_status 0
	edr_run run a -- sh -c 'ls /bin >/dev/null; command -v pkg || ls /bin/pkg'
	assert_status 1
	edr_run run a --root -- sh -c 'printf "#!/bin/sh\necho pkg-ok\n" > /bin/pkg && chmod 755 /bin/pkg &&
		mkdir -p /var/lib/dpkg/info && echo /bin/pkg > /var/lib/dpkg/info/pkg.list'
	assert_status 0
	edr_run run a -- pkg
	assert_status 0
	assert_output pkg-ok
	edr_run run a -- sh -c 'ls /bin | grep -x pkg && cat /var/lib/dpkg/info/pkg.list'
	assert_status 0
	assert_output $'pkg\n/bin/pkg'
	"$EDR_BIN" remove --force a
}

@test "overlay: a job's writes to the layers' files stay whole while an export, --root and --bind runs start beside it" {
	mkdir -p "$BASE_TREE/data/many"
	local i
	for i in $(seq 40); do echo "lower $i" > "$BASE_TREE/data/many/f$i"; done
	overlay_root a "$BASE"
	export ENTER_DEVROOT_KEEP_IDLE=300
	mkdir -p "$W/sync"
	# The job starts, then waits for the others before it copies each lower file up.
	"$EDR_BIN" run --mode userns a --bind "$W/sync:/sync" -- sh -c 'touch /sync/started
		while [ ! -e /sync/go ]; do sleep 0.05; done
		n=0; for f in /data/many/f*; do echo mine >> "$f" && n=$((n + 1)); done; echo "$n"' \
		</dev/null > "$W/job.out" 2> "$W/job.err" &
	local job=$!
	for i in $(seq 200); do [[ -e $W/sync/started ]] && break; sleep 0.05; done
	[[ -e $W/sync/started ]] || fail "the job did not start: $(cat "$W/job.err")"
	edr_run export a "$W/a.tar" --compress none --quiet
	assert_status 0
	edr_run run a --root -- sh -c 'echo root >> /data/sub/f'
	assert_status 0
	edr_run run a --bind "$T:/mnt" -- true
	assert_status 0
	touch "$W/sync/go"
	wait "$job" || fail "the job failed: $(cat "$W/job.out" "$W/job.err")"
	[[ $(cat "$W/job.out") == 40 && ! -s $W/job.err ]] ||
		fail "writes of the job failed: $(cat "$W/job.out" "$W/job.err")"
	edr_run run a -- sh -c 'cat /data/many/f7; cat /data/sub/f'
	assert_status 0
	assert_output $'lower 7\nmine\nlower\nroot'
	"$EDR_BIN" remove --force a
	# (The kernel log's overlayfs warning of two mounts of one upper: root.bats, as root.)
}

@test "overlay: doctor says that overlay roots work here, and leaves no probe behind" {
	edr_run doctor
	assert_status 0
	assert_line --regexp '^overlay roots \(userxattr\) +work'
	[[ -z $(ls -A "$(store)/overlays") ]] || fail "the probe left: $(ls -A "$(store)/overlays")"
	assert_nothing_mounted_on_host
}

@test "overlay: create --overlay makes an overlay root of the layer store's layer, shared by a second root" {
	is_root && skip "as root auto mode enters in chroot"
	edr_run create a --overlay
	assert_status 0
	edr_run create b --overlay
	assert_status 0
	local m
	m=$(cat "$(store)/meta/b.json")
	[[ $m == *'"layout": "overlay"'* ]] || fail "not an overlay root: $m"
	[[ -z $(ls -A "$(root_of b)") ]] || fail "the mount point is not empty: $(ls -A "$(root_of b)")"
	# create's own additions are in the root's upper, not in the shared layer.
	grep -q "^$(id -un):" "$(store)/overlays/b/upper/etc/passwd" || fail "no account in the upper"
	edr_run run a -- sh -c 'whoami; echo a > /a-only'
	assert_status 0
	assert_output "$(id -un)"
	edr_run run b -- sh -c 'ls /a-only'
	assert_status 1
	local la lb
	la=$(grep -o '"layers": \[[^]]*\]' "$(store)/meta/a.json")
	lb=$(grep -o '"layers": \[[^]]*\]' "$(store)/meta/b.json")
	[[ -n $la && $la == "$lb" && $la != *,* ]] || fail "the roots do not share one layer: $la / $lb"
	assert_nothing_mounted_on_host
}

@test "overlay: a root is flat by default, in user-namespace mode too: path lists its /bin, chroot mode could enter it" {
	edr_run create a
	assert_status 0
	[[ $(cat "$(store)/meta/a.json") != *'"layout"'* ]] || fail "not a flat root: $(cat "$(store)/meta/a.json")"
	edr_run path a
	assert_status 0
	[[ -x $output/bin/busybox && -d $output/etc ]] || fail "path shows no tree: $(ls -A "$output")"
	# A file put there from the host is the one the root sees.
	echo from-host > "$output/from-host"
	edr_run run a -- cat /from-host
	assert_status 0
	assert_output from-host
	# The same from a cached image's layers: the second create reads no archive.
	edr_run create b
	assert_status 0
	[[ -x $(root_of b)/bin/busybox ]] || fail "b is not a flat root"
	assert_nothing_mounted_on_host
}

@test "overlay: path of an overlay root is refused in one line saying how to reach its files" {
	is_root && skip "as root auto mode enters in chroot"
	edr_run create o --overlay
	assert_status 0
	edr_run path o
	assert_edr_error "$EDR_TOOL_EXIT" "'o' is an overlay root" "run o" "export o" "overlays/o/upper"
	[[ -z $output ]] || fail "path printed a directory: $output"
}

@test "overlay: 'layout = overlay' in the config file makes overlay roots; --flat wins; a bad value and --flat --overlay are one line" {
	is_root && skip "as root auto mode enters in chroot"
	mkdir -p "$XDG_CONFIG_HOME/enter-devroot"
	echo "layout = overlay" > "$XDG_CONFIG_HOME/enter-devroot/config"
	edr_run create o
	assert_status 0
	[[ $(cat "$(store)/meta/o.json") == *'"layout": "overlay"'* ]] || fail "not an overlay root"
	edr_run create f --flat
	assert_status 0
	[[ $(cat "$(store)/meta/f.json") != *'"layout"'* && -x $(root_of f)/bin/busybox ]] ||
		fail "--flat did not win over the config file"
	# The environment wins over the file, as for the other settings.
	ENTER_DEVROOT_LAYOUT=flat edr_run create e
	assert_status 0
	[[ -x $(root_of e)/bin/busybox ]] || fail "ENTER_DEVROOT_LAYOUT did not win over the file"
	echo "layout = sideways" > "$XDG_CONFIG_HOME/enter-devroot/config"
	edr_run create g
	assert_edr_error "$EDR_TOOL_EXIT" "config: layout =" sideways
	[[ ! -e $(root_of g) && -z $(ls -A "$(store)/staging") ]] || fail "g left something"
	edr_run create h --flat --overlay
	assert_edr_error "$EDR_TOOL_EXIT" "--flat and --overlay"
	edr_run create i --overlay --from "$T"
	assert_edr_error "$EDR_TOOL_EXIT" "--overlay" "--from DIR"
	[[ ! -e $(root_of h) && ! -e $(root_of i) ]] || fail "a refused create left a root"
}

@test "overlay: create --overlay where this kernel refuses an unprivileged overlay is one line naming --flat; nothing made" {
	is_root && skip "as root auto mode enters in chroot"
	edr_run create a --overlay # keeps the probe's answer
	assert_status 0
	local kept
	kept=$(cat "$(store)/overlays/.probe")
	echo "${kept% yes} no" > "$(store)/overlays/.probe"
	edr_run create b --overlay
	assert_edr_error "$EDR_TOOL_EXIT" "cannot create 'b' as an overlay root" "--flat"
	[[ ! -e $(root_of b) && ! -e $(store)/meta/b.json && -z $(ls -A "$(store)/staging") ]] ||
		fail "b left something"
	edr_run create c
	assert_status 0
	[[ -x $(root_of c)/bin/busybox ]] || fail "the default is not flat where overlays do not mount"
}

@test "overlay: ENTER_DEVROOT_LAYOUT=overlay makes an overlay root, =flat a flat one, a bad value is one line" {
	if ! is_root; then
		ENTER_DEVROOT_LAYOUT=overlay edr_run create o
		assert_status 0
		[[ $(cat "$(store)/meta/o.json") == *'"layout": "overlay"'* ]] || fail "not an overlay root"
	fi
	ENTER_DEVROOT_LAYOUT=flat edr_run create f
	assert_status 0
	[[ $(cat "$(store)/meta/f.json") != *'"layout"'* && -x $(root_of f)/bin/busybox ]] ||
		fail "not a flat root"
	ENTER_DEVROOT_LAYOUT=sideways edr_run create g
	assert_edr_error "$EDR_TOOL_EXIT" ENTER_DEVROOT_LAYOUT sideways
	[[ ! -e $(root_of g) && -z $(ls -A "$(store)/staging") ]] || fail "g left something"
}

@test "overlay: run --ephemeral --from an overlay root leaves no root, overlay or mount" {
	edr_run run --ephemeral --from "$EDR_TEMPLATE" -- sh -c 'echo x > /x; cat /x'
	assert_status 0
	assert_output x
	assert_store_clean
}

@test "overlay: create --overlay keeps the probe's answer per kernel: a kept 'no' refuses, another kernel's is asked again" {
	is_root && skip "as root auto mode enters in chroot"
	edr_run create a --overlay
	assert_status 0
	local kept key
	kept=$(cat "$(store)/overlays/.probe") || fail "create kept no probe answer"
	[[ $kept == "$(uname -r) "*" yes" ]] || fail "not this kernel's answer: $kept"
	key=${kept% yes}
	# The kept answer is what the next create goes by: no probe of its own.
	echo "$key no" > "$(store)/overlays/.probe"
	edr_run create b --overlay
	assert_edr_error "$EDR_TOOL_EXIT" "cannot create 'b' as an overlay root"
	echo "0.0.0-another-kernel #1 - - - no" > "$(store)/overlays/.probe"
	edr_run create c --overlay
	assert_status 0
	[[ $(cat "$(store)/meta/c.json") == *'"layout": "overlay"'* ]] || fail "c is not an overlay root"
	[[ $(cat "$(store)/overlays/.probe") == "$key yes" ]] ||
		fail "the probe was not asked again: $(cat "$(store)/overlays/.probe")"
	assert_nothing_mounted_on_host
}

@test "overlay: create writes the account straight into the upper, as overlayfs would, with no namespace or mount" {
	is_root && skip "as root auto mode enters in chroot"
	command -v strace >/dev/null || skip "strace is not installed"
	edr_run create a --overlay # keeps the probe's answer
	assert_status 0
	strace -f -qq -e trace=unshare,mount,fsopen,move_mount -o "$T/trace" "$EDR_BIN" create b --overlay ||
		fail "create b failed"
	[[ ! -s $T/trace ]] || fail "create made namespaces or mounts: $(cat "$T/trace")"
	local up=$(store)/overlays/b/upper lower me
	lower=$(sed -n 's/.*"layers": \["sha256:\([0-9a-f]*\)".*/\1/p' "$(store)/meta/b.json")
	lower=$XDG_CACHE_HOME/enter-devroot/layers/sha256/$lower/tree
	me=$(id -un)
	[[ $(stat -c %a "$up/etc") == $(stat -c %a "$lower/etc") ]] || fail "etc's mode was not copied up"
	[[ $(stat -c %a "$up/etc/passwd") == $(stat -c %a "$lower/etc/passwd") ]] ||
		fail "passwd's mode was not copied up"
	diff <(cat "$lower/etc/passwd") <(head -n "$(wc -l < "$lower/etc/passwd")" "$up/etc/passwd") ||
		fail "the layer's passwd lines are not kept"
	[[ $(tail -n 1 "$up/etc/passwd") == "$me:x:$(id -u):$(id -g):"* ]] || fail "no account line"
	grep -q "^$(id -gn):x:$(id -g):" "$up/etc/group" || fail "no group line"
	[[ -d $up/home/$me ]] || fail "no home in the upper"
	edr_run run b -- sh -c 'whoami; pwd; ls -ld /etc | cut -c1-10'
	assert_status 0
	assert_output "$me
/home/$me
drwxr-xr-x"
	assert_nothing_mounted_on_host
}

@test "overlay: create of an image whose /home is a symlink adds the account through a mount of the overlay" {
	is_root && skip "as root auto mode enters in chroot"
	mkdir "$T/img"
	tar -xzf "$EDR_TEMPLATE" -C "$T/img"
	rm -rf "$T/img/home"
	mkdir -p "$T/img/var/home"
	ln -s var/home "$T/img/home"
	tar -czf "$T/img.tar.gz" -C "$T/img" .
	edr_run create s --overlay --from "$T/img.tar.gz"
	assert_status 0
	[[ $(cat "$(store)/meta/s.json") == *'"layout": "overlay"'* ]] || fail "not an overlay root"
	# A symlinked /home gets no home made in it (the account never follows a symlink).
	[[ $stderr == *"cannot create your home"* ]] || fail "$(last_run)"
	grep -q "^$(id -un):" "$(store)/overlays/s/upper/etc/passwd" || fail "no account in the upper"
	edr_run run s -- whoami
	assert_status 0
	assert_output "$(id -un)"
	assert_nothing_mounted_on_host
}

# lone_binary: enter-devroot copied alone into $T/lone, with no store helper beside it (nor
# installed here): a run that needs the helper fails there.
lone_binary() {
	mkdir -p "$T/lone"
	cp "$EDR_BIN" "$T/lone/enter-devroot"
	local d
	for d in /usr/local/libexec /usr/libexec; do
		[[ ! -e $d/enter-devroot/enter-devroot-store ]] ||
			skip "an installed enter-devroot-store would be found"
	done
	LONE=$T/lone/enter-devroot
}

# assert_store_clean: no root, overlay, staging entry or mount of a throwaway run left.
assert_store_clean() {
	[[ -z $(ls -A "$(store)/roots") && -z $(ls -A "$(store)/staging") ]] ||
		fail "left: $(ls -R "$(store)/roots" "$(store)/staging")"
	[[ -z $(ls -A "$(store)/overlays" | grep -v '^\.probe$') ]] ||
		fail "left: $(ls -A "$(store)/overlays")"
	assert_nothing_mounted_on_host
}

@test "overlay: run --ephemeral of a cached image mounts its layers itself: no store helper, no root, nothing left" {
	is_root && skip "as root auto mode enters in chroot"
	cp "$EDR_TEMPLATE" "$T/img.tar.gz"
	# An overlay root stores the layer, and what the source resolved to (a flat one need not).
	edr_run create c --overlay --from "$T/img.tar.gz"
	assert_status 0
	edr_run remove c
	lone_binary
	run --separate-stderr "$LONE" run --ephemeral --from "$T/img.tar.gz" -- \
		sh -c 'whoami; pwd; echo x > /x; cat /x; rm /bin/true; ls /bin/true'
	assert_status 1
	assert_output "$(id -un)
/home/$(id -un)
x"
	assert_store_clean
	# Each run is its own: the last one's writes are gone.
	run --separate-stderr "$LONE" run --ephemeral --from "$T/img.tar.gz" -- sh -c 'ls /bin/true; ls /x'
	assert_status 1
	assert_output "/bin/true"
	[[ $stderr == *"/x"* ]] || fail "$(last_run)"
	assert_store_clean
}

@test "overlay: run --ephemeral of a source changed since its record, or whose layer was cleaned, goes through the helper" {
	is_root && skip "as root auto mode enters in chroot"
	mkdir "$T/img"
	tar -xzf "$EDR_TEMPLATE" -C "$T/img"
	tar -czf "$T/img.tar.gz" -C "$T/img" .
	edr_run run --ephemeral --from "$T/img.tar.gz" -- true # through the helper: records it
	assert_status 0
	echo new > "$T/img/new-file"
	tar -czf "$T/img.tar.gz" -C "$T/img" .
	lone_binary
	run --separate-stderr "$LONE" run --ephemeral --from "$T/img.tar.gz" -- cat /new-file
	assert_edr_error "$EDR_TOOL_EXIT" enter-devroot-store
	edr_run run --ephemeral --from "$T/img.tar.gz" -- cat /new-file
	assert_status 0
	assert_output new
	edr_run cache clean
	assert_status 0
	[[ -z $(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256") ]] || fail "a layer was kept"
	edr_run run --ephemeral --from "$T/img.tar.gz" -- cat /new-file
	assert_status 0
	assert_output new
	assert_store_clean
}

@test "overlay: run --ephemeral of a cached image whose supervisor is killed leaves nothing" {
	is_root && skip "as root auto mode enters in chroot"
	edr_run create c --overlay --from "$EDR_TEMPLATE"
	assert_status 0
	edr_run remove c
	"$EDR_BIN" run --ephemeral --from "$EDR_TEMPLATE" -- sh -c "sleep 300; echo $T" &
	local sup=$! i job="^sh -c sleep 300; echo $T"
	for i in $(seq 100); do pgrep -f "$job" >/dev/null && break; sleep 0.1; done
	pgrep -f "$job" >/dev/null || fail "the job did not start"
	kill -KILL "$sup"
	wait "$sup" || true
	for i in $(seq 50); do pgrep -f "$job" >/dev/null || break; sleep 0.1; done
	! pgrep -f "$job" >/dev/null || fail "the job outlived its supervisor"
	assert_store_clean
}

@test "overlay: run --ephemeral --save of a cached image still saves the root" {
	is_root && skip "as root auto mode enters in chroot"
	edr_run create c --overlay --from "$EDR_TEMPLATE"
	assert_status 0
	edr_run run --ephemeral --from "$EDR_TEMPLATE" --save "$T/saved.tar.gz" -- sh -c 'echo kept > /kept'
	assert_status 0
	tar -xzOf "$T/saved.tar.gz" ./kept > "$T/kept" || fail "no /kept in the saved archive"
	[[ $(cat "$T/kept") == kept ]] || fail "wrong content"
	[[ $(ls -A "$(store)/roots") == c ]] || fail "left: $(ls -A "$(store)/roots")"
}

@test "overlay: list shows each root's own size (its upper) beside the size of the layers it shares" {
	is_root && skip "as root auto mode enters in chroot"
	edr_run create a --overlay
	assert_status 0
	edr_run create b --overlay
	assert_status 0
	edr_run create f
	assert_status 0
	edr_run run a -- sh -c 'head -c 3145728 /dev/zero > /three-mib'
	assert_status 0
	local layer upper_a upper_b
	layer=$(sed -n 's/.*"size_bytes": \([0-9]*\).*/\1/p' "$XDG_CACHE_HOME"/enter-devroot/layers/sha256/*/meta.json)
	upper_a=$(find "$(store)/overlays/a/upper" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
	upper_b=$(find "$(store)/overlays/b/upper" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
	((upper_a >= 3145728 && upper_b < 65536)) || fail "uppers: $upper_a $upper_b"
	edr_run list --json
	assert_status 0
	local got
	got=$(python3 -c 'import json, sys
for r in json.load(sys.stdin): print(r["name"], r["own_bytes"], r["shared_bytes"], r["size_bytes"])' <<< "$output") ||
		fail "list --json: $output"
	local size_f
	size_f=$(sed -n 's/.*"size_bytes": \([0-9]*\).*/\1/p' "$(store)/meta/f.json")
	assert_equal "$got" "a $upper_a $layer $layer
b $upper_b $layer $layer
f $size_f $layer $size_f"
	edr_run list
	assert_status 0
	assert_line --index 0 --regexp '^NAME +SIZE-AT-CREATION +OWN +SHARED +CREATED +WARM +SOURCE$'
	assert_line --index 1 --regexp "^a +[0-9.]+[KM] +3\.[0-9]M +[0-9.]+[KM] "
}

@test "overlay: create of an image created from before is made by enter-devroot alone, until the source changes" {
	is_root && skip "as root auto mode enters in chroot"
	mkdir "$T/img"
	tar -xzf "$EDR_TEMPLATE" -C "$T/img"
	tar -czf "$T/img.tar.gz" -C "$T/img" .
	edr_run create a --overlay --from "$T/img.tar.gz" # through the helper, which records the source
	assert_status 0
	lone_binary
	run --separate-stderr "$LONE" create b --overlay --from "$T/img.tar.gz"
	assert_status 0
	local ma mb
	ma=$(sed 's/"name": "a"//; s/"created": "[^"]*"//' "$(store)/meta/a.json")
	mb=$(sed 's/"name": "b"//; s/"created": "[^"]*"//' "$(store)/meta/b.json")
	assert_equal "$mb" "$ma"
	diff -r "$(store)/overlays/a/upper" "$(store)/overlays/b/upper" || fail "the uppers differ"
	run --separate-stderr "$LONE" create b --overlay --from "$T/img.tar.gz"
	assert_edr_error "$EDR_TOOL_EXIT" "'b'" "already exists"
	run --separate-stderr "$LONE" run b -- sh -c 'whoami; pwd'
	assert_status 0
	assert_output "$(id -un)
/home/$(id -un)"
	# The source changed: the record no longer stands for it; the helper makes the root.
	echo new > "$T/img/new-file"
	tar -czf "$T/img.tar.gz" -C "$T/img" .
	run --separate-stderr "$LONE" create c --overlay --from "$T/img.tar.gz"
	assert_edr_error "$EDR_TOOL_EXIT" enter-devroot-store
	[[ ! -e $(root_of c) && -z $(ls -A "$(store)/staging") ]] || fail "c left something"
	edr_run create c --from "$T/img.tar.gz"
	assert_status 0
	edr_run run c -- cat /new-file
	assert_output new
	assert_nothing_mounted_on_host
}

# two_sources: $T/a.tar.gz and $T/b.tar.gz, the default template with a /marker saying a
# or b.
two_sources() {
	local s
	for s in a b; do
		mkdir "$T/$s"
		tar -xzf "$EDR_TEMPLATE" -C "$T/$s"
		echo "$s" > "$T/$s/marker"
		tar -czf "$T/$s.tar.gz" -C "$T/$s" .
	done
}

# assert_record_not_used: the last `edr_run -v` said the record was not used, and why.
assert_record_not_used() {
	[[ $stderr == *"is not the file it was made from"* ]] ||
		fail "-v does not say the record was not used: $(last_run)"
}

@test "overlay: create does not use the record of a source whose name resolves to another file now: a repointed symlink, a file replaced in place, another default template" {
	is_root && skip "as root auto mode enters in chroot"
	two_sources
	lone_binary
	ln -s a.tar.gz "$T/current.tar.gz"
	edr_run create a1 --overlay --from current.tar.gz # through the helper, which records it
	assert_status 0
	ln -sfn b.tar.gz "$T/current.tar.gz"
	edr_run -v create b1 --overlay --from current.tar.gz
	assert_status 0
	local said=$stderr
	edr_run run b1 -- cat /marker
	assert_output b
	stderr=$said assert_record_not_used
	# The record the helper wrote again serves the source as it is now.
	run --separate-stderr "$LONE" create b1again --overlay --from current.tar.gz
	assert_status 0
	edr_run run b1again -- cat /marker
	assert_output b
	# The same name, other contents (written in place: a new size or mtime).
	cp "$T/a.tar.gz" "$T/plain.tar.gz"
	edr_run create a2 --overlay --from plain.tar.gz
	assert_status 0
	cat "$T/b.tar.gz" > "$T/plain.tar.gz"
	edr_run -v create b2 --overlay --from plain.tar.gz
	assert_status 0
	said=$stderr
	edr_run run b2 -- cat /marker
	assert_output b
	stderr=$said assert_record_not_used
	# No --from: the default template, which ENTER_DEVROOT_DEFAULT_TEMPLATE names.
	ENTER_DEVROOT_DEFAULT_TEMPLATE=$T/a.tar.gz edr_run create a3 --overlay
	assert_status 0
	ENTER_DEVROOT_DEFAULT_TEMPLATE=$T/b.tar.gz edr_run create b3 --overlay
	assert_status 0
	edr_run run b3 -- cat /marker
	assert_output b
	assert_nothing_mounted_on_host
}

@test "overlay: run --ephemeral does not use the record of a source whose name resolves to another file now: a repointed symlink, a file replaced in place" {
	is_root && skip "as root auto mode enters in chroot"
	two_sources
	lone_binary
	ln -s a.tar.gz "$T/current.tar.gz"
	edr_run run --ephemeral --from current.tar.gz -- cat /marker # through the helper: records it
	assert_output a
	ln -sfn b.tar.gz "$T/current.tar.gz"
	edr_run -v run --ephemeral --from current.tar.gz -- cat /marker
	assert_status 0
	assert_output b
	assert_record_not_used
	run --separate-stderr "$LONE" run --ephemeral --from current.tar.gz -- cat /marker
	assert_status 0
	assert_output b
	cp "$T/a.tar.gz" "$T/plain.tar.gz"
	edr_run run --ephemeral --from plain.tar.gz -- cat /marker
	assert_output a
	cat "$T/b.tar.gz" > "$T/plain.tar.gz"
	edr_run -v run --ephemeral --from plain.tar.gz -- cat /marker
	assert_status 0
	assert_output b
	assert_record_not_used
	assert_store_clean
}

@test "overlay: after a flat create that stored no layer, run --ephemeral and create --overlay of the source unpack it then" {
	is_root && skip "as root auto mode enters in chroot"
	echo x > "$W/probe"
	if cp --reflink=always "$W/probe" "$W/probe2" 2>/dev/null; then
		skip "this filesystem clones by reference: a flat create stores the layer"
	fi
	mkdir "$T/img"
	tar -xzf "$EDR_TEMPLATE" -C "$T/img"
	echo mine > "$T/img/marker"
	tar -czf "$T/img.tar.gz" -C "$T/img" .
	edr_run create f --from "$T/img.tar.gz"
	assert_status 0
	# No layer, and no record naming one, for the runs below to trust.
	local lid
	lid=$(gzip -dc "$T/img.tar.gz" | sha256sum | cut -d' ' -f1)
	grep -q "sha256:$lid" "$(store)/meta/f.json" || fail "f does not name its layer: $(cat "$(store)/meta/f.json")"
	[[ ! -e $XDG_CACHE_HOME/enter-devroot/layers/sha256/$lid ]] || fail "the layer was stored"
	[[ -z $(ls -A "$XDG_CACHE_HOME/enter-devroot/layers/resolved" 2>/dev/null) ]] ||
		fail "a record of layers not stored: $(cat "$XDG_CACHE_HOME"/enter-devroot/layers/resolved/*)"
	edr_run run --ephemeral --from "$T/img.tar.gz" -- cat /marker
	assert_status 0
	assert_output mine
	[[ -d $XDG_CACHE_HOME/enter-devroot/layers/sha256/$lid/tree ]] || fail "run --ephemeral stored no layer"
	edr_run create o --overlay --from "$T/img.tar.gz"
	assert_status 0
	edr_run run o -- cat /marker
	assert_status 0
	assert_output mine
	# The flat root and the overlay root name the same layer, which a clean keeps.
	local lf lo
	lf=$(sed -n 's/.*"layers": \(\[[^]]*\]\).*/\1/p' "$(store)/meta/f.json")
	lo=$(sed -n 's/.*"layers": \(\[[^]]*\]\).*/\1/p' "$(store)/meta/o.json")
	assert_equal "$lf" "$lo"
	edr_run cache list
	assert_output --regexp "layer, used by: f o"
	assert_equal "$(ls -A "$(store)/roots" | tr '\n' ' ')" "f o "
	assert_nothing_mounted_on_host
}

@test "overlay: three creates of one new image at once unpack its layer once; the others wait and share it" {
	# The busybox template and 24 MiB of incompressible files: an unpack long enough
	# (gzip, hashing, writing) for three creates started together to overlap.
	mkdir -p "$W/img/opt/big"
	tar -xzf "$EDR_TEMPLATE" -C "$W/img"
	for i in 1 2 3 4 5 6; do head -c 4M /dev/urandom > "$W/img/opt/big/f$i"; done
	tar -C "$W/img" -cf - . | gzip -1 > "$W/big.tar.gz"
	local before
	before=$(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256" 2>/dev/null | wc -l)
	for r in a b c; do
		"$EDR_BIN" -v create "$r" --overlay --from "$W/big.tar.gz" 2> "$W/$r.err" &
	done
	wait
	local unpacked=0 r
	for r in a b c; do
		[[ -d $(store)/meta ]] && grep -q '"layers"' "$(store)/meta/$r.json" ||
			fail "create $r failed: $(cat "$W/$r.err")"
		grep -q "unpacking a new layer" "$W/$r.err" && unpacked=$((unpacked + 1))
	done
	[[ $unpacked -eq 1 ]] || fail "the layer was unpacked $unpacked times:
$(grep -h 'unpacking a new layer\|waiting' "$W"/?.err)"
	[[ $(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256" | wc -l) -eq $((before + 1)) ]] ||
		fail "layers: $(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256")"
	edr_run run c -- cmp /opt/big/f1 /opt/big/f1
	assert_status 0
}
