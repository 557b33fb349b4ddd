#!/usr/bin/env bats
# A real package manager under --root: apt-get and dpkg in a Debian devroot, as an
# unprivileged user, installing from a hermetic repository (tests/rootemu/mkrepo) that
# nginx serves on 127.0.0.1. The same loop runs in the QEMU guest in chroot mode
# (tests/guest/rootemu.bats).

load common

setup_file() { repo_setup_file; }
teardown_file() { nginx_stop; }
setup() { rootemu_setup deb; }

teardown() {
	# The registry the README's tour starts, stopped by its PID.
	[[ ! -s $BATS_TEST_TMPDIR/registry/pid ]] || kill "$(cat "$BATS_TEST_TMPDIR/registry/pid")" 2>/dev/null || true
	rootemu_teardown
}

in_deb() { run --separate-stderr "$EDR_BIN" run deb "$@"; }

@test "apt: update, install -y with a dependency, run the program, as an unprivileged user with --root" {
	in_deb --root -- apt-get update
	assert_success
	in_deb --root -- apt-get install -y edr-greet
	assert_success
	assert_output --partial "Setting up edr-libgreet1 (1.0)"
	assert_output --partial "Setting up edr-greet (1.0)"
	in_deb -- edr-greet
	assert_success
	assert_output "hello from a package installed with --root"
	in_deb -- dpkg -l edr-greet edr-libgreet1
	assert_line --regexp '^ii  edr-greet +1\.0 '
	assert_line --regexp '^ii  edr-libgreet1 +1\.0 '
}

@test "apt: the postinst's useradd, chown, dpkg-statoverride, mknod and ldconfig all ran as uid 0" {
	in_deb --root -- sh -c 'apt-get update && apt-get install -y edr-greet'
	assert_success
	local r=$(root_of deb)
	[[ $(cat "$r/var/lib/edr-greet/postinst.log") == "edr-greet postinst: ran as uid 0" ]] ||
		fail "postinst.log: $(cat "$r/var/lib/edr-greet/postinst.log" 2>&1)"
	grep -q '^edr-greet:x:[0-9]*:[0-9]*::/var/lib/edr-greet:/usr/sbin/nologin$' "$r/etc/passwd" ||
		fail "useradd did not add edr-greet"
	in_deb -- dpkg-statoverride --list /var/lib/edr-greet
	assert_output "edr-greet edr-greet 750 /var/lib/edr-greet"
	# The mode was applied, the owner was not: every file stays the user's.
	[[ $(stat -c %a "$r/var/lib/edr-greet") == 750 ]] || fail "mode $(stat -c %a "$r/var/lib/edr-greet")"
	[[ -z $(find "$r" ! -user "$(id -u)" -print -quit) ]] || fail "a file not owned by the user"
	[[ ! -e $r/var/lib/edr-greet/null ]] || fail "a device node was created"
	grep -qa libedrgreet.so.1 "$r/etc/ld.so.cache" || fail "ldconfig did not cache the library"
}

@test "apt: remove takes the program away, keeps the library, dpkg -l says rc" {
	in_deb --root -- sh -c 'apt-get update && apt-get install -y edr-greet'
	assert_success
	in_deb --root -- apt-get remove -y edr-greet
	assert_success
	assert_output --partial "Removing edr-greet (1.0)"
	in_deb -- dpkg -l edr-greet edr-libgreet1
	assert_line --regexp '^rc  edr-greet +1\.0 '
	assert_line --regexp '^ii  edr-libgreet1 +1\.0 '
	[[ ! -e $(root_of deb)/usr/bin/edr-greet ]] || fail "/usr/bin/edr-greet is still there"
	in_deb -- dpkg-statoverride --list /var/lib/edr-greet
	assert_failure # the postrm removed the override
}

