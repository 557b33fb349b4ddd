#!/usr/bin/env bats
# --root with a real package manager where chroot is the only way in (no user namespace,
# no /proc, no devices): apt-get and dpkg in a Debian devroot install from a repository
# inside the root (a file: source: the guest has no network), then the root is exported,
# published and created again from the catalogue by another HOME. The host runs the same
# loop in userns mode over nginx (tests/rootemu/).

load common

setup_file() {
	guest_setup_file
	[[ -n ${EDR_DEBIAN:-} ]] || return 0
	"$EDR_BIN" create deb --from "$EDR_DEBIAN" --quiet || fail "cannot create the Debian root"
	local r
	r=$(root_of deb)
	rm -f "$r/etc/apt/sources.list" "$r"/etc/apt/sources.list.d/*
	cp -R "$EDR_REPO" "$r/srv/edr-repo"
	echo "deb [trusted=yes] file:/srv/edr-repo ./" > "$r/etc/apt/sources.list.d/edr-test.list"
	# apt and dpkg configured as in any Debian minbase root, without the template's
	# settings (rootfs-templates/debian/tailor.sh): --root must need none of ours.
	rm -f "$r/etc/apt/apt.conf.d/90enter-devroot"
	! grep -rqi -e Sandbox -e unsafe-io "$r/etc/apt" "$r/etc/dpkg" ||
		fail "the root still configures apt's sandbox or dpkg's unsafe-io"
}
setup() {
	guest_setup
	[[ -n ${EDR_DEBIAN:-} ]] || skip "no Debian root staged (tests/guest/run: tests/rootemu/debian-root)"
}
teardown() {
	[[ ! -d $T/other ]] || chmod -R u+rwX "$T/other"
	guest_teardown
}
teardown_file() { chmod -R u+rwX "$BATS_FILE_TMPDIR/data" 2>/dev/null || true; }

@test "rootemu: chroot mode, --root: apt-get update, install -y with a dependency, the program runs, remove" {
	edr_run run deb --mode chroot -- apt-get install -y edr-greet
	assert_status 100
	[[ ${stderr_lines[0]} == "enter-devroot: hint: apt-get changes packages only as root: add --root (enter-devroot run deb --root -- apt-get ...)" ]] ||
		fail "$(last_run)"
	edr_run run deb --mode chroot --root -- apt-get update
	assert_status 0
	[[ ${stderr_lines[0]} == "enter-devroot: root 'deb': --root wrote /etc/apt/apt.conf.d/99enter-devroot-root, /etc/dpkg/dpkg.cfg.d/enter-devroot-root (apt downloads as root, dpkg skips fsync; export leaves them out: ROOT EMULATION in enter-devroot(1))" ]] ||
		fail "$(last_run)"
	edr_run run deb --mode chroot --root -- apt-get install -y edr-greet
	assert_status 0
	assert_output --partial "Setting up edr-greet (1.0)"
	edr_run run deb --mode chroot -- edr-greet
	assert_status 0
	assert_output "hello from a package installed with --root"
	edr_run run deb --mode chroot -- sh -c 'id -u; cat /var/lib/edr-greet/postinst.log; dpkg-statoverride --list'
	assert_output "$UID
edr-greet postinst: ran as uid 0
edr-greet edr-greet 750 /var/lib/edr-greet"
	grep -q '^edr-greet:x:[0-9]*:[0-9]*::/var/lib/edr-greet:/usr/sbin/nologin$' "$(root_of deb)/etc/passwd" ||
		fail "useradd did not add edr-greet"
	edr_run run deb --mode chroot --root -- apt-get remove -y edr-libgreet1
	assert_status 0
	edr_run run deb --mode chroot -- dpkg -l edr-greet edr-libgreet1
	assert_line --regexp '^rc  edr-greet +1\.0 '
	assert_line --regexp '^(rc|un)  edr-libgreet1 ' # no conffiles: removed is purged
}

@test "rootemu: chroot mode, --root: files shipped 0440 and 0444 install, keep their modes, dpkg -V is clean" {
	edr_run run deb --mode chroot --root -- sh -c 'apt-get update && apt-get install -y edr-readonly'
	assert_status 0
	assert_output --partial "Setting up edr-readonly (1.0)"
	local r=$(root_of deb)
	[[ $(stat -c %a "$r/etc/sudoers.d/edr-readonly") == 440 ]] || fail "mode $(stat -c %a "$r/etc/sudoers.d/edr-readonly")"
	[[ $(stat -c %a "$r/usr/share/edr-readonly/notice") == 444 ]] || fail "mode $(stat -c %a "$r/usr/share/edr-readonly/notice")"
	edr_run run deb --mode chroot -- dpkg -V edr-readonly
	assert_status 0
	assert_output ""
}

@test "rootemu: chroot mode: export, publish, create --template from the catalogue elsewhere: the program runs" {
	edr_run run deb --mode chroot --root -- sh -c 'apt-get update && apt-get install -y edr-greet'
	assert_status 0
	edr_run export deb "$T/tailored.tar.zst" --quiet
	assert_status 0
	edr_run publish "$T/site" "$T/tailored.tar.zst" --quiet
	assert_status 0
	export HOME=$T/other XDG_DATA_HOME=$T/other/data XDG_CACHE_HOME=$T/other/cache
	mkdir -p "$HOME"
	edr_run create mine --template tailored --index "file://$T/site/index" --quiet
	assert_status 0
	edr_run run mine --mode chroot -- edr-greet
	assert_status 0
	assert_output "hello from a package installed with --root"
}
