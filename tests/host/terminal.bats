#!/usr/bin/env bats
# enter on a terminal, driven through a pseudo-terminal (ptyrun.py) as a user types:
# the job's shell owns the terminal in its PID namespace (job control, exit status), a
# stop of the job reaches the caller's shell.

load common

PTYRUN=$BATS_TEST_DIRNAME/ptyrun.py

# add_host_programs PROG...: the host's PROGs in the root's /usr/bin with the libraries
# they load at the same paths: dash and bash as a Debian root has them.
add_host_programs() {
	local p path lib
	for p in "$@"; do
		path=$(command -v "$p") || skip "$p is not installed on the host"
		mkdir -p "$R/usr/bin"
		rm -f "$R/usr/bin/$p" # the template's busybox link: cp would write through it
		cp -L "$path" "$R/usr/bin/$p"
		for lib in $(ldd "$path" | grep -o '/[^ ]*'); do
			mkdir -p "$R$(dirname "$lib")"
			[[ -e $R$lib ]] || cp -L "$lib" "$R$lib"
		done
	done
}

# login_shell PATH: the user's entry in the root's /etc/passwd names PATH.
login_shell() {
	sed -i "/^$(id -un):/d" "$R/etc/passwd"
	passwd_entry "$1" / >>"$R/etc/passwd"
}

# pty STEP... -- CMD...: ptyrun.py with bats' run; the output is the terminal's.
pty() { run "$PTYRUN" --timeout 20 "$@"; }

setup() {
	edr_setup
	is_root && skip "userns mode is about unprivileged callers (root chroots: root.bats)"
	command -v python3 >/dev/null || skip "python3 missing (drives the pseudo-terminal)"
	create_default dev
	R=$(root_of dev)
}
teardown() { edr_teardown; }

@test "terminal: dash as the login shell: exit 3 is status 3, and no tty process group error" {
	add_host_programs dash
	login_shell /usr/bin/dash
	pty 'expect:\$ ' 'send:exit 3\n' -- "$EDR_BIN" enter dev --mode userns
	assert_status 3
	refute_output --partial "Cannot set tty process group"
}

@test "terminal: dash's job control: a background job listed and killed by %1" {
	# KILL: a TERM sent right after the fork can reach the child while it still ignores
	# TERM as the interactive dash it was forked from, and be lost.
	add_host_programs dash
	login_shell /usr/bin/dash
	pty 'expect:\$ ' 'send:sleep 30 & jobs; kill -KILL %1; wait; echo done-$?\n' 'expect:Killed' \
		'send:exit 4\n' -- "$EDR_BIN" enter dev --mode userns
	assert_status 4
	assert_output --regexp 'Running +sleep 30'
	refute_output --partial "Cannot set tty process group"
}

@test "terminal: bash's job control: ^Z stops the foreground job, fg resumes it" {
	add_host_programs bash
	login_shell /usr/bin/bash
	# fg:sleep, not a pause: under load a ^Z typed too early reaches bash. The resumed job
	# is left to finish (status 0 after the 3 s): a ^C sent once it led the terminal again
	# was, under CI's load, sometimes never answered (cause not found: see the notes).
	pty 'expect:\$ ' 'send:sleep 3\n' 'fg:sleep' 'send:^Z' 'expect:Stopped' \
		'send:fg\n' 'fg:sleep' 'expect:fg\r\nsleep 3\r\n' 'expect:\$ ' 'send:echo back-$?\n' \
		'expect:back-[0-9]' \
		'send:exit 5\n' -- "$EDR_BIN" enter dev --mode userns
	assert_status 5
	assert_output --partial back-0
	refute_output --partial "no job control"
	refute_output --partial "cannot set terminal process group"
}

@test "terminal: ^Z of a command that is no shell stops enter-devroot in the caller's shell; fg resumes it" {
	add_host_programs bash
	# The caller's shell is the host's bash, job control on; the command prints after 2 s.
	pty 'expect:\$ ' "send:$EDR_BIN run dev --mode userns -- sh -c 'sleep 2; echo fini''shed'\\n" \
		'fg:!bash' 'sleep:0.3' 'send:^Z' 'expect:Stopped' 'send:echo host-prompt-back; fg\n' \
		'expect:finished' 'send:echo st-$?; exit\n' 'expect:st-[0-9]' -- bash --norc -i
	assert_output --partial host-prompt-back
	assert_output --partial st-0
}

