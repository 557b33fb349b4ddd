#!/usr/bin/env bats
# fetch, create --template / --from URL, the cache and `cache list|clean`.

load common
setup_file() { fetch_setup_file; }
teardown_file() { fetch_teardown_file; }
setup() { fetch_setup_with_t "$HTTP"; }
teardown() { fetch_teardown; }

@test "fetch downloads, verifies and caches a template, printing the cached path" {
	edr_run fetch t --index "$IDX"
	assert_status 0
	assert_output "$(cache_dir)/sha256/$TSHA"
	[[ -z $stderr ]] || fail "stderr is not a terminal: expected nothing there
$(last_run)"
	assert_cached "$TSHA"
	assert_no_partials
	[[ $(http_count /t.tar.gz) -eq 1 ]]
}

@test "fetch of a cached template downloads nothing" {
	edr fetch t --index "$IDX" --quiet
	edr_run fetch t --index "$IDX"
	assert_status 0
	assert_output "$(cache_dir)/sha256/$TSHA"
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "$(http_log)"
}

@test "fetch -v: a cache miss and the download (URL, bytes) the first time, a cache hit the second" {
	edr_run -v fetch t --index "$IDX"
	assert_status 0
	assert_stderr_has "enter-devroot: cache miss: sha256:$TSHA" \
		"enter-devroot: download $HTTP/t.tar.gz from byte 0 (new)" \
		"enter-devroot: downloaded $HTTP/t.tar.gz: $TSIZE bytes, 0 resumed"
	refute_stderr_has "cache hit"
	edr_run -v fetch t --index "$IDX"
	assert_status 0
	assert_stderr_has "enter-devroot: cache hit: sha256:$TSHA"
	refute_stderr_has "cache miss" "download"
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "$(http_log)"
	edr_run fetch t --index "$IDX"
	assert_status 0
	[[ -z $stderr ]] || fail "without -v: $(last_run)"
}

@test "create --template fetches once; a second create downloads nothing" {
	edr_run create a --template t --index "$IDX" --quiet
	assert_status 0
	edr_run create b --template t --index "$IDX" --quiet
	assert_status 0
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "template downloaded more than once: $(http_log)"
	[[ -x $(root_of a)/bin/busybox && -x $(root_of b)/bin/busybox ]]
	edr_run run b -- sh -c 'echo hello from b'
	assert_status 0
	assert_output "hello from b"
	edr_run list --json
	assert_output --partial "\"sha256\": \"$TSHA\""
	assert_no_partials
}

@test "a second create --template finds its layer by the catalogue's digest: the download cache is not read, nor needed" {
	command -v strace >/dev/null || skip "strace not installed (apt-get install strace)"
	# Its layer kept (a cold flat create on a filesystem without reflinks keeps none).
	edr_run create a --template t --index "$IDX" --quiet --keep-layers
	assert_status 0
	# The catalogue names the bytes by digest; a layer unpacked from bytes of that digest
	# (checked then) is the root: the cached file, which others may write on a shared
	# cache, is not even opened.
	strace -f -qq -o "$BATS_TEST_TMPDIR/trace" -e trace=openat "$EDR_BIN" -v create b \
		--template t --index "$IDX" 2>"$BATS_TEST_TMPDIR/err" || fail "create under strace failed"
	grep -q "is layer sha256:.*the download cache is not read" "$BATS_TEST_TMPDIR/err" ||
		fail "$(cat "$BATS_TEST_TMPDIR/err")"
	! grep -F "$(cache_dir)/sha256/$TSHA\"" "$BATS_TEST_TMPDIR/trace" ||
		fail "the cached file was opened"
	edr_run run b -- sh -c 'echo hello from b'
	assert_status 0
	assert_output "hello from b"
	edr_run list --json
	assert_output --partial "\"sha256\": \"$TSHA\""
	# With the download cleaned away, the layer still serves: nothing is downloaded.
	rm "$(cache_dir)/sha256/$TSHA"
	edr_run create c --template t --index "$IDX" --quiet
	assert_status 0
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "template downloaded again: $(http_log)"
	edr_run run c -- true
	assert_status 0
}

@test "a corrupted cache file is detected, deleted and downloaded again" {
	edr fetch t --index "$IDX" --quiet
	printf 'garbage' | dd of="$(cache_dir)/sha256/$TSHA" bs=1 seek=1000 conv=notrunc 2>/dev/null
	edr_run create r --template t --index "$IDX" --quiet
	assert_status 0
	assert_stderr_has "is corrupt"
	assert_cached "$TSHA"
	[[ $(http_count /t.tar.gz) -eq 2 ]]
}

