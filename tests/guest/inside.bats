#!/usr/bin/env bats
# What a command run by an unprivileged user sees from inside a devroot, and
# the tool's own escapes (a descriptor or a working directory left outside).

load common

setup_file() { guest_setup_file; }
setup() { guest_setup; }
teardown() { guest_teardown; }

@test "inside: the root's marker file is visible at /" {
	echo "marker-$BATS_TEST_NUMBER" > "$DEV/inside-marker"
	edr_run run dev -- cat /inside-marker /etc/os-release
	assert_status 0
	assert_line "marker-$BATS_TEST_NUMBER"
	assert_line ID=enter-devroot-minimal
}

@test "inside: a host-only directory is absent" {
	[[ -d $HOST_ONLY_DIR ]] || fail "$HOST_ONLY_DIR is missing outside: the test proves nothing"
	edr_run run dev -- sh -c "test -e $HOST_ONLY_DIR && echo visible || echo absent"
	assert_status 0
	assert_output absent
}

@test "inside: the tool's own staging directory is absent" {
	edr_run run dev -- sh -c "test -e '$EDR_BIN' && echo visible || echo absent"
	assert_status 0
	assert_output absent
}

@test "inside: / is the root's directory (same device and inode)" {
	edr_run run dev -- stat -c %d:%i /
	assert_status 0
	assert_output "$(dev_id "$DEV")"
}

@test "inside: .. from / stays inside (same device and inode as the root)" {
	local root_id host_id
	root_id=$(dev_id "$DEV")
	host_id=$(dev_id /)
	[[ $root_id != "$host_id" ]] || fail "the root and the host's / are the same directory"
	edr_run run dev -- sh -c 'stat -c %d:%i /..; cd /../../..; stat -c %d:%i .; pwd'
	assert_status 0
	assert_equal "${lines[0]}" "$root_id"
	assert_equal "${lines[1]}" "$root_id"
	assert_equal "${lines[2]}" /
}

@test "inside: the working directory is inside the root when invoked from outside it" {
	mkdir -p "$T/caller-cwd"
	touch "$T/caller-cwd/outside-marker"
	cd "$T/caller-cwd"
	edr_run run dev -- sh -c 'pwd; stat -c %d:%i .; ls -a .'
	assert_status 0
	[[ -d $DEV${lines[0]} ]] || fail "pwd inside is '${lines[0]}', not a directory of the root
$(last_run)"
	assert_equal "${lines[1]}" "$(dev_id "$DEV${lines[0]}")"
	refute_line outside-marker
}

@test "inside: getcwd() is a path of the root, with no host prefix" {
	need_probe
	cd "$T"
	edr_run run dev -- /edr-probe cwd
	assert_status 0
	[[ $output == /* && $output != "$T"* && $output != "$DEV"* ]] ||
		fail "getcwd() inside is '$output'"
	[[ -d $DEV$output ]] || fail "getcwd() inside is '$output', not a directory of the root"
}

@test "inside: no descriptor above 2 is open" {
	need_probe
	edr_run run dev -- /edr-probe fds
	assert_status 0
	assert_output ""
}

@test "inside: a directory fd 7 on the host's / opened by the caller is closed" {
	need_probe
	exec 7< /
	# Control: the probe run directly (not through the tool) sees fd 7.
	run "$EDR_PROBE" fds
	assert_line 7
	edr_run run dev -- /edr-probe fds
	exec 7<&-
	assert_status 0
	assert_output ""
}

@test "inside: the shell cannot use a descriptor 7 the caller left open" {
	exec 7< /
	# `true`, not `:`: a redirection error on a special built-in exits the shell.
	run sh -c 'true <&7 && echo fd7-open'
	assert_output fd7-open
	edr_run run dev -- sh -c 'true <&7 2>/dev/null && echo fd7-open || echo fd7-closed'
	exec 7<&-
	assert_status 0
	assert_output fd7-closed
}

@test "inside: no_new_privs is set" {
	need_probe
	edr_run run dev -- /edr-probe nnp
	assert_status 0
	assert_output 1
}

@test "inside: the caller keeps its uid and gid, with no capability" {
	need_probe
	edr_run run dev -- /edr-probe ids
	assert_status 0
	assert_output "$UID $UID $GID $GID"
	edr_run run dev -- /edr-probe caps
	assert_output 0000000000000000
}

@test "inside: chroot again from inside is refused (no nested escape)" {
	need_probe
	edr_run run dev -- /edr-probe escape "$HOST_ONLY_DIR"
	assert_status 0
	assert_output "contained: chroot: Operation not permitted"
}
