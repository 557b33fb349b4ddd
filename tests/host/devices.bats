#!/usr/bin/env bats
# --device VENDOR/CLASS=NAME (issue 41): CDI devices in userns mode, from specs of the tests'
# own (no GPU needed): device nodes that are the host's /dev/zero and /dev/null under other
# names, a library file mounted in, variables, and hooks (scripts) that record the OCI state
# they get on stdin, their argv and the bundle's config.json. Then each thing a spec or a
# --device can get wrong, refused in one line naming the file and the field, and spec
# directories made hostile (symlinks to devices and FIFOs, loops, huge and deeply nested
# files, aliases). tests/host/run runs this file on both layouts (tests/lib/layout.bash): the
# root's path in the hooks' state, and its being a mount point, are the layout's. As root
# (auto mode choosing user namespaces, a node made with mknod): root.bats.

load common

setup() {
	edr_setup
	is_root && skip "userns mode is about unprivileged callers (as root: root.bats)"
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	export ENTER_DEVROOT_KEEP_IDLE=0 # cold runs, but where a test says otherwise
	SPECS=$T/specs REC=$T/rec
	mkdir -p "$SPECS" "$REC" "$T/lib" "$XDG_CONFIG_HOME/enter-devroot"
	echo "cdi-spec-dirs = $SPECS" >> "$XDG_CONFIG_HOME/enter-devroot/config"
	echo 'the library' > "$T/lib/libfake.so.1"
	recording_hook "$REC/hook.sh"
	test_spec > "$SPECS/test.yaml"
	create_default r
}

teardown() {
	[[ ! -d $(store)/roots/r ]] || "$EDR_BIN" remove --force r >/dev/null 2>&1 || true
	edr_teardown
}

# recording_hook FILE: a hook that keeps what it was given beside itself: its stdin (the
# state), its argv, the bundle's config.json, the root it was told of, what it saw there.
recording_hook() {
	cat > "$1" <<'EOF'
#!/bin/sh
PATH=/usr/sbin:/usr/bin:/sbin:/bin
rec=$(dirname "$0")
cat > "$rec/state.json"
printf '%s\n' "$@" > "$rec/argv"
echo run >> "$rec/runs"
bundle=$(sed -n 's/.*"bundle": *"\([^"]*\)".*/\1/p' "$rec/state.json")
root=$(sed -n 's/.*"root": *"\([^"]*\)".*/\1/p' "$rec/state.json")
cp "$bundle/config.json" "$rec/config.json"
cat "$root/usr/lib/libfake.so.1" > "$rec/lib-seen" 2>&1
echo "${HOOK_ENV-unset} ${TEST_DRIVER-unset}" > "$rec/env"
id -u > "$rec/uid"
echo made by the hook > "$root/etc/hook-made"
echo "the hook's own output"
EOF
	chmod 755 "$1"
}

# test_spec: two devices, /dev/zero and /dev/null under other names, and the spec's own
# edits: a library, a variable, the recording hook.
test_spec() {
	cat <<EOF
cdiVersion: "0.6.0"
kind: test.example.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/testgpu0
      hostPath: /dev/zero
    env: [TESTGPU_INDEX=0]
- name: "1"
  containerEdits:
    deviceNodes:
    - path: /dev/testgpu1
      hostPath: /dev/null
containerEdits:
  env: [TEST_DRIVER=loaded]
  mounts:
  - hostPath: $T/lib/libfake.so.1
    containerPath: /usr/lib/libfake.so.1
    options: [ro, nosuid, nodev, bind]
  hooks:
  - hookName: createContainer
    path: $REC/hook.sh
    args: [hook.sh, update-ldcache, --folder, /usr/lib]
    env: [HOOK_ENV=from-the-spec]
EOF
}

# hook_spec NAME DEVICE HOOK PATH: $SPECS/NAME.yaml, a spec of kind test.example.com/NAME
# whose one device DEVICE runs one hook, HOOK (its hookName) at PATH.
hook_spec() {
	cat > "$SPECS/$1.yaml" <<EOF
cdiVersion: 0.3.0
kind: test.example.com/$1
devices:
- name: $2
  containerEdits:
    hooks: [{hookName: $3, path: $4}]
EOF
}

# json FILE EXPRESSION: EXPRESSION (Python, of the document d) evaluated on FILE's JSON.
json() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