@test "a digest mismatch deletes the download and creates nothing" {
	bad=$(printf '%064d' 7)
	index "$WWW/$D/index" t ../t.tar.gz "$bad" "$TSIZE"
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "SHA-256 mismatch" "expected $bad, got $TSHA" "$HTTP/t.tar.gz"
	assert_no_root r
	assert_no_partials
	[[ $(cached_count) -eq 0 ]]
}

@test "create --from URL --sha256 downloads, verifies and unpacks" {
	edr_run create r --from "$HTTP/t.tar.gz" --sha256 "${TSHA^^}" --quiet
	assert_status 0
	[[ -x $(root_of r)/bin/busybox ]]
	assert_cached "$TSHA"
	edr_run list --json
	assert_output --partial "\"source\": \"$HTTP/t.tar.gz\""
}

@test "create --from URL with a wrong --sha256 creates nothing" {
	bad=$(printf '%064d' 1)
	edr_run create r --from "$HTTP/t.tar.gz" --sha256 "$bad"
	assert_edr_error "$EDR_TOOL_EXIT" "expected $bad, got $TSHA"
	assert_no_root r
	assert_no_partials
	[[ $(cached_count) -eq 0 ]]
}

@test "create --from URL without --sha256 is refused before any download" {
	edr_run create r --from "$HTTP/t.tar.gz"
	assert_edr_error "$EDR_TOOL_EXIT" "--sha256" "--no-verify" "$HTTP/t.tar.gz"
	assert_no_root r
	[[ $(http_count /t.tar.gz) -eq 0 ]]
}

@test "create --from URL --no-verify works and warns loudly" {
	edr_run create r --from "$HTTP/t.tar.gz" --no-verify --quiet
	assert_status 0
	assert_stderr_has "warning" "WITHOUT checking its integrity" "$HTTP/t.tar.gz"
	[[ -x $(root_of r)/bin/busybox ]]
	assert_cached "$TSHA"
	assert_no_partials
}

@test "--no-verify together with --sha256 is a usage error" {
	edr_run create r --from "$HTTP/t.tar.gz" --no-verify --sha256 "$TSHA"
	assert_edr_error "$EDR_TOOL_EXIT" "--no-verify"
	assert_no_root r
}

@test "create --from file:// URL with --sha256 works" {
	cp "$WWW/t.tar.gz" "$T/local.tar.gz"
	edr_run create r --from "file://$T/local.tar.gz" --sha256 "$TSHA" --quiet
	assert_status 0
	[[ -x $(root_of r)/bin/busybox ]]
}

@test "an existing devroot name is refused without downloading anything first" {
	edr create r --quiet
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "cannot create 'r'" "already exists"
	edr_run create r --from "$HTTP/t.tar.gz" --sha256 "$TSHA"
	assert_edr_error "$EDR_TOOL_EXIT" "already exists"
	edr_run create 'bad/name' --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "bad/name"
	[[ $(http_count /t.tar.gz) -eq 0 ]] || fail "downloaded anyway: $(http_log)"
}

@test "cache list shows digest, size and origin; --json is one document" {
	edr fetch t --index "$IDX" --quiet
	edr_run cache list
	assert_status 0
	assert_line --index 0 --regexp '^SHA256 +SIZE +ORIGIN$'
	assert_line --index 1 --regexp "^$TSHA +$TSIZE +$HTTP/t.tar.gz\$"
	edr_run cache list --json
	run python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), d[0]["sha256"], d[0]["size_bytes"], d[0]["origin"])' <<< "$output"
	assert_output "1 $TSHA $TSIZE $HTTP/t.tar.gz"
}

@test "cache clean removes cached and partial files" {
	edr fetch t --index "$IDX" --quiet
	head -c 200000 /dev/urandom > "$WWW/$D/other.bin"
	index "$WWW/$D/index2" o "@drop=1000/other.bin" "$(sha256sum < "$WWW/$D/other.bin" | cut -d' ' -f1)" 200000
	run "$EDR_BIN" fetch o --index "$HTTP/$D/index2" --quiet
	[[ $status -eq $EDR_TOOL_EXIT ]]
	[[ -n $(ls -A "$(cache_dir)/partial") ]] || fail "expected a partial download to clean"
	edr_run cache clean
	assert_status 0
	assert_output --regexp '^removed 2 files \([0-9]+ bytes\)$'
	[[ $(cached_count) -eq 0 ]]
	assert_no_partials
	edr_run cache list
	assert_output --regexp '^SHA256 +SIZE +ORIGIN$' # the header alone
}

@test "cache with an unknown action is a usage error" {
	edr_run cache frobnicate
	assert_edr_error "$EDR_TOOL_EXIT" "frobnicate"
	edr_run cache
	assert_edr_error "$EDR_TOOL_EXIT" "missing action"
}
