#!/usr/bin/env bats
# create, run and enter as an unprivileged user on the patched kernel.

load common

setup_file() { guest_setup_file; }
setup() { guest_setup; }
teardown() { guest_teardown; }

@test "create: a devroot from the embedded default template" {
	export XDG_DATA_HOME=$T/data
	edr_run create mine
	assert_status 0
	[[ -x $(root_of mine)/bin/busybox ]] || fail "no /bin/busybox in the new root"
	edr_run list
	assert_output --partial mine
}

@test "run: sh -c 'echo hello' prints hello" {
	edr_run run dev -- sh -c 'echo hello'
	assert_status 0
	assert_output hello
}

@test "run: the command's exit status passes through (0, 1, 42)" {
	edr_run run dev -- true
	assert_status 0
	edr_run run dev -- false
	assert_status 1
	edr_run run dev -- sh -c 'exit 42'
	assert_status 42
}

@test "run: a command found but not executable exits 126" {
	edr_run run dev -- /etc/os-release
	assert_status 126
	[[ $stderr == *"/etc/os-release"* ]] || fail "stderr does not name the command
$(last_run)"
}

@test "run: a command not found exits 127" {
	edr_run_127 run dev -- no-such-command-in-the-root
	assert_status 127
	[[ $stderr == *no-such-command-in-the-root* ]] || fail "stderr does not name the command
$(last_run)"
}

# The interactive busybox shell prints its banner and prompts ("~ $ ") on stdout
# too, so lines are matched at their end.
@test "enter: the shell reads commands from stdin and its exit status passes through" {
	edr_run enter dev <<-'EOF'
		echo entered-$((40 + 2))
		cat /etc/os-release
		exit 7
	EOF
	assert_status 7
	assert_line --regexp '(^|\$ )entered-42$'
	assert_line --regexp '(^|\$ )ID=enter-devroot-minimal$'
}

@test "enter: the shell's / is the root" {
	echo "marker-$BATS_TEST_NUMBER" > "$DEV/enter-marker"
	edr_run enter dev <<-EOF
		cat /enter-marker
		test -e $HOST_ONLY_DIR && echo host-visible || echo host-absent
	EOF
	assert_status 0
	assert_line --regexp "(^|\\$ )marker-$BATS_TEST_NUMBER\$"
	assert_line --regexp '(^|\$ )host-absent$'
}