# rdev PATH: a node's major:minor in hex, as stat prints them.
rdev() { stat -c '%t:%T' "$1"; }

# --- what a device gives ------------------------------------------------------------

@test "run --device: the host's node, the library read-only, the variables, the hook with the OCI state" {
	edr_run run --device test.example.com/gpu=0 r -- sh -c '
		stat -c "%t:%T %F" /dev/testgpu0
		head -c 4 /dev/testgpu0 | od -An -tx1
		cat /usr/lib/libfake.so.1
		echo more >> /usr/lib/libfake.so.1 2>/dev/null && echo WRITABLE
		awk "\$2 == \"/usr/lib/libfake.so.1\" { print \$4 }" /proc/mounts
		echo "$TEST_DRIVER $TESTGPU_INDEX ${HOOK_ENV-unset}"
		cat /etc/hook-made
		test ! -e /dev/testgpu1 || echo "device 1 too"'
	assert_status 0
	assert_equal "${lines[0]}" "$(rdev /dev/zero) character special file"
	assert_equal "$(echo "${lines[1]}" | tr -d ' ')" 00000000
	assert_equal "${lines[2]}" "the library"
	assert_regex "${lines[3]}" '^ro,nosuid,nodev(,|$)'
	assert_equal "${lines[4]}" "loaded 0 unset"
	assert_equal "${lines[5]}" "made by the hook"
	assert_equal "${#lines[@]}" 6
	# The hook: its args as the spec gives them (argv[0] its own), its env the spec's only,
	# run as the user after the mounts, its stdout on the job's stderr.
	assert_equal "$(cat "$REC/argv")" "$(printf '%s\n' update-ldcache --folder /usr/lib)"
	assert_equal "$(cat "$REC/env")" "from-the-spec unset"
	assert_equal "$(cat "$REC/uid")" "$(id -u)"
	assert_equal "$(cat "$REC/lib-seen")" "the library"
	[[ $stderr == *"the hook's own output"* ]] || fail "the hook's output is not on stderr: $(last_run)"
	# The state, as an OCI runtime gives it; its bundle's config.json names the same root.
	local s=$REC/state.json
	assert_equal "$(json "$s" 'd["ociVersion"], d["id"], d["status"]')" "('1.0.2', 'r', 'creating')"
	assert_equal "$(json "$s" 'd["root"]')" "$(root_of r)"
	assert_regex "$(json "$s" 'd["pid"]')" '^[1-9][0-9]*$'
	assert_equal "$(json "$s" 'd["bundle"]')" "$(store)/cdi-bundle"
	assert_equal "$(json "$REC/config.json" 'd["root"]["path"]')" "$(root_of r)"
	assert_equal "$(json "$REC/config.json" 'd["hooks"]["createContainer"][0]["path"]')" "$REC/hook.sh"
	assert_equal "$(json "$REC/config.json" 'd["process"]["env"]')" "['TEST_DRIVER=loaded', 'TESTGPU_INDEX=0']"
	# Nothing of the bundle is left on the host: it was a tmpfs of the job's.
	assert_equal "$(ls -A "$(store)/cdi-bundle")" ""
}

@test "run --device: the command holds no capability, though the hooks had the job's" {
	cat > "$REC/caps.sh" <<'EOF'
#!/bin/sh
grep '^CapEff:' /proc/self/status > "$(dirname "$0")/hook-caps"
cat > /dev/null
EOF
	chmod 755 "$REC/caps.sh"
	hook_spec caps c createContainer "$REC/caps.sh"
	edr_run run --device test.example.com/caps=c r -- grep -E '^Cap(Inh|Prm|Eff|Amb):' /proc/self/status /proc/1/status
	assert_status 0
	assert_equal "$(echo "$output" | awk '{print $2}' | sort -u)" 0000000000000000
	[[ $(awk '{print $2}' "$REC/hook-caps") != 0000000000000000 ]] || fail "the hook had no capability"
}

