#!/usr/bin/env bats
# Tests that need root: running the tool as root (plain chroot), and the tool
# refusing to run setuid or setgid. tests/host/run executes this file as root
# when it is root; otherwise every test skips.

load common

setup() {
	is_root || skip "needs root (tests/host/run runs this suite as root when it is root)"
	edr_setup
}
teardown() {
	teardown_reflink
	teardown_full_fs
	[[ -z ${suid_dir:-} ]] || rm -rf "$suid_dir"
	edr_teardown
}

# as_test_user CMD...: run CMD as the unprivileged test user with its own XDG dirs.
as_test_user() {
	local user=${EDR_TEST_USER:-edr-test}
	setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups --reset-env \
		env HOME="$suid_dir/home" XDG_DATA_HOME="$suid_dir/home/data" \
		XDG_CONFIG_HOME="$suid_dir/home/config" "$@"
}

# privileged_copy MODE: a root-owned copy of the binary with MODE, in a
# directory the test user can reach; sets suid_bin.
privileged_copy() {
	id "${EDR_TEST_USER:-edr-test}" >/dev/null 2>&1 || skip "test user ${EDR_TEST_USER:-edr-test} missing"
	suid_dir=$(mktemp -d "${EDR_STAGE:-/tmp}/suid.XXXXXX")
	chmod 755 "$suid_dir"
	mkdir -m 700 "$suid_dir/home"
	chown "${EDR_TEST_USER:-edr-test}" "$suid_dir/home"
	suid_bin=$suid_dir/enter-devroot
	install -o root -g root -m "$1" "$EDR_BIN" "$suid_bin"
	if findmnt -n -o OPTIONS -T "$suid_dir" | grep -qw nosuid; then
		skip "$suid_dir is on a nosuid mount"
	fi
}

@test "root: create and run as root work (plain chroot), uid 0 inside" {
	edr_run create dev
	assert_status 0
	edr_run run dev -- sh -c 'id -u; echo hello'
	assert_status 0
	assert_equal "$output" $'0\nhello'
}

@test "root: root's entering mode is plain chroot (forcing it works)" {
	create_default dev
	edr_run run dev --mode=chroot -- id -u
	assert_status 0
	assert_output 0
}

@test "root: no_new_privs is set for root too" {
	create_default dev
	install_probe dev
	edr_run run dev -- /edr-probe nnp
	assert_status 0
	assert_output 1
}

@test "root: a setuid binary inside the root does not change identity (no_new_privs)" {
	create_default dev
	need_probe
	local r
	r=$(root_of dev)
	install -o 65534 -g 65534 -m 6755 "$EDR_PROBE" "$r/suid-probe"
	# Control: outside the tool, the bits do take effect on this filesystem.
	local outside=$T/suid-control
	install -o 65534 -g 65534 -m 6755 "$EDR_PROBE" "$outside"
	run "$outside" ids
	[[ $output == "0 65534 0 65534" ]] || skip "setuid bits do not take effect here: $output"
	edr_run run dev -- /suid-probe ids
	assert_status 0
	assert_output "0 0 0 0"
}

# cdi_spec_for NODE: a spec of kind test.example.com/made naming NODE (made with mknod) as
# device "n", in the test's own spec directory.
cdi_spec_for() {
	mkdir -p "$T/specs" "$XDG_CONFIG_HOME/enter-devroot"
	echo "cdi-spec-dirs = $T/specs" >> "$XDG_CONFIG_HOME/enter-devroot/config"
	printf 'cdiVersion: 0.5.0\nkind: test.example.com/made\ndevices:\n- name: n\n  containerEdits:\n    deviceNodes: [{path: /dev/made, hostPath: %s, type: c, major: 1, minor: 3}]\n' \
		"$1" > "$T/specs/made.yaml"
}

@test "root: --device in auto mode enters a user namespace (chroot makes no mounts): a node made with mknod is the host's inside" {
	unshare -U true 2>/dev/null || skip "user namespaces are not available on this host"
	create_default dev
	mkdir "$T/nodes"
	mknod -m 666 "$T/nodes/testnull" c 1 3 # /dev/null's numbers, in a test directory
	cdi_spec_for "$T/nodes/testnull"
	edr_run -v run --device test.example.com/made=n dev -- sh -c 'stat -c %t:%T /dev/made; echo gone > /dev/made && echo written'
	assert_status 0
	assert_equal "${lines[0]}" "$(stat -c %t:%T "$T/nodes/testnull")"
	assert_equal "${lines[1]}" written
	[[ $stderr == *"mode userns: --device needs a mount namespace"* ]] || fail "$(last_run)"
	[[ $(stat -c %s "$T/nodes/testnull") == 0 && $(stat -c %t:%T "$T/nodes/testnull") == 1:3 ]] ||
		fail "the host's node changed"
	edr_run run --mode chroot --device test.example.com/made=n dev -- true
	assert_edr_error 125 "--device: chroot mode makes no mounts"
}