@test "terminal: enter-devroot's own warning on a stty tostop terminal does not stop it (--timeout)" {
	# The job's group owns the terminal, so the supervisor writes from the background.
	pty 'expect:\$ ' "send:stty tostop; $EDR_BIN run dev --mode userns --timeout 1 -- sleep 5; echo st-\$?\\n" \
		'expect:st-[0-9]' 'send:exit\n' -- bash --norc -i
	assert_status 0
	assert_output --partial "timed out after 1 s"
	assert_output --partial st-124
}

@test "terminal: tty inside prints a name that exists inside and is the terminal" {
	pty 'expect:\$ ' 'send:t=$(tty); [ -c "$t" ] && [ "$t" -ef /proc/self/fd/0 ] && echo "name-$t-ok"\n' \
		'expect:name-/[^ ]*-ok' 'send:exit\n' -- "$EDR_BIN" enter dev --mode userns
	assert_status 0
	assert_output --partial name-/dev/console-ok
}

@test "terminal: script(1) makes a pseudo-terminal inside: the root's own /dev/pts and /dev/ptmx" {
	add_host_programs script
	edr_run run dev --mode userns -- script -qec 'tty; echo in-pty' /dev/null
	assert_status 0
	assert_output --partial in-pty
	assert_line --regexp '^/dev/pts/[0-9]+'
	edr_run run dev --mode userns -- sh -c 'readlink /dev/ptmx; grep " /dev/pts " /proc/self/mounts; echo "pts: $(ls /dev/pts)"'
	assert_status 0
	assert_line pts/ptmx
	assert_line "pts: ptmx" # a new instance: none of the host's ptys
	assert_output --regexp 'devpts /dev/pts devpts .*ptmxmode=666'
}

@test "terminal: after ^Z and bg, a command reading the terminal stops again (tty input) and fg gives it the terminal" {
	# The host shell waits (up to 10 s, a loaded machine) for the job to stop on its read
	# (head's read(2): busybox's read builtin polls first, which raises no SIGTTIN).
	pty 'expect:\$ ' "send:$EDR_BIN run dev --mode userns -- sh -c 'sleep 1; echo got-\$(head -n1)'\\n" \
		'fg:!bash' 'send:^Z' 'expect:Stopped' 'send:bg\n' \
		'send:for i in $(seq 100); do jobs | grep -q Stopped && break; sleep 0.1; done; echo host-prompt; jobs\n' \
		'expect:host-prompt\r' 'expect:Stopped' \
		'send:fg\n' 'sleep:0.5' 'send:hello\n' 'expect:got-hello' 'send:exit\n' -- bash --norc -i
	assert_status 0
	assert_output --partial got-hello
}

# enter's shell (src/enter/shell.c): your own where the root has it, else its best, and a
# prompt naming the root in the escapes of the shell it is.
@test "terminal: enter's prompt names the root: busybox ash expands \\u@\\h:\\w, dash gets no escapes" {
	SHELL=/bin/no-such-shell pty 'expect:\(dev\) [^ ]*@[^ ]*:[^ ]*\$ ' 'send:exit 6\n' -- "$EDR_BIN" enter dev --mode userns
	assert_status 6
	refute_output --partial '\u@'
	add_host_programs dash
	SHELL=/usr/bin/dash pty 'expect:\(dev\) \$ ' 'send:echo "[$0]"\n' 'expect:\[/usr/bin/dash\]' 'send:exit 7\n' -- \
		"$EDR_BIN" enter dev --mode userns
	assert_status 7
	refute_output --partial '\u@'
	# --env PS1=... is the user's choice, and wins.
	SHELL=/usr/bin/dash pty 'expect:mine> ' 'send:exit 8\n' -- "$EDR_BIN" enter dev --mode userns --env 'PS1=mine> '
	assert_status 8
}

@test "terminal: enter starts bash where the root has it and your shell is not there, with the root's name in its prompt" {
	add_host_programs bash
	SHELL=/bin/zsh pty 'expect:\(dev\) [^ ]*@[^ ]*:[^ ]*\$ ' 'send:echo "bash-$BASH_VERSION"\n' 'expect:bash-[0-9]' \
		'send:exit 9\n' -- "$EDR_BIN" enter dev --mode userns
	assert_status 9
}
