#!/usr/bin/env bats
# --root (src/enter/rootemu.c): inside, the ids read 0 and chown, set*id, setgroups,
# capset and mknod of devices succeed without effect; nothing else changes. Each fake has
# a control without --root, and what --root must not grant (reading what the user cannot
# read, signalling outside, leaving Landlock) is attacked with it. The package-manager
# story with a real Debian root is tests/rootemu/apt.bats.

load common

setup() {
	edr_setup
	edr create r >/dev/null 2>&1 || fail "cannot create devroot r"
	helpers=()
}

teardown() {
	local p
	for p in "${helpers[@]}"; do kill "$p" 2>/dev/null || true; done
	edr_teardown
}

in_root() { run --separate-stderr "$EDR_BIN" run "$@"; }

need_attack() {
	[[ -x ${EDR_ATTACK:-} ]] || skip "edr-attack not built (needs a C compiler and static libc)"
	cp "$EDR_ATTACK" "$(root_of r)/bin/edr-attack"
}

@test "--root: the ids read 0, the user is root from the root's /etc/passwd (HOME /root)" {
	in_root r --root -- sh -c 'echo "$(id -u) $(id -g) $(id -un) $HOME $USER"; pwd'
	assert_success
	assert_output "0 0 root /root root
/root"
	in_root r -- id -u
	assert_success
	assert_output "$(id -u)"
}

@test "--root: chown and chgrp to any ids succeed and change nothing: files stay the user's" {
	local f=$(root_of r)/tmp/f
	echo x > "$f"
	in_root r --root -- sh -c 'chown 123:456 /tmp/f && chgrp 789 /tmp/f && chown -h 5 /tmp/f && echo done'
	assert_success
	assert_output done
	[[ $(stat -c %u:%g "$f") == "$(id -u):$(id -g)" ]] || fail "owner changed: $(stat -c %u:%g "$f")"
	in_root r -- chown 123 /tmp/f
	assert_failure # the control: without --root the kernel's EPERM reaches chown
}

@test "--root: mknod of a device succeeds and creates nothing; a FIFO is made for real" {
	in_root r --root -- sh -c 'mknod /tmp/null c 1 3 && mknod /tmp/blk b 7 0 && mknod /tmp/fifo p && echo done'
	assert_success
	assert_output done
	[[ ! -e $(root_of r)/tmp/null && ! -e $(root_of r)/tmp/blk ]] || fail "a device node was created"
	[[ -p $(root_of r)/tmp/fifo ]] || fail "the FIFO was not created"
	in_root r -- mknod /tmp/null2 c 1 3
	assert_failure # the control
}

@test "--root: a file mode 0000 stays unreadable (no DAC override: root would read it)" {
	echo secret > "$(root_of r)/tmp/locked"
	chmod 0000 "$(root_of r)/tmp/locked"
	in_root r --root -- cat /tmp/locked
	assert_failure
	[[ $stderr == *"Permission denied"* ]] || fail "$(last_run)"
	refute_output --partial secret
}

@test "--root: the i386 entry reports 0 too (getuid, getuid32, geteuid32, getgid32)" {
	[[ $(uname -m) == x86_64 ]] || skip "x86_64 only"
	need_attack
	# The probe, outside any root: a kernel without IA32 emulation (CONFIG_IA32_EMULATION
	# off, or ia32_emulation=0) kills int $0x80 with SIGSEGV.
	run "$EDR_ATTACK" i386-ids
	[[ $status -eq 0 ]] || skip "kernel without IA32 emulation (int \$0x80 outside any root: status $status)"
	in_root r --root -- edr-attack i386-ids
	assert_success
	assert_output "0 0 0 0"
	in_root r -- edr-attack i386-ids
	assert_output "$(id -u) $(id -u) $(id -u) $(id -g)" # the control
}

@test "--root: signals to a process of the same user outside are still refused" {
	need_attack
	local abi
	abi=$("$EDR_BIN" doctor 2>/dev/null | sed -n 's/^Landlock ABI  *\([0-9][0-9]*\)$/\1/p')
	[[ -n $abi && $abi -ge 6 ]] || skip "needs Landlock ABI 6 (signal scoping)"
	sleep 300 3>&- &
	helpers+=($!)
	# userns mode: the victim is outside the job's PID namespace (ESRCH) before Landlock's
	# scope (EPERM) is even asked; chroot mode has no PID namespace (the guest's escape.bats).
	in_root r --root -- edr-attack kill "$!"
	assert_output ESRCH
	kill -0 "$!" || fail "the victim died"
}