@test "root: --device reads /var/run/cdi by default (in a private mount namespace, a tmpfs on /run)" {
	unshare -U true 2>/dev/null || skip "user namespaces are not available on this host"
	[[ $(readlink -f /var/run) == /run ]] || skip "/var/run is not /run here"
	create_default dev
	mkdir "$T/nodes"
	mknod -m 666 "$T/nodes/testnull" c 1 3
	cdi_spec_for "$T/nodes/testnull"
	: > "$XDG_CONFIG_HOME/enter-devroot/config" # the defaults: /etc/cdi and /var/run/cdi
	run --separate-stderr unshare --mount --propagation private sh -c '
		mount -t tmpfs none /run && mkdir /run/cdi && cp "$1" /run/cdi/ &&
		"$2" run --device test.example.com/made=n dev -- stat -c %t:%T /dev/made' sh "$T/specs/made.yaml" "$EDR_BIN"
	assert_status 0
	assert_output 1:3
}

@test "root: archive ownership is not restored even as root" {
	mktar "$W/h.tar" o 4242 d owned f owned/file x
	edr_run create dev --from "$W/h.tar"
	assert_status 0
	assert_equal "$(stat -c %u:%g "$(root_of dev)/owned/file")" 0:0
}

@test "root: device nodes are skipped even as root, with one warning line" {
	mktar "$W/h.tar" d dev c dev/null b dev/sda f after data
	edr_run create dev --from "$W/h.tar"
	assert_status 0
	[[ ! -e $(root_of dev)/dev/null && ! -e $(root_of dev)/dev/sda ]] || fail "device node created as root"
	assert_equal "$(cat "$(root_of dev)/after")" data
	[[ -n $stderr ]] || fail "no warning"
	[[ $stderr =~ skip|device ]] || fail "warning does not say what was skipped: $stderr"
}

@test "root: setuid bits from the archive are stripped even as root" {
	mktar "$W/h.tar" m 4755 f suid x m 2755 f sgid x
	edr_run create dev --from "$W/h.tar"
	assert_status 0
	assert_equal "$(stat -c %a "$(root_of dev)/suid")" 755
	assert_equal "$(stat -c %a "$(root_of dev)/sgid")" 755
}

@test "root: the tool refuses to run setuid root, with 125 and one line" {
	privileged_copy 4755
	run --separate-stderr as_test_user "$suid_bin" list
	assert_edr_error 125
	[[ $stderr == *setuid* || $stderr == *privilege* ]] || fail "message does not say why: $stderr"
	[[ ! -e $suid_dir/home/data/enter-devroot ]] || fail "the setuid run touched the store"
}

@test "root: the tool refuses to run setgid, with 125 and one line" {
	privileged_copy 2755
	run --separate-stderr as_test_user "$suid_bin" list
	assert_edr_error 125
	[[ $stderr == *setgid* || $stderr == *setuid* || $stderr == *privilege* ]] || fail "message does not say why: $stderr"
}

@test "root: the setuid refusal happens before anything else (even create)" {
	privileged_copy 4755
	run --separate-stderr as_test_user "$suid_bin" create dev --from "$EDR_TEMPLATE"
	assert_edr_error 125
	[[ ! -e $suid_dir/home/data/enter-devroot/roots/dev ]] || fail "a setuid create made a root"
}

@test "root: the same binary without the bits runs for the test user (control)" {
	privileged_copy 0755
	run --separate-stderr as_test_user "$suid_bin" list
	assert_status 0
}

# --- the host's resolv.conf and hosts in chroot mode (src/enter/hostfiles.c) ----------
# No mounts: a copy, refreshed only while it is missing, empty or our last copy.

need_host_files() {
	[[ -f /etc/resolv.conf && -f /etc/hosts ]] || skip "the host has no /etc/resolv.conf or /etc/hosts"
}

@test "hostfiles: chroot mode copies the host's resolv.conf into a root without one and records it" {
	need_host_files
	create_default dev
	rm -f "$(root_of dev)/etc/resolv.conf"
	edr_run run dev --mode=chroot -- cat /etc/resolv.conf
	assert_status 0
	assert_equal "$output" "$(cat /etc/resolv.conf)"
	grep -q '"resolv_conf_copy": "' "$(store)/meta/dev.json" || fail "no copy recorded: $(cat "$(store)/meta/dev.json")"
	# The default root's own hosts file is not empty: it is the root's, left alone.
	edr_run run dev --mode=chroot -- cat /etc/hosts
	assert_equal "$output" "$(cat "$(root_of dev)/etc/hosts")"
}

@test "hostfiles: chroot mode fills an empty resolv.conf, and a user-edited one survives the next enter" {
	need_host_files
	create_default dev
	: > "$(root_of dev)/etc/resolv.conf"
	edr_run run dev --mode=chroot -- cat /etc/resolv.conf
	assert_equal "$output" "$(cat /etc/resolv.conf)"
	edr_run run dev --mode=chroot -- sh -c 'echo "nameserver 192.0.2.53" > /etc/resolv.conf'
	assert_status 0
	edr_run run dev --mode=chroot -- cat /etc/resolv.conf
	assert_output "nameserver 192.0.2.53"
}

@test "hostfiles: chroot mode leaves a symlink alone and never writes through it" {
	need_host_files
	create_default dev
	mkdir -p "$OUT"
	echo outside > "$OUT/target"
	rm -f "$(root_of dev)/etc/resolv.conf"
	ln -s "$OUT/target" "$(root_of dev)/etc/resolv.conf"
	edr_run run dev --mode=chroot -- true
	assert_status 0
	[[ -L $(root_of dev)/etc/resolv.conf ]] || fail "the symlink was replaced"
	assert_equal "$(cat "$OUT/target")" outside
}

