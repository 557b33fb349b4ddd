#!/usr/bin/env bats
# A second package manager under --root: dnf and rpm, as Debian packages them, in a
# stock Debian root that has them (tests/rootemu/dnf-root), as an unprivileged user. The
# packages (tests/rootemu/rpm/*.spec) are built inside the root with rpmbuild and served
# to dnf from a file: repository made with createrepo_c; nothing is downloaded. dnf needs
# no setting from --root: no download sandbox, no fsync reopen, no chroot with the root
# "/" (ROOT EMULATION in the man page).

load common

setup() {
	[[ -n ${EDR_DNF:-} ]] || skip "${EDR_DNF_MISSING:-no dnf root}"
	rootemu_setup_dirs
	edr create fed --from "$EDR_DNF" --quiet || fail "cannot create the dnf root"
	local r
	r=$(root_of fed)
	stock_apt "$r"
	mkdir -p "$r/srv/spec"
	cp "$BATS_TEST_DIRNAME"/rpm/*.spec "$r/srv/spec/"
	run --separate-stderr "$EDR_BIN" run fed -- sh -c 'set -e
		for s in /srv/spec/*.spec; do rpmbuild --define "_topdir /tmp/rpmbuild" -bb "$s"; done
		mkdir -p /srv/rpms && cp /tmp/rpmbuild/RPMS/noarch/*.rpm /srv/rpms/ && createrepo_c /srv/rpms'
	assert_success
}
teardown() { rootemu_teardown; }

in_fed() { run --separate-stderr "$EDR_BIN" run fed "$@"; }
dnf_local=(dnf -y --releasever=1 --disablerepo='*' --repofrompath=edr,file:///srv/rpms --nogpgcheck)

@test "dnf: install with a dependency under --root: %post's useradd and chown ran as uid 0, 0440 and 0444 kept, rpm -V clean, the program runs; remove" {
	in_fed -- "${dnf_local[@]}" install edr-rpm
	assert_failure # the control: dnf refuses an ordinary user
	[[ $stderr == *"superuser privileges"* ]] || fail "$(last_run)"
	in_fed --root -- "${dnf_local[@]}" install edr-rpm
	assert_success
	assert_output --partial "Installed:"
	assert_output --partial "edr-rpm-base-1.0-1.noarch"
	local r=$(root_of fed)
	[[ $(cat "$r/var/lib/edr-rpm/post.log") == "edr-rpm post: ran as uid 0" ]] || fail "post.log: $(cat "$r/var/lib/edr-rpm/post.log" 2>&1)"
	grep -q '^edr-rpm:x:[0-9]*:[0-9]*::/var/lib/edr-rpm:/usr/sbin/nologin$' "$r/etc/passwd" || fail "useradd did not add edr-rpm"
	[[ $(stat -c %a "$r/etc/sudoers.d/edr-rpm") == 440 ]] || fail "mode $(stat -c %a "$r/etc/sudoers.d/edr-rpm")"
	[[ $(stat -c %a "$r/usr/share/edr-rpm/notice") == 444 ]] || fail "mode $(stat -c %a "$r/usr/share/edr-rpm/notice")"
	[[ -z $(find "$r" ! -user "$(id -u)" -print -quit) ]] || fail "a file not owned by the user"
	in_fed -- edr-rpm-hello
	assert_success
	assert_output "hello from an rpm installed with --root"
	# Owners are the real user's (stat is not faked): everything else must verify.
	in_fed --root -- rpm -V --nouser --nogroup edr-rpm edr-rpm-base
	assert_success
	assert_output ""
	in_fed --root -- rpm -q edr-rpm
	assert_output "edr-rpm-1.0-1.noarch"
	in_fed --root -- dnf -y --disablerepo='*' remove edr-rpm edr-rpm-base
	assert_success
	[[ ! -e $r/usr/bin/edr-rpm-hello && ! -e $r/var/lib/edr-rpm/post.log ]] || fail "not removed"
	in_fed --root -- rpm -q edr-rpm
	assert_failure
}
