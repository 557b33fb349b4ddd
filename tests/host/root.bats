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
	[[ -z ${suid_dir:-} ]] || rm -rf "$suid_dir"
	edr_teardown
}

# as_test_user CMD...: run CMD as the unprivileged test user with its own XDG dirs.
as_test_user() {
	local user=${EDR_TEST_USER:-edr-test}
	setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups --reset-env \
		env HOME="$suid_dir/home" XDG_DATA_HOME="$suid_dir/home/data" "$@"
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
