#!/usr/bin/env bats
# docker:// from real registries on 127.0.0.1: Debian's docker-registry with TLS from a CA
# made for the run (one anonymous, one with htpasswd basic auth), images written by
# mkimage.py and pushed with skopeo; and a plain-http server (tests/fetch/server.py)
# serving registry paths whose bytes the hostile tests choose.

load common
load registry

setup_file() {
	oci_check_prerequisites || return 1
	command -v skopeo >/dev/null || { echo "skopeo is needed (apt-get install skopeo)" >&2; return 1; }
	command -v htpasswd >/dev/null || { echo "htpasswd is needed (apt-get install apache2-utils)" >&2; return 1; }
	fetch_prepare_site
	start_server http
	start_registry open
	start_registry locked htpasswd
	start_registry tokens token
	export HTTP_PORT CA=$S/ca.pem
	HTTP_PORT=$(cat "$S/http.port")
	T=$S/images
	mkdir -p "$T"
	# a: the base plus a gzip and a zstd layer and a config; b: the same base, its own layer.
	image "$S/lay" > "$S/a.digest" <<-EOF
	{"tag": "a", "layers": [$BASE_LAYER,
	 {"compression": "gzip", "entries": [{"path": "srv", "type": "dir"}, {"path": "srv/g", "data": "gzip"}]},
	 {"compression": "zstd", "entries": [{"path": "srv/z", "data": "zstd"}]}],
	 "config": {"Env": ["FOO=registry"], "WorkingDir": "/srv", "Cmd": ["cat", "g", "z"]}}
	EOF
	image "$S/lay" > "$S/b.digest" <<-EOF
	{"tag": "b", "layers": [$BASE_LAYER, {"entries": [{"path": "b", "data": "bee"}]}],
	 "config": {"Cmd": ["cat", "/b"]}}
	EOF
	image "$S/lay" > "$S/m.digest" <<-EOF
	{"tag": "m", "layers": [$BASE_LAYER], "platforms": ["linux/arm64", "linux/amd64"]}
	EOF
	push "$S/lay:a" open app:a
	push "$S/lay:b" open app:b
	push "$S/lay:m" open multi:m
	push "$S/lay:a" locked private:a "$REG_USER:$REG_PASS"
	push "$S/lay:a" tokens public/app:a "$REG_USER:$REG_PASS"
	push "$S/lay:b" tokens private/app:b "$REG_USER:$REG_PASS"
	# What Docker Hub's debian:bookworm is to the built-in template debian-bookworm, on the
	# registry the mirror tests name.
	push "$S/lay:a" open library/debian:bookworm
	BASE_HEX=$(sha256sum "$EDR_TEMPLATE" | cut -d' ' -f1)
	export BASE_HEX
}
teardown_file() {
	stop_registries
	fetch_teardown_file
}
setup() { oci_setup; }
teardown() { fetch_teardown; }

@test "docker:// pulls anonymously over TLS (--cacert) and applies the config" {
	edr_run create a --from "docker://$(reg open)/app:a" --cacert "$CA" --quiet
	assert_status 0
	edr_run run a
	assert_output "gzipzstd"
	edr_run run a -- sh -c 'echo "$FOO $PWD"'
	assert_output "registry /srv"
	run edr images
	assert_output --partial "$(cat "$S/a.digest")"
}

@test "docker:// without --cacert does not trust the registry's certificate" {
	edr_run create a --from "docker://$(reg open)/app:a"
	assert_refused a "certificate" "--cacert"
}

@test "docker:// by digest pulls that manifest" {
	edr_run create a --from "docker://$(reg open)/app@$(cat "$S/a.digest")" --cacert "$CA" --quiet
	assert_status 0
	[[ $(cat "$(root_of a)/srv/z") == zstd ]]
}

# Every request the registry NAME has logged so far.
requests() { grep -c '"[A-Z]* /v2/' "$S/$1.log" || true; }