@test "run --device: a createContainer hook may pivot_root into the root, as nvidia-cdi-hook update-ldcache does" {
	command -v pivot_root >/dev/null && command -v unshare >/dev/null || skip "util-linux's pivot_root and unshare are needed"
	cat > "$REC/pivot.sh" <<'EOF'
#!/bin/sh
PATH=/usr/sbin:/usr/bin:/sbin:/bin
rec=$(dirname "$0")
root=$(sed -n 's/.*"root": *"\([^"]*\)".*/\1/p')
# What update-ldcache does: new mount and PID namespaces, a /proc of their own in the root,
# pivot_root into it, then work there (ldconfig writes /etc/ld.so.cache).
unshare --mount --pid --fork --propagation private sh -c '
	mount -t proc proc "$1/proc" && cd "$1" && pivot_root . . && umount -l . &&
	cd / && echo cache > /etc/ld.so.cache.test && echo pivoted' sh "$root" > "$rec/pivot" 2>&1
EOF
	chmod 755 "$REC/pivot.sh"
	hook_spec pivot p createContainer "$REC/pivot.sh"
	edr_run run --device test.example.com/pivot=p r -- cat /etc/ld.so.cache.test
	assert_status 0
	assert_output cache
	assert_equal "$(cat "$REC/pivot")" pivoted
}

@test "run --device: a startContainer hook runs inside the root, its path the root's, with the state" {
	run --separate-stderr "$EDR_BIN" run r -- sh -c 'mkdir -p /usr/local/bin && cat > /usr/local/bin/start-hook && chmod 755 /usr/local/bin/start-hook' <<'EOF'
#!/bin/sh
PATH=/usr/bin:/bin
cat > /start-state
ls -d /etc > /start-saw
EOF
	assert_status 0
	hook_spec start s startContainer /usr/local/bin/start-hook
	edr_run run --device test.example.com/start=s r -- sh -c 'cat /start-state; echo; cat /start-saw'
	assert_status 0
	assert_regex "${lines[0]}" '"status":"created"'
	assert_regex "${lines[0]}" '"id":"r"'
	assert_equal "${lines[1]}" /etc
	[[ ! -e /start-state ]] || fail "the startContainer hook wrote the host's /"
}

@test "run --device KIND=all: every device of the kind; a device asked for twice is given once" {
	edr_run run --device test.example.com/gpu=all --device test.example.com/gpu=0 r -- \
		sh -c 'stat -c %t:%T /dev/testgpu0 /dev/testgpu1'
	assert_status 0
	assert_equal "${lines[0]}" "$(rdev /dev/zero)"
	assert_equal "${lines[1]}" "$(rdev /dev/null)"
	assert_equal "$(wc -l < "$REC/runs")" 1
}

@test "run --device: a JSON spec gives what the same spec in YAML does" {
	cat > "$SPECS/test-json.json" <<EOF
{"cdiVersion": "0.6.0", "kind": "test.example.com/jgpu",
 "devices": [{"name": "0", "containerEdits": {"deviceNodes": [{"path": "/dev/testgpu0", "hostPath": "/dev/zero"}],
                                              "env": ["TESTGPU_INDEX=0"]}}],
 "containerEdits": {"env": ["TEST_DRIVER=loaded"],
                    "mounts": [{"hostPath": "$T/lib/libfake.so.1", "containerPath": "/usr/lib/libfake.so.1",
                                "options": ["ro", "nosuid", "nodev", "bind"]}]}}
EOF
	edr_run run --device test.example.com/jgpu=0 r -- sh -c 'stat -c %t:%T /dev/testgpu0; cat /usr/lib/libfake.so.1; echo $TEST_DRIVER'
	assert_status 0
	assert_equal "$output" "$(rdev /dev/zero)
the library
loaded"
}

@test "run --device: a later spec directory wins; two specs of one directory defining a device are a conflict" {
	mkdir "$T/later"
	echo "cdi-spec-dirs = $SPECS:$T/later" >> "$XDG_CONFIG_HOME/enter-devroot/config"
	sed 's|hostPath: /dev/zero|hostPath: /dev/null|' "$SPECS/test.yaml" > "$T/later/override.yaml"
	edr_run run --device test.example.com/gpu=0 r -- stat -c %t:%T /dev/testgpu0
	assert_status 0
	assert_output "$(rdev /dev/null)"
	cp "$T/later/override.yaml" "$T/later/twice.yaml"
	edr_run run --device test.example.com/gpu=0 r -- touch /ran
	assert_edr_error 125 "--device test.example.com/gpu=0" "$T/later/override.yaml" "$T/later/twice.yaml"
}

