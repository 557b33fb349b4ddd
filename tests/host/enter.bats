#!/usr/bin/env bats
# enter: an interactive login shell, here fed on stdin.

load common

# assert_shell_line TEXT: the shell printed the line TEXT. enter runs the shell
# interactively (like chroot(1)), so a prompt may precede it.
assert_shell_line() {
	local l
	for l in "${lines[@]}"; do
		[[ $l == "$1" || $l == *"\$ $1" || $l == *"# $1" || $l == *"> $1" ]] && return 0
	done
	fail "the shell did not print the line '$1'
$output"
}

setup() {
	edr_setup
	create_default dev
	R=$(root_of dev)
}
teardown() { edr_teardown; }

@test "enter: runs commands from stdin and passes the shell's exit status" {
	run --separate-stderr bash -c 'echo "echo hi; exit 3" | "$EDR_BIN" enter dev'
	assert_status 3
	assert_shell_line hi
}

@test "enter: exit 0 from the shell is status 0" {
	run --separate-stderr bash -c 'echo "echo ok" | "$EDR_BIN" enter dev'
	assert_status 0
	assert_shell_line ok
}

@test "enter: without a passwd entry for the user, the shell is /bin/sh" {
	drop_account "$R"
	[[ -x $R/bin/busybox ]] || skip "the template has no /bin/busybox to wrap /bin/sh with"
	rm -f "$R/bin/sh"
	printf '#!/bin/busybox sh\necho BIN-SH-USED\nexec /bin/busybox sh "$@"\n' > "$R/bin/sh"
	chmod 755 "$R/bin/sh"
	run --separate-stderr bash -c 'echo "echo done" | "$EDR_BIN" enter dev'
	assert_status 0
	assert_line BIN-SH-USED
	assert_shell_line done
}

@test "enter: uses the login shell of the user's entry in the root's /etc/passwd" {
	local h=/home/u$$
	export HOME=$h
	mkdir -p "$R$h"
	printf '#!/bin/sh\necho "login-shell $0"\nexec /bin/sh "$@"\n' > "$R/bin/myshell"
	chmod 755 "$R/bin/myshell"
	sed -i "/^$(id -un):/d" "$R/etc/passwd"
	passwd_entry /bin/myshell "$h" >> "$R/etc/passwd"
	run --separate-stderr bash -c 'echo "echo hi; exit 4" | "$EDR_BIN" enter dev'
	assert_status 4
	assert_line --partial login-shell
	assert_shell_line hi
}

@test "enter: starts in the user's home inside the root" {
	local h=/home/u$$
	export HOME=$h
	mkdir -p "$R$h"
	sed -i "/^$(id -un):/d" "$R/etc/passwd"
	passwd_entry /bin/sh "$h" >> "$R/etc/passwd"
	run --separate-stderr bash -c 'echo pwd | "$EDR_BIN" enter dev'
	assert_status 0
	assert_shell_line "$h"
}

@test "enter: --workdir, --env and --clear-env work as for run" {
	mkdir -p "$R/w"
	run --separate-stderr bash -c 'echo "pwd; echo \$A; echo [\$SECRET_FROM_HOST]" | SECRET_FROM_HOST=1 "$EDR_BIN" enter dev --workdir /w --env A=b --clear-env'
	assert_status 0
	assert_shell_line /w
	assert_shell_line b
	assert_shell_line '[]'
}

@test "enter: the root's /etc/passwd is read inside the root, never through a symlink to a host file" {
	# A host file (outside the root) that would pick a marker shell if read.
	mkdir -p "$W/hostetc"
	passwd_entry /bin/marker-shell / > "$W/hostetc/passwd"
	printf '#!/bin/sh\necho HOST-PASSWD-USED\nexec /bin/sh "$@"\n' > "$R/bin/marker-shell"
	chmod 755 "$R/bin/marker-shell"
	rm -f "$R/etc/passwd"
	ln -s "$W/hostetc/passwd" "$R/etc/passwd"
	run --separate-stderr bash -c 'echo "echo in" | "$EDR_BIN" enter dev'
	assert_status 0
	refute_output --partial HOST-PASSWD-USED
	assert_shell_line in
}

@test "enter: a missing root is refused with 125 naming it" {
	edr_run enter nosuch
	assert_edr_error 125 nosuch
}

@test "enter: a login shell missing from the root fails with 127 naming it, or falls back to /bin/sh" {
	sed -i "/^$(id -un):/d" "$R/etc/passwd"
	passwd_entry /bin/no-such-shell / >> "$R/etc/passwd"
	run --separate-stderr bash -c 'echo "echo hi" | "$EDR_BIN" enter dev'
	if [[ $status -eq 0 ]]; then
		assert_shell_line hi
	else
		assert_status 127
		[[ $stderr == *no-such-shell* ]] || fail "error does not name the shell: $stderr"
	fi
}

@test "enter: your own shell (\$SHELL) where the root has it, else bash, else /bin/sh; a shell chosen in the root's passwd wins" {
	mkdir -p "$R/usr/bin"
	printf '#!/bin/sh\necho "my-shell $0"\nexec /bin/sh "$@"\n' >"$R/usr/bin/mysh"
	printf '#!/bin/sh\necho "bash-stand-in $0"\nexec /bin/sh "$@"\n' >"$R/usr/bin/bash"
	chmod 755 "$R/usr/bin/mysh" "$R/usr/bin/bash"
	run --separate-stderr env SHELL=/usr/bin/mysh bash -c 'echo "echo in-\$SHELL" | "$EDR_BIN" enter dev'
	assert_status 0
	assert_line "my-shell /usr/bin/mysh"
	assert_shell_line in-/usr/bin/mysh
	# Your shell is not in the root: bash.
	run --separate-stderr env SHELL=/bin/no-such-shell bash -c 'echo "echo in" | "$EDR_BIN" enter dev'
	assert_status 0
	assert_line "bash-stand-in /usr/bin/bash"
	# No bash either: the root's /bin/sh.
	rm "$R/usr/bin/bash"
	run --separate-stderr env SHELL=/bin/no-such-shell bash -c 'echo "echo \"in-[\$0]\"" | "$EDR_BIN" enter dev'
	assert_status 0
	assert_shell_line "in-[/bin/sh]"
	# A shell the root's passwd gives you (not create's /bin/sh) is yours, whatever $SHELL says.
	sed -i "/^$(id -un):/d" "$R/etc/passwd"
	passwd_entry /usr/bin/mysh / >>"$R/etc/passwd"
	run --separate-stderr env SHELL=/bin/sh bash -c 'echo "echo in" | "$EDR_BIN" enter dev'
	assert_status 0
	assert_line "my-shell /usr/bin/mysh"
	# run is not enter: its command is what you typed, with no prompt set for it.
	run --separate-stderr env SHELL=/usr/bin/mysh "$EDR_BIN" run dev -- sh -c 'echo "[${PS1-unset}]"'
	assert_status 0
	refute_output --partial "(dev)"
}
