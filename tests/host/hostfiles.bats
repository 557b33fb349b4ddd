#!/usr/bin/env bats
# The host's /etc/resolv.conf and /etc/hosts inside a devroot (src/enter/hostfiles.c), in
# user-namespace mode: bound read-only over the root's own. Chroot mode (a copy recorded
# in the metadata) is in root.bats, where the host allows a plain chroot.

load common

setup() {
	edr_setup
	[[ -f /etc/resolv.conf && -f /etc/hosts ]] || skip "the host has no /etc/resolv.conf or /etc/hosts"
	create_default dev
	R=$(root_of dev)
}
teardown() { edr_teardown; }

# userns_or_skip: the rest needs the user-namespace fallback on this host.
userns_or_skip() {
	"$EDR_BIN" run dev --mode=userns -- true 2>/dev/null || skip "user namespaces unavailable here"
}

@test "hostfiles: inside (userns), /etc/resolv.conf and /etc/hosts read the same as the host's" {
	userns_or_skip
	rm -f "$R/etc/resolv.conf" # the default root has none: created empty to bind on
	edr_run run dev --mode=userns -- cat /etc/resolv.conf
	assert_status 0
	assert_equal "$output" "$(cat /etc/resolv.conf)"
	edr_run run dev --mode=userns -- cat /etc/hosts
	assert_status 0
	assert_equal "$output" "$(cat /etc/hosts)"
}

@test "hostfiles: the bound files are read-only inside and the root's own stay as they were" {
	userns_or_skip
	echo "nameserver 192.0.2.1" > "$R/etc/resolv.conf"
	before=$(snapshot "$R/etc")
	edr_run run dev --mode=userns -- sh -c 'echo x >> /etc/resolv.conf || echo refused; echo y >> /etc/hosts || echo refused'
	assert_equal "$(grep -c refused <<< "$output")" 2
	assert_equal "$(snapshot "$R/etc")" "$before"
	assert_equal "$(cat "$R/etc/resolv.conf")" "nameserver 192.0.2.1"
}

@test "hostfiles: a symlink in the root's place is left alone, never followed" {
	userns_or_skip
	mkdir -p "$OUT"
	echo "outside" > "$OUT/target"
	rm -f "$R/etc/resolv.conf"
	ln -s "$OUT/target" "$R/etc/resolv.conf"
	edr_run run dev --mode=userns -- sh -c 'readlink /etc/resolv.conf'
	assert_status 0
	assert_output "$OUT/target"
	assert_equal "$(cat "$OUT/target")" "outside"
	[[ -L $R/etc/resolv.conf ]] || fail "the symlink was replaced"
}

@test "hostfiles: a FIFO in the root's place is left alone, never opened nor waited on" {
	userns_or_skip
	rm -f "$R/etc/resolv.conf" "$R/etc/hosts"
	mkfifo "$R/etc/resolv.conf" "$R/etc/hosts"
	run --separate-stderr timeout -s KILL 30 "$EDR_BIN" run dev --mode=userns -- echo inside
	[[ $status -ne 137 ]] || fail "run hung on a FIFO (killed after 30 s)"
	assert_status 0
	assert_output inside
	[[ -p $R/etc/resolv.conf && -p $R/etc/hosts ]] || fail "a FIFO was replaced"
}

@test "hostfiles: --no-host-dns shows the root's own files" {
	userns_or_skip
	echo "nameserver 192.0.2.1" > "$R/etc/resolv.conf"
	edr_run run dev --mode=userns --no-host-dns -- cat /etc/resolv.conf /etc/hosts
	assert_status 0
	assert_equal "$output" "$(cat "$R/etc/resolv.conf" "$R/etc/hosts")"
}

@test "hostfiles: in auto mode where chroot is refused, the root on disk is not touched" {
	userns_or_skip
	[[ $(id -u) -ne 0 && $(cat /proc/sys/fs/unprivileged_chroot 2>/dev/null || echo 0) != 1 ]] ||
		skip "a plain chroot works here"
	rm -f "$R/etc/resolv.conf"
	edr_run run dev -- cat /etc/resolv.conf
	assert_status 0
	assert_equal "$output" "$(cat /etc/resolv.conf)"
	[[ -f $R/etc/resolv.conf && ! -s $R/etc/resolv.conf ]] || fail "the root's resolv.conf is not the empty bind target"
	run grep -c _copy "$(store)/meta/dev.json"
	assert_output 0
}
