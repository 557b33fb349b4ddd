#!/usr/bin/env bats
# Escapes from inside a devroot, in the guest: unprivileged, user namespaces off, the
# patched kernel's chroot, Landlock ABI 6. edr-attack (tests/guest/attack.c) prints "ok"
# when an attack worked, else the errno that stopped it. Each attack has a control: the
# same attack outside the devroot, or inside with --no-landlock, where it works, so each
# test can fail. (inside.bats covers leaked fds, the cwd and nested chroot; the host's
# confine.bats the same attacks in userns mode and the degraded path.)

load common

setup_file() {
	guest_setup_file
	[[ -x ${EDR_ATTACK:-} ]] || return 0
	cp "$EDR_ATTACK" "$XDG_DATA_HOME/enter-devroot/roots/dev/bin/edr-attack" ||
		fail "cannot copy edr-attack into dev"
}

setup() {
	guest_setup
	[[ -x ${EDR_ATTACK:-} ]] || skip "edr-attack was not built (cc -static failed on the host)"
	OUT=$T/outside
	mkdir -p "$OUT"
	echo secret > "$OUT/secret"
	helpers=()
}

teardown() {
	local p
	for p in "${helpers[@]}"; do kill "$p" 2>/dev/null || true; done
	guest_teardown
}

# attack [--no-landlock | --abi N] ATTACK ARGS...: edr-attack inside dev; $output is its
# word. --abi N: as on a kernel of Landlock ABI N (edr-attack landlock-abi).
attack() {
	local pre=() opt=()
	case $1 in
	--no-landlock) opt=(--no-landlock); shift ;;
	--abi) pre=("$EDR_ATTACK" landlock-abi "$2"); shift 2 ;;
	esac
	run --separate-stderr "${pre[@]}" "$EDR_BIN" run "${opt[@]}" dev -- edr-attack "$@"
}

# serve_fd: an outside process offers a directory fd of $OUT on dev's /tmp/fd.sock.
serve_fd() {
	local sock=$DEV/tmp/fd.sock
	rm -f "$sock"
	"$EDR_ATTACK" sendfd "$sock" "$OUT" >/dev/null 3>&- &
	helpers+=($!)
	for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
}

start_victim() {
	sleep 300 3>&- &
	victim=$!
	helpers+=("$victim")
}