@test "fetch --from docker://: the image into the cache, the reference pinned; a create from the pin asks the registry nothing" {
	run --separate-stderr "$EDR_BIN" fetch --from "docker://$(reg open)/app:a" --cacert "$CA" --quiet
	assert_status 0
	assert_output "docker://$(reg open)/app@$(cat "$S/a.digest")"
	local pinned=$output before
	[[ ! -e $(root_of a) ]] || fail "fetch made a root"
	before=$(requests open)
	edr_run create a --from "$pinned" --cacert "$CA" --quiet
	assert_status 0
	[[ $(cat "$(root_of a)/srv/z") == zstd ]] || fail "not the image's files"
	[[ $(requests open) -eq $before ]] || fail "the create asked the registry $(($(requests open) - before)) times"
	edr_run run a -- sh -c 'echo "$FOO $PWD"'
	assert_output "registry /srv"
	# A create from the tag asks the registry what the tag names now, and only that.
	before=$(wc -l <"$S/open.log")
	edr create b --from "docker://$(reg open)/app:a" --cacert "$CA" --quiet
	run grep -c '"GET /v2/app/manifests/a ' <(tail -n +"$((before + 1))" "$S/open.log")
	assert_output 1
	run grep -c '"GET /v2/app/blobs/' <(tail -n +"$((before + 1))" "$S/open.log")
	assert_output 0
}

@test "fetch --from: a manifest altered in the cache is caught, deleted and fetched again" {
	local pinned hex
	pinned=$("$EDR_BIN" fetch --from "docker://$(reg open)/app:a" --cacert "$CA" --quiet)
	hex=$(cut -d: -f2 "$S/a.digest")
	[[ -f $(cache_dir)/sha256/$hex ]] || fail "the manifest was not cached"
	chmod u+w "$(cache_dir)/sha256/$hex"
	sed -i 's/sha256/SHA256/' "$(cache_dir)/sha256/$hex"
	edr_run create a --from "$pinned" --cacert "$CA" --quiet
	assert_status 0
	[[ $stderr == *"is corrupt"* ]] || fail "no warning: $(last_run)"
	[[ $(sha256sum <"$(cache_dir)/sha256/$hex" | cut -d' ' -f1) == "$hex" ]] || fail "the cache still holds the altered manifest"
}

@test "fetch --from: a tag the registry does not have, a local image, a TEMPLATE too: one error each" {
	edr_run fetch --from "docker://$(reg open)/app:nope" --cacert "$CA"
	assert_status 125
	[[ -z $output && $stderr == *"no such image"* ]] || fail "$(last_run)"
	edr_run fetch --from "oci:$S/lay:a"
	assert_status 125
	[[ $stderr == *"only a docker:// image is fetched"* ]] || fail "$(last_run)"
	edr_run fetch minimal --from "docker://$(reg open)/app:a"
	assert_status 125
	[[ $stderr == *"TEMPLATE or --from IMAGE, not both"* ]] || fail "$(last_run)"
}

@test "docker:// a tag the registry does not have is one error" {
	edr_run create a --from "docker://$(reg open)/app:nope" --cacert "$CA"
	assert_refused a "no such image"
}

@test "docker:// a layer shared by two images is fetched once (the registry's log counts it)" {
	before=$(blob_gets open "$BASE_HEX")
	edr create a --from "docker://$(reg open)/app:a" --cacert "$CA" --quiet
	edr create b --from "docker://$(reg open)/app:b" --cacert "$CA" --quiet
	after=$(blob_gets open "$BASE_HEX")
	[[ $((after - before)) -eq 1 ]] || fail "the shared layer was fetched $((after - before)) times"
	assert_cached "$BASE_HEX"
	[[ $(cat "$(root_of b)/b") == bee && $(cat "$(root_of a)/srv/g") == gzip ]]
}

@test "docker:// a multi-arch index: this machine's platform, or --platform" {
	[[ $(uname -m) == x86_64 ]] || skip "the index holds linux/amd64 and linux/arm64"
	edr create m --from "docker://$(reg open)/multi:m" --cacert "$CA" --quiet
	[[ $(cat "$(root_of m)/platform") == linux/amd64 ]]
	edr create m2 --from "docker://$(reg open)/multi:m" --platform linux/arm64 --cacert "$CA" --quiet
	[[ $(cat "$(root_of m2)/platform") == linux/arm64 ]]
	edr_run create m3 --from "docker://$(reg open)/multi:m" --platform linux/s390x --cacert "$CA"
	assert_refused m3 "no image for platform linux/s390x"
}

@test "docker:// authentication required and no credentials: one error saying where to put them" {
	edr_run create p --from "docker://$(reg locked)/private:a" --cacert "$CA"
	assert_refused p "no credentials" "REGISTRY_AUTH_FILE"
}

@test "docker:// credentials from \$REGISTRY_AUTH_FILE (basic auth)" {
	auth_file "$T/auth.json" "$(reg locked)" "$REG_USER:$REG_PASS"
	REGISTRY_AUTH_FILE=$T/auth.json edr_run create p --from "docker://$(reg locked)/private:a" --cacert "$CA" --quiet
	assert_status 0
	edr_run run p
	assert_output "gzipzstd"
}

