#!/usr/bin/env bats
# Interrupted downloads resume with Range + If-Range; concurrent fetches share one download.

load common
setup_file() { fetch_setup_file; }
teardown_file() { fetch_teardown_file; }
setup() { fetch_setup; }
teardown() { fetch_teardown; }

CUT=100000 # where the hostile server drops the connection

partial() { echo "$(cache_dir)/partial/$TSHA"; }

@test "a connection dropped mid-body keeps the partial file; the next run fetches only the rest" {
	index "$WWW/$D/index" t "../@drop=$CUT/t.tar.gz" "$TSHA" "$TSIZE"
	edr_run fetch t --index "$HTTP/$D/index"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/@drop=$CUT/t.tar.gz" "partial download kept"
	[[ $(stat -c %s "$(partial)") -eq $CUT ]]
	grep -q '^etag "' "$(partial).validators"
	grep -qx "url $HTTP/@drop=$CUT/t.tar.gz" "$(partial).validators"

	edr_run fetch t --index "$HTTP/$D/index"
	assert_status 0
	assert_cached "$TSHA"
	assert_no_partials
	# The second request asked for the rest only, with If-Range, and got exactly the rest.
	http_log | grep -q "GET /@drop=$CUT/t.tar.gz range=bytes=$CUT- if-range=\".*\" status=206 sent=$((TSIZE - CUT))\$" ||
		fail "no ranged request for the rest: $(http_log)"
}

@test "a client killed mid-download resumes from where it stopped" {
	index "$WWW/$D/index" t "../@rate=400000/t.tar.gz" "$TSHA" "$TSIZE"
	"$EDR_BIN" fetch t --index "$HTTP/$D/index" > /dev/null 2>&1 &
	pid=$!
	for i in $(seq 100); do
		[[ -s $(partial) && $(stat -c %s "$(partial)") -ge 50000 ]] && break
		sleep 0.05
	done
	kill -9 "$pid"
	wait "$pid" || true
	have=$(stat -c %s "$(partial)")
	[[ $have -gt 0 && $have -lt $TSIZE ]] || fail "partial has $have bytes"
	[[ $(cached_count) -eq 0 ]]

	edr_run create r --template t --index "$HTTP/$D/index" --quiet
	assert_status 0
	assert_cached "$TSHA"
	assert_no_partials
	http_log | grep -q "range=bytes=$have- if-range=.* status=206 sent=$((TSIZE - have))\$" ||
		fail "no ranged request from byte $have: $(http_log)"
	[[ -x $(root_of r)/bin/busybox ]]
}

@test "a file changed on the server (If-Range mismatch) is downloaded again from the start" {
	# The first attempt gets a prefix of an older file...
	head -c "$TSIZE" /dev/urandom > "$WWW/$D/f.tar.gz"
	index "$WWW/$D/index" t "@drop=$CUT/f.tar.gz" "$TSHA" "$TSIZE"
	edr_run fetch t --index "$HTTP/$D/index"
	assert_status "$EDR_TOOL_EXIT"
	old_etag=$(sed -n 's/^etag //p' "$(partial).validators")
	[[ -n $old_etag ]]
	# ... then the file is replaced: a new ETag and Last-Modified.
	cp "$WWW/t.tar.gz" "$WWW/$D/f.new" && mv -f "$WWW/$D/f.new" "$WWW/$D/f.tar.gz"

	edr_run fetch t --index "$HTTP/$D/index"
	assert_status 0
	assert_cached "$TSHA"
	assert_no_partials
	http_log | grep -q "range=bytes=$CUT- if-range=$old_etag status=200 sent=$TSIZE\$" ||
		fail "expected a whole new body for the stale range: $(http_log)"
}

@test "fetch -v says a download resumed, from which byte, and the bytes in all" {
	index "$WWW/$D/index" t "../@drop=$CUT/t.tar.gz" "$TSHA" "$TSIZE"
	run "$EDR_BIN" fetch t --index "$HTTP/$D/index" --quiet
	[[ $status -eq $EDR_TOOL_EXIT ]] || fail "the first fetch was not cut: $output"
	edr_run -v fetch t --index "$HTTP/$D/index" --quiet
	assert_status 0
	assert_stderr_has "enter-devroot: download $HTTP/@drop=$CUT/t.tar.gz from byte $CUT (resumed)" \
		"enter-devroot: downloaded $HTTP/@drop=$CUT/t.tar.gz: $TSIZE bytes, $CUT resumed"
	assert_cached "$TSHA"
}

@test "a server that answers a range request with 200 restarts the file instead of appending" {
	index "$WWW/$D/index" t "../@drop=$CUT/@norange/t.tar.gz" "$TSHA" "$TSIZE"
	run "$EDR_BIN" fetch t --index "$HTTP/$D/index"
	[[ $status -eq $EDR_TOOL_EXIT ]]
	[[ $(stat -c %s "$(partial)") -eq $CUT ]]
	edr_run fetch t --index "$HTTP/$D/index"
	assert_status 0
	assert_cached "$TSHA"
	assert_no_partials
	http_log | grep -q "range=bytes=$CUT- .* status=200 sent=$TSIZE\$" || fail "$(http_log)"
}

@test "partial bytes from another URL are not resumed" {
	index "$WWW/$D/index" t "../@drop=$CUT/t.tar.gz" "$TSHA" "$TSIZE"
	run "$EDR_BIN" fetch t --index "$HTTP/$D/index"
	[[ $(stat -c %s "$(partial)") -eq $CUT ]]
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE"
	edr_run fetch t --index "$HTTP/$D/index"
	assert_status 0
	assert_cached "$TSHA"
	http_log | grep -q "GET /t.tar.gz range=- if-range=- status=200 sent=$TSIZE\$" || fail "$(http_log)"
}

@test "two concurrent creates from one template: both succeed, one download, one cache entry" {
	index "$WWW/$D/index" t "../@rate=500000/t.tar.gz" "$TSHA" "$TSIZE"
	"$EDR_BIN" create a --template t --index "$HTTP/$D/index" > "$T/a.out" 2>&1 &
	pa=$!
	"$EDR_BIN" create b --template t --index "$HTTP/$D/index" > "$T/b.out" 2>&1 &
	pb=$!
	wait "$pa" || fail "create a failed: $(cat "$T/a.out")"
	wait "$pb" || fail "create b failed: $(cat "$T/b.out")"
	[[ $(cached_count) -eq 1 ]]
	assert_cached "$TSHA"
	assert_no_partials
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "downloaded more than once: $(http_log)"
	cmp <(cd "$(root_of a)" && find . | sort) <(cd "$(root_of b)" && find . | sort)
}
