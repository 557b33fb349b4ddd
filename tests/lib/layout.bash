# A test's own home, and the layout of the roots it makes, shared by every suite's common.bash.
#
# The suites run on the defaults a user gets: nothing is pinned, and create makes flat
# roots. Where the layout matters, a runner runs the same files a second time with
# EDR_TEST_LAYOUT=overlay (or flat, where the default is an overlay: the CI drivers' job
# roots), which each test's config file then says as a user would say it ("layout = ..."
# in $XDG_CONFIG_HOME/enter-devroot/config).

# edr_home_setup: T, the test's own directory, holding its HOME and XDG directories, so that
# tests are independent of each other and of the caller's account; then the layout.
edr_home_setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$T/home
	export XDG_DATA_HOME=$T/data XDG_CACHE_HOME=$T/cache XDG_CONFIG_HOME=$T/config
	mkdir -p "$HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME"
	edr_layout_setup
}

# edr_layout_setup: after the test's XDG directories exist.
edr_layout_setup() {
	[[ -n ${EDR_TEST_LAYOUT:-} ]] || return 0
	mkdir -p "$XDG_CONFIG_HOME/enter-devroot"
	echo "layout = $EDR_TEST_LAYOUT" >> "$XDG_CONFIG_HOME/enter-devroot/config"
}

# edr_layout: flat or overlay, the layout create gives this test's roots.
edr_layout() { echo "${EDR_TEST_LAYOUT:-flat}"; }

# flat_only WHY: skip in the overlay pass a test that reads or plants a root's files from
# the host (an overlay root's tree exists only where it is entered).
flat_only() {
	[[ ${EDR_TEST_LAYOUT:-flat} == flat ]] || skip "flat roots only: $1"
}