@test "hostfiles: chroot mode leaves a FIFO in the root's place alone, never opened nor waited on" {
	need_host_files
	create_default dev
	rm -f "$(root_of dev)/etc/resolv.conf" "$(root_of dev)/etc/hosts"
	mkfifo "$(root_of dev)/etc/resolv.conf" "$(root_of dev)/etc/hosts"
	run --separate-stderr timeout -s KILL 30 "$EDR_BIN" run dev --mode=chroot -- echo inside
	[[ $status -ne 137 ]] || fail "run hung on a FIFO (killed after 30 s)"
	assert_status 0
	assert_output inside
	[[ -p $(root_of dev)/etc/resolv.conf && -p $(root_of dev)/etc/hosts ]] || fail "a FIFO was replaced"
}

@test "hostfiles: chroot mode with --no-host-dns writes nothing into the root" {
	need_host_files
	create_default dev
	rm -f "$(root_of dev)/etc/resolv.conf"
	edr_run run dev --mode=chroot --no-host-dns -- true
	assert_status 0
	[[ ! -e $(root_of dev)/etc/resolv.conf ]] || fail "resolv.conf was written"
}

# --- a second create copies the layer the first one unpacked (src/store/layers/layers.h) ------
# Needs a filesystem that clones files by reference: a loop-mounted XFS made here
# (only if xfs is already in /proc/filesystems: nothing is loaded into the kernel).

# reflink_fs: mount a fresh 512 MiB XFS (reflink=1) on $MNT with XDG dirs on it.
reflink_fs() {
	command -v mkfs.xfs >/dev/null || skip "mkfs.xfs not installed (apt-get install xfsprogs)"
	grep -qw xfs /proc/filesystems || skip "xfs is not in /proc/filesystems (never modprobed here)"
	MNT=$T/mnt
	mkdir -p "$MNT"
	truncate -s 512M "$T/xfs.img"
	mkfs.xfs -q -f -m reflink=1 "$T/xfs.img" || skip "mkfs.xfs failed"
	mount -o loop "$T/xfs.img" "$MNT" || skip "cannot loop-mount an XFS image here"
	export XDG_DATA_HOME=$MNT/data XDG_CACHE_HOME=$MNT/cache
	mkdir -p "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
}

# clone_tar OUT: a root with a 4 MiB file, a hardlink, a symlink, a read-only
# directory and unusual modes and times, as .tar.zst.
clone_tar() {
	local t=$W/tree
	mkdir -p "$t/etc" "$t/usr/bin" "$t/ro"
	head -c $((4 << 20)) /dev/urandom > "$t/usr/bin/big"
	ln "$t/usr/bin/big" "$t/usr/bin/big-link"
	ln -s ../usr/bin/big "$t/etc/big-symlink"
	echo secret > "$t/etc/shadowish" && chmod 600 "$t/etc/shadowish"
	echo x > "$t/ro/file" && chmod 751 "$t/ro/file" && chmod 555 "$t/ro"
	echo 'root:x:0:0:root:/root:/bin/sh' > "$t/etc/passwd"
	find "$t" -exec touch -h -d '2020-02-02 02:02:02' {} +
	tar --numeric-owner -C "$t" -cf - . | zstd -q -o "$1"
	chmod -R u+rwX "$t" && rm -rf "$t"
}

# tree_listing ROOT: every entry's type, mode, size, mtime and link target.
tree_listing() {
	(cd "$1" && find . -printf '%y %m %s %T@ %l %p\n' | sort -k6)
}

teardown_reflink() {
	[[ -n ${MNT:-} ]] && mountpoint -q "$MNT" && { chmod -R u+rwX "$MNT"; umount "$MNT"; }
	return 0
}

@test "reflink: a second create clones the layer the first one unpacked: same tree, shared extents, no new data" {
	reflink_fs
	clone_tar "$W/r.tar.zst"
	edr_run create a --from "$W/r.tar.zst"
	assert_status 0
	run "$EDR_BIN" cache list
	assert_line --index 1 --regexp "^[0-9a-f]{64} +[0-9]+  layer, used by: a\$"
	local used
	used=$(df --output=used -B1 "$MNT" | tail -n 1)
	edr_run create b --from "$W/r.tar.zst"
	assert_status 0
	assert_equal "$stderr" ""
	# Same tree, entry for entry (types, modes, sizes, times, symlink targets).
	diff <(tree_listing "$(root_of a)") <(tree_listing "$(root_of b)") ||
		fail "the cloned root differs from the unpacked one"
	cmp "$(root_of a)/usr/bin/big" "$(root_of b)/usr/bin/big"
	# The hardlink is a hardlink again; the files are b's own inodes, not a's.
	[[ $(stat -c %i "$(root_of b)/usr/bin/big") == $(stat -c %i "$(root_of b)/usr/bin/big-link") ]] ||
		fail "hardlink not kept"
	[[ $(stat -c %i "$(root_of a)/usr/bin/big") != $(stat -c %i "$(root_of b)/usr/bin/big") ]] ||
		fail "b shares an inode with a"
	# Shared extents (reflinks), and the 4 MiB were not written again.
	run xfs_io -r -c 'fiemap -v' "$(root_of b)/usr/bin/big"
	assert_output --regexp '0x20[0-9a-f]{2}'
	local grown=$(($(df --output=used -B1 "$MNT" | tail -n 1) - used))
	((grown < 2 << 20)) || fail "the second create used $grown bytes of disk"
	# The metadata says the same archive and size.
	local k
	for k in sha256 size_bytes; do
		[[ $(grep -o "\"$k\": [^,}]*" "$(store)/meta/a.json") == \
			$(grep -o "\"$k\": [^,}]*" "$(store)/meta/b.json") ]] || fail "metadata $k differs"
	done
}