@test "--root --no-landlock: a process of another user cannot be signalled: outside the job's PID namespace, and no CAP_KILL" {
	need_attack
	local other
	other=$(pgrep -n -u 0) || skip "no process of root's to aim at"
	in_root r --root --no-landlock -- edr-attack kill "$other"
	assert_output ESRCH
	# (no CAP_KILL either: "--root: no_new_privs and no capabilities inside, as without it")
}

@test "--root: Landlock still applies: a directory fd passed in opens nothing outside" {
	need_attack
	local abi
	abi=$("$EDR_BIN" doctor 2>/dev/null | sed -n 's/^Landlock ABI  *\([0-9][0-9]*\)$/\1/p')
	[[ -n $abi ]] || skip "no Landlock on this kernel"
	mkdir -p "$OUT"
	echo secret > "$OUT/secret"
	local sock=$(root_of r)/tmp/fd.sock
	"$EDR_ATTACK" sendfd "$sock" "$OUT" >/dev/null 3>&- &
	helpers+=($!)
	for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
	in_root r --root -- edr-attack recvfd /tmp/fd.sock secret
	assert_output EACCES
	refute_output --partial secret
}

@test "--root: no_new_privs and no capabilities inside, as without it" {
	[[ -x ${EDR_PROBE:-} ]] || skip "edr-probe not built (needs a C compiler and static libc)"
	cp "$EDR_PROBE" "$(root_of r)/bin/edr-probe"
	in_root r --root -- edr-probe nnp
	assert_output 1
	in_root r --root -- edr-probe caps
	assert_success
	[[ $output =~ ^(0x)?0+$ ]] || fail "capabilities inside: $output"
}

@test "without --root, a package manager asked to install gets one hint line naming --root" {
	printf '#!/bin/sh\necho "E: could not open lock file" >&2\nexit 100\n' > "$(root_of r)/bin/apt-get"
	chmod +x "$(root_of r)/bin/apt-get"
	in_root r -- apt-get install -y hello
	assert_status 100
	[[ ${stderr_lines[0]} == "enter-devroot: hint: apt-get changes packages only as root: add --root (enter-devroot run r --root -- apt-get ...)" ]] ||
		fail "$(last_run)"
	[[ ${stderr_lines[1]} == "E: could not open lock file" ]] || fail "$(last_run)"
	in_root r -- apt-get update
	[[ $stderr != *hint* ]] || fail "a hint for a command that needs no root: $(last_run)"
	in_root r --root -- apt-get install -y hello
	[[ $stderr != *hint* ]] || fail "a hint under --root: $(last_run)"
	# The way README and CI recipes write it: in a shell script.
	in_root r -- sh -c 'apt-get update && apt-get install -y cmake'
	assert_status 100
	[[ ${stderr_lines[0]} == "enter-devroot: hint: apt-get changes packages only as root: add --root (enter-devroot run r --root -- sh ...)" ]] ||
		fail "no hint for sh -c: $(last_run)"
	in_root r -- sh -ec 'echo apt-get install is what you need'
	[[ $stderr != *hint* ]] || fail "a hint for an echo: $(last_run)"
}

@test "--root: apt's and dpkg's settings are written only where their directories are, inside the root: a symlink out of it writes nothing outside" {
	local r=$(root_of r) outside=$BATS_TEST_TMPDIR/outside
	mkdir -p "$outside"
	in_root r --root -- true # no /etc/apt, no /etc/dpkg: a root of another family
	assert_success
	[[ -z $stderr ]] || fail "$(last_run)"
	[[ ! -e $r/etc/apt && ! -e $r/etc/dpkg ]] || fail "created a configuration directory"
	mkdir -p "$r/etc/apt/apt.conf.d" "$r/etc/dpkg"
	ln -s "../../../../../../../../..$outside" "$r/etc/dpkg/dpkg.cfg.d"
	in_root r --root -- true
	assert_success
	[[ $stderr == "enter-devroot: root 'r': --root wrote /etc/apt/apt.conf.d/99enter-devroot-root (apt downloads as root, dpkg skips fsync; export leaves them out: ROOT EMULATION in enter-devroot(1))" ]] ||
		fail "$(last_run)"
	grep -qx 'APT::Sandbox::User "root";' "$r/etc/apt/apt.conf.d/99enter-devroot-root" || fail "no apt setting"
	[[ -z $(ls -A "$outside") ]] || fail "written outside the root: $(ls -A "$outside")"
}
