#!/usr/bin/env bats
# push NAME docker://...: tailored roots to Debian's docker-registry on 127.0.0.1 with TLS
# (one anonymous, one with htpasswd basic auth), read back by skopeo, umoci and create.

load common
load registry

setup_file() {
	oci_check_prerequisites || return 1
	command -v skopeo >/dev/null || { echo "skopeo is needed (apt-get install skopeo)" >&2; return 1; }
	command -v umoci >/dev/null || { echo "umoci is needed (apt-get install umoci)" >&2; return 1; }
	command -v htpasswd >/dev/null || { echo "htpasswd is needed (apt-get install apache2-utils)" >&2; return 1; }
	fetch_prepare_site
	start_registry open
	start_registry locked htpasswd
	start_registry tokens token
	start_registry plain plain
	start_proxy proxy open
	export CA=$S/ca.pem
	T=$S/images
	mkdir -p "$T"
	# The base: busybox plus /srv with a file to delete and a directory to replace.
	image "$S/lay" > "$S/base.digest" <<-EOF
	{"tag": "base", "layers": [$BASE_LAYER,
	 {"compression": "gzip", "entries": [{"path": "srv", "type": "dir"},
	   {"path": "srv/keep", "data": "kept"}, {"path": "srv/gone", "data": "bye"},
	   {"path": "srv/d", "type": "dir"}, {"path": "srv/d/inner", "data": "in"}]}],
	 "config": {"Env": ["FOO=base"], "Cmd": ["cat", "/srv/keep"]}}
	EOF
	push "$S/lay:base" open base:1
	push "$S/lay:base" locked base:1 "$REG_USER:$REG_PASS"
	push "$S/lay:base" tokens public/base:1 "$REG_USER:$REG_PASS"
	push "$S/lay:base" plain base:1
}
teardown_file() {
	stop_registries
	fetch_teardown_file
}
setup() { oci_setup; }
teardown() { fetch_teardown; }

# log_mark NAME: the registry's log length now; since NAME MARK PATTERN: matching lines after.
log_mark() { wc -l < "$S/$1.log"; }
since() { tail -n +"$(($2 + 1))" "$S/$1.log" | grep -c -- "$3" || true; }

# tailor NAME: a file added, one deleted, a directory replaced by a file (edited in place,
# as --root would).
tailor() {
	local r
	r=$(root_of "$1")
	echo added > "$r/srv/new"
	rm "$r/srv/gone"
	rm -r "$r/srv/d"
	echo "was a directory" > "$r/srv/d"
}

# A second user's store and cache.
elsewhere() {
	export XDG_DATA_HOME=$T/other/data XDG_CACHE_HOME=$T/other/cache
	mkdir -p "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
}

# tailor_inside NAME: a file added, one deleted and a directory replaced by a new one, made
# inside the root with --root (an overlay root's roots/NAME is only its mount point on the
# host; in its upper, overlayfs leaves a whiteout and an opaque directory).
tailor_inside() {
	edr run "$1" --root -- sh -c 'echo added > /srv/new && rm /srv/gone && rm -r /srv/d &&
		mkdir /srv/d && echo fresh > /srv/d/only'
}
upper_of() { echo "$XDG_DATA_HOME/enter-devroot/overlays/$1/upper"; }
xattr_of() { python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode())' "$1" "$2"; }

# push_tailored_inside LAYOUT REPO: a root of that layout tailored inside, pushed to REPO:1:
# the new layer and the config uploaded, the base's layers mounted, skopeo and umoci read
# it, and another store creates the same tree back from it.
push_tailored_inside() {
	edr create r --$1 --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	grep -q "\"layout\": \"overlay\"" "$XDG_DATA_HOME/enter-devroot/meta/r.json" ||
		[[ $1 == flat ]] || fail "not an overlay root"
	tailor_inside r
	edr run r -- true # entering adds the DNS copies
	local mark
	mark=$(log_mark open)
	edr_run push r "docker://$(reg open)/$2:1" --cacert "$CA" --quiet
	assert_status 0
	# Three upload POSTs: push's access check before the diff (given back: a DELETE), then
	# the layer and the config.
	[[ $(since open "$mark" "\"POST /v2/$2/blobs/uploads/ ") -eq 3 ]] || fail "expected 3 upload POSTs"
	[[ $(since open "$mark" "\"DELETE /v2/$2/blobs/uploads/") -eq 1 ]] || fail "the access check's upload was not given back"
	[[ $(since open "$mark" "\"PUT /v2/$2/blobs/uploads/") -eq 2 ]] || fail "expected 2 blob PUTs"
	[[ $(since open "$mark" "\"POST /v2/$2/blobs/uploads/?mount=") -eq 2 ]] || fail "expected 2 mounts"
	run skopeo copy -q --src-cert-dir "$S/certs" "docker://$(reg open)/$2:1" "oci:$T/lay:$2"
	assert_success
	run umoci unpack --rootless --image "$T/lay:$2" "$T/bundle-$2"
	assert_success
	same_tailored_tree "$T/bundle-$2/rootfs"
	[[ ! -e $T/bundle-$2/rootfs/home/$(id -un) ]] || fail "the user's home was pushed"
	! grep -q "^$(id -un):" "$T/bundle-$2/rootfs/etc/passwd" || fail "the user's passwd line was pushed"
	(
		elsewhere
		edr create r2 --from "docker://$(reg open)/$2:1" --cacert "$CA" --quiet
		same_tailored_tree "$(root_of r2)"
	)
}
# same_tailored_tree DIR: what tailor_inside left.
same_tailored_tree() {
	[[ $(cat "$1/srv/new") == added ]] || fail "$1: the added file is missing"
	[[ ! -e $1/srv/gone ]] || fail "$1: the deleted file is there"
	[[ $(ls -A "$1/srv/d") == only && $(cat "$1/srv/d/only") == fresh ]] ||
		fail "$1: the replaced directory holds $(ls -A "$1/srv/d")"
	[[ $(cat "$1/srv/keep") == kept ]] || fail "$1: the base's file is missing"
}

