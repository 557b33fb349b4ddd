#!/usr/bin/env bats
# Confinement beyond chroot (src/enter/confine.c): what a process inside a devroot can no longer
# do to the user's world outside it, each attack beside a control (the same attack outside
# the devroot, or with --no-landlock) that shows it works there. edr-attack
# (tests/guest/attack.c) prints "ok" when an attack worked, else the errno that stopped it.
# The same cases run in the QEMU guest (tests/guest/escape.bats), without user namespaces.

load common

setup() {
	edr_setup
	[[ -x ${EDR_ATTACK:-} ]] || skip "edr-attack not built (needs a C compiler and static libc)"
	mkdir -p "$OUT"
	echo secret > "$OUT/secret"
	edr create r >/dev/null 2>&1 || fail "cannot create devroot r"
	cp "$EDR_ATTACK" "$(root_of r)/bin/edr-attack"
	helpers=()
}

teardown() {
	local p
	for p in "${helpers[@]}"; do kill "$p" 2>/dev/null || true; done
	edr_teardown
}

landlock_abi() { "$EDR_BIN" doctor 2>/dev/null | sed -n 's/^Landlock ABI  *\([0-9][0-9]*\)$/\1/p'; }
need_landlock() {
	local abi; abi=$(landlock_abi)
	[[ -n $abi ]] || skip "no Landlock on this kernel (the degraded path is tested below)"
	[[ $abi -ge ${1:-1} ]] || skip "Landlock ABI $abi < ${1:-1}"
}

# attack [--no-landlock | --abi N] ATTACK ARGS...: run edr-attack inside devroot r; $output
# is its word. --abi N: as on a kernel of Landlock ABI N (edr-attack landlock-abi).
attack() {
	local pre=() opt=()
	case $1 in
	--no-landlock) opt=(--no-landlock); shift ;;
	--abi) pre=("$EDR_ATTACK" landlock-abi "$2"); shift 2 ;;
	esac
	run --separate-stderr "${pre[@]}" "$EDR_BIN" run "${opt[@]}" r -- edr-attack "$@"
}

# The one warning line entering prints on a kernel of Landlock ABI $1 (1 to 5).
abi_warning() {
	if [[ $1 == 1 ]]; then
		echo "enter-devroot: warning: root 'r': Landlock ABI 1: renames and hard links across directories fail (EXDEV), signals and abstract sockets are not scoped (needs ABI 6); see --no-landlock"
	else
		echo "enter-devroot: warning: root 'r': Landlock scoping of signals and abstract sockets unavailable (ABI $1, needs 6): filesystem and ptrace confined only; see --no-landlock"
	fi
}

# serve_fd: an outside process offers a directory fd of $OUT on the root's /tmp/fd.sock.
serve_fd() {
	local sock=$(root_of r)/tmp/fd.sock
	rm -f "$sock"
	"$EDR_ATTACK" sendfd "$sock" "$OUT" >/dev/null 3>&- &
	helpers+=($!)
	for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
}

# listen_abstract NAME: an outside process listens on the abstract unix socket @NAME.
listen_abstract() {
	"$EDR_ATTACK" listen-abstract "$1" > "$T/listener" 3>&- &
	helpers+=($!)
	for _ in $(seq 50); do grep -q ready "$T/listener" 2>/dev/null && break; sleep 0.1; done
}

# A victim: a process of the same user outside the devroot.
start_victim() {
	sleep 300 3>&- &
	victim=$!
	helpers+=("$victim")
}

