#!/usr/bin/env bats
# Servers that fail, lie or attack: HTTP errors, redirects, oversize and slow bodies.

load common
setup_file() { fetch_setup_file; }
teardown_file() { fetch_teardown_file; }
setup() { fetch_setup; }
teardown() { fetch_teardown; }

# create_from_index URL_OF_TEMPLATE [SIZE]: a catalogue with one template t at that URL.
catalogue_for() {
	index "$WWW/$D/index" t "$1" "$TSHA" "${2:-$TSIZE}"
	IDX=$HTTP/$D/index
}

@test "a 404 fails naming the URL, leaving nothing" {
	catalogue_for ../nope.tar.gz
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/nope.tar.gz" "404"
	assert_no_root r
	assert_no_partials
}

@test "a 500 fails naming the URL, leaving nothing" {
	catalogue_for ../@status=500/t.tar.gz
	edr_run fetch t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "500"
	assert_no_partials
	[[ $(cached_count) -eq 0 ]]
}

@test "a redirect to file:// is refused" {
	echo "secret" > "$T/secret.tar"
	catalogue_for "../@redirect=file%3A%2F%2F${T//\//%2F}%2Fsecret.tar/x"
	edr_run create r --template t --index "$IDX"
	assert_status "$EDR_TOOL_EXIT"
	assert_stderr_has "cannot download" "file"
	assert_no_root r
	assert_no_partials
	[[ $(cached_count) -eq 0 ]]
}

@test "a redirect to http is followed" {
	catalogue_for "../@redirect=%2Ft.tar.gz/x"
	edr_run create r --template t --index "$IDX" --quiet
	assert_status 0
	http_log | grep -q ' status=302 ' || fail "no redirect seen: $(http_log)"
	[[ $(http_count /t.tar.gz) -eq 1 ]]
}

# urlencode URL: for a @redirect= path segment.
urlencode() { printf %s "$1" | sed 's/%/%25/g; s/:/%3A/g; s,/,%2F,g'; }

@test "a redirect from https to plain http is refused: the catalogue, a template" {
	# The catalogue names the digests that are trusted: asked for over https, it never
	# arrives in clear, where anyone on the path could rewrite it.
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE"
	edr_run templates --index "$HTTPS/@redirect=$(urlencode "$HTTP/$D/index")/x" --cacert "$CA"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTPS/" "an https URL is redirected to https only"
	[[ -z $(http_log) ]] || fail "plain http was asked: $(http_log)"
	# Nor does a template's file asked for over https.
	index "$WWW/$D/index" t "$HTTPS/@redirect=$(urlencode "$HTTP/t.tar.gz")/x" "$TSHA" "$TSIZE"
	edr_run create r --template t --index "$HTTP/$D/index" --cacert "$CA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "an https URL is redirected to https only"
	[[ $(http_count /t.tar.gz) -eq 0 ]] || fail "the template was fetched over plain http: $(http_log)"
	assert_no_root r
	assert_no_partials
	[[ $(cached_count) -eq 0 ]]
}

@test "a redirect from https to https elsewhere is followed" {
	index "$WWW/$D/index" t "$HTTPS/@redirect=$(urlencode "https://localhost:$HTTPS_PORT/t.tar.gz")/x" "$TSHA" "$TSIZE"
	edr_run fetch t --index "$HTTP/$D/index" --cacert "$CA" --quiet
	assert_status 0
	assert_cached "$TSHA"
}

@test "a body larger than the catalogue's size is refused" {
	catalogue_for ../@oversize=100000/t.tar.gz
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "larger than the expected $TSIZE bytes"
	assert_no_root r
	assert_no_partials
}

@test "an endless body is cut at the catalogue's size" {
	catalogue_for ../@endless/t.tar.gz
	edr_run fetch t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "larger than the expected $TSIZE bytes"
	assert_no_partials
}

@test "a download of unknown size is capped by ENTER_DEVROOT_MAX_DOWNLOAD" {
	ENTER_DEVROOT_MAX_DOWNLOAD=500000 edr_run create r --from "$HTTP/@endless/t.tar.gz" --sha256 "$TSHA"
	assert_edr_error "$EDR_TOOL_EXIT" "larger than the limit of 500000 bytes"
	assert_no_root r
	assert_no_partials
	printf '[t]\nurl = ../@endless/t.tar.gz\nsha256 = %s\n' "$TSHA" > "$WWW/$D/index"
	ENTER_DEVROOT_MAX_DOWNLOAD=500000 edr_run fetch t --index "$HTTP/$D/index"
	assert_edr_error "$EDR_TOOL_EXIT" "larger than the limit of 500000 bytes"
	assert_no_partials
}

