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

@test "oci: a second root of the image is copied from the layer store (create --keep-layers), no blob read, both right and independent (chroot mode)" {
	local l=$BATS_TEST_TMPDIR/layout
	cp -R "$LAYOUT" "$l"
	# A cold flat create on a filesystem without reflinks keeps no layer unless asked.
	"$EDR_BIN" create one --keep-layers --from "oci:$l:g" --quiet || fail "create one failed"
	# The layer blobs deleted: the second root can only come from the layer store.
	python3 -c 'import json,os,sys
d = sys.argv[1] + "/blobs/sha256/"
m = json.load(open(d + json.load(open(sys.argv[1] + "/index.json"))["manifests"][0]["digest"][7:]))
for x in m["layers"]:
    os.unlink(d + x["digest"][7:])' "$l"
	edr_run create two --from "oci:$l:g" --quiet
	assert_status 0
	edr_run run two --mode chroot -- sh -c 'ls /app; echo "$(cat /app/keep)"; ls -A /app | grep -c "^\.wh\." || true'
	assert_status 0
	assert_output "keep
run.sh
keep
0"
	# Copies, not shared files: a change in one root is not seen in the other.
	echo changed > "$(root_of one)/app/keep"
	edr_run run two --mode chroot -- cat /app/keep
	assert_output keep
	local layers
	layers=$(grep -o '"layers": \[[^]]*\]' "$XDG_DATA_HOME/enter-devroot/meta/two.json")
	[[ $layers == *sha256:*sha256:*sha256:* ]] || fail "not made of 3 layers: $layers"
	[[ -d ${XDG_CACHE_HOME:-$HOME/.cache}/enter-devroot/layers/sha256/$(cut -d'"' -f4 <<< "$layers" | cut -c8-)/tree ]] ||
		fail "the bottom layer is not in the store"
}