@test "run --ephemeral --device and enter --device" {
	edr_run run --ephemeral --device test.example.com/gpu=1 -- sh -c 'stat -c %t:%T /dev/testgpu1; cat /etc/hook-made'
	assert_status 0
	assert_equal "${lines[0]}" "$(rdev /dev/null)"
	assert_equal "${lines[1]}" "made by the hook"
	run --separate-stderr "$EDR_BIN" enter --device test.example.com/gpu=1 r <<<'stat -c %t:%T /dev/testgpu1; echo "$TEST_DRIVER"'
	assert_status 0
	assert_equal "$output" "$(rdev /dev/null)
loaded"
}

@test "run --device: warm runs join only a keeper made with the same devices" {
	export ENTER_DEVROOT_KEEP_IDLE=300
	# What names the view: its user namespace and its /dev's tmpfs (warm.bats's VIEW_ID).
	local view='echo "$(readlink /proc/self/ns/user):$(stat -c %d /dev)" $(test -e /dev/testgpu0 && echo gpu0) ${TEST_DRIVER-none}'
	# A cold run first makes the mount point of the library (warm.bats's prime).
	ENTER_DEVROOT_KEEP_IDLE=0 "$EDR_BIN" run --device test.example.com/gpu=0 r -- true
	edr_run run --device test.example.com/gpu=0 r -- sh -c "$view"
	assert_status 0
	local first=$output id=${output%% *} hooks
	hooks=$(wc -l < "$REC/runs")
	assert_equal "${first#* }" "gpu0 loaded"
	edr_run run --device test.example.com/gpu=0 r -- sh -c "$view"
	assert_status 0
	assert_equal "$output" "$first"
	assert_equal "$(wc -l < "$REC/runs")" "$hooks" # the hooks ran for the keeper's view only
	edr_run run r -- sh -c "$view"
	assert_status 0
	assert_equal "${output#* }" none
	[[ ${output%% *} != "$id" ]] || fail "a run without --device joined the devices' keeper"
	edr_run run --device test.example.com/gpu=1 r -- sh -c "$view"
	assert_status 0
	assert_equal "${output#* }" loaded
	[[ ${output%% *} != "$id" ]] || fail "a run with another device joined the first keeper"
}

@test "-v: each device node and mount, and each hook, one line each" {
	edr_run -v run --device test.example.com/gpu=0 r -- true
	assert_status 0
	[[ $stderr == *"mount /dev/zero -> /dev/testgpu0 (bind, nosuid, noexec)"* ]] || fail "$(last_run)"
	[[ $stderr == *"mount $T/lib/libfake.so.1 -> /usr/lib/libfake.so.1 (bind, read-only, nosuid, nodev)"* ]] || fail "$(last_run)"
	[[ $stderr == *"CDI createContainer hook $REC/hook.sh ($SPECS/test.yaml)"* ]] || fail "$(last_run)"
}

# --- what is refused, in one line, before the command runs --------------------------------

# refused_with SPEC_TEXT NEEDLE...: a spec of kind test.example.com/bad (file bad.yaml) makes
# --device test.example.com/bad=d fail in one line holding every NEEDLE; nothing ran.
refused_with() {
	printf '%s\n' "$1" > "$SPECS/bad.yaml"
	shift
	edr_run run --device test.example.com/bad=d r -- touch /ran
	assert_edr_error 125 "$@"
	edr_run run r -- test -e /ran
	assert_status 1
}

bad_spec() { # EDITS [VERSION]: a one-device spec of kind test.example.com/bad
	printf 'cdiVersion: %s\nkind: test.example.com/bad\ndevices:\n- name: d\n  containerEdits: %s\n' "${2:-0.6.0}" "$1"
}

@test "refused: a --device that is not VENDOR/CLASS=NAME (a usage error)" {
	for d in gpu nvidia.com/gpu nvidia.com/gpu= =0 'nvidia.com/g pu=0' nvidia.com/gpu=-1; do
		edr_run run --device "$d" r -- true
		assert_edr_error 125 "invalid --device '$d'"
	done
}

@test "refused: a device no spec defines, or of a kind none has" {
	edr_run run --device test.example.com/gpu=7 r -- touch /ran
	assert_edr_error 125 "--device test.example.com/gpu=7: no such device in $SPECS/test.yaml (its devices[].name: 0, 1)"
	edr_run run --device other.example.com/gpu=all r -- touch /ran
	assert_edr_error 125 "--device other.example.com/gpu=all: no CDI spec of kind other.example.com/gpu in $SPECS"
}