@test "docker:// credentials from ~/.docker/config.json" {
	mkdir -p "$HOME/.docker"
	auth_file "$HOME/.docker/config.json" "$(reg locked)" "$REG_USER:$REG_PASS"
	edr_run create p --from "docker://$(reg locked)/private:a" --cacert "$CA" --quiet
	assert_status 0
}

@test "docker:// wrong credentials are refused, nothing created" {
	auth_file "$T/auth.json" "$(reg locked)" "$REG_USER:wrong pass"
	REGISTRY_AUTH_FILE=$T/auth.json edr_run create p --from "docker://$(reg locked)/private:a" --cacert "$CA"
	assert_refused p "access denied" "wrong credentials"
	[[ $(cached_count) -eq 0 ]]
}

@test "docker:// a broken auth file is one error naming it" {
	echo '{"auths": {"'"$(reg locked)"'": {"auth": "not base64!"}}}' > "$T/auth.json"
	REGISTRY_AUTH_FILE=$T/auth.json edr_run create p --from "docker://$(reg locked)/private:a" --cacert "$CA"
	assert_refused p "$T/auth.json" "not base64"
}

@test "docker:// Bearer token auth: an anonymous token from the realm the challenge names" {
	edr_run create t --from "docker://$(reg tokens)/public/app:a" --cacert "$CA" --quiet
	assert_status 0
	edr_run run t
	assert_output "gzipzstd"
	grep -q "user=anonymous granted=.*public/app" "$S/tokens-token.log" ||
		fail "no anonymous token was issued: $(cat "$S/tokens-token.log")"
}

@test "docker:// Bearer token auth: the auth file's credentials get the token for a private repository" {
	edr_run create t --from "docker://$(reg tokens)/private/app:b" --cacert "$CA"
	assert_refused t "access denied" "authentication required"
	auth_file "$T/auth.json" "$(reg tokens)" "$REG_USER:$REG_PASS"
	REGISTRY_AUTH_FILE=$T/auth.json edr_run create t --from "docker://$(reg tokens)/private/app:b" --cacert "$CA" --quiet
	assert_status 0
	edr_run run t
	assert_output "bee"
}

@test "docker:// Bearer token auth: wrong credentials are refused by the token service" {
	auth_file "$T/auth.json" "$(reg tokens)" "$REG_USER:wrong pass"
	REGISTRY_AUTH_FILE=$T/auth.json edr_run create t --from "docker://$(reg tokens)/private/app:b" --cacert "$CA"
	assert_refused t "token service refused your credentials"
}

# ---- A plain-http "registry" serving files the tests choose (tests/fetch/server.py).

@test "docker:// plain http needs --insecure-http" {
	image "$T/lay" <<< "{\"tag\": \"s\", \"layers\": [$BASE_LAYER], \"config\": {\"Cmd\": [\"true\"]}}" >/dev/null
	static_registry "$T/lay" s t1/s
	edr_run create s --from "docker://127.0.0.1:$HTTP_PORT/t1/s:s"
	assert_refused s "cannot download https://127.0.0.1:$HTTP_PORT/"
	edr_run create s --from "docker://127.0.0.1:$HTTP_PORT/t1/s:s" --insecure-http --quiet
	assert_status 0
}

@test "docker:// an https registry redirecting to plain http is refused without --insecure-http" {
	image "$T/lay" <<< "{\"tag\": \"s\", \"layers\": [$BASE_LAYER], \"config\": {\"Cmd\": [\"true\"]}}" >/dev/null
	static_registry "$T/lay" s t9/s
	# Every request answered with a redirect to the same path on the plain-http server.
	start_server downgrade --tls "$S/server.pem" "$S/server.key" \
		--mode "redirect-base=http://127.0.0.1:$HTTP_PORT"
	edr_run create s --from "docker://127.0.0.1:$(cat "$S/downgrade.port")/t9/s:s" --cacert "$CA"
	assert_refused s "an https URL is redirected to https only"
	grep -q " status=302 " "$S/downgrade.log" || fail "no redirect was answered: $(cat "$S/downgrade.log")"
	! grep -q "/t9/s/" "$S/http.log" || fail "plain http was asked: $(grep /t9/s/ "$S/http.log")"
}