tty_run() {
	run script -qec "$*" /dev/null
	output=${output//$'\r'/}
}

@test "escape: Landlock ABI 6 or later and no warning on entering" {
	edr_run doctor
	# 6 (Linux 6.12) is what the tool needs; the guest kernel may have a later one.
	local abi
	abi=$(sed -n 's/^Landlock ABI  *\([0-9][0-9]*\)$/\1/p' <<< "$output")
	[[ -n $abi && $abi -ge 6 ]] || fail "doctor's Landlock ABI line is not 6 or later:
$(last_run)"
	edr_run run dev -- true
	assert_status 0
	assert_equal "$stderr" ""
}

@test "escape: the environment inside names no host path of the root or the caller" {
	edr_run run dev -- /usr/bin/env
	assert_status 0
	refute_output --partial "$XDG_DATA_HOME"
	refute_output --partial "$T"
	refute_output --regexp '^OLDPWD='
}

@test "escape: a directory fd passed in over a unix socket opens nothing outside (runc CVE-2024-21626 class)" {
	local opt
	for opt in --no-landlock ""; do
		serve_fd
		attack $opt recvfd /tmp/fd.sock secret
		if [[ -n $opt ]]; then assert_output ok; else assert_output EACCES; fi
	done
}

@test "escape: /proc/PID/root of an outside process, through a passed /proc fd, is refused" {
	start_victim
	local sock=$DEV/tmp/proc.sock opt
	for opt in --no-landlock ""; do
		rm -f "$sock"
		"$EDR_ATTACK" sendfd "$sock" /proc >/dev/null 3>&- &
		helpers+=($!)
		for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
		attack $opt recvfd /tmp/proc.sock "$victim/root$OUT/secret"
		if [[ -n $opt ]]; then assert_output ok; else assert_output --regexp '^(EACCES|EPERM)$'; fi
	done
}

@test "escape: the devroot has no /proc of its own to walk (the tool mounts nothing)" {
	attack dotdot /proc/1/root/etc/passwd
	assert_output ENOENT
}

@test "escape: nested chroot breakout is refused by the kernel, and by Landlock" {
	attack --no-landlock chroot-escape "$OUT/secret"
	assert_output EPERM
	attack chroot-escape "$OUT/secret"
	assert_output --regexp '^(EACCES|EPERM)$'
}

@test "escape: .. walking from the root stays in the root" {
	attack dotdot "$OUT/secret"
	assert_output ENOENT
	attack dotdot /bin/busybox
	assert_output ok
}

@test "escape: kill of a same-uid process outside: ok with --no-landlock, EPERM with Landlock" {
	start_victim
	attack --no-landlock kill "$victim"
	assert_output ok
	attack kill "$victim"
	assert_output EPERM
}

@test "escape: ptrace, process_vm_writev, pidfd_getfd of a same-uid process outside: EPERM" {
	start_victim
	local a
	for a in ptrace vmwrite getfd; do
		attack --no-landlock "$a" "$victim"
		[[ $output != ENOSYS ]] ||
			fail "$a: ENOSYS: the guest kernel lacks it (CONFIG_CROSS_MEMORY_ATTACH in kernel/config?)"
		assert_output ok
		attack "$a" "$victim"
		assert_output EPERM
	done
}

@test "escape: abstract unix socket outside: ok with --no-landlock, EPERM with Landlock" {
	local name=edr-guest-$RANDOM opt
	for opt in --no-landlock ""; do
		rm -f "$T/listener"
		"$EDR_ATTACK" listen-abstract "$name" > "$T/listener" 3>&- &
		helpers+=($!)
		for _ in $(seq 100); do grep -q ready "$T/listener" 2>/dev/null && break; sleep 0.1; done
		attack $opt connect-abstract "$name"
		if [[ -n $opt ]]; then assert_output ok; else assert_output EPERM; fi
		kill "${helpers[-1]}" 2>/dev/null || true
		wait "${helpers[-1]}" 2>/dev/null || true
	done
}

@test "escape: TIOCSTI injects outside, EPERM inside, with and without high bits (CVE-2017-5226, CVE-2019-10063)" {
	local v
	read -r v < /proc/sys/dev/tty/legacy_tiocsti || skip "no dev.tty.legacy_tiocsti"
	[[ $v == 1 ]] || fail "dev.tty.legacy_tiocsti is $v: tests/guest/init sets it to 1"
	for hi in "" high; do
		tty_run "$EDR_ATTACK" tiocsti $hi
		assert_output --regexp '^#ok$'
		tty_run "$EDR_BIN" run dev -- edr-attack tiocsti $hi
		assert_output EPERM
		tty_run "$EDR_BIN" run --no-landlock dev -- edr-attack tiocsti $hi
		assert_output EPERM
	done
}

@test "escape: x32 syscall numbers are refused (ENOSYS), so they cannot bypass the ioctl rule" {
	[[ $HOSTTYPE == x86_64 ]] || skip "x86_64 only"
	# (The guest kernel has no IA32 emulation: an int $0x80 probe would only fault, and
	# fail the kernel-log check; the host's confine.bats tests the i386 entry.)
	tty_run "$EDR_ATTACK" tiocsti-x32
	echo "# x32 outside: $output" >&3
	tty_run "$EDR_BIN" run dev -- edr-attack tiocsti-x32
	assert_output ENOSYS
}

@test "escape: TIOCLINUX works on the user's VT outside, EPERM inside (seccomp)" {
	[[ -n ${EDR_GUEST_VT:-} && -c $EDR_GUEST_VT ]] ||
		fail "tests/guest/init gave the user no virtual terminal (CONFIG_VT in kernel/config?)"
	# setsid -c: a new session whose controlling terminal is the VT on stdin, as after a
	# console login (the kernel refuses TIOCLINUX on a VT that is not the caller's ctty).
	run setsid -w -c "$EDR_ATTACK" tioclinux-shift < "$EDR_GUEST_VT"
	assert_output ok
	run --separate-stderr setsid -w -c "$EDR_BIN" run --no-landlock dev -- edr-attack tioclinux-shift < "$EDR_GUEST_VT"
	assert_output EPERM
	run --separate-stderr setsid -w -c "$EDR_BIN" run dev -- edr-attack tioclinux-shift < "$EDR_GUEST_VT"
	assert_output EPERM
	# Pasting the selection (the injection) needs CAP_SYS_ADMIN since 6.7 outside too;
	# inside, the filter refuses it before the kernel looks.
	run --separate-stderr setsid -w -c "$EDR_BIN" run dev -- edr-attack tioclinux < "$EDR_GUEST_VT"
	assert_output EPERM
}

@test "escape: no setsid: the command keeps the terminal as its controlling terminal" {
	tty_run "$EDR_BIN" run dev -- edr-attack ctty
	assert_output ok
}

@test "escape: enter-devroot installed setuid root and setgid root refuses to run, in one line" {
	[[ -n ${EDR_SUID_TOOL:-} && -f $EDR_SUID_TOOL ]] ||
		fail "EDR_SUID_TOOL not planted by tests/guest/init (see results/init.log)"
	local mode
	mode=$(stat -c '%u:%g %a' "$EDR_SUID_TOOL")
	[[ $mode == "0:0 6755" ]] || fail "$EDR_SUID_TOOL: expected 0:0 6755, got $mode"
	run --separate-stderr "$EDR_SUID_TOOL" run dev -- /bin/echo inside
	assert_status "$EDR_TOOL_EXIT"
	assert_output ""
	assert_equal "$stderr" "enter-devroot: refusing to run setuid or setgid: install enter-devroot as an ordinary executable (chmod u-s,g-s)"
}

@test "escape: without Landlock in the kernel (ENOSYS): one warning line, the devroot works" {
	run --separate-stderr "$EDR_ATTACK" no-landlock "$EDR_BIN" run dev -- /bin/echo inside
	assert_status 0
	assert_output inside
	assert_equal "$stderr" "enter-devroot: warning: root 'dev': Landlock unavailable (kernel built without it): confined by chroot only; see --no-landlock"
	run --separate-stderr "$EDR_ATTACK" no-landlock "$EDR_BIN" run --no-landlock dev -- /bin/echo inside
	assert_status 0
	assert_equal "$stderr" ""
}

@test "escape: on Landlock ABI 1 and 5 (emulated on this kernel): one warning, fds and ptrace still confined, signals not" {
	start_victim
	local abi
	for abi in 1 5; do
		serve_fd
		attack --abi $abi recvfd /tmp/fd.sock secret
		assert_output EACCES
		assert_regex "$stderr" "^enter-devroot: warning: root 'dev': Landlock (ABI 1: renames|scoping .*\\(ABI 5, needs 6\\)).*; see --no-landlock\$"
		attack --abi $abi ptrace "$victim"
		assert_output EPERM
		attack --abi $abi kill "$victim"
		assert_output ok
	done
}
