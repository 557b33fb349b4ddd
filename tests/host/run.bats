#!/usr/bin/env bats
# run: the command's exit status passes through; 126/127 as chroot(1) and env(1);
# working directory and environment as the contract says.

load common

setup() {
	edr_setup
	create_default dev
	R=$(root_of dev)
}
teardown() { edr_teardown; }

@test "run: exit status 0 passes through" {
	edr_run run dev -- sh -c 'exit 0'
	assert_status 0
}

@test "run: exit status 1 passes through" {
	edr_run run dev -- sh -c 'exit 1'
	assert_status 1
}

@test "run: exit status 42 passes through" {
	edr_run run dev -- sh -c 'exit 42'
	assert_status 42
}

@test "run: exit statuses 125, 126 and 127 of the command itself pass through" {
	for s in 125 126 127; do
		if [[ $s -eq 127 ]]; then edr_run_127 run dev -- sh -c "exit $s"; else edr_run run dev -- sh -c "exit $s"; fi
		assert_status "$s"
		[[ -z $stderr ]] || fail "the tool added an error line for the command's own status $s: $stderr"
	done
}

@test "run: arguments reach the command unchanged" {
	edr_run run dev -- sh -c 'for a; do echo "[$a]"; done' sh 'a b' '' '*' '$HOME' '--workdir'
	assert_status 0
	assert_equal "$output" $'[a b]\n[]\n[*]\n[$HOME]\n[--workdir]'
}

@test "run: stdin and stdout are the caller's" {
	run --separate-stderr bash -c 'echo piped | "$EDR_BIN" run dev -- cat'
	assert_status 0
	assert_output piped
}

@test "run: a command that is not found exits 127 with one line naming it" {
	edr_run_127 run dev -- no-such-command-xyz
	assert_edr_error 127 no-such-command-xyz
}

@test "run: an absolute command path that does not exist exits 127 naming it" {
	edr_run_127 run dev -- /no/such/file
	assert_edr_error 127 /no/such/file
}

@test "run: a host-only program is not found inside the root (127)" {
	# bats exists on the host, not in the root.
	edr_run_127 run dev -- "$(command -v bats)"
	assert_edr_error 127 "$(command -v bats)"
}

@test "run: a file without the execute bit exits 126 naming it" {
	printf '#!/bin/sh\necho ran\n' > "$R/noexec"
	chmod 644 "$R/noexec"
	edr_run run dev -- /noexec
	assert_edr_error 126 /noexec
	refute_output --partial ran
}

@test "run: a directory as the command exits 126 naming it" {
	mkdir -p "$R/somedir"
	edr_run run dev -- /somedir
	assert_edr_error 126 /somedir
}

@test "run: --workdir that exists becomes the working directory" {
	mkdir -p "$R/srv/work"
	edr_run run dev --workdir /srv/work -- pwd
	assert_status 0
	assert_output /srv/work
}

@test "run: --workdir is a path inside the root, not on the host" {
	mkdir -p "$R/inside-only"
	edr_run run dev --workdir /inside-only -- sh -c 'pwd; ls /'
	assert_status 0
	assert_line --index 0 /inside-only
	# The host's directory of the same path as the test's tmpdir is not visible.
	edr_run run dev --workdir "$T" -- pwd
	assert_edr_error 125 "$T"
}

@test "run: --workdir that does not exist is refused with 125 naming it" {
	edr_run run dev --workdir /no/such/dir -- pwd
	assert_edr_error 125 /no/such/dir
}

@test "run: --workdir that is a file is refused with 125 naming it" {
	echo x > "$R/afile"
	edr_run run dev --workdir /afile -- pwd
	assert_edr_error 125 /afile
}

@test "run: default working directory is / when the user has no home in the root" {
	drop_account "$R"
	export HOME=/home/edr-nohome-$$
	edr_run run dev -- pwd
	assert_status 0
	assert_output /
}

@test "run: default working directory is the user's home inside the root when it exists" {
	# The caller's HOME and the root's passwd entry agree, so either reading of
	# "the user's home" names the same directory.
	local h=/home/edr-user-$$
	export HOME=$h
	drop_account "$R"
	mkdir -p "$R$h"
	passwd_entry /bin/sh "$h" >> "$R/etc/passwd"
	edr_run run dev -- pwd
	assert_status 0
	assert_output "$h"
}

@test "run: HOME inside is the home directory in the root, not the host's path" {
	local h=/home/edr-user-$$
	export HOME=$h
	drop_account "$R"
	mkdir -p "$R$h"
	passwd_entry /bin/sh "$h" >> "$R/etc/passwd"
	edr_run run dev -- sh -c 'echo "$HOME"; cd && pwd'
	assert_status 0
	assert_line --index 0 "$h"
	assert_line --index 1 "$h"
}

@test "run: --env K=V is visible to the command" {
	edr_run run dev --env FOO=bar --env EMPTY= --env 'SPACED=a b=c' -- sh -c 'echo "$FOO|$EMPTY|$SPACED"; env | grep -c "^EMPTY=$"'
	assert_status 0
	assert_line --index 0 'bar||a b=c'
	assert_line --index 1 1
}