# tty CMD...: run CMD with a pseudo-terminal as its controlling terminal.
tty_run() {
	command -v script >/dev/null || skip "script(1) not installed (util-linux)"
	run script -qec "$*" /dev/null
	output=${output//$'\r'/}
}

@test "doctor says what entering applies: Landlock and the terminal-injection filter" {
	edr_run doctor
	assert_line --regexp '^Landlock ABI +'
	assert_line --regexp '^enter confines with Landlock +'
	assert_line --regexp '^enter blocks terminal injection +TIOCSTI, TIOCLINUX \(seccomp\)$'
}

@test "with Landlock ABI >= 6, entering prints no warning" {
	need_landlock 6
	edr_run run r -- true
	assert_success
	assert_equal "$stderr" ""
}

@test "without Landlock in the kernel: one warning line, and the devroot still works" {
	run --separate-stderr "$EDR_ATTACK" no-landlock "$EDR_BIN" run r -- /bin/echo inside
	assert_success
	assert_output inside
	assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
	assert_regex "$stderr" "^enter-devroot: warning: root 'r': Landlock unavailable \(kernel built without it\): .*; see --no-landlock$"
}

@test "without Landlock in the kernel, --no-landlock: no warning" {
	run --separate-stderr "$EDR_ATTACK" no-landlock "$EDR_BIN" run --no-landlock r -- /bin/echo inside
	assert_success
	assert_output inside
	assert_equal "$stderr" ""
}

@test "Landlock present but the domain refused: exit 125 with one line, the command never runs" {
	need_landlock
	run --separate-stderr "$EDR_ATTACK" landlock-fails "$EDR_BIN" run r -- /bin/echo inside
	assert_equal "$status" "$EDR_TOOL_EXIT"
	assert_output ""
	assert_equal "$stderr" "enter-devroot: cannot enter root 'r': Landlock restrict_self: Operation not permitted"
}

@test "--no-landlock: no warning, no domain (an fd from outside opens files outside)" {
	serve_fd
	attack --no-landlock recvfd /tmp/fd.sock secret
	assert_output ok
	assert_equal "$stderr" ""
}

@test "a directory fd passed in over a unix socket opens nothing outside (runc CVE-2024-21626 class)" {
	need_landlock
	for opt in --no-landlock ""; do
		serve_fd
		attack $opt recvfd /tmp/fd.sock secret
		if [[ -n $opt ]]; then assert_output ok; else assert_output EACCES; fi
	done
}

@test "a nested chroot breakout reads nothing outside the root" {
	need_landlock
	attack chroot-escape "$OUT/secret"
	# chroot itself may be refused (no CAP_SYS_CHROOT), else the open must be.
	assert_output --regexp '^(EACCES|EPERM)$'
	attack --no-landlock chroot-escape "$OUT/secret"
	echo "# control (--no-landlock): $output" >&3
}

@test "\"..\" from the root stays in the root" {
	attack dotdot "$OUT/secret"
	assert_output ENOENT
	attack dotdot /etc/passwd
	assert_output ok
}

# In userns mode the job has its own PID namespace: a process outside has no pid inside,
# with or without Landlock. Landlock's own signal scope (ABI 6) is shown in chroot mode,
# where there is no PID namespace: tests/guest/escape.bats.
@test "signals to a process of the same user outside fail: it is outside the job's PID namespace" {
	start_victim
	run "$EDR_ATTACK" kill "$victim"
	assert_output ok
	attack --no-landlock kill "$victim"
	assert_output ESRCH
	attack kill "$victim"
	assert_output ESRCH
}

@test "ptrace, process_vm_writev and pidfd_getfd of a process outside are refused" {
	need_landlock
	start_victim
	for a in ptrace vmwrite getfd; do
		run "$EDR_ATTACK" "$a" "$victim"
		assert_output ok
		# In userns mode the victim is outside the job's PID namespace (ESRCH), and the
		# kernel would refuse anyway (commoncap: the tracer is in a child user namespace
		# without CAP_SYS_PTRACE over the target's); in chroot mode (escape.bats in the
		# guest) --no-landlock shows Landlock refuses.
		attack "$a" "$victim"
		assert_output ESRCH
		attack --no-landlock "$a" "$victim"
		echo "# $a with --no-landlock: $output" >&3
	done
}

@test "connecting to an abstract unix socket outside is refused (Landlock ABI 6 scope)" {
	need_landlock 6
	local name=edr-test-$$-$RANDOM
	for opt in --no-landlock ""; do
		listen_abstract "$name"
		attack $opt connect-abstract "$name"
		if [[ -n $opt ]]; then assert_output ok; else assert_output EPERM; fi
		kill "${helpers[-1]}" 2>/dev/null || true
		wait "${helpers[-1]}" 2>/dev/null || true
	done
}

# An older kernel's Landlock, on this one: edr-attack landlock-abi N answers the version
# query with N and refuses, with that kernel's errno, a ruleset it would not know; the
# rulesets it would take go on to this kernel, which applies them as that kernel would.

@test "the Landlock ABI emulation refuses what an older kernel would (so the tests below can fail)" {
	need_landlock 6
	local refer=0x2000 ioctl_dev=0x8000
	run "$EDR_ATTACK" landlock-abi 1 "$EDR_ATTACK" ruleset 0x1fff 0
	assert_output ok
	run "$EDR_ATTACK" landlock-abi 1 "$EDR_ATTACK" ruleset $refer 0
	assert_output EINVAL
	run "$EDR_ATTACK" landlock-abi 4 "$EDR_ATTACK" ruleset $ioctl_dev 0
	assert_output EINVAL
	run "$EDR_ATTACK" landlock-abi 5 "$EDR_ATTACK" ruleset 1 1
	assert_output E2BIG
	run "$EDR_ATTACK" landlock-abi 6 "$EDR_ATTACK" ruleset $ioctl_dev 1
	assert_output ok
	run "$EDR_ATTACK" landlock-abi 3 "$EDR_BIN" doctor
	assert_line --regexp '^Landlock ABI +3$'
}

@test "Landlock ABI 1 to 5: entering works with one warning naming the ABI, and a passed-in fd still opens nothing outside" {
	need_landlock 6
	local abi
	for abi in 1 2 3 4 5; do
		serve_fd
		attack --abi $abi recvfd /tmp/fd.sock secret
		assert_output EACCES
		assert_equal "$stderr" "$(abi_warning $abi)"
	done
}

# Signals: in userns mode the PID namespace hides every process outside (see above);
# the guest's escape.bats shows ABI 1 and 5 leave them unscoped in chroot mode.
@test "Landlock ABI 1 to 5: abstract sockets are not scoped, as the warning says" {
	need_landlock 6
	local name=edr-test-$$-$RANDOM
	listen_abstract "$name"
	attack --abi 5 connect-abstract "$name"
	assert_output ok
	listen_abstract "$name"
	attack --abi 6 connect-abstract "$name"
	assert_output EPERM
	assert_equal "$stderr" ""
}

@test "Landlock ABI 1: a rename across directories inside the root fails EXDEV, as the warning says; from ABI 2 it works" {
	need_landlock 6
	local root=$(root_of r) abi
	mkdir -p "$root/a" "$root/b"
	touch "$root/a/f"
	attack --abi 1 rename /a/f /b/f
	assert_output EXDEV
	assert_equal "$stderr" "$(abi_warning 1)"
	for abi in 2 5; do
		attack --abi $abi rename /a/f /b/f
		assert_output ok
		mv "$root/b/f" "$root/a/f"
	done
}

@test "doctor on Landlock ABI 1 and 5 says what entering will not confine" {
	need_landlock 6
	run "$EDR_ATTACK" landlock-abi 1 "$EDR_BIN" doctor
	assert_line --regexp '^enter confines with Landlock +filesystem limited to the root \(no cross-directory rename/link: ABI 1\), ptrace scoped; signals and abstract sockets NOT scoped \(needs ABI 6\)$'
	run "$EDR_ATTACK" landlock-abi 5 "$EDR_BIN" doctor
	assert_line --regexp '^enter confines with Landlock +filesystem limited to the root, ptrace scoped; signals and abstract sockets NOT scoped \(needs ABI 6\)$'
}

@test "TIOCSTI injects outside the devroot, and is refused inside (bubblewrap CVE-2017-5226)" {
	[[ $(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null) == 1 ]] ||
		skip "dev.tty.legacy_tiocsti is not 1: the kernel refuses TIOCSTI everywhere"
	# The injected byte is echoed by the terminal before "ok": injection happened.
	tty_run "$EDR_ATTACK" tiocsti
	assert_output --regexp '^#ok$'
	tty_run "$EDR_BIN" run r -- edr-attack tiocsti
	assert_output EPERM
	tty_run "$EDR_BIN" run --no-landlock r -- edr-attack tiocsti
	assert_output EPERM
}

@test "TIOCSTI with high bits set in the request is refused too (flatpak CVE-2019-10063)" {
	[[ $(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null) == 1 ]] ||
		skip "dev.tty.legacy_tiocsti is not 1: the kernel refuses TIOCSTI everywhere"
	tty_run "$EDR_ATTACK" tiocsti high
	assert_output --regexp '^#ok$'
	tty_run "$EDR_BIN" run r -- edr-attack tiocsti high
	assert_output EPERM
}

@test "TIOCSTI through the i386 entry (int \$0x80) is refused too; x32 numbers are refused" {
	[[ $(uname -m) == x86_64 ]] || skip "x86_64 only"
	[[ $(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null) == 1 ]] ||
		skip "dev.tty.legacy_tiocsti is not 1: the kernel refuses TIOCSTI everywhere"
	tty_run "$EDR_ATTACK" tiocsti-i386
	[[ $output == *ok ]] || skip "kernel without IA32 emulation (int \$0x80: $output)"
	assert_output --regexp '^#ok$'
	tty_run "$EDR_BIN" run r -- edr-attack tiocsti-i386
	assert_output EPERM
	tty_run "$EDR_ATTACK" tiocsti-x32
	echo "# x32 outside: $output" >&3
	tty_run "$EDR_BIN" run r -- edr-attack tiocsti-x32
	assert_output ENOSYS
}

@test "TIOCLINUX is refused by the filter (EPERM, not the kernel's own ENOTTY/EINVAL)" {
	tty_run "$EDR_ATTACK" tioclinux
	refute_output EPERM
	refute_output ok
	tty_run "$EDR_BIN" run r -- edr-attack tioclinux
	assert_output EPERM
}

@test "no setsid: the command keeps the terminal as its controlling terminal (job control, ^C)" {
	tty_run "$EDR_BIN" run r -- edr-attack ctty
	assert_output ok
}
