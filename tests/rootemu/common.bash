# Helpers of the --root package-manager suites. Load with `load common`.
#
# tests/rootemu/run exports:
#   EDR_BIN              the enter-devroot binary under test (enter-devroot-store beside it)
#   EDR_DEBIAN           a Debian bookworm template tarball (tests/rootemu/debian-root)
#   EDR_REPO             the flat apt repository of tests/rootemu/mkrepo
#   EDR_ROOTEMU_MISSING  why there is no Debian root or repository (every test skips)
#   EDR_DNF              a stock Debian root with dnf, rpm, createrepo-c (tests/rootemu/dnf-root)
#   EDR_DNF_MISSING      why there is none (dnf.bats skips)

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load ../lib/layout
# serve_dir, nginx_stop.
source "$BATS_TEST_DIRNAME/../fetch/nginx.bash"

# setup_file of every suite: nginx serving the test repository (unless a test will skip).
repo_setup_file() {
	export S=$BATS_FILE_TMPDIR
	[[ -n ${EDR_ROOTEMU_MISSING:-} ]] || serve_dir "$EDR_REPO"
	export SERVE_URL
}

# rootemu_setup NAME: per test, fresh XDG directories and a Debian devroot NAME.
rootemu_setup() {
	[[ -z ${EDR_ROOTEMU_MISSING:-} ]] || skip "$EDR_ROOTEMU_MISSING"
	rootemu_setup_dirs
	debian_root "$1"
}

# rootemu_setup_dirs: per test, fresh HOME and XDG directories; the working directory.
rootemu_setup_dirs() {
	[[ -x ${EDR_BIN:-} ]] || fail "EDR_BIN is not an executable: run the suites through tests/rootemu/run"
	T=$BATS_TEST_TMPDIR
	export HOME=$T/home
	export XDG_DATA_HOME=$T/data XDG_CACHE_HOME=$T/cache XDG_CONFIG_HOME=$T/config
	mkdir -p "$HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME"
	edr_layout_setup
	umask 022
	cd "$T" || return
}

rootemu_teardown() {
	chmod -R u+rwX "$BATS_TEST_TMPDIR" 2>/dev/null || true
}

edr() { "$EDR_BIN" "$@"; }
root_of() { echo "$XDG_DATA_HOME/enter-devroot/roots/$1"; }

# debian_root NAME: a devroot NAME from the Debian template whose only apt source is the
# test repository at $SERVE_URL (a devroot shares the host's network, loopback included).
debian_root() {
	edr create "$1" --from "$EDR_DEBIAN" --quiet || fail "cannot create devroot $1"
	local r
	r=$(root_of "$1")
	rm -f "$r/etc/apt/sources.list" "$r"/etc/apt/sources.list.d/*
	echo "deb [trusted=yes] $SERVE_URL/ ./" > "$r/etc/apt/sources.list.d/edr-test.list"
	stock_apt "$r"
}

# stock_apt ROOT: apt and dpkg configured as in any Debian minbase root: without the
# template's apt settings (rootfs-templates/debian/tailor.sh), so --root is tested on what
# it meets in a root made elsewhere (docker://debian, mmdebstrap), and checked to hold no
# sandbox or unsafe-io setting at all.
stock_apt() {
	rm -f "$1/etc/apt/apt.conf.d/90enter-devroot"
	! grep -rqi -e 'Sandbox' -e 'unsafe-io' "$1/etc/apt" "$1/etc/dpkg" ||
		fail "the root still configures apt's sandbox or dpkg's unsafe-io: $(grep -ril -e Sandbox -e unsafe-io "$1/etc/apt" "$1/etc/dpkg")"
}

# Show what the last run printed, for failure messages.
last_run() {
	printf 'status: %s\n--- stdout\n%s\n--- stderr\n%s\n' "$status" "$output" "${stderr-}"
}