@test "an overlay root pushes its upper as the new layer: a whiteout, an opaque directory, only the layer and the config sent" {
	push_tailored_inside overlay upper
	local up
	up=$(upper_of r)
	[[ -c $up/srv/gone ]] || fail "no whiteout in the upper"
	[[ $(xattr_of "$up/srv/d" user.overlay.opaque) == y ]] || fail "no opaque directory in the upper"
	# The upper as it is: the whiteout and the opaque directory, nothing create or entering
	# added (the user's passwd line in the upper's copy of /etc/passwd, the DNS copies).
	run top_layer "docker://$(reg open)/upper:1"
	assert_success
	assert_output "./srv/
./srv/d/
./srv/d/.wh..wh..opq
./srv/d/only
./srv/.wh.gone
./srv/new"
}

@test "a flat root tailored the same way pushes the same tree" {
	push_tailored_inside flat flatroot
	run top_layer "docker://$(reg open)/flatroot:1"
	assert_success
	assert_line ./srv/.wh.gone
	assert_line ./srv/d/.wh.inner
	assert_line ./srv/d/only
	assert_line ./srv/new
}

@test "an unchanged overlay root pushes the same digest twice, and the same as a flat root" {
	local one flat
	one=$(unchanged_twice overlay ovsame)
	elsewhere
	flat=$(unchanged_twice flat ovflat)
	[[ $one == "$flat" ]] || fail "the flat root's digest differs: $one $flat"
}

@test "push: a directory of an overlay root's upper that its owner cannot read (mode 000, made inside) is pushed whole" {
	edr create r --overlay --from "oci:$S/lay:base" --quiet
	edr run r --root -- sh -c 'mkdir /srv/locked && echo x > /srv/locked/f && chmod 000 /srv/locked'
	[[ ! -r $(upper_of r)/srv/locked ]] || fail "the directory is readable on the host"
	edr_run push r "oci:$T/out:x" --quiet
	chmod 700 "$(upper_of r)/srv/locked" # for the teardown
	assert_status 0
	run top_layer "oci:$T/out:x"
	assert_success
	assert_output "./srv/
./srv/locked/
./srv/locked/f"
}

# overlay_root_beside_secret: an overlay root r of the base, and $T/host/secret, which no
# push may read. Prints r's upper directory.
overlay_root_beside_secret() {
	edr create r --overlay --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	mkdir -p "$T/host"
	echo "host secret" > "$T/host/secret"
	upper_of r
}

