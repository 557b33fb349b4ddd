#!/usr/bin/env bats
# What a command sees inside a devroot: the root's files and only those, no
# leaked fds, no_new_privs, no capabilities, and no way back out.

load common

setup() {
	edr_setup
	create_default dev
	R=$(root_of dev)
	MARKER=marker-$$-$RANDOM
	echo inside > "$R/$MARKER"
}
teardown() { edr_teardown; }

@test "inside: / is the root's directory (marker visible, host entries not)" {
	edr_run run dev -- ls -a /
	assert_status 0
	assert_line "$MARKER"
	# Entries of the host's / that the root does not have stay invisible.
	local e n=0
	for e in $(comm -23 <(ls -A / | LC_ALL=C sort) <(ls -A "$R" | LC_ALL=C sort)); do
		refute_line "$e"
		n=$((n + 1))
	done
	[[ $n -gt 0 ]] || fail "the host's / has no entry the root lacks: nothing checked"
}

@test "inside: the host's home and test directories are invisible" {
	local secret=s3cr3t-$$-$RANDOM
	echo "$secret" > "$HOME/host-file"
	echo "$secret" > "$T/test-file"
	edr_run run dev -- sh -c "ls '$HOME' '$T'; cat '$HOME/host-file' '$T/test-file'; true"
	assert_status 0
	refute_output --partial "$secret"
	refute_output --partial host-file
	refute_output --partial test-file
}

@test "inside: cd /.. stays in the root" {
	edr_run run dev -- sh -c 'cd /..; cd ../../..; pwd -P; ls -a'
	assert_status 0
	assert_line --index 0 /
	assert_line "$MARKER"
}

@test "inside: /.. and / are the root directory itself (same inode)" {
	local ino
	ino=$(stat -c %i "$R")
	edr_run run dev -- sh -c 'ls -di / | cut -d" " -f1; ls -di /.. | cut -d" " -f1; ls -di /../../.. | cut -d" " -f1'
	assert_status 0
	assert_equal "$output" "$ino"$'\n'"$ino"$'\n'"$ino"
}

@test "inside: the working directory is inside the root (getcwd has no host prefix)" {
	install_probe dev
	edr_run run dev --workdir / -- /edr-probe cwd
	assert_status 0
	assert_output /
	edr_run run dev --workdir /tmp -- /edr-probe cwd
	assert_status 0
	assert_output /tmp
}

@test "inside: no fd above 2 is left open (files and directories opened by the caller)" {
	echo data > "$W/f"
	run --separate-stderr bash -c '
		exec 3<"$1" 4<"$1" 5</ 6<"$2" 7>>"$1" 8<"$HOME" 9<"$1" 42<"$1" 200</
		exec "$EDR_BIN" run dev -- sh -c "
			for fd in 3 4 5 6 7 8 9 42 200; do
				if (true <&\$fd) 2>/dev/null || (true >&\$fd) 2>/dev/null; then echo open:\$fd; fi
			done; echo checked"' _ "$W/f" "$W"
	assert_status 0
	assert_output checked
}

@test "inside: no fd above 2 is open at all (probe walks every fd)" {
	install_probe dev
	echo data > "$W/f"
	run --separate-stderr bash -c 'exec 3<"$1" 5</ 9<"$1" 77</; exec "$EDR_BIN" run dev -- /edr-probe fds' _ "$W/f"
	assert_status 0
	assert_output ''
}

@test "inside: a directory fd opened by the caller cannot be used to climb out (runc CVE-2024-21626 shape)" {
	install_probe dev
	[[ ! -e $R$T ]]
	run --separate-stderr bash -c 'exec 7</ 8<"$1" 9<"$HOME"; exec "$EDR_BIN" run dev -- /edr-probe escape-fd "$1"' _ "$T"
	assert_status 0
	assert_output contained
}

@test "inside: /proc/self/fd of a caller's directory fd does not lead to the host" {
	run --separate-stderr bash -c 'exec 7</; exec "$EDR_BIN" run dev -- sh -c "ls /proc/self/fd/7/ 2>/dev/null; cd /proc/self/fd/7 2>/dev/null && ls; true"'
	assert_status 0
	refute_output --regexp '(^|[[:space:]])(boot|work|srv)($|[[:space:]])'
}

@test "inside: no_new_privs is set" {
	install_probe dev
	edr_run run dev -- /edr-probe nnp
	assert_status 0
	assert_output 1
}

@test "inside: no_new_privs is visible in /proc/self/status when /proc is mounted" {
	edr_run run dev -- sh -c 'cat /proc/self/status 2>/dev/null | grep NoNewPrivs || echo noproc'
	assert_status 0
	[[ $output != noproc ]] || skip "this mode does not mount /proc"
	assert_output --regexp '^NoNewPrivs:[[:space:]]+1$'
}