@test "docker:// a blob redirected to another origin is fetched without the registry's Authorization header" {
	image "$T/lay" <<< "{\"tag\": \"s\", \"layers\": [$BASE_LAYER], \"config\": {\"Cmd\": [\"true\"]}}" >/dev/null
	static_registry "$T/lay" s t10/s
	# A registry asking for basic auth that sends blobs to storage on another port, as
	# registries send them to S3: the credentials are the registry's, not the storage's.
	start_server storage --tls "$S/server.pem" "$S/server.key"
	start_server authreg --tls "$S/server.pem" "$S/server.key" --mode "basic=edr:s3cret" \
		--mode "redirect-base=https://127.0.0.1:$(cat "$S/storage.port"),/blobs/"
	auth_file "$T/auth.json" "127.0.0.1:$(cat "$S/authreg.port")" "edr:s3cret"
	REGISTRY_AUTH_FILE=$T/auth.json edr_run create s \
		--from "docker://127.0.0.1:$(cat "$S/authreg.port")/t10/s:s" --cacert "$CA" --quiet
	assert_status 0
	grep -q "/t10/s/manifests/s .* status=200 .* auth=Basic" "$S/authreg.log" ||
		fail "the registry never had the credentials: $(cat "$S/authreg.log")"
	grep -q "GET /v2/t10/s/blobs/sha256:$BASE_HEX .* status=200" "$S/storage.log" ||
		fail "the layer did not come from the storage: $(cat "$S/storage.log")"
	! grep -q "auth=" "$S/storage.log" || fail "the Authorization header followed the redirect: $(cat "$S/storage.log")"
}

@test "docker:// an interrupted blob download resumes from where it stopped" {
	image "$T/lay" <<< "{\"tag\": \"s\", \"layers\": [$BASE_LAYER], \"config\": {\"Cmd\": [\"true\"]}}" >/dev/null
	static_registry "$T/lay" s t8/s
	start_server slow --mode rate=400000
	local url=docker://127.0.0.1:$(cat "$S/slow.port")/t8/s:s partial
	partial=$(cache_dir)/partial/$BASE_HEX
	"$EDR_BIN" create s --from "$url" --insecure-http --quiet > /dev/null 2>&1 &
	pid=$!
	for i in $(seq 200); do
		[[ -s $partial && $(stat -c %s "$partial") -ge 200000 ]] && break
		sleep 0.05
	done
	kill -9 "$pid"
	wait "$pid" || true
	have=$(stat -c %s "$partial")
	[[ $have -gt 0 && $have -lt $(stat -c %s "$EDR_TEMPLATE") ]] || fail "partial has $have bytes"
	assert_no_root s

	edr_run create s --from "$url" --insecure-http
	kill "$(cat "$S/slow.pid")"
	rm -f "$S/slow.pid"
	assert_status 0
	assert_cached "$BASE_HEX"
	assert_no_partials
	grep -q "blobs/sha256:$BASE_HEX range=bytes=$have- if-range=.* status=206" "$S/slow.log" ||
		fail "no ranged request from byte $have: $(cat "$S/slow.log")"
}

# hostile_blob REPO: the static registry for image s whose layer 0 blob file gets
# replaced by what the test writes to $BLOB.
hostile_setup() {
	image "$T/lay" <<< "{\"tag\": \"s\", \"layers\": [$BASE_LAYER]}" >/dev/null
	static_registry "$T/lay" s "$1"
	BLOB=$WWW/v2/$1/blobs/sha256:$BASE_HEX
}

