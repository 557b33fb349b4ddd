#!/usr/bin/env bats
# An OCI image as a devroot, as the unprivileged user on the patched kernel: an image
# layout written in the guest by the OCI suite's generator (tests/oci/mkimage.py; the guest
# has no network), three layers with whiteouts, its config applied by enter and run. The
# host's OCI suites cover registries and hostile images; this shows the layers and the
# config work where chroot is the only way in.

load common

setup_file() {
	guest_setup_file
	export LAYOUT=$BATS_FILE_TMPDIR/layout
	python3 "$BATS_TEST_DIRNAME/../oci/mkimage.py" "$LAYOUT" /dev/stdin <<-EOF >/dev/null ||
	{"tag": "g", "layers": [{"compression": "gzip", "tarball": "$EDR_TEMPLATE"},
	 {"compression": "gzip", "entries": [{"path": "app", "type": "dir"},
	   {"path": "app/old", "data": "old"}, {"path": "app/keep", "data": "keep"}]},
	 {"compression": "zstd", "entries": [{"path": "app/.wh.old"},
	   {"path": "app/run.sh", "data": "echo \"image \$GREETING from \$PWD as \$(id -u)\"", "mode": 493}]}],
	 "config": {"Env": ["GREETING=hello"], "WorkingDir": "/app",
	            "Entrypoint": ["/bin/sh"], "Cmd": ["/app/run.sh"]}}
	EOF
		fail "mkimage.py could not write the layout"
}
setup() { guest_setup; }
teardown() { guest_teardown; }

@test "oci: create from an oci: layout, then run its Entrypoint+Cmd in chroot mode" {
	edr_run create img --from "oci:$LAYOUT:g" --quiet
	assert_status 0
	edr_run run img --mode chroot
	assert_status 0
	assert_output "image hello from /app as $UID"
}

@test "oci: the layers' whiteouts applied, the image's Env and WorkingDir seen by run --" {
	"$EDR_BIN" create img2 --from "oci:$LAYOUT:g" --quiet
	edr_run run img2 --mode chroot -- sh -c 'ls /app; echo "$GREETING $PWD"'
	assert_status 0
	assert_output "keep
run.sh
hello /app"
}