@test "apt: files shipped without owner write permission (0440, 0444) install with --root, keep their modes, dpkg -V is clean" {
	in_deb --root -- sh -c 'apt-get update && apt-get install -y edr-readonly'
	assert_success
	assert_output --partial "Setting up edr-readonly (1.0)"
	local r=$(root_of deb)
	[[ $(stat -c %a "$r/etc/sudoers.d/edr-readonly") == 440 ]] || fail "mode $(stat -c %a "$r/etc/sudoers.d/edr-readonly")"
	[[ $(stat -c %a "$r/usr/share/edr-readonly/notice") == 444 ]] || fail "mode $(stat -c %a "$r/usr/share/edr-readonly/notice")"
	[[ $(cat "$r/usr/share/edr-readonly/notice") == "shipped mode 0444" ]] || fail "content"
	in_deb -- dpkg -V edr-readonly
	assert_success
	assert_output ""
	in_deb -- dpkg -l edr-readonly
	assert_line --regexp '^ii  edr-readonly +1\.0 '
	# No .dpkg-new left behind.
	[[ -z $(find "$r/etc/sudoers.d" "$r/usr/share/edr-readonly" -name '*.dpkg-*') ]] || fail "a .dpkg-new is left"
}

@test "apt: --root writes apt's and dpkg's settings once, says so once on stderr, leaves a file of the root's own alone; export leaves ours out" {
	local r=$(root_of deb)
	in_deb --root -- true
	assert_success
	[[ $stderr == "enter-devroot: root 'deb': --root wrote /etc/apt/apt.conf.d/99enter-devroot-root, /etc/dpkg/dpkg.cfg.d/enter-devroot-root (apt downloads as root, dpkg skips fsync; export leaves them out: ROOT EMULATION in enter-devroot(1))" ]] ||
		fail "$(last_run)"
	grep -qx 'APT::Sandbox::User "root";' "$r/etc/apt/apt.conf.d/99enter-devroot-root" || fail "no apt setting"
	grep -qx 'force-unsafe-io' "$r/etc/dpkg/dpkg.cfg.d/enter-devroot-root" || fail "no dpkg setting"
	in_deb --root -- true
	assert_success
	[[ -z $stderr ]] || fail "said it twice: $(last_run)"
	# A file of the root's own at our path is kept, and exported.
	rm "$r/etc/apt/apt.conf.d/99enter-devroot-root"
	echo '// mine' > "$r/etc/apt/apt.conf.d/99enter-devroot-root"
	in_deb --root -- true
	assert_success
	[[ -z $stderr ]] || fail "$(last_run)"
	[[ $(cat "$r/etc/apt/apt.conf.d/99enter-devroot-root") == "// mine" ]] || fail "overwritten"
	run --separate-stderr "$EDR_BIN" export deb "$T/out.tar.gz" --compress gzip
	assert_success
	run tar -tzf "$T/out.tar.gz"
	assert_success
	assert_line ./etc/apt/apt.conf.d/99enter-devroot-root
	refute_line ./etc/dpkg/dpkg.cfg.d/enter-devroot-root
	assert_line ./etc/dpkg/dpkg.cfg.d/
}

@test "apt: without --root, install fails with dpkg's own error after our hint; nothing installed" {
	in_deb -- apt-get update
	assert_success # lists are files the user owns: no root needed
	in_deb -- apt-get install -y edr-greet
	[[ $status -eq 100 ]] || fail "expected exit status 100 (apt-get's failure)
$(last_run)"
	[[ ${stderr_lines[0]} == "enter-devroot: hint: apt-get changes packages only as root: add --root (enter-devroot run deb --root -- apt-get ...)" ]] ||
		fail "$(last_run)"
	# dpkg's own words: on stdout when apt runs it on a pseudo-terminal (apt's default,
	# Dpkg::Use-Pty, now that a devroot has a /dev/pts), else on stderr.
	[[ $output$stderr == *"dpkg: error: requested operation requires superuser privilege"* ]] || fail "$(last_run)"
	[[ ! -e $(root_of deb)/usr/bin/edr-greet ]] || fail "installed anyway"
}

@test "apt: a postinst that needs a real privilege (mount) fails with dpkg's own error" {
	in_deb --root -- sh -c 'apt-get update && apt-get install -y edr-mounts'
	[[ $status -eq 100 ]] || fail "expected exit status 100 (apt-get's failure)
$(last_run)"
	assert_output --partial "Setting up edr-mounts (1.0)"
	[[ $output$stderr == *"installed edr-mounts package post-installation script subprocess returned error exit status"* ]] ||
		fail "$(last_run)"
	in_deb -- dpkg -l edr-mounts
	assert_line --regexp '^iF  edr-mounts +1\.0 '
}