@test "refused: --mode chroot with --device (chroot mode makes no mounts)" {
	edr_run run --mode chroot --device test.example.com/gpu=0 r -- touch /ran
	assert_edr_error 125 "--device: chroot mode makes no mounts"
}

@test "refused: a spec field that is wrong, named with its file" {
	refused_with "$(bad_spec '{deviceNodes: [{path: dev/x}]}')" \
		"CDI spec $SPECS/bad.yaml: devices[0].containerEdits.deviceNodes[0].path: 'dev/x' is not an absolute path"
	refused_with "$(bad_spec '{mounts: [{hostPath: /etc/hostname, containerPath: /a/../b}]}')" \
		"CDI spec $SPECS/bad.yaml: devices[0].containerEdits.mounts[0].containerPath: '/a/../b' has a '..' component"
	refused_with "$(bad_spec '{env: [A=1]}' 9.9.9)" "CDI spec $SPECS/bad.yaml: cdiVersion: '9.9.9' is not a version"
	refused_with "$(printf 'cdiVersion: 0.6.0\nkind: bad\ndevices: [{name: d, containerEdits: {env: [A=1]}}]\n')" \
		"CDI spec $SPECS/bad.yaml: kind: 'bad' is not VENDOR/CLASS"
	refused_with "$(bad_spec '{env: [A=1], devices: []}')" \
		"CDI spec $SPECS/bad.yaml: devices[0].containerEdits.devices: an unknown field"
	# A broken spec of another kind stops the run too: a higher directory's broken spec must
	# not hand out a lower one's device in its place.
	edr_run run --device test.example.com/gpu=0 r -- true
	assert_edr_error 125 "CDI spec $SPECS/bad.yaml"
}

@test "refused: a device node missing on the host, not a node, or not the spec's" {
	refused_with "$(bad_spec "{deviceNodes: [{path: /dev/x, hostPath: $T/none}]}")" \
		"devices[0].containerEdits.deviceNodes[0].hostPath: $T/none: No such file or directory" "never makes one"
	refused_with "$(bad_spec "{deviceNodes: [{path: /dev/x, hostPath: $T/lib/libfake.so.1}]}")" \
		"deviceNodes[0].hostPath: $T/lib/libfake.so.1 is not a device node"
	refused_with "$(bad_spec '{deviceNodes: [{path: /dev/x, hostPath: /dev/zero, type: b}]}')" \
		"deviceNodes[0].type: 'b', but /dev/zero on this host is of type c"
	refused_with "$(bad_spec '{deviceNodes: [{path: /dev/x, hostPath: /dev/zero, type: c, major: 1, minor: 3}]}')" \
		"deviceNodes[0].major: the spec says 1:3, /dev/zero on this host is 1:5"
}

@test "refused: a mount that is no bind, an option not applied, a source missing" {
	refused_with "$(bad_spec '{mounts: [{hostPath: /tmp, containerPath: /t, type: tmpfs}]}')" \
		"devices[0].containerEdits.mounts[0].type: 'tmpfs': enter-devroot makes bind mounts of host paths only"
	refused_with "$(bad_spec '{mounts: [{hostPath: /tmp, containerPath: /t, options: [bind, z]}]}')" \
		"devices[0].containerEdits.mounts[0].options[1]: 'z' is not an option enter-devroot applies"
	refused_with "$(bad_spec "{mounts: [{hostPath: $T/none, containerPath: /t}]}")" \
		"devices[0].containerEdits.mounts[0].hostPath: $T/none: No such file or directory"
}

@test "refused: poststart and poststop hooks, a hook that is not there, groups and the like" {
	refused_with "$(bad_spec "{hooks: [{hookName: poststop, path: $REC/hook.sh}]}")" \
		"devices[0].containerEdits.hooks[0].hookName: poststop hooks are not run"
	refused_with "$(bad_spec "{hooks: [{hookName: createContainer, path: $T/none}]}")" \
		"devices[0].containerEdits.hooks[0].path: $T/none: No such file or directory"
	refused_with "$(bad_spec '{additionalGids: [44]}' 0.7.0)" \
		"CDI spec $SPECS/bad.yaml: devices[0].containerEdits.additionalGids: enter-devroot cannot apply it"
}

