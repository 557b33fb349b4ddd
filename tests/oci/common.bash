# Helpers shared by the OCI bats suites. Load with `load common`.
#
# The suites run through tests/fetch/run (with tests/oci as SUITE_DIR), which stages
# tests/fetch beside them: its common.bash gives the per-test HOME and XDG directories,
# the CA maker and the error-line assertions. Images are written by mkimage.py from a JSON
# spec (no network, no container tool); registry.bash starts a docker-registry.

load ../fetch/common

MKIMAGE=$BATS_TEST_DIRNAME/mkimage.py
SERVER=$BATS_TEST_DIRNAME/../fetch/server.py # the fetch suites' web server

oci_check_prerequisites() {
	fetch_check_prerequisites || return 1
	command -v python3 >/dev/null || { echo "python3 is needed" >&2; return 1; }
	command -v zstd >/dev/null || { echo "zstd is needed (apt-get install zstd)" >&2; return 1; }
}

oci_setup() {
	edr_home_setup
	unset CURL_CA_BUNDLE REGISTRY_AUTH_FILE
	export ENTER_DEVROOT_DEFAULT_TEMPLATE=$EDR_TEMPLATE
	OUT=$T/outside # a sentinel no image may touch
	mkdir -p "$OUT"
	echo "sentinel" > "$OUT/file"
	cd "$T" || return
}

# image DIR: write the image the JSON spec on stdin describes into layout DIR (adding to
# its index.json); prints the top manifest's (or index's) digest.
image() {
	local spec
	spec=$(mktemp "$T/spec.XXXXXX")
	cat > "$spec"
	python3 "$MKIMAGE" "$1" "$spec"
}

# The base layer every image starts from: the default template (busybox), gzip.
BASE_LAYER='{"compression": "gzip", "tarball": "'$EDR_TEMPLATE'"}'

# assert_refused NAME NEEDLE...: the last edr_run failed with one line naming NEEDLEs,
# created nothing, and left the sentinel alone.
assert_refused() {
	local name=$1
	shift
	assert_edr_error "$EDR_TOOL_EXIT" "$@"
	assert_no_root "$name"
	[[ ! -e $XDG_DATA_HOME/enter-devroot/meta/$name.json ]] || fail "metadata left for $name"
	[[ $(cat "$OUT/file") == sentinel ]] || fail "the sentinel outside changed"
	[[ $(ls -A "$OUT") == file ]] || fail "something appeared outside: $(ls -A "$OUT")"
}

# assert_image_refused TAG NEEDLE... <SPEC: create TAG --from the image SPEC describes
# (written to $T/img, tagged TAG) is refused as assert_refused TAG NEEDLE... says.
assert_image_refused() {
	image "$T/img" >/dev/null
	edr_run create "$1" --from "oci:$T/img:$1"
	assert_refused "$@"
}

# in_root NAME CMD...: run CMD in devroot NAME (any mode this kernel allows).
in_root() { "$EDR_BIN" run "$1" -- "${@:2}"; }