@test "push: an overlay root's upper with a symlink out, a FIFO and a symlink over a directory: nothing outside read, no hang" {
	local up
	up=$(overlay_root_beside_secret)
	# What a process inside can write into its upper (as the root's own root).
	mkdir -p "$up/srv"
	ln -s "$T/host/secret" "$up/srv/link"
	ln -s "$T/host" "$up/srv/d" # over the base's directory /srv/d
	mkfifo "$up/srv/fifo" "$up/srv/keep" # the second over the base's file
	run --separate-stderr timeout 120 "$EDR_BIN" push r "docker://$(reg open)/hostile:1" --cacert "$CA" --quiet
	assert_status 0
	run top_layer "docker://$(reg open)/hostile:1"
	assert_success
	assert_output "./srv/
./srv/.wh.d
./srv/d
./srv/link"
	local blob
	for blob in "$T"/top/blobs/sha256/*; do
		! { zcat -f "$blob" | grep -q "host secret"; } || fail "the host file's content is in a blob"
	done
	elsewhere
	edr create r2 --from "docker://$(reg open)/hostile:1" --cacert "$CA" --quiet
	[[ $(readlink "$(root_of r2)/srv/link") == "$T/host/secret" ]] || fail "not the symlink"
	[[ $(readlink "$(root_of r2)/srv/d") == "$T/host" ]] || fail "not the directory's symlink"
	[[ $(cat "$(root_of r2)/srv/keep") == kept ]] || fail "the base's file under the FIFO"
}

@test "push: an overlay root's upper replaced by a symlink to a host directory is refused in one line, nothing tagged" {
	local up
	up=$(overlay_root_beside_secret)
	mv "$up" "$up.real"
	ln -s "$T/host" "$up"
	edr_run push r "docker://$(reg open)/swapped:1" --cacert "$CA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cannot push 'r'" "upper"
	run skopeo inspect --cert-dir "$S/certs" "docker://$(reg open)/swapped:1"
	assert_failure
}

@test "push shows a progress bar on a terminal, and none with --quiet" {
	edr create t --from "$EDR_TEMPLATE" --quiet
	echo mine > "$(root_of t)/added"
	script -qec "$EDR_BIN push t docker://$(reg open)/bar:1 --cacert $CA" "$T/tty.out" > /dev/null
	grep -Eq 'comparing t  [0-9.]+ (B|KiB|MiB)' "$T/tty.out" || fail "no line for the diff: $(cat -A "$T/tty.out")"
	grep -Eq 'sha256:[0-9a-f]{12} +\[=+\] 100%' "$T/tty.out" || fail "no upload bar: $(cat -A "$T/tty.out")"
	echo more > "$(root_of t)/added"
	script -qec "$EDR_BIN push t docker://$(reg open)/bar:2 --cacert $CA --quiet" "$T/tty.out" > /dev/null
	! grep -q '%' "$T/tty.out" || fail "a progress bar with --quiet: $(cat -A "$T/tty.out")"
}

@test "push onto a base sends only the new layer and the config, and mounts the base's layers" {
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	tailor r
	local mark
	mark=$(log_mark open)
	edr_run push r "docker://$(reg open)/tailored:1" --cacert "$CA" --quiet
	assert_status 0
	[[ $output == "docker://$(reg open)/tailored@sha256:"* ]] || fail "no pinned reference: $output"
	# Two blob uploads (the layer and the config), each one POST and one monolithic PUT, and
	# the access check's POST before them, given back by a DELETE.
	[[ $(since open "$mark" '"POST /v2/tailored/blobs/uploads/ ') -eq 3 ]] || fail "expected 3 upload POSTs"
	[[ $(since open "$mark" '"DELETE /v2/tailored/blobs/uploads/') -eq 1 ]] || fail "the access check's upload was not given back"
	[[ $(since open "$mark" '"PUT /v2/tailored/blobs/uploads/') -eq 2 ]] ||
		fail "expected 2 blob PUTs, got $(since open "$mark" '"PUT /v2/tailored/blobs/uploads/')"
	# The two base layers mounted from base, not sent.
	[[ $(since open "$mark" '"POST /v2/tailored/blobs/uploads/?mount=') -eq 2 ]] ||
		fail "expected 2 mounts: $(tail -n +"$((mark + 1))" "$S/open.log" | grep -o '"[A-Z]* /v2/[^ ]*' | cut -c1-100)"
	[[ $(since open "$mark" '"PUT /v2/tailored/manifests/1 ') -eq 1 ]] || fail "no manifest PUT"
	run layer_count "docker://$(reg open)/tailored:1"
	assert_output 3
	# Pushed again: the registry has everything, only HEADs and the manifest.
	mark=$(log_mark open)
	edr_run push r "docker://$(reg open)/tailored:1" --cacert "$CA" --quiet
	assert_status 0
	[[ $(since open "$mark" '"PUT /v2/tailored/blobs/') -eq 0 ]] || fail "blobs sent again"
	[[ $(since open "$mark" '"POST /v2/tailored/blobs/') -eq 1 ]] || fail "uploads started again (beyond the access check)"
}

@test "another store creates the tailored root back from the pushed image" {
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	tailor r
	edr push r "docker://$(reg open)/back:1" --cacert "$CA" --quiet
	elsewhere
	edr_run create r2 --from "docker://$(reg open)/back:1" --cacert "$CA" --quiet
	assert_status 0
	local r2
	r2=$(root_of r2)
	[[ $(cat "$r2/srv/new") == added ]] || fail "the added file is missing"
	[[ ! -e $r2/srv/gone ]] || fail "the deleted file came back"
	[[ -f $r2/srv/d && $(cat "$r2/srv/d") == "was a directory" ]] || fail "the replaced directory"
	[[ $(cat "$r2/srv/keep") == kept ]] || fail "the base's file is missing"
	# The image's config is kept: its Env and Cmd.
	edr_run run r2
	assert_output kept
	edr_run run r2 -- sh -c 'echo $FOO'
	assert_output base
}

@test "a directory that replaced a file is opaque, and a new directory comes back whole" {
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	local r
	r=$(root_of r)
	rm "$r/srv/keep"
	mkdir -p "$r/srv/keep/sub"
	echo deep > "$r/srv/keep/sub/f"
	edr push r "docker://$(reg open)/opaque:1" --cacert "$CA" --quiet
	skopeo copy -q --src-cert-dir "$S/certs" "docker://$(reg open)/opaque:1" "oci:$T/lay:o"
	local top
	top=$(python3 -c 'import json, sys
i = json.load(open(sys.argv[1] + "/index.json"))
m = json.load(open(sys.argv[1] + "/blobs/sha256/" + i["manifests"][0]["digest"][7:]))
print(m["layers"][-1]["digest"][7:])' "$T/lay")
	run tar -tzf "$T/lay/blobs/sha256/$top"
	assert_success
	assert_line ./srv/keep/.wh..wh..opq
	assert_line ./srv/keep/sub/f
	elsewhere
	edr create r2 --from "docker://$(reg open)/opaque:1" --cacert "$CA" --quiet
	[[ $(cat "$(root_of r2)/srv/keep/sub/f") == deep ]] || fail "the new directory is not there"
}

@test "skopeo copies and umoci unpacks a pushed image; create's additions are not in it" {
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	tailor r
	edr run r -- true # entering adds the DNS copies
	edr push r "docker://$(reg open)/interop:1" --cacert "$CA" --quiet
	run skopeo copy -q --src-cert-dir "$S/certs" "docker://$(reg open)/interop:1" "oci:$T/lay:i"
	assert_success
	run umoci unpack --rootless --image "$T/lay:i" "$T/bundle"
	assert_success
	local fs=$T/bundle/rootfs
	[[ $(cat "$fs/srv/new") == added ]] || fail "umoci: the added file is missing"
	[[ ! -e $fs/srv/gone ]] || fail "umoci: the deleted file is there"
	[[ -f $fs/srv/d ]] || fail "umoci: the replaced directory"
	[[ ! -e $fs/home/$(id -un) ]] || fail "the user's home was pushed"
	! grep -q "^$(id -un):" "$fs/etc/passwd" || fail "the user's passwd line was pushed"
}

# layers_of REF: the layer digests of image REF, one line.
layers_of() {
	skopeo inspect --cert-dir "$S/certs" "$1" | python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)["Layers"]))'
}

# layer_count TRANSPORT:REF: how many layers skopeo sees in the image.
layer_count() {
	skopeo inspect --cert-dir "$S/certs" "$1" |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)["Layers"]))'
}

# top_layer REF: the entries of the pushed image's last layer.
top_layer() {
	rm -rf "$T/top"
	skopeo copy -q --src-cert-dir "$S/certs" "$1" "oci:$T/top:t"
	local top
	top=$(python3 -c 'import json, sys
i = json.load(open(sys.argv[1] + "/index.json"))
m = json.load(open(sys.argv[1] + "/blobs/sha256/" + i["manifests"][0]["digest"][7:]))
print(m["layers"][-1]["digest"][7:])' "$T/top")
	tar -tzf "$T/top/blobs/sha256/$top"
}

# unchanged_twice LAYOUT REPO: a root of LAYOUT made from the base and entered, pushed twice
# (REPO:1, REPO:2): the same digest, and an empty new layer. Prints the digest.
unchanged_twice() {
	edr create r --$1 --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	edr run r -- true # entering: the DNS copies, nothing of the root's own
	local one two
	one=$("$EDR_BIN" push r "docker://$(reg open)/$2:1" --cacert "$CA" --quiet)
	two=$("$EDR_BIN" push r "docker://$(reg open)/$2:2" --cacert "$CA" --quiet)
	[[ ${one#*@} == "${two#*@}" ]] || fail "two digests: $one $two"
	# Nothing changed: the base itself, no empty layer on top of it.
	[[ $(layers_of "docker://$(reg open)/$2:1") == "$(layers_of "docker://$(reg open)/base:1")" ]] ||
		fail "not the base's layers: $(layers_of "docker://$(reg open)/$2:1")"
	echo "${one#*@}"
}

@test "an unchanged root pushes the same digest twice, and as the base's digest chain" {
	local one three
	one=$(unchanged_twice flat same)
	# Another store's root from the same base, pushed: the same digest again.
	elsewhere
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	three=$("$EDR_BIN" push r "docker://$(reg open)/same:3" --cacert "$CA" --quiet)
	[[ $one == "${three#*@}" ]] || fail "another store's push differs: $one $three"
	# SOURCE_DATE_EPOCH sets the config's created (of a root that changed something).
	tailor r
	SOURCE_DATE_EPOCH=86400 "$EDR_BIN" push r "docker://$(reg open)/same:4" --cacert "$CA" --quiet
	run skopeo inspect --cert-dir "$S/certs" "docker://$(reg open)/same:4"
	assert_output --partial '"Created": "1970-01-02T00:00:00Z"'
}

@test "push: pulled from a plain-http registry (--insecure-http), pushed to a TLS registry and to oci:DIR without it" {
	edr create r --from "docker://$(reg plain)/base:1" --insecure-http --quiet
	tailor r
	# Its base is read again over http, as it was pulled, or from the cache: never https.
	edr_run push r "oci:$T/from-http:1" --quiet
	assert_status 0
	edr_run push r "docker://$(reg open)/from-http:1" --cacert "$CA" --quiet
	assert_status 0
	run layer_count "docker://$(reg open)/from-http:1"
	assert_output 3
	(
		elsewhere
		edr create r2 --from "docker://$(reg open)/from-http:1" --cacert "$CA" --quiet
		[[ $(cat "$(root_of r2)/srv/new") == added ]] || fail "the pushed image lacks the change"
	)
	# And back to the http registry, whose transport --insecure-http chooses for the push.
	edr_run push r "docker://$(reg plain)/back:1" --insecure-http --quiet
	assert_status 0
}

@test "push to a plain-http registry without --insecure-http: one line naming it, before the layer is built" {
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	head -c 192M /dev/urandom > "$(root_of r)/big" # compressing it: many seconds
	local start=$SECONDS
	edr_run push r "docker://$(reg plain)/mine:1" --cacert "$CA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cannot push 'r'" "the server speaks plain http: for a registry, add --insecure-http"
	(( SECONDS - start < 8 )) || fail "the registry was contacted after $((SECONDS - start)) s: after the layer"
	run ls -A "${TMPDIR:-/var/tmp}" 
	refute_output --partial enter-devroot-push
}

@test "push of a root made from a tarball: dated by its creation (SOURCE_DATE_EPOCH when set), no empty annotation or label" {
	edr create t --from "$EDR_TEMPLATE" --quiet
	echo mine > "$(root_of t)/added"
	edr_run push t "oci:$T/dated:1" --quiet
	assert_status 0
	local created
	created=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["created"])' \
		"$XDG_DATA_HOME/enter-devroot/meta/t.json")
	run skopeo inspect "oci:$T/dated:1"
	assert_success
	assert_output --partial "\"Created\": \"$created\""
	refute_output --partial '"Created": "1970-01-01'
	# No empty string anywhere: index, manifest, config (the JSON documents of the layout).
	run python3 -c 'import json, os, sys
def empty(v, path):
    if v == "":
        print(path)
    elif isinstance(v, dict):
        for k, x in v.items(): empty(x, path + "." + k)
    elif isinstance(v, list):
        for i, x in enumerate(v): empty(x, path + "[%d]" % i)
d = sys.argv[1]
docs = [os.path.join(d, "index.json")] + [os.path.join(d, "blobs/sha256", b) for b in os.listdir(d + "/blobs/sha256")]
for f in docs:
    try:
        doc = json.load(open(f))
    except (ValueError, UnicodeDecodeError):
        continue
    empty(doc, os.path.basename(f))' "$T/dated"
	assert_success
	assert_output ""
	SOURCE_DATE_EPOCH=86400 edr_run push t "oci:$T/dated:2" --quiet
	run skopeo inspect "oci:$T/dated:2"
	assert_output --partial '"Created": "1970-01-02T00:00:00Z"'
}

@test "push with basic auth, and wrong credentials fail with one line and tag nothing" {
	edr create r --from "docker://$(reg locked)/base:1" --cacert "$CA" --quiet 2>/dev/null ||
		{ auth_file "$T/auth.json" "$(reg locked)" "$REG_USER:$REG_PASS"
		  REGISTRY_AUTH_FILE=$T/auth.json edr create r --from "docker://$(reg locked)/base:1" --cacert "$CA" --quiet; }
	tailor r
	auth_file "$T/wrong.json" "$(reg locked)" "$REG_USER:wrong"
	REGISTRY_AUTH_FILE=$T/wrong.json edr_run push r "docker://$(reg locked)/mine:1" --cacert "$CA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cannot push 'r'" "wrong credentials"
	run skopeo inspect --cert-dir "$S/certs" --creds "$REG_USER:$REG_PASS" "docker://$(reg locked)/mine:1"
	assert_failure
	# Anonymous: one line saying authentication is required.
	edr_run push r "docker://$(reg locked)/mine:1" --cacert "$CA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "asks for authentication" "no credentials"
	auth_file "$T/auth.json" "$(reg locked)" "$REG_USER:$REG_PASS"
	REGISTRY_AUTH_FILE=$T/auth.json edr_run push r "docker://$(reg locked)/mine:1" --cacert "$CA" --quiet
	assert_status 0
	run skopeo inspect --cert-dir "$S/certs" --creds "$REG_USER:$REG_PASS" "docker://$(reg locked)/mine:1"
	assert_success
}

@test "push without --cacert fails on the registry's certificate with one line" {
	edr create r --from "$EDR_TEMPLATE" --quiet
	edr_run push r "docker://$(reg open)/tls:1" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cannot push 'r'" "certificate"
}

@test "a root made from a tarball pushes as one layer that creates it back" {
	edr create t --from "$EDR_TEMPLATE" --quiet
	echo mine > "$(root_of t)/added"
	edr_run push t "docker://$(reg open)/flat:1" --cacert "$CA" --quiet
	assert_status 0
	run layer_count "docker://$(reg open)/flat:1"
	assert_output 1
	elsewhere
	edr create t2 --from "docker://$(reg open)/flat:1" --cacert "$CA" --quiet
	edr_run run t2 -- cat /added
	assert_output mine
}

# archive_claiming_base FILE REF DIGEST: a tarball (what an anonymous author publishes) whose
# carried config (.enter-devroot/image-config.json, as export writes it) names REF@DIGEST
# as the image it came from.
archive_claiming_base() {
	rm -rf "$T/claim" && mkdir -p "$T/claim/.enter-devroot"
	tar -C "$T/claim" -xzf "$EDR_TEMPLATE"
	echo harmless > "$T/claim/readme"
	printf '{"config": {"Env": ["CLAIMED=1"], "Labels": {"org.opencontainers.image.base.name": "%s", "org.opencontainers.image.base.digest": "%s"}}}\n' \
		"$2" "$3" > "$T/claim/.enter-devroot/image-config.json"
	tar -C "$T/claim" -czf "$1" .
}

@test "push: an archive whose carried config names a private image as its base never fetches it, and pushes none of its layers" {
	# A private image on the locked registry, which this user can read.
	image "$T/priv" >/dev/null <<-EOF
	{"tag": "p", "layers": [{"compression": "gzip", "entries": [{"path": "private-file", "data": "only for edr"}]}]}
	EOF
	push "$T/priv:p" locked private:1 "$REG_USER:$REG_PASS"
	local digest layer
	digest=$(skopeo inspect --cert-dir "$S/certs" --creds "$REG_USER:$REG_PASS" --format '{{.Digest}}' "docker://$(reg locked)/private:1")
	layer=$(skopeo inspect --cert-dir "$S/certs" --creds "$REG_USER:$REG_PASS" --format '{{index .Layers 0}}' "docker://$(reg locked)/private:1")
	[[ $digest == sha256:* && $layer == sha256:* ]] || fail "cannot read the private image: $digest $layer"
	auth_file "$T/auth.json" "$(reg locked)" "$REG_USER:$REG_PASS"
	export REGISTRY_AUTH_FILE=$T/auth.json
	archive_claiming_base "$T/evil.tar.gz" "docker://$(reg locked)/private:1" "$digest"
	local layout mark n=0
	for layout in flat overlay; do
		n=$((n + 1))
		edr create "evil$n" --$layout --from "$T/evil.tar.gz" --quiet
		mark=$(log_mark locked)
		edr_run push "evil$n" "docker://$(reg open)/public$n:1" --cacert "$CA" --quiet
		assert_status 0
		run layer_count "docker://$(reg open)/public$n:1"
		assert_output 1
		run skopeo inspect --cert-dir "$S/certs" --format '{{index .Layers 0}}' "docker://$(reg open)/public$n:1"
		[[ $output != "$layer" ]] || fail "$layout: the private layer was pushed"
		run curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" "https://$(reg open)/v2/public$n/blobs/$layer"
		assert_output 404
		run top_layer "docker://$(reg open)/public$n:1"
		assert_line ./readme
		refute_line --partial private-file
		[[ $(since locked "$mark" "/v2/private/") -eq 0 ]] ||
			fail "$layout: push asked the locked registry for the private image"
		# The carried config is data about the image: its Env applies inside, and is pushed.
		edr_run run "evil$n" -- sh -c 'echo $CLAIMED'
		assert_output 1
		run skopeo inspect --cert-dir "$S/certs" --config --format '{{.Config.Env}}' "docker://$(reg open)/public$n:1"
		assert_output "[CLAIMED=1]"
	done
	# Nor is the image it claims the root's image.
	edr_run images
	assert_line --regexp "^evil1 +sha256:[0-9a-f]{64} +-\$"
}

@test "push refuses a destination that is not docker:// with a tag, oci: or docker-archive:" {
	edr create t --from "$EDR_TEMPLATE" --quiet
	edr_run push t "dir:$T/x"
	assert_edr_error "$EDR_TOOL_EXIT" "docker://" "oci:" "docker-archive:"
	[[ ! -e $T/x ]] || fail "something was written"
	edr_run push t "docker://$(reg open)/x@sha256:$(printf %064d 0)"
	assert_edr_error "$EDR_TOOL_EXIT" "tag"
}

@test "push: a symlink in the root to a host file is pushed as a symlink, never followed" {
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	echo "host secret" > "$T/secret"
	ln -s "$T/secret" "$(root_of r)/srv/link"
	ln -s "$T" "$(root_of r)/srv/dirlink"
	edr push r "docker://$(reg open)/links:1" --cacert "$CA" --quiet
	skopeo copy -q --src-cert-dir "$S/certs" "docker://$(reg open)/links:1" "oci:$T/lay:l"
	local blob
	for blob in "$T"/lay/blobs/sha256/*; do
		if gzip -t "$blob" 2>/dev/null; then
			! zcat "$blob" | grep -q "host secret" || fail "the host file's content is in a layer"
		fi
	done
	elsewhere
	edr create r2 --from "docker://$(reg open)/links:1" --cacert "$CA" --quiet
	[[ $(readlink "$(root_of r2)/srv/link") == "$T/secret" ]] || fail "not the symlink"
	[[ $(readlink "$(root_of r2)/srv/dirlink") == "$T" ]] || fail "not the directory symlink"
}

@test "push with Bearer tokens: a token for pull,push on the destination and pull on the base's repository" {
	edr create r --from "docker://$(reg tokens)/public/base:1" --cacert "$CA" --quiet
	tailor r
	# Anonymous: the token service grants no push; one line, nothing tagged.
	edr_run push r "docker://$(reg tokens)/private/mine:1" --cacert "$CA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cannot push 'r'" "access denied"
	auth_file "$T/auth.json" "$(reg tokens)" "$REG_USER:$REG_PASS"
	local mark
	mark=$(log_mark tokens-token)
	REGISTRY_AUTH_FILE=$T/auth.json edr_run push r "docker://$(reg tokens)/private/mine:1" --cacert "$CA" --quiet
	assert_status 0
	tail -n +"$((mark + 1))" "$S/tokens-token.log" | grep -q 'user=edr granted=.*"name": "private/mine", "actions": \["pull", "push"\]' ||
		fail "no push token asked: $(cat "$S/tokens-token.log")"
	tail -n +"$((mark + 1))" "$S/tokens-token.log" | grep -q '"name": "public/base", "actions": \["pull"\]' ||
		fail "no pull scope on the base's repository for the mount"
	[[ $(grep -c '"POST /v2/private/mine/blobs/uploads/?mount=.*&from=public/base' "$S/tokens.log") -eq 2 ]] ||
		fail "the base's layers were not mounted"
	run skopeo inspect --cert-dir "$S/certs" --creds "$REG_USER:$REG_PASS" "docker://$(reg tokens)/private/mine:1"
	assert_success
}

@test "push to oci:DIR:TAG writes a layout that skopeo, umoci and create read; the tag is replaced" {
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	tailor r
	local one two
	one=$("$EDR_BIN" push r "oci:$T/out:tail" --cacert "$CA" --quiet)
	[[ $one == "oci:$T/out@sha256:"* ]] || fail "no pinned reference: $one"
	run layer_count "oci:$T/out:tail"
	assert_output 3
	run umoci unpack --rootless --image "$T/out:tail" "$T/bundle"
	assert_success
	[[ $(cat "$T/bundle/rootfs/srv/new") == added ]] || fail "umoci: the added file"
	[[ ! -e $T/bundle/rootfs/srv/gone ]] || fail "umoci: the deleted file"
	# The same as the registry push: one digest for one root.
	two=$("$EDR_BIN" push r "docker://$(reg open)/same-as-layout:1" --cacert "$CA" --quiet)
	[[ ${one#*@} == "${two#*@}" ]] || fail "layout and registry digests differ: $one $two"
	# Pushed again after a change: the tag names the new image, one entry in index.json.
	echo more > "$(root_of r)/srv/more"
	"$EDR_BIN" push r "oci:$T/out:tail" --quiet
	run python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["manifests"]))' "$T/out/index.json"
	assert_output 1
	elsewhere
	edr create r2 --from "oci:$T/out:tail" --quiet
	[[ $(cat "$(root_of r2)/srv/more") == more ]] || fail "not the latest push"
	[[ ! -e $(root_of r2)/srv/gone ]] || fail "the deleted file came back"
}

@test "push after cache clean fetches the base's manifest and config again, never its layers (the layer store has them)" {
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	# An overlay root stores the layers on any filesystem; the flat root r is copied from them.
	edr create o --overlay --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	tailor r
	edr cache clean --quiet
	local mark
	mark=$(log_mark open)
	edr_run push r "docker://$(reg open)/recached:1" --cacert "$CA" --quiet
	assert_status 0
	# The config, by digest from the base's repository; not the layers: the diff reads the
	# layer store's trees (which the root's metadata keeps through a clean), and the
	# registry mounts them without their bytes.
	[[ $(since open "$mark" '"GET /v2/base/blobs/sha256:') -eq 1 ]] ||
		fail "expected 1 blob GET, got $(since open "$mark" '"GET /v2/base/blobs/sha256:')"
	elsewhere
	edr create r2 --from "docker://$(reg open)/recached:1" --cacert "$CA" --quiet
	[[ $(cat "$(root_of r2)/srv/new") == added && ! -e $(root_of r2)/srv/gone ]] ||
		fail "not the tailored root"
}

@test "a flat root whose base layers left the layer store pushes the same image: they are unpacked into it again" {
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	tailor r
	local one two layers=$XDG_CACHE_HOME/enter-devroot/layers
	one=$("$EDR_BIN" push r "docker://$(reg open)/relayered:1" --cacert "$CA" --quiet)
	chmod -R u+w "$layers"
	rm -rf "$layers"
	two=$("$EDR_BIN" push r "docker://$(reg open)/relayered:2" --cacert "$CA" --quiet)
	[[ ${one#*@} == "${two#*@}" ]] || fail "two digests: $one $two"
	[[ $(ls "$layers/sha256" | wc -l) -eq 2 ]] || fail "the base's layers are not in the store again"
}

# tailored_back NAME: devroot NAME is the tailored root (tailor's changes on the base).
tailored_back() {
	local r
	r=$(root_of "$1")
	[[ $(cat "$r/srv/new") == added ]] || fail "$1: the added file is missing"
	[[ ! -e $r/srv/gone ]] || fail "$1: the deleted file came back"
	[[ -f $r/srv/d && $(cat "$r/srv/d") == "was a directory" ]] || fail "$1: the replaced directory"
	[[ $(cat "$r/srv/keep") == kept ]] || fail "$1: the base's file is missing"
}

# Rootless podman in the test's own store (vfs: no overlay mounts to undo), or a skip.
pm() {
	timeout 120 podman --root "$T/pm/root" --runroot "$PM_RUN/run" --storage-driver vfs \
		--cgroup-manager cgroupfs --events-backend file "$@"
}
pm_start() {
	command -v podman >/dev/null || skip "podman is not installed (apt-get install podman)"
	# podman wants a run root of at most 50 characters (sockets live there).
	PM_RUN=$(mktemp -d /tmp/edr-pm.XXXXXX)
	export XDG_RUNTIME_DIR=$PM_RUN/xdg
	mkdir -p -m 700 "$XDG_RUNTIME_DIR"
	pm info > /dev/null 2>&1 || { rm -rf "$PM_RUN"; skip "podman cannot run rootless here"; }
}
pm_stop() {
	[[ -n ${PM_RUN-} ]] || return 0
	pm unshare rm -rf "$T/pm" "$PM_RUN/run" 2>/dev/null || true
	local pause=$XDG_RUNTIME_DIR/libpod/tmp/pause.pid
	[[ ! -s $pause ]] || kill "$(cat "$pause")" 2>/dev/null || true
	rm -rf "$PM_RUN"
}

@test "push to docker-archive:FILE:REPO:TAG writes what skopeo, podman load and create read; the same root gives the same bytes" {
	edr create r --from "docker://$(reg open)/base:1" --cacert "$CA" --quiet
	tailor r
	edr_run push r "docker-archive:$T/a.tar:tailored:1" --cacert "$CA" --quiet
	assert_status 0
	[[ $output == "docker-archive:$T/a.tar@sha256:"* ]] || fail "no image ID: $output"
	local id=${output#*@sha256:}
	# docker save's shape: plain layer tars named by their diff_ids, the config by the ID.
	run tar -tf "$T/a.tar"
	assert_success
	assert_line manifest.json
	assert_line repositories
	assert_line "$id.json"
	[[ $(grep -c '/layer.tar$' <<< "$output") -eq 3 ]] || fail "expected 3 layer tars: $output"
	run python3 -c 'import json, sys, tarfile
t = tarfile.open(sys.argv[1])
m = json.load(t.extractfile("manifest.json"))
print(m[0]["RepoTags"], json.load(t.extractfile("repositories")))' "$T/a.tar"
	assert_output --partial "['tailored:1']"
	assert_output --partial "{'tailored': {'1': "
	run layer_count "docker-archive:$T/a.tar"
	assert_output 3
	run skopeo copy -q "docker-archive:$T/a.tar" "oci:$T/lay:a"
	assert_success
	run umoci unpack --rootless --image "$T/lay:a" "$T/bundle"
	assert_success
	[[ $(cat "$T/bundle/rootfs/srv/new") == added && ! -e $T/bundle/rootfs/srv/gone ]] ||
		fail "umoci: not the tailored tree"
	# Pushed again: the same bytes.
	edr push r "docker-archive:$T/b.tar:tailored:1" --cacert "$CA" --quiet
	cmp "$T/a.tar" "$T/b.tar" || fail "two pushes of one root differ"
	elsewhere
	edr create r2 --from "docker-archive:$T/a.tar" --quiet
	tailored_back r2
	edr_run run r2 -- sh -c 'echo $FOO'
	assert_output base
	pm_start
	run pm load -i "$T/a.tar"
	local pm_images
	pm_images=$(pm images --format '{{.Repository}}:{{.Tag}} {{.ID}}' 2>&1)
	pm_stop
	assert_success
	[[ $pm_images == *"localhost/tailored:1 ${id:0:12}"* ]] || fail "podman load: $pm_images"
}

@test "push to docker-archive: fails with one line and leaves the file as it was" {
	edr create r --from "$EDR_TEMPLATE" --quiet
	mkdir "$T/ro"
	echo old > "$T/ro/keep.tar"
	chmod 0500 "$T/ro"
	edr_run push r "docker-archive:$T/ro/keep.tar:x:1" --quiet
	chmod 0700 "$T/ro"
	assert_edr_error "$EDR_TOOL_EXIT" "cannot push 'r'" "$T/ro/keep.tar"
	[[ $(cat "$T/ro/keep.tar") == old ]] || fail "the file changed"
	[[ $(ls "$T/ro") == keep.tar ]] || fail "something was left: $(ls "$T/ro")"
}

@test "a root made from oci:DIR pushes as its base's layers plus one, uploaded to a registry (nothing to mount)" {
	edr create r --from "oci:$S/lay:base" --quiet
	tailor r
	local mark
	mark=$(log_mark open)
	edr_run push r "docker://$(reg open)/fromoci:1" --cacert "$CA" --quiet
	assert_status 0
	# The two base layers, the new one and the config: four uploads, no mount.
	[[ $(since open "$mark" '"PUT /v2/fromoci/blobs/uploads/') -eq 4 ]] ||
		fail "expected 4 blob PUTs, got $(since open "$mark" '"PUT /v2/fromoci/blobs/uploads/')"
	[[ $(since open "$mark" 'mount=') -eq 0 ]] || fail "a mount was tried"
	run layer_count "docker://$(reg open)/fromoci:1"
	assert_output 3
	# The same root to a layout: the same image.
	local one
	one=$("$EDR_BIN" push r "oci:$T/out:x" --quiet)
	[[ ${one#*@} == "$(skopeo inspect --cert-dir "$S/certs" --format '{{.Digest}}' "docker://$(reg open)/fromoci:1")" ]] ||
		fail "the layout's image is not the registry's"
	elsewhere
	edr create r2 --from "docker://$(reg open)/fromoci:1" --cacert "$CA" --quiet
	tailored_back r2
}

@test "a root made from docker-archive:FILE pushes as its layers plus one to a registry, a layout and an archive" {
	skopeo copy -q "oci:$S/lay:base" "docker-archive:$T/base.tar:base:1"
	edr create r --from "docker-archive:$T/base.tar" --quiet
	tailor r
	edr_run push r "docker://$(reg open)/fromarchive:1" --cacert "$CA" --quiet
	assert_status 0
	run layer_count "docker://$(reg open)/fromarchive:1"
	assert_output 3
	edr push r "oci:$T/out:x" --quiet
	run layer_count "oci:$T/out:x"
	assert_output 3
	edr push r "docker-archive:$T/out.tar:out:1" --quiet
	run layer_count "docker-archive:$T/out.tar"
	assert_output 3
	# An unchanged root: the same digest twice.
	local one two
	one=$("$EDR_BIN" push r "docker://$(reg open)/fromarchive:2" --cacert "$CA" --quiet)
	two=$("$EDR_BIN" push r "docker://$(reg open)/fromarchive:3" --cacert "$CA" --quiet)
	[[ ${one#*@} == "${two#*@}" ]] || fail "two digests: $one $two"
	elsewhere
	edr create r2 --from "docker://$(reg open)/fromarchive:1" --cacert "$CA" --quiet
	tailored_back r2
	edr create r3 --from "docker-archive:$T/out.tar" --quiet
	tailored_back r3
}

@test "push: a base archive replaced since create fails with one line and writes nothing" {
	skopeo copy -q "oci:$S/lay:base" "docker-archive:$T/base.tar:base:1"
	edr create r --from "docker-archive:$T/base.tar" --quiet
	edr create t --from "$EDR_TEMPLATE" --quiet
	edr push t "docker-archive:$T/base.tar:base:1" --quiet
	edr_run push r "oci:$T/out:x" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "$T/base.tar" "not the one the root was made from"
	[[ ! -e $T/out/index.json ]] || fail "an index was written"
}

@test "push: an upload Location on another origin never gets the registry's credentials" {
	edr create t --from "$EDR_TEMPLATE" --quiet
	echo mine > "$(root_of t)/added"
	# A registry asking for basic auth (a proxy in front of the locked one) that sends its
	# uploads to another origin (another proxy in front of the same registry).
	start_proxy stranger locked
	start_proxy lproxy locked
	echo "elsewhere https://$(reg stranger)" > "$S/lproxy.mode"
	auth_file "$T/auth.json" "$(reg lproxy)" "$REG_USER:$REG_PASS"
	REGISTRY_AUTH_FILE=$T/auth.json edr_run push t "docker://$(reg lproxy)/elsewhere:1" --cacert "$CA" --quiet
	grep -q "^POST /v2/elsewhere/blobs/uploads/ 202 0 auth=Basic\$" "$S/lproxy.log" ||
		fail "the registry never had the credentials: $(cat "$S/lproxy.log")"
	grep -q "^PUT /v2/elsewhere/blobs/uploads/" "$S/stranger.log" ||
		fail "the upload did not go to the other origin: $(cat "$S/stranger.log")"
	! grep -q "auth=" "$S/stranger.log" ||
		fail "the credentials followed the upload to the other origin: $(cat "$S/stranger.log")"
	# There, without them, the registry refuses the upload: one line, nothing tagged.
	assert_edr_error "$EDR_TOOL_EXIT" "cannot push 't'"
	run skopeo inspect --cert-dir "$S/certs" --creds "$REG_USER:$REG_PASS" "docker://$(reg locked)/elsewhere:1"
	assert_failure
}

# A registry that takes uploads only in PATCHes (the proxy refuses a PUT with a body).
@test "push falls back to PATCH then PUT when the registry refuses a monolithic upload" {
	edr create t --from "$EDR_TEMPLATE" --quiet
	echo mine > "$(root_of t)/added"
	local code mark
	for code in 400 405 501; do
		echo "no-monolithic $code" > "$S/proxy.mode"
		mark=$(log_mark proxy)
		edr_run push t "docker://$(reg proxy)/patched-$code:1" --cacert "$CA" --quiet
		assert_status 0
		# The layer and the config: each a refused PUT, then a PATCH with the bytes and an
		# empty PUT with the digest, which the registry takes.
		[[ $(since proxy "$mark" "^PUT /v2/patched-$code/blobs/uploads/.* $code [1-9][0-9]* refused") -eq 2 ]] ||
			fail "$code: expected 2 refused PUTs: $(tail -n +"$((mark + 1))" "$S/proxy.log")"
		[[ $(since proxy "$mark" "^PATCH /v2/patched-$code/blobs/uploads/.* 202 [1-9]") -eq 2 ]] ||
			fail "$code: expected 2 PATCHes: $(tail -n +"$((mark + 1))" "$S/proxy.log")"
		[[ $(since proxy "$mark" "^PUT /v2/patched-$code/blobs/uploads/.*digest=sha256:.* 201 0\$") -eq 2 ]] ||
			fail "$code: expected 2 final PUTs: $(tail -n +"$((mark + 1))" "$S/proxy.log")"
		run layer_count "docker://$(reg open)/patched-$code:1"
		assert_output 1
	done
	echo pass > "$S/proxy.mode"
	elsewhere
	edr create t2 --from "docker://$(reg open)/patched-501:1" --cacert "$CA" --quiet
	edr_run run t2 -- cat /added
	assert_output mine
}

@test "push: 403 denied, 404 unknown repository and 413 too large fail with one line each and tag nothing" {
	edr create t --from "$EDR_TEMPLATE" --quiet
	local mode needle
	for mode in denied unknown too-large; do
		case $mode in
		denied) needle="denied: $(reg proxy) does not let you push to refused-$mode" ;;
		unknown) needle="$(reg proxy) has no repository refused-$mode" ;;
		too-large) needle="too large for $(reg proxy)" ;;
		esac
		echo "$mode" > "$S/proxy.mode"
		edr_run push t "docker://$(reg proxy)/refused-$mode:1" --cacert "$CA" --quiet
		assert_edr_error "$EDR_TOOL_EXIT" "cannot push 't'" "$needle"
		run skopeo inspect --cert-dir "$S/certs" "docker://$(reg open)/refused-$mode:1"
		assert_failure
	done
	echo pass > "$S/proxy.mode"
}