assert_cache_sound() {
	assert_no_partials
	local f
	for f in "$(cache_dir)"/sha256/*; do
		[[ -e $f ]] || continue
		[[ $(sha256sum < "$f" | cut -d' ' -f1) == "$(basename "$f")" ]] || fail "$f does not hash to its name"
	done
	[[ ! -e $(cache_dir)/sha256/$BASE_HEX ]] || fail "the bad layer is cached"
}

@test "docker:// a blob with other bytes than its digest is refused, nothing cached" {
	hostile_setup t2/s
	python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[5000] ^= 1; open(sys.argv[1], "wb").write(d)' "$BLOB"
	edr_run create s --from "docker://127.0.0.1:$HTTP_PORT/t2/s:s" --insecure-http
	assert_refused s "SHA-256 mismatch"
	assert_cache_sound
}

@test "docker:// a blob that is a huge stream stops at its descriptor's size, nothing cached" {
	hostile_setup t3/s
	head -c 200M /dev/zero > "$BLOB"
	edr_run create s --from "docker://127.0.0.1:$HTTP_PORT/t3/s:s" --insecure-http
	assert_refused s "larger than the expected"
	assert_cache_sound
}

@test "docker:// a truncated blob is refused, nothing cached" {
	hostile_setup t4/s
	truncate -s 20000 "$BLOB"
	edr_run create s --from "docker://127.0.0.1:$HTTP_PORT/t4/s:s" --insecure-http
	assert_refused s "SHA-256 mismatch"
	assert_cache_sound
}

@test "docker:// a manifest over 4 MiB is refused" {
	hostile_setup t5/s
	head -c 5M /dev/zero | tr '\0' ' ' > "$WWW/v2/t5/s/manifests/s"
	edr_run create s --from "docker://127.0.0.1:$HTTP_PORT/t5/s:s" --insecure-http
	assert_refused s "larger than 4194304 bytes"
	assert_cache_sound
}

@test "docker:// a manifest that does not match the digest asked for is refused" {
	hostile_setup t6/s
	other=$(printf '0%.0s' {1..64})
	cp "$WWW/v2/t6/s/manifests/s" "$WWW/v2/t6/s/manifests/sha256:$other"
	edr_run create s --from "docker://127.0.0.1:$HTTP_PORT/t6/s@sha256:$other" --insecure-http
	assert_refused s "whose digest is sha256:"
}

@test "docker:// a config that is not JSON is refused" {
	image "$T/lay" <<< "{\"tag\": \"s\", \"layers\": [$BASE_LAYER], \"hostile\": {\"config_not_json\": true}}" >/dev/null
	static_registry "$T/lay" s t7/s
	edr_run create s --from "docker://127.0.0.1:$HTTP_PORT/t7/s:s" --insecure-http
	assert_refused s "not valid JSON"
}

@test "built-in template: create --template debian-bookworm pulls Docker Hub's image from ENTER_DEVROOT_REGISTRY_MIRROR" {
	ENTER_DEVROOT_REGISTRY_MIRROR=https://$(reg open)/ edr_run create d --template debian-bookworm --cacert "$CA" --quiet
	assert_status 0
	edr_run run d
	assert_output "gzipzstd"
	grep -q '"GET /v2/library/debian/manifests/bookworm ' "$S/open.log" || fail "the mirror was not asked"
	run edr images
	assert_output --partial "docker://debian:bookworm"
}

@test "built-in template: fetch debian-bookworm pulls its image as fetch --from does, printing the pinned reference" {
	ENTER_DEVROOT_REGISTRY_MIRROR=https://$(reg open)/ edr_run fetch debian-bookworm --cacert "$CA" --quiet
	assert_status 0
	assert_output --regexp '^docker://[^ ]*@sha256:[0-9a-f]{64}$'
	grep -q '"GET /v2/library/debian/manifests/bookworm ' "$S/open.log" || fail "the mirror was not asked"
	ENTER_DEVROOT_REGISTRY_MIRROR=https://127.0.0.1:9/ edr_run create d --from "$output" --quiet
	assert_status 0
	edr_run run d
	assert_output "gzipzstd"
}

@test "built-in template: registry-mirror = URL in the config file does the same; a mirror that is not https is refused" {
	mkdir -p "$XDG_CONFIG_HOME/enter-devroot"
	printf 'registry-mirror = https://%s\n' "$(reg open)" > "$XDG_CONFIG_HOME/enter-devroot/config"
	edr_run create d --from docker://debian:bookworm --cacert "$CA" --quiet
	assert_status 0
	[[ -f $(root_of d)/srv/g ]] || fail "not the mirror's image"
	printf 'registry-mirror = http://%s\n' "$(reg open)" > "$XDG_CONFIG_HOME/enter-devroot/config"
	edr_run create e --template debian-bookworm --cacert "$CA"
	assert_edr_error "$EDR_TOOL_EXIT" "registry mirror 'http://$(reg open)'" "--insecure-http"
	assert_no_root e
}

@test "built-in template: a mirror applies to Docker Hub only; a reference naming a registry goes there" {
	ENTER_DEVROOT_REGISTRY_MIRROR=https://127.0.0.1:9 edr_run create a --from "docker://$(reg open)/app:a" --cacert "$CA" --quiet
	assert_status 0
}

# ---- The CI drivers pull a job's image with the job's own registry credentials.

gitlab_job_vars() { # JOB_ID IMAGE CI_REGISTRY USER PASSWORD
	export JOB_RESPONSE_FILE=$T/response-$1.json
	printf '{"id": %s, "image": {"name": "%s"}}\n' "$1" "$2" >"$JOB_RESPONSE_FILE"
	export CUSTOM_ENV_CI_JOB_ID=$1 CUSTOM_ENV_CI_JOB_IMAGE=$2 CUSTOM_ENV_CI_REGISTRY=$3
	export CUSTOM_ENV_CI_REGISTRY_USER=$4 CUSTOM_ENV_CI_REGISTRY_PASSWORD=$5
	export BUILD_FAILURE_EXIT_CODE=41 SYSTEM_FAILURE_EXIT_CODE=42
}

@test "gitlab prepare: the job's CI_REGISTRY_USER and CI_REGISTRY_PASSWORD pull its private image; wrong ones are a system failure" {
	gitlab_job_vars 1 "$(reg locked)/private:a" "$(reg locked)" "$REG_USER" "$REG_PASS"
	run --separate-stderr "$EDR_BIN" gitlab prepare --cacert "$CA"
	assert_success
	printf 'cat /srv/g\n' >"$T/s"
	run "$EDR_BIN" gitlab run "$T/s" build_script
	assert_success
	assert_output gzip
	"$EDR_BIN" gitlab cleanup
	# No credentials file is left behind anywhere the job's user keeps files.
	run find "$T" "${TMPDIR:-/tmp}" -maxdepth 2 -name 'enter-devroot-ci.*'
	assert_output ""
	gitlab_job_vars 2 "$(reg locked)/private:a" "$(reg locked)" "$REG_USER" "wrong pass"
	run --separate-stderr "$EDR_BIN" gitlab prepare --cacert "$CA"
	assert_equal "$status" 42
	[[ ${stderr_lines[-1]} == "enter-devroot: gitlab: cannot create the job's devroot"* ]] || fail "$stderr"
	[[ $stderr == *"access denied"* ]] || fail "$stderr"
}

@test "gitlab prepare: the job's registry credentials are given to its own registry only" {
	# The image is on the locked registry, the job's CI_REGISTRY is another one: its
	# credentials must not be offered there, so the pull has none.
	gitlab_job_vars 3 "$(reg locked)/private:a" "$(reg open)" "$REG_USER" "$REG_PASS"
	run --separate-stderr "$EDR_BIN" gitlab prepare --cacert "$CA"
	assert_equal "$status" 42
	[[ $stderr == *"no credentials"* ]] || fail "$stderr"
}

@test "github-hook prepare_job: the container's registry credentials pull a private image, with the hook's --cacert; a container action from a plain-http registry needs --insecure-http" {
	local response=$T/response.json
	printf '{"command": "prepare_job", "responseFile": "%s", "state": {}, "args": {"services": [],
	  "container": {"image": "docker://%s/private:a", "systemMountVolumes": [], "userMountVolumes": [],
	  "registry": {"username": "%s", "password": "%s", "serverUrl": "https://%s"}}}}' \
		"$response" "$(reg locked)" "$REG_USER" "$REG_PASS" "$(reg locked)" >"$T/in.json"
	run --separate-stderr "$EDR_BIN" github-hook <"$T/in.json"
	assert_failure
	run --separate-stderr "$EDR_BIN" github-hook --cacert "$CA" <"$T/in.json"
	assert_success
	# A container action whose image is on a plain-http registry (a local mirror).
	image "$T/lay" <<< "{\"tag\": \"s\", \"layers\": [$BASE_LAYER]}" >/dev/null
	static_registry "$T/lay" s ghhook/s
	printf '{"command": "run_container_step", "responseFile": null, "state": {}, "args": {
	  "image": "127.0.0.1:%s/ghhook/s:s", "entryPoint": "sh", "entryPointArgs": ["\\"-c\\"", "\\"echo", "from-mirror\\""],
	  "environmentVariables": {}, "systemMountVolumes": [], "userMountVolumes": []}}' "$HTTP_PORT" >"$T/step.json"
	run --separate-stderr "$EDR_BIN" github-hook <"$T/step.json"
	assert_failure
	[[ $stderr == *"cannot download https://127.0.0.1:$HTTP_PORT/"* ]] || fail "$stderr"
	run --separate-stderr "$EDR_BIN" github-hook --insecure-http <"$T/step.json"
	assert_success
	assert_output from-mirror
	local name
	name=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["state"]["root"])' "$response")
	edr_run run "$name" -- cat /srv/z
	assert_output zstd
	printf '{"command": "cleanup_job", "args": {}, "state": {"root": "%s"}}' "$name" | "$EDR_BIN" github-hook
	[[ ! -e $XDG_DATA_HOME/enter-devroot/roots/$name ]]
}
