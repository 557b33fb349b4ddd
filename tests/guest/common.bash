# Helpers for the guest suites. Load with `load common`.
#
# These suites run INSIDE the test guest (tests/guest/init), as the
# unprivileged user edr-guest, with user.max_user_namespaces=0: the only way in
# is the patched kernel's unprivileged chroot. tests/guest/init exports:
#   EDR_BIN       the enter-devroot under test
#   EDR_TEMPLATE  the embedded default template (also ENTER_DEVROOT_DEFAULT_TEMPLATE)
#   EDR_PROBE     tests/host/probe.c built static (absent: tests needing it skip)
#   EDR_PREPARED  an XDG_DATA_HOME holding the root "suid", in which root planted
#                 /suid-ids: EDR_PROBE, owned by root, mode 6755
# The generic helpers (edr_run, assert_edr_error, root_of...) are the host
# suites' own, staged beside this directory.

load '../host/common'

# A directory that exists on the host's filesystem (the guest's /) and not in
# the busybox template: seeing it inside means seeing the host.
# shellcheck disable=SC2034
HOST_ONLY_DIR=/usr/lib/x86_64-linux-gnu

# setup_file: check this is the guest's world, then create the root "dev" from
# the embedded default once for the whole file (with the probe copied in).
guest_setup_file() {
	[[ $(id -u) -ne 0 ]] || fail "the guest suites run as an unprivileged user, not root"
	[[ $(cat /proc/sys/user/max_user_namespaces 2>/dev/null) == 0 ]] ||
		fail "user.max_user_namespaces is not 0: not the guest (tests/guest/init sets it)"
	export HOME=$BATS_FILE_TMPDIR/home XDG_DATA_HOME=$BATS_FILE_TMPDIR/data
	export ENTER_DEVROOT_DEFAULT_TEMPLATE=$EDR_TEMPLATE
	mkdir -p "$HOME" "$XDG_DATA_HOME"
	"$EDR_BIN" create dev || fail "enter-devroot create dev failed"
	if [[ -x ${EDR_PROBE:-} ]]; then
		cp "$EDR_PROBE" "$(root_of dev)/edr-probe" || fail "cannot copy edr-probe into dev"
	fi
}

# setup: a fresh HOME per test (edr_setup), sharing the file's roots.
guest_setup() {
	edr_setup
	export XDG_DATA_HOME=$BATS_FILE_TMPDIR/data
	# shellcheck disable=SC2034
	DEV=$(root_of dev)
}

need_probe() {
	[[ -x ${EDR_PROBE:-} ]] || skip "edr-probe was not built (cc -static failed on the host)"
}

# dev_id PATH: "device:inode" of PATH as seen from here.
dev_id() { stat -c '%d:%i' "$1"; }