@test "refused: a hook that fails, or outlives its timeout, ends the job in one line" {
	printf '#!/bin/sh\ncat >/dev/null\nexit 3\n' > "$REC/fails.sh"
	printf '#!/bin/sh\nexec sleep 30\n' > "$REC/sleeps.sh"
	chmod 755 "$REC/fails.sh" "$REC/sleeps.sh"
	refused_with "$(bad_spec "{hooks: [{hookName: createContainer, path: $REC/fails.sh}]}")" \
		"CDI spec $SPECS/bad.yaml: the createContainer hook $REC/fails.sh: exited with status 3"
	local start=$SECONDS
	refused_with "$(bad_spec "{hooks: [{hookName: prestart, path: $REC/sleeps.sh, timeout: 1}]}")" \
		"CDI spec $SPECS/bad.yaml: the prestart hook $REC/sleeps.sh: did not finish within its timeout of 1 s"
	(( SECONDS - start < 20 )) || fail "the timeout took $((SECONDS - start)) s"
	refused_with "$(bad_spec '{hooks: [{hookName: startContainer, path: /no/such/hook}]}')" \
		"CDI spec $SPECS/bad.yaml: the startContainer hook /no/such/hook: cannot run it: No such file or directory"
}

# --- hostile spec directories --------------------------------------------------------------

# refused_dir NEEDLE...: a run with any device fails in one line holding every NEEDLE, within
# 20 seconds (a FIFO or a device is never waited on).
refused_dir() {
	run --separate-stderr timeout 20 "$EDR_BIN" run --device test.example.com/gpu=0 r -- touch /ran
	assert_edr_error 125 "$@"
}

@test "hostile: a spec that is a symlink to a device, a FIFO or itself; an unreadable one" {
	ln -s /dev/zero "$SPECS/zero.yaml"
	refused_dir "CDI spec $SPECS/zero.yaml: not a regular file"
	rm "$SPECS/zero.yaml"
	mkfifo "$T/fifo"
	ln -s "$T/fifo" "$SPECS/fifo.json"
	refused_dir "CDI spec $SPECS/fifo.json: not a regular file"
	rm "$SPECS/fifo.json"
	ln -s loop.yaml "$SPECS/loop.yaml"
	refused_dir "CDI spec $SPECS/loop.yaml: cannot read it: Too many levels of symbolic links"
	rm "$SPECS/loop.yaml"
	chmod 000 "$SPECS/test.yaml"
	refused_dir "CDI spec $SPECS/test.yaml: cannot read it: Permission denied"
}

@test "hostile: a directory named as a spec, and a symlink to one, are skipped; other names are not read" {
	mkdir "$SPECS/dir.yaml"
	ln -s /etc "$SPECS/etc.json"
	ln -s /dev/zero "$SPECS/notes.txt"
	edr_run run --device test.example.com/gpu=0 r -- stat -c %t:%T /dev/testgpu0
	assert_status 0
	assert_output "$(rdev /dev/zero)"
}

@test "hostile: a spec of 5 MiB, 100,000 levels deep, or an alias bomb, refused in one line at once" {
	head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' ' ' > "$SPECS/huge.yaml"
	refused_dir "CDI spec $SPECS/huge.yaml: larger than 4194304 bytes"
	rm "$SPECS/huge.yaml"
	python3 -c 'import sys; sys.stdout.write("[" * 100000 + "]" * 100000)' > "$SPECS/deep.yaml"
	refused_dir "CDI spec $SPECS/deep.yaml: line 1: nested more than 64 deep"
	mv "$SPECS/deep.yaml" "$SPECS/deep.json"
	refused_dir "CDI spec $SPECS/deep.json: line 1:"
	rm "$SPECS/deep.json"
	# The "billion laughs": nine levels of nine aliases each, a billion strings from 1 KiB.
	local prev=a l
	{
		echo 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'
		for l in b c d e f g h i; do
			echo "$l: &$l [*$prev,*$prev,*$prev,*$prev,*$prev,*$prev,*$prev,*$prev,*$prev]"
			prev=$l
		done
	} > "$SPECS/lol.yaml"
	refused_dir "CDI spec $SPECS/lol.yaml: line 1: anchors and aliases are not accepted"
}

@test "hostile: a field name with control characters is named on one line" {
	printf '{"cdiVersion": "0.3.0", "kind": "a.com/b", "devices": [], "x\\u001b[31m\\ny": 1}\n' > "$SPECS/esc.json"
	refused_dir "CDI spec $SPECS/esc.json: x?[31m?y: an unknown field"
}