@test "run: --env overrides a variable of the caller" {
	TERM=from-host edr_run run dev --env TERM=from-flag -- sh -c 'echo $TERM'
	assert_status 0
	assert_output from-flag
}

@test "run: --env K without = passes the caller's K, as docker's -e K; nothing when the caller has none" {
	unset ABSENT
	FROM_HOST='a b=c' edr_run run dev --env FROM_HOST --env ABSENT -- sh -c 'echo "$FROM_HOST|${ABSENT-unset}"'
	assert_status 0
	assert_output 'a b=c|unset'
	FROM_HOST=x edr_run run dev --clear-env --env FROM_HOST -- sh -c 'echo "$FROM_HOST"'
	assert_output x
}

@test "run: --env-fd applies NUL-ended K=V from a file descriptor, in place; a bad one is one line that shows no value" {
	printf 'MULTI=line one\nline two\0EQ=a=b\0EMPTY=\0LATER=fd\0' >"$W/env0"
	edr_run run dev --env LATER=flag --env-fd 3 --env EQ=flag-wins -- \
		sh -c 'printf "[%s]\n" "$MULTI" "$EQ" "${EMPTY-unset}" "$LATER"' 3<"$W/env0"
	assert_status 0
	assert_equal "$output" $'[line one\nline two]\n[flag-wins]\n[]\n[fd]'
	# The fd is closed before the command starts.
	edr_run run dev --env-fd 3 -- sh -c 'test -e /proc/self/fd/3 && echo open || echo closed' 3<"$W/env0"
	assert_output closed
	printf 'OK=1\0no-equals-secret-value\0' >"$W/bad0"
	edr_run run dev --env-fd 3 -- true 3<"$W/bad0"
	assert_edr_error 125 "--env-fd 3: assignment 2: expected K=V"
	[[ $stderr != *secret-value* ]] || fail "$(last_run)"
	printf 'K=unterminated-secret' >"$W/bad0"
	edr_run run dev --env-fd 3 -- true 3<"$W/bad0"
	assert_edr_error 125 "not ended by a NUL byte"
	[[ $stderr != *unterminated-secret* ]] || fail "$(last_run)"
	edr_run run dev --env-fd x -- true
	assert_edr_error 125 "invalid --env-fd 'x'"
}

@test "run: --env with an empty or invalid name is refused with 125" {
	edr_run run dev --env =value -- true
	assert_edr_error 125 =value
}

@test "run: unrelated caller variables do not leak into the root" {
	SECRET_FROM_HOST=1 LD_PRELOAD= BASH_ENV=/x edr_run run dev -- env
	assert_status 0
	refute_output --partial SECRET_FROM_HOST
	refute_output --partial BASH_ENV
	refute_output --regexp '^LD_PRELOAD='
	refute_output --partial EDR_BIN
	refute_output --partial XDG_DATA_HOME
}

@test "run: TERM and LANG are kept" {
	TERM=xterm-test LANG=C.UTF-8 edr_run run dev -- sh -c 'echo "$TERM $LANG"'
	assert_status 0
	assert_output 'xterm-test C.UTF-8'
}

@test "run: PATH is a sane default, not the caller's" {
	PATH=/host/only/bin:$PATH edr_run run dev -- sh -c 'echo "$PATH"'
	assert_status 0
	refute_output --partial /host/only
	assert_output --regexp '(^|:)/bin(:|$)'
	assert_output --regexp '(^|:)/usr/bin(:|$)'
}

@test "run: PATH is Debian's user PATH (games included) with the sbin directories" {
	edr_run run dev -- sh -c 'echo "$PATH"'
	assert_output /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/games:/usr/games
}

@test "run: HOME is set inside" {
	edr_run run dev -- sh -c 'echo "${HOME:?unset}"'
	assert_status 0
	assert_output --regexp '^/'
}

@test "run: --clear-env removes the caller's variables" {
	TERM=xterm-test LANG=C.UTF-8 SECRET_FROM_HOST=1 edr_run run dev --clear-env -- env
	assert_status 0
	refute_output --partial SECRET_FROM_HOST
	refute_output --partial xterm-test
	refute_output --partial C.UTF-8
}

@test "run: --clear-env keeps --env variables" {
	edr_run run dev --clear-env --env ONLY=this -- sh -c 'echo $ONLY'
	assert_status 0
	assert_output this
}

@test "run: a missing root is refused with 125 naming it" {
	edr_run run nosuch -- true
	assert_edr_error 125 nosuch
}

@test "run: the command's signal death is reported like a shell does (128+N)" {
	edr_run run dev -- sh -c 'kill -TERM $$'
	assert_status 143
}

@test "run: ENTER_DEVROOT_NAME and debian_chroot name the devroot inside" {
	edr_run run dev -- sh -c 'echo "$ENTER_DEVROOT_NAME|$debian_chroot"'
	assert_status 0
	assert_output "dev|dev"
}