@test "reflink: writing in a cloned root changes neither the other root nor the layer" {
	reflink_fs
	clone_tar "$W/r.tar.zst"
	edr create a --from "$W/r.tar.zst"
	edr create b --from "$W/r.tar.zst"
	local before
	before=$(sha256sum < "$(root_of a)/usr/bin/big")
	printf 'changed' | dd of="$(root_of b)/usr/bin/big" conv=notrunc status=none
	[[ $(sha256sum < "$(root_of a)/usr/bin/big") == "$before" ]] || fail "a changed"
	edr create c --from "$W/r.tar.zst"
	[[ $(sha256sum < "$(root_of c)/usr/bin/big") == "$before" ]] || fail "the layer changed"
}

@test "reflink: cache clean keeps the layer a root uses and removes it once unused; a create then unpacks again" {
	reflink_fs
	clone_tar "$W/r.tar.zst"
	edr create a --from "$W/r.tar.zst"
	local listing
	listing=$(tree_listing "$(root_of a)")
	run "$EDR_BIN" cache clean
	assert_success
	assert_output --partial "1 layer in use kept"
	[[ -n $(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256") ]] || fail "the layer in use was removed"
	edr remove a
	run "$EDR_BIN" cache clean
	assert_success
	assert_output --partial "1 unused layer"
	[[ -z $(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256") ]] || fail "layers left"
	edr create b --from "$W/r.tar.zst"
	assert_equal "$(tree_listing "$(root_of b)")" "$listing"
	[[ -n $(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256") ]] || fail "no new layer"
}

@test "reflink: with cache = DIR, cache list and cache clean see the layers, kept in the user's own cache" {
	reflink_fs
	clone_tar "$W/r.tar.zst"
	# Downloads go elsewhere; the layers stay where only the user writes (layers.h).
	export ENTER_DEVROOT_CACHE=$MNT/downloads
	edr create a --from "$W/r.tar.zst"
	[[ -n $(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256") ]] || fail "no layer kept"
	run "$EDR_BIN" cache list
	assert_success
	assert_line --regexp "^[0-9a-f]{64} +[0-9]+  layer, used by: a\$"
	edr remove a
	run "$EDR_BIN" cache clean
	assert_success
	assert_output --partial "1 unused layer"
	[[ -z $(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256") ]] || fail "layers left"
}

@test "reflink: a tampered layer makes a create fail in one line, nothing made; a wrong --sha256 is still refused" {
	reflink_fs
	clone_tar "$W/r.tar.zst"
	edr create a --from "$W/r.tar.zst"
	local hex l
	hex=$(sha256sum "$W/r.tar.zst" | cut -d' ' -f1)
	l=$(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256")
	# A digest that is not the file's: refused as before, even with its layer kept.
	edr_run create w --from "$W/r.tar.zst" --sha256 "${hex//?/0}"
	assert_edr_error 125 "r.tar.zst" "SHA-256 mismatch"
	[[ ! -e $(root_of w) ]] || fail "a root from a mismatching archive"
	# A layer tampered with (a socket, which no create makes, where a directory was): the
	# copy stops, one line naming the layer, no root, no staging left.
	rm -rf "$XDG_CACHE_HOME/enter-devroot/layers/sha256/$l/tree/usr"
	(cd "$XDG_CACHE_HOME/enter-devroot/layers/sha256/$l/tree" &&
		python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("usr")')
	edr_run create b --from "$W/r.tar.zst"
	assert_edr_error 125 "layer $l"
	[[ ! -e $(root_of b) ]] || fail "a root from a tampered layer"
	[[ -z $(ls -A "$(store)/staging") ]] || fail "staging left: $(ls -A "$(store)/staging")"
}

@test "reflink: a clone keeps FIFOs, hard links to symlinks and FIFOs, and extended attributes" {
	reflink_fs
	# A v2 file capability (cap_net_raw, as ping's): root sets it, a clone keeps it.
	mktar "$W/t.tar" d usr l usr/py3 python3.11 h usr/python3 usr/py3 \
		m 0640 p fifo h fifo2 fifo X user.mime 6f6b f file data X user.dir 6f6b d dir \
		X security.capability 0100000200200000000000000000000000000000 m 0755 f ping elf
	edr_run create a --from "$W/t.tar"
	assert_status 0
	assert_equal "$stderr" ""
	run "$EDR_BIN" cache list
	assert_output --partial "layer, used by: a"
	edr_run create b --from "$W/t.tar"
	assert_status 0
	assert_equal "$stderr" ""
	local r
	r=$(root_of b)
	diff <(tree_listing "$(root_of a)") <(tree_listing "$r") || fail "b differs from a"
	[[ -p $r/fifo ]] || fail "no FIFO in the clone"
	assert_equal "$(stat -c %i "$r/fifo2")" "$(stat -c %i "$r/fifo")"
	assert_equal "$(stat -c %i "$r/usr/python3")" "$(stat -c %i "$r/usr/py3")"
	local f
	for f in file dir ping; do
		assert_equal "$(python3 -c 'import os,sys; print(sorted((n, os.getxattr(sys.argv[1], n).hex()) for n in os.listxattr(sys.argv[1])))' "$r/$f")" \
			"$(python3 -c 'import os,sys; print(sorted((n, os.getxattr(sys.argv[1], n).hex()) for n in os.listxattr(sys.argv[1])))' "$(root_of a)/$f")"
	done
	run python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "security.capability").hex())' "$r/ping"
	assert_output 0100000200200000000000000000000000000000
}

@test "export: the host's resolv.conf copied in by chroot mode is exported empty; one the user edited is kept" {
	need_host_files
	[[ -s /etc/resolv.conf ]] || skip "the host's resolv.conf is empty: an empty export would show nothing"
	create_default dev
	: > "$(root_of dev)/etc/resolv.conf"
	edr_run run dev --mode=chroot -- cat /etc/resolv.conf
	assert_equal "$output" "$(cat /etc/resolv.conf)"
	edr export dev "$T/e.tar" --compress none || fail "export failed"
	run tar -xOf "$T/e.tar" ./etc/resolv.conf
	assert_output ""
	echo "nameserver 192.0.2.53" > "$(root_of dev)/etc/resolv.conf"
	edr export dev "$T/f.tar" --compress none || fail "export failed"
	run tar -xOf "$T/f.tar" ./etc/resolv.conf
	assert_output "nameserver 192.0.2.53"
}

@test "reflink: the create that unpacks a layer flushes no whole filesystem either, and the layer is used" {
	command -v strace >/dev/null || skip "strace not installed (apt-get install strace)"
	reflink_fs
	clone_tar "$W/r.tar.zst"
	strace -f -qq -o "$T/trace" -e trace=sync,syncfs "$EDR_BIN" create a --from "$W/r.tar.zst" ||
		fail "create under strace failed"
	! grep -E '(^|[0-9] )(sync|syncfs)\(' "$T/trace" || fail "create flushed the whole filesystem: $(cat "$T/trace")"
	run "$EDR_BIN" cache list
	assert_line --index 1 --regexp "layer, used by: a\$"
	edr_run create b --from "$W/r.tar.zst"
	assert_status 0
	assert_equal "$(tree_listing "$(root_of a)")" "$(tree_listing "$(root_of b)")"
}

@test "reflink: code entering a new root plants nothing in its layer" {
	reflink_fs
	# Enough files that cloning the tree takes a while.
	local t=$W/tree
	mkdir -p "$t/etc" "$t/many"
	echo 'root:x:0:0:root:/root:/bin/sh' > "$t/etc/passwd"
	seq 3000 | sed "s|^|$t/many/f|" | xargs touch
	tar --numeric-owner -C "$t" -cf - . | zstd -q -o "$W/r.tar.zst"
	# The attacker: plants files in the root from the moment its name appears (as code
	# entering it would), until told to stop.
	python3 -c 'import os, sys
root, stop, n = sys.argv[1], sys.argv[2], 0
open(sys.argv[3], "w").close()
while not os.path.exists(stop) and n < 20000:
    for d in ("", "etc", "many"):
        try:
            with open(os.path.join(root, d, "planted-%d" % n), "x") as f:
                f.write("planted")
            n += 1
        except OSError:
            pass' "$(root_of a)" "$T/stop" "$T/ready" &
	local planter=$!
	while [[ ! -e $T/ready ]]; do sleep 0.1; done
	edr_run create a --from "$W/r.tar.zst"
	touch "$T/stop"
	wait "$planter"
	assert_status 0
	[[ -n $(find "$(root_of a)" -name 'planted-*' -print -quit) ]] ||
		fail "nothing was planted in the root: the test proves nothing"
	[[ -d $XDG_CACHE_HOME/enter-devroot/layers/sha256 ]] && [[ -n $(ls "$XDG_CACHE_HOME/enter-devroot/layers/sha256") ]] ||
		fail "no layer kept: $(last_run)"
	run find "$XDG_CACHE_HOME/enter-devroot/layers" -name 'planted-*' -print -quit
	assert_output ""
	edr create b --from "$W/r.tar.zst" || fail "create b failed"
	run find "$(root_of b)" -name 'planted-*' -print -quit
	assert_output ""
}

@test "root: --root as the test user: a root-owned 0600 file in its devroot stays unreadable, a 0644 one unwritable" {
	privileged_copy 0755
	install -m 755 "$(dirname "$EDR_BIN")/enter-devroot-store" "$suid_dir/"
	run --separate-stderr as_test_user "$suid_bin" create r --from "$EDR_TEMPLATE" --quiet
	assert_status 0
	local r=$suid_dir/home/data/enter-devroot/roots/r
	echo "root's secret" > "$r/secret"
	echo "root's file" > "$r/public"
	chown root:root "$r/secret" "$r/public"
	chmod 0600 "$r/secret"
	chmod 0644 "$r/public"
	run --separate-stderr as_test_user "$suid_bin" run r --root -- sh -c 'id -u; cat /secret; echo x >> /public; chown 0 /secret && echo chown-faked'
	assert_line --index 0 0
	[[ $(grep -c "/secret.*Permission denied" <<< "$stderr") == 1 &&
		$(grep -c "/public.*Permission denied" <<< "$stderr") == 1 ]] ||
		fail "$(printf '%s\n%s' "$output" "$stderr")"
	refute_output --partial "root's secret"
	[[ $(cat "$r/public") == "root's file" ]] || fail "/public was written"
	[[ $(stat -c %u:%a "$r/secret") == 0:600 ]] || fail "/secret changed: $(stat -c %u:%a "$r/secret")"
}

# as_user USER HOMEDIR CMD...: CMD as USER with its own store under HOMEDIR.
as_user() {
	local user=$1 home=$2
	shift 2
	setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups --reset-env \
		env HOME="$home" XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" \
		ENTER_DEVROOT_KEEP_IDLE=30 "$@" </dev/null
}

@test "root: two users' warm runs never share a keeper, even one named in the other's state" {
	for u in edr-test edr-test2; do id "$u" >/dev/null 2>&1 || skip "test user $u missing"; done
	suid_dir=$(mktemp -d "${EDR_STAGE:-/tmp}/warm.XXXXXX")
	chmod 755 "$suid_dir"
	cp "$EDR_BIN" "$(dirname "$EDR_BIN")/enter-devroot-store" "$EDR_TEMPLATE" "$suid_dir/"
	chmod 755 "$suid_dir"/*
	local bin=$suid_dir/enter-devroot tpl=$suid_dir/$(basename "$EDR_TEMPLATE")
	for u in edr-test edr-test2; do
		install -d -o "$u" -m 700 "$suid_dir/$u"
		as_user "$u" "$suid_dir/$u" "$bin" create r --from "$tpl" --quiet
		# A cold run first makes the mount points (the template has no etc/resolv.conf).
		as_user "$u" "$suid_dir/$u" env ENTER_DEVROOT_KEEP_IDLE=0 "$bin" run --mode userns r -- true
	done
	# The first user's keeper, and the user namespace its runs share.
	a_ns=$(as_user edr-test "$suid_dir/edr-test" "$bin" run --mode userns r -- readlink /proc/self/ns/user)
	a_keeper=$(as_user edr-test "$suid_dir/edr-test" "$bin" list | warm_column r)
	[[ -n $a_keeper && $(readlink "/proc/$a_keeper/ns/user") == "$a_ns" ]] || fail "no keeper for edr-test"
	# The second user's runs have their own, and list only theirs.
	b_ns=$(as_user edr-test2 "$suid_dir/edr-test2" "$bin" run --mode userns r -- readlink /proc/self/ns/user)
	[[ $b_ns != "$a_ns" ]] || fail "edr-test2 joined edr-test's namespaces"
	# A state file of theirs naming the first user's keeper (its PID and start time, as a
	# forger would read them): counted as no keeper, never joined, never listed.
	state=$(ls "$suid_dir"/edr-test2/data/enter-devroot/locks/r@warm-*.ns)
	start=$(sed 's/.*) //' "/proc/$a_keeper/stat" | cut -d' ' -f20)
	printf '%s %s 0 0\n' "$a_keeper" "$start" >"$state"
	edr_run_as_b() { run --separate-stderr as_user edr-test2 "$suid_dir/edr-test2" "$bin" "$@"; }
	edr_run_as_b run --mode userns r -- readlink /proc/self/ns/user
	assert_status 0
	[[ $output != "$a_ns" ]] || fail "edr-test2 joined edr-test's keeper"
	edr_run_as_b list
	assert_status 0
	[[ " $(warm_column r <<<"$output") " != *" $a_keeper "* ]] || fail "edr-test2 lists edr-test's keeper: $output"
	as_user edr-test "$suid_dir/edr-test" "$bin" remove r
	# The forged state hid edr-test2's own keeper from its store until its idle time ends;
	# it has an overlay root mounted, which plain remove counts as in use: --force stops it.
	as_user edr-test2 "$suid_dir/edr-test2" "$bin" remove --force r
	st=$(sed 's/.*) //' "/proc/$a_keeper/stat" 2>/dev/null) && [[ ${st%% *} != Z ]] &&
		fail "edr-test's keeper survived its remove"
	rm -rf "$suid_dir"
	suid_dir=
}

# Two overlayfs mounts of one upper make the kernel log "upperdir is in-use as
# upperdir/workdir of another mount ... undefined behavior" (the message names no path: the
# count is compared). Every run of an overlay root, whatever its options, and an export
# beside them use the root's one mount (overlay.bats checks what they see); the kernel says
# so too. Root reads the kernel log (kernel.dmesg_restrict); the test user runs the tool.
@test "root: runs of an overlay root with other options and an export beside a job leave no overlayfs 'in-use' warning in the kernel log" {
	id "${EDR_TEST_USER:-edr-test}" >/dev/null 2>&1 || skip "test user missing"
	dmesg >/dev/null 2>&1 || skip "the kernel log cannot be read here"
	suid_dir=$(mktemp -d "${EDR_STAGE:-/tmp}/inuse.XXXXXX")
	chmod 755 "$suid_dir"
	cp "$EDR_BIN" "$(dirname "$EDR_BIN")/enter-devroot-store" "$EDR_TEMPLATE" "$suid_dir/"
	chmod 755 "$suid_dir"/*
	install -d -o "${EDR_TEST_USER:-edr-test}" -m 700 "$suid_dir/home"
	local bin=$suid_dir/enter-devroot tpl=$suid_dir/$(basename "$EDR_TEMPLATE") before after
	as_test_user unshare -U true 2>/dev/null || skip "no unprivileged user namespaces"
	as_test_user "$bin" create o --overlay --from "$tpl" --quiet || skip "no overlay roots here"
	before=$(dmesg | grep -c "in-use as upperdir" || true)
	as_test_user env ENTER_DEVROOT_KEEP_IDLE=30 "$bin" run o -- sh -c 'sleep 4; echo a >> /data-a' </dev/null &
	local job=$!
	sleep 1
	as_test_user env ENTER_DEVROOT_KEEP_IDLE=30 "$bin" run o --root -- sh -c 'echo b >> /data-b' </dev/null
	as_test_user env ENTER_DEVROOT_KEEP_IDLE=30 "$bin" run o --bind "$suid_dir:/mnt" -- true </dev/null
	as_test_user env ENTER_DEVROOT_KEEP_IDLE=0 "$bin" run o -- true </dev/null
	as_test_user "$bin" export o "$suid_dir/home/o.tar" --compress none --quiet
	wait "$job" || fail "the job failed"
	as_test_user "$bin" remove --force o
	after=$(dmesg | grep -c "in-use as upperdir" || true)
	assert_equal "$after" "$before"
	rm -rf "$suid_dir"
	suid_dir=
}

# --- a full disk (issue 37): nothing needs to be written to free space ------------------
# The test user's HOME and XDG directories on a fresh 64 MiB ext4 (what homes are) on a
# loop device, filled until a 4 KiB write fails with ENOSPC; then, on the defaults (no
# ENTER_DEVROOT_* set), the ways to free space must work: run NAME -- rm, remove, cache clean.

# full_fs: mount the ext4 on $DISK/mnt, owned by the test user.
full_fs() {
	id "${EDR_TEST_USER:-edr-test}" >/dev/null 2>&1 || skip "test user ${EDR_TEST_USER:-edr-test} missing"
	command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (apt-get install e2fsprogs)"
	grep -qw ext4 /proc/filesystems || skip "ext4 is not in /proc/filesystems (never modprobed here)"
	DISK=$(mktemp -d "${EDR_STAGE:-/tmp}/disk.XXXXXX")
	chmod 755 "$DISK"
	mkdir "$DISK/mnt"
	truncate -s 64M "$DISK/ext4.img"
	mkfs.ext4 -q -F -b 4096 "$DISK/ext4.img" || skip "mkfs.ext4 failed"
	mount -o loop "$DISK/ext4.img" "$DISK/mnt" || skip "cannot loop-mount an ext4 image here"
	chown "${EDR_TEST_USER:-edr-test}" "$DISK/mnt"
	as_disk_user mkdir "$DISK/mnt/home"
}

# as_disk_user CMD...: CMD as the test user, its HOME and XDG directories on the disk.
as_disk_user() {
	local user=${EDR_TEST_USER:-edr-test} m=$DISK/mnt
	setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups --reset-env \
		env HOME="$m/home" XDG_DATA_HOME="$m/data" XDG_CACHE_HOME="$m/cache" \
		XDG_CONFIG_HOME="$m/config" "$@" </dev/null
}

# disk_run ARGS...: enter-devroot ARGS as the test user, the bats way.
disk_run() { run --separate-stderr as_disk_user "$EDR_BIN" "$@"; }

# fill_disk NAME [IDLE]: fill the disk from inside root NAME (its /big; a run that keeps its
# namespaces for IDLE seconds, default 0), then what delayed allocation had reserved, from
# the host, until a 4 KiB write fails with ENOSPC.
fill_disk() {
	as_disk_user env ENTER_DEVROOT_KEEP_IDLE="${2:-0}" "$EDR_BIN" run "$1" -- \
		sh -c 'cat /dev/zero > /big; sync; cat /dev/zero >> /big' 2>/dev/null || true
	sync
	as_disk_user sh -c 'i=0; while head -c 4096 /dev/zero > "$HOME/top.$i"; do i=$((i+1)); done' 2>/dev/null || true
	disk_full
}

# disk_full: a 4 KiB write to a new file fails with ENOSPC.
disk_full() {
	run as_disk_user sh -c 'head -c 4096 /dev/zero > "$HOME/probe"; s=$?; rm -f "$HOME/probe"; exit $s'
	[[ $status -ne 0 && $output == *"No space left on device"* ]] || fail "the disk is not full: $output
$(df "$DISK/mnt")"
}

# disk_free_mib: what the test user could write, in MiB.
disk_free_mib() { df --output=avail -BM "$DISK/mnt" | tail -n 1 | tr -dc 0-9; }

teardown_full_fs() {
	[[ -n ${DISK:-} ]] || return 0
	if mountpoint -q "$DISK/mnt"; then
		# No keeper or holder of this disk's roots may outlive the test.
		local r
		for r in $(ls "$DISK/mnt/data/enter-devroot/roots" 2>/dev/null); do
			as_disk_user "$EDR_BIN" remove --force "$r" >/dev/null 2>&1 || true
		done
		# Namespaces made meanwhile (by any process) hold copies of the mount: detach ours.
		umount "$DISK/mnt" 2>/dev/null || umount -l "$DISK/mnt"
	fi
	rm -rf "$DISK"
	DISK=
}

# full_root LAYOUT: a fresh full_fs with root r of LAYOUT (flat when empty) on it.
full_root() {
	full_fs
	disk_run create r --from "$EDR_TEMPLATE" --quiet ${1:+--$1}
	assert_status 0
}

# rm_frees ARGS...: `run r ARGS -- rm /big` exits 0, and the space is back.
rm_frees() {
	disk_run run r "$@" -- rm /big
	assert_status 0
	(($(disk_free_mib) > 30)) || fail "no space freed: $(df -h "$DISK/mnt")"
	disk_run run r -- test -e /big
	assert_status 1
}

# full_disk_rm LAYOUT: `run r -- rm /big` in a root of LAYOUT on a full disk, with no
# namespaces kept from before: exit 0, the space back.
full_disk_rm() {
	full_root "$@"
	fill_disk r
	disk_run list
	assert_status 0
	[[ -z $(warm_column r <<<"$output") ]] || fail "namespaces kept: $output"
	rm_frees
}

@test "full disk: run NAME -- rm frees space in a flat root, no ENTER_DEVROOT_KEEP_IDLE=0 needed" {
	full_disk_rm
}

@test "full disk: run NAME -- rm frees space in an overlay root" {
	full_disk_rm overlay
}

# full_disk_warm_rm LAYOUT: the same with a keeper alive from an earlier run: a run that
# joins it works, and so does one with other options (--root), which needs one of its own.
full_disk_warm_rm() {
	full_root "$@"
	disk_run run r -- true
	assert_status 0
	fill_disk r 30
	disk_run list
	[[ -n $(warm_column r <<<"$output") ]] || fail "no warm run's namespaces kept: $output"
	disk_run run r -- test -e /big
	assert_status 0
	disk_full
	rm_frees --root
}

@test "full disk: a warm run (a keeper alive from an earlier run) frees space in a flat root" {
	full_disk_warm_rm
}

@test "full disk: a warm run (a keeper alive from an earlier run) frees space in an overlay root" {
	full_disk_warm_rm overlay
}

# full_disk_remove LAYOUT: remove of a root of LAYOUT that filled the disk (no keeper,
# whose state files would give some blocks back first).
full_disk_remove() {
	full_root "$@"
	fill_disk r
	disk_run remove r
	assert_status 0
	assert_equal "$stderr" ""
	(($(disk_free_mib) > 30)) || fail "no space freed: $(df -h "$DISK/mnt")"
	local s=$DISK/mnt/data/enter-devroot
	[[ ! -e $s/roots/r && ! -e $s/meta/r.json && ! -e $s/overlays/r ]] ||
		fail "left: $(ls -d "$s"/roots/r "$s"/meta/r.json "$s"/overlays/r 2>&1)"
	[[ -z $(ls -A "$s/staging") ]] || fail "staging left: $(ls -A "$s/staging")"
	[[ -z $(ls "$s/locks" | grep -v '^r\.lock$') ]] || fail "state left: $(ls "$s/locks")"
	disk_run list
	refute_output --regexp "(^| )r( |$)"
}

@test "full disk: remove of a flat root leaves nothing" {
	full_disk_remove
}

@test "full disk: remove of an overlay root leaves nothing" {
	full_disk_remove overlay
}

@test "full disk: cache clean removes an unused layer and keeps the one an overlay root uses" {
	full_fs
	local c=$DISK/mnt/cache/enter-devroot/layers/sha256
	# Another layer: the template with one more file.
	mkdir "$DISK/tree"
	tar -C "$DISK/tree" -xzf "$EDR_TEMPLATE" && echo "marker b" > "$DISK/tree/marker" &&
		tar -C "$DISK/tree" -cf "$DISK/b.tar" . && chmod 644 "$DISK/b.tar" || fail "cannot make b.tar"
	disk_run create a --keep-layers --from "$EDR_TEMPLATE" --quiet
	assert_status 0
	disk_run create b --overlay --from "$DISK/b.tar" --quiet
	assert_status 0
	disk_run remove a
	assert_status 0
	[[ $(ls "$c" | wc -l) == 2 ]] || fail "not two layers kept: the test proves nothing: $(ls "$c")"
	fill_disk b
	disk_run cache clean
	assert_status 0
	assert_output --partial "1 unused layer"
	assert_output --partial "1 layer in use kept"
	[[ $(ls "$c" | wc -l) == 1 ]] || fail "layers left: $(ls "$c")"
	disk_run run b -- cat /marker
	assert_output "marker b"
}