# The README's tour through a registry: create from an image, --root apt-get install, push,
# create elsewhere. The image is the stock root pushed to docker-registry on 127.0.0.1
# (plain http, --insecure-http); the only change to the README's lines is the apt source.
@test "apt: the README's registry tour: create --from docker://, --root apt-get install, push, create elsewhere" {
	command -v docker-registry >/dev/null || skip "docker-registry is not installed (apt-get install docker-registry)"
	local port reg=$T/registry
	port=$(free_port)
	mkdir -p "$reg/data"
	printf 'version: 0.1\nlog: {level: warn}\nstorage: {filesystem: {rootdirectory: %s}}\nhttp: {addr: 127.0.0.1:%s}\n' \
		"$reg/data" "$port" > "$reg/config.yml"
	docker-registry serve "$reg/config.yml" > "$reg/log" 2>&1 &
	echo $! > "$reg/pid"
	local i R=127.0.0.1:$port
	for i in $(seq 100); do
		curl -s -o /dev/null "http://$R/v2/" && break
		sleep 0.1
	done
	edr push deb "docker://$R/debian:bookworm" --insecure-http --quiet

	edr create ci --from "docker://$R/debian:bookworm" --insecure-http --quiet
	local r
	r=$(root_of ci)
	rm -f "$r/etc/apt/sources.list" "$r"/etc/apt/sources.list.d/*
	echo "deb [trusted=yes] $SERVE_URL/ ./" > "$r/etc/apt/sources.list.d/edr-test.list"
	run --separate-stderr "$EDR_BIN" run ci --root -- apt-get update
	assert_success
	run --separate-stderr "$EDR_BIN" run ci --root -- apt-get install -y edr-greet
	assert_success
	run --separate-stderr "$EDR_BIN" push ci "docker://$R/team/deb-greet:1" --insecure-http --quiet
	assert_success
	[[ $output == "docker://$R/team/deb-greet@sha256:"* ]] || fail "$(last_run)"
	# The base's layer and one more.
	run sh -c "curl -fsS -H 'Accept: application/vnd.oci.image.manifest.v1+json' http://$R/v2/team/deb-greet/manifests/1 |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)[\"layers\"]))'"
	assert_output 2

	export XDG_DATA_HOME=$T/elsewhere/data XDG_CACHE_HOME=$T/elsewhere/cache
	mkdir -p "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
	edr create ci --from "docker://$R/team/deb-greet:1" --insecure-http --quiet
	run --separate-stderr "$EDR_BIN" run ci -- edr-greet
	assert_success
	assert_output "hello from a package installed with --root"
	run --separate-stderr "$EDR_BIN" run ci -- dpkg -l edr-greet
	assert_line --regexp '^ii  edr-greet +1\.0 '
}

# The README's own sequence on an overlay root (create --overlay), every run of which must
# see its one mount: what --root's apt-get installs, a plain run (its keeper made before the
# install, the program looked up) finds at once, and so does a run with a --bind.
@test "apt (overlay root): --root apt-get update, a plain run, --root apt-get install, then the program in a plain and a --bind run" {
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	edr create ov --overlay --from "$EDR_DEBIAN" --quiet || skip "no overlay roots here"
	export ENTER_DEVROOT_KEEP_IDLE=300
	# The test repository as the only source, written by a plain run: no path on the host.
	run --separate-stderr "$EDR_BIN" run ov -- sh -c 'rm -f /etc/apt/sources.list /etc/apt/sources.list.d/* \
		/etc/apt/apt.conf.d/90enter-devroot && echo "deb [trusted=yes] $1/ ./" > /etc/apt/sources.list.d/edr-test.list' \
		- "$SERVE_URL"
	assert_success
	run --separate-stderr "$EDR_BIN" run ov --root -- apt-get update
	assert_success
	run --separate-stderr "$EDR_BIN" run ov -- sh -c 'command -v edr-greet || echo absent'
	assert_output absent
	run --separate-stderr "$EDR_BIN" run ov --root -- apt-get install -y edr-greet
	assert_success
	run --separate-stderr "$EDR_BIN" run ov -- edr-greet
	assert_success
	assert_output "hello from a package installed with --root"
	mkdir -p "$BATS_TEST_TMPDIR/b"
	run --separate-stderr "$EDR_BIN" run ov --bind "$BATS_TEST_TMPDIR/b:/mnt" -- sh -c 'edr-greet && dpkg -l edr-greet | tail -n 1'
	assert_success
	assert_line "hello from a package installed with --root"
	assert_line --regexp '^ii  edr-greet +1\.0 '
	"$EDR_BIN" remove --force ov
}
