#!/usr/bin/env bats
# Tarballs as real tools write them (src/store/extract/extract.c): duplicates that GNU tar and
# bsdtar accept are accepted, and a refusal says how to repack.

load common

setup() { edr_setup; }
teardown() { edr_teardown; }

@test "real-world: a path listed twice to GNU tar -T (a hard link to itself) is skipped with one warning" {
	mkdir -p "$W/tree/etc"
	echo 'root:x:0:0:root:/root:/bin/sh' > "$W/tree/etc/passwd"
	echo "one copy" > "$W/tree/etc/twice"
	printf './etc/passwd\n./etc/twice\n./etc/twice\n' > "$W/list"
	tar -C "$W/tree" -cf "$W/t.tar" --no-recursion -T "$W/list"
	# The archive holds what the issue describes: the second copy is a link to itself.
	tar -tvf "$W/t.tar" | grep -q 'etc/twice link to ./etc/twice' || skip "this GNU tar does not write a self-link"
	edr_run create dev --from "$W/t.tar"
	assert_status 0
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: "*"skipped 1 duplicate member(s) stored as a hard link to itself"* ]] ||
		fail "not the one warning: $(last_run)"
	assert_equal "$(cat "$(root_of dev)/etc/twice")" "one copy"
	assert_equal "$(stat -c %h "$(root_of dev)/etc/twice")" 1
}

@test "real-world: a hard link to itself with no earlier file of that name is refused" {
	mktar "$W/t.tar" d etc h etc/alone etc/alone
	edr_run create dev --from "$W/t.tar"
	assert_edr_error 125 "etc/alone" "hardlink to itself"
	[[ ! -e $(root_of dev) ]] || fail "a root was made"
}

@test "real-world: a later duplicate regular file replaces the earlier one, as every tar does" {
	mktar "$W/t.tar" d etc f etc/dup first f etc/other x f etc/dup second
	edr_run create dev --from "$W/t.tar"
	assert_status 0
	assert_equal "$(cat "$(root_of dev)/etc/dup")" second
}

@test "real-world: a path through a merged-/usr symlink is refused, and the message says how to repack" {
	mktar "$W/t.tar" d usr d usr/lib l lib usr/lib f lib/libc.so.6 x
	store_snapshot
	edr_run create dev --from "$W/t.tar"
	assert_edr_error 125 "lib/libc.so.6" "'lib', a symlink to 'usr/lib'" "repack the archive with canonical paths ('usr/lib/...' rather than 'lib/...')"
	assert_store_unchanged
}

@test "real-world: the repack hint follows an absolute symlink target too" {
	mktar "$W/t.tar" d usr d usr/bin l bin /usr/bin f bin/sh x
	edr_run create dev --from "$W/t.tar"
	assert_edr_error 125 "('usr/bin/...' rather than 'bin/...')"
}

# The cases a differential test against podman found (issue 32): images podman and umoci
# import, refused here.

@test "real-world: a directory without read permission listed twice gets the last entry's mode" {
	# One directory per mode the owner cannot list or cannot enter; each listed twice, as a
	# directory is when something inside it changes in a later layer.
	mktar "$W/t.tar" d srv \
		m 0000 d srv/none m 0000 d srv/none \
		m 0311 d srv/wx f srv/wx/f data m 0311 d srv/wx \
		m 0111 d srv/x m 0111 d srv/x \
		m 0700 d srv/last m 0555 d srv/last
	edr_run create dev --from "$W/t.tar"
	assert_status 0
	local r
	r=$(root_of dev)
	assert_equal "$(stat -c %a "$r/srv/none")" 0
	assert_equal "$(stat -c %a "$r/srv/wx")" 311
	assert_equal "$(cat "$r/srv/wx/f")" data
	assert_equal "$(stat -c %a "$r/srv/x")" 111
	assert_equal "$(stat -c %a "$r/srv/last")" 555
	edr remove dev
}

@test "real-world: a hard link to a symlink links the symlink itself (GNU ln)" {
	mktar "$W/t.tar" d usr l usr/py3 python3.11 h usr/python3 usr/py3 f usr/python3.11 bin
	edr_run create dev --from "$W/t.tar"
	assert_status 0
	local r
	r=$(root_of dev)
	[[ -L $r/usr/python3 ]] || fail "the link is not a symlink: $(ls -l "$r/usr")"
	assert_equal "$(readlink "$r/usr/python3")" python3.11
	assert_equal "$(stat -c %i "$r/usr/python3")" "$(stat -c %i "$r/usr/py3")"
}