@test "a slow-loris body is aborted by the low-speed limit" {
	catalogue_for ../@slow/t.tar.gz
	SECONDS=0
	ENTER_DEVROOT_LOW_SPEED_TIME=2 edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/@slow/t.tar.gz"
	assert_stderr_has "too slow"
	[[ $SECONDS -lt 20 ]] || fail "took ${SECONDS}s"
	assert_no_root r
}

@test "a server that never answers is aborted by the low-speed limit" {
	catalogue_for ../@stall/t.tar.gz
	SECONDS=0
	ENTER_DEVROOT_LOW_SPEED_TIME=2 edr_run fetch t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "too slow"
	[[ $SECONDS -lt 20 ]] || fail "took ${SECONDS}s"
	assert_no_partials
}

@test "a refused connection fails quickly, naming the URL" {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	edr_run templates --index "http://127.0.0.1:$port/index"
	assert_edr_error "$EDR_TOOL_EXIT" "http://127.0.0.1:$port/index"
}

@test "schemes other than http, https and file are refused" {
	edr_run templates --index "ftp://127.0.0.1:$HTTP_PORT/index"
	assert_edr_error "$EDR_TOOL_EXIT" "ftp://127.0.0.1:$HTTP_PORT/index"
	edr_run create r --from "gopher://127.0.0.1:$HTTP_PORT/x" --sha256 "$TSHA"
	assert_edr_error "$EDR_TOOL_EXIT" "gopher://"
	assert_no_root r
}

@test "a non-archive with the right digest is refused by the unpacker, leaving nothing" {
	head -c 5000 /dev/urandom > "$WWW/$D/junk.tar.gz"
	sha=$(sha256sum "$WWW/$D/junk.tar.gz" | cut -d' ' -f1)
	index "$WWW/$D/index" j junk.tar.gz "$sha" 5000
	edr_run create r --template j --index "$HTTP/$D/index" --quiet
	assert_status "$EDR_TOOL_EXIT"
	assert_no_root r
	assert_cached "$sha"
}

# assert_cache_sound: every file under sha256/ hashes to its own name.
assert_cache_sound() {
	local f
	for f in "$(cache_dir)"/sha256/*; do
		[[ -e $f ]] || continue
		[[ $(sha256sum <"$f" | cut -d' ' -f1) == "$(basename "$f")" ]] ||
			fail "cache holds $(basename "$f") whose content does not hash to its name"
	done
}

@test "a swapped file of the right size (digest of a different file) is refused, cache stays sound" {
	head -c "$TSIZE" /dev/urandom >"$WWW/$D/swap.tar.gz"
	catalogue_for swap.tar.gz
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT"
	[[ $stderr == *"SHA-256 mismatch"* ]] || fail "error does not say the digest is wrong: $stderr"
	assert_no_root r
	assert_no_partials
	assert_cache_sound
	[[ $(cached_count) -eq 0 ]] || fail "the swapped file was cached"
}

@test "a body shorter than announced (connection dropped) never lands in the cache" {
	catalogue_for ../@drop=1000/@norange/t.tar.gz
	edr_run fetch t --index "$IDX" --quiet
	assert_edr_error "$EDR_TOOL_EXIT"
	assert_cache_sound
	[[ $(cached_count) -eq 0 ]] || fail "a short body was cached"
	# The real file afterwards: fetched whole, cache sound.
	catalogue_for ../t.tar.gz
	edr fetch t --index "$IDX" --quiet
	assert_cache_sound
	[[ $(cached_count) -eq 1 ]] || fail "the good file was not cached"
}

@test "a catalogue size smaller than the real file is refused (longer than announced), cache stays sound" {
	catalogue_for ../t.tar.gz $((TSIZE - 100))
	edr_run fetch t --index "$IDX" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "larger than the expected $((TSIZE - 100)) bytes"
	assert_cache_sound
	assert_no_partials
}