@test "inside: an unprivileged caller keeps its uid and gid" {
	is_root && skip "checks an unprivileged caller"
	edr_run run dev -- sh -c 'id -u; id -g'
	assert_status 0
	assert_equal "$output" "$(id -u)"$'\n'"$(id -g)"
}

@test "inside: an unprivileged caller has no capabilities" {
	is_root && skip "checks an unprivileged caller"
	install_probe dev
	edr_run run dev -- /edr-probe caps
	assert_status 0
	assert_output 0000000000000000
}

@test "inside: the classic chroot escape (mkdir, chroot, chdir ..) fails" {
	is_root && skip "root without a mount namespace can always escape a chroot"
	install_probe dev
	# A path that exists on the host and not in the root.
	[[ ! -e $R$T ]]
	edr_run run dev --workdir /tmp -- /edr-probe escape "$T"
	assert_status 0
	assert_output --regexp '^contained'
}

@test "inside: the root's files written from inside land in the root" {
	edr_run run dev -- sh -c 'echo written > /tmp/from-inside'
	assert_status 0
	assert_equal "$(cat "$R/tmp/from-inside")" written
}

@test "inside: a symlink to an absolute host path resolves inside the root" {
	echo host > "$W/host-file"
	ln -s "$W/host-file" "$R/link"
	edr_run run dev -- sh -c 'cat /link 2>/dev/null || echo dangling'
	assert_status 0
	assert_output dangling
}

# userns mode only (the host's mode): the patched kernel's chroot mode has no way to give
# an unprivileged user device nodes.
@test "inside: in userns mode /dev is a private tmpfs with the host's null, zero, full, random, urandom, tty; the root's dev/ on disk is untouched" {
	local before
	before=$(ls -A "$(root_of dev)/dev")
	edr_run run --mode userns dev -- sh -c '
		echo discarded > /dev/null && echo null:ok
		echo "urandom:$(head -c 16 /dev/urandom | wc -c)"
		echo "zero:$(head -c 3 /dev/zero | od -An -tx1 | tr -d " ")"
		if echo x 2>/dev/null > /dev/full; then echo full:accepted; else echo full:ENOSPC; fi
		for n in null zero full random urandom tty; do [ -c /dev/$n ] || echo "not a device: $n"; done
		[ -d /dev/shm ] && [ -w /dev/shm ] && echo shm:ok'
	assert_status 0
	assert_equal "$stderr" ""
	assert_line null:ok
	assert_line urandom:16
	assert_line zero:000000
	assert_line full:ENOSPC
	assert_line shm:ok
	refute_output --partial "not a device"
	[[ $(ls -A "$(root_of dev)/dev") == "$before" ]] || fail "the root's dev/ changed on disk"
	# The mounts were private: nothing shows outside.
	! grep -q "$(root_of dev)" /proc/self/mountinfo || fail "a mount leaked out"
}

@test "inside: in userns mode /dev/shm is a tmpfs of the job's own as large as the host's: a 16 MiB segment fits (MPI's shared memory), and is not on the host's" {
	[[ -d /dev/shm ]] || skip "this host has no /dev/shm"
	local host_kb
	host_kb=$(df -Pk /dev/shm | awk 'NR == 2 { print $2 }')
	edr_run run --mode userns dev -- sh -c '
		dd if=/dev/zero of=/dev/shm/edr-segment-$$ bs=1M count=16 2>/dev/null && echo wrote
		df -Pk /dev/shm | awk "NR == 2 { print \$2 }"
		mount | grep " /dev/shm "'
	assert_success
	assert_equal "$stderr" ""
	assert_line wrote
	assert_line --index 1 "$host_kb"
	assert_line --index 2 --regexp '^tmpfs on /dev/shm type tmpfs \(rw,nosuid,nodev,'
	run ls /dev/shm
	refute_output --partial edr-segment-
}

@test "inside: a root whose dev is a symlink gets no /dev mounted through it" {
	mkdir -p "$W/tree/etc" "$W/outdev"
	ln -s "$W/outdev" "$W/tree/dev"
	tar -C "$W/tree" -cf "$W/symdev.tar" .
	edr_run create sd --from "$W/symdev.tar"
	assert_success
	edr_run run --mode userns sd -- /bin/true
	# (the root has no shell: only that entering works and nothing was mounted outside)
	[[ $status -eq 0 || $status -eq 127 ]] || fail "unexpected status $status: $stderr"
	[[ -z $(ls -A "$W/outdev") ]] || fail "something was created through the symlink"
	! grep -q "$W/outdev" /proc/self/mountinfo || fail "a mount landed outside"
}