@test "real-world: a FIFO and a hard link to it are created, with the FIFO's mode and no warning" {
	mktar "$W/t.tar" d run m 0640 p run/fifo h run/fifo2 run/fifo
	edr_run create dev --from "$W/t.tar"
	assert_status 0
	assert_equal "${#stderr_lines[@]}" 0 || fail "$(last_run)"
	local r
	r=$(root_of dev)
	[[ -p $r/run/fifo && -p $r/run/fifo2 ]] || fail "not FIFOs: $(ls -l "$r/run")"
	assert_equal "$(stat -c %a "$r/run/fifo")" 640
	assert_equal "$(stat -c %i "$r/run/fifo2")" "$(stat -c %i "$r/run/fifo")"
}

@test "real-world: a hard link to a skipped device node is skipped with it, in the one warning" {
	mktar "$W/t.tar" d dev c dev/null h dev/null2 dev/null f after data
	edr_run create dev --from "$W/t.tar"
	assert_status 0
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: "*"skipped 2 device node(s) or socket(s), or hard link(s) to them"* ]] ||
		fail "not the one warning: $(last_run)"
	local r
	r=$(root_of dev)
	[[ ! -e $r/dev/null && ! -e $r/dev/null2 ]] || fail "a device entry was created"
	assert_equal "$(cat "$r/after")" data
}

# xattr FILE NAME: the attribute's value in hex, or "absent" (no getfattr on every host).
xattr() {
	python3 -c 'import os,sys
try: print(os.getxattr(sys.argv[1], sys.argv[2], follow_symlinks=False).hex())
except OSError: print("absent")' "$1" "$2"
}

# A v2 file capability: cap_net_raw permitted and effective, as ping's.
CAP_NET_RAW_V2=0100000200200000000000000000000000000000

@test "real-world: user.* attributes are restored, others dropped with one warning saying why" {
	python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.probe", b"1")' "$W" 2>/dev/null ||
		skip "this filesystem takes no user.* attributes"
	mktar "$W/t.tar" X user.mime 746578742f706c61696e f file data \
		X user.dir 6f6b m 0555 d dir \
		X security.capability $CAP_NET_RAW_V2 m 0755 f ping elf \
		X trusted.overlay.opaque 79 X user.overlay.opaque 79 X security.selinux 78 d opq
	edr_run create dev --from "$W/t.tar"
	assert_status 0
	local r
	r=$(root_of dev)
	assert_equal "$(xattr "$r/file" user.mime)" "$(printf text/plain | od -An -tx1 | tr -d ' \n')"
	assert_equal "$(xattr "$r/dir" user.dir)" 6f6b
	assert_equal "$(xattr "$r/ping" security.capability)" absent
	assert_equal "$(xattr "$r/opq" user.overlay.opaque)" absent
	assert_equal "$(xattr "$r/opq" security.selinux)" absent
	assert_equal "$(cat "$r/ping")" elf
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: "*"dropped extended attribute(s): 3 (first "*" on 'opq"*"'; only user.* "*"; 1 (first security.capability on 'ping': Operation not permitted; a file capability is set only by root in a user namespace"* ]] ||
		fail "not the one warning: $(last_run)"
}

@test "real-world: in a user namespace a file capability is restored, namespaced to it" {
	python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.probe", b"1")' "$W" 2>/dev/null ||
		skip "this filesystem takes no user.* attributes"
	unshare -r true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	mktar "$W/t.tar" X security.capability $CAP_NET_RAW_V2 m 0755 f ping elf
	run --separate-stderr unshare -r "$EDR_BIN" create dev --from "$W/t.tar"
	assert_status 0
	assert_equal "${#stderr_lines[@]}" 0
	# Seen from outside: a v3 capability whose root is this user, nobody in the initial
	# namespace (the kernel rewrote the v2 one the archive held).
	local uid_le
	uid_le=$(python3 -c 'import os; print(os.getuid().to_bytes(4, "little").hex())')
	assert_equal "$(xattr "$(root_of dev)/ping" security.capability)" \
		"0100000300200000000000000000000000000000$uid_le"
}
