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
#
# Every process costs 50-300 ms in the TCG guest, so this file forks as little
# as it can: it sources the bats-support and bats-assert sources directly (their
# load.bash runs `dirname` once per file, 15 processes per test), and does not
# load the host suites' common.bash (which loads them that way); the few
# helpers below mirror its names and semantics (root_of), and tests/lib/edr-run.bash
# is both sides' own (edr_run, assert_status, assert_edr_error), so a test reads the
# same on both sides.

bats_require_minimum_version 1.5.0
for _f in /usr/lib/bats/bats-support/src/*.bash /usr/lib/bats/bats-assert/src/*.bash; do
	# shellcheck source=/dev/null
	source "$_f"
done
unset _f
# edr_run, assert_status, assert_edr_error: the host suites' own (sourced, no process).
load ../lib/edr-run

EDR_TOOL_EXIT=125 # every failure of enter-devroot itself
# A directory that exists on the host's filesystem (the guest's /) and not in
# the busybox template: seeing it inside means seeing the host.
# shellcheck disable=SC2034
HOST_ONLY_DIR=/usr/lib/x86_64-linux-gnu

root_of() { echo "$XDG_DATA_HOME/enter-devroot/roots/$1"; }

# setup_file: check this is the guest's world, then create the root "dev" from
# the embedded default once for the whole file (with the probe copied in).
guest_setup_file() {
	[[ $EUID -ne 0 ]] || fail "the guest suites run as an unprivileged user, not root"
	local userns
	read -r userns < /proc/sys/user/max_user_namespaces
	[[ $userns == 0 ]] ||
		fail "user.max_user_namespaces is $userns, not 0: not the guest (tests/guest/init sets it)"
	export HOME=$BATS_FILE_TMPDIR/home XDG_DATA_HOME=$BATS_FILE_TMPDIR/data
	export ENTER_DEVROOT_DEFAULT_TEMPLATE=$EDR_TEMPLATE
	mkdir -p "$HOME" "$XDG_DATA_HOME"
	"$EDR_BIN" create dev || fail "enter-devroot create dev failed"
	if [[ -x ${EDR_PROBE:-} ]]; then
		cp "$EDR_PROBE" "$XDG_DATA_HOME/enter-devroot/roots/dev/edr-probe" ||
			fail "cannot copy edr-probe into dev"
	fi
}

# setup: a scratch directory T per test, sharing the file's HOME and roots.
guest_setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$BATS_FILE_TMPDIR/home XDG_DATA_HOME=$BATS_FILE_TMPDIR/data
	export ENTER_DEVROOT_DEFAULT_TEMPLATE=$EDR_TEMPLATE
	umask 022
	cd "$T" || return
	# shellcheck disable=SC2034
	DEV=$XDG_DATA_HOME/enter-devroot/roots/dev
	# The primary gid without running id(1) (bash has $UID but no $GID).
	local uid gid
	GID=
	while IFS=: read -r _ _ uid gid _; do
		[[ $uid == "$UID" ]] && GID=$gid && break
	done < /etc/passwd
	[[ -n $GID ]] || fail "uid $UID has no entry in /etc/passwd"
}

# A root created in T may hold read-only directories; let bats remove T.
guest_teardown() {
	[[ ! -d $T/data ]] || chmod -R u+rwX "$T/data"
}

need_probe() {
	[[ -x ${EDR_PROBE:-} ]] || skip "edr-probe was not built (cc -static failed on the host)"
}

# dev_id PATH: "device:inode" of PATH as seen from here.
dev_id() { stat -c '%d:%i' "$1"; }
