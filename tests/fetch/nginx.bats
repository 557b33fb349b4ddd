#!/usr/bin/env bats
# The real peer: Debian's nginx, unprivileged on 127.0.0.1, serving templates over HTTP and
# HTTPS (a CA generated per run). Skips when nginx is not installed (apt-get install nginx).

load common
load nginx
setup_file() { nginx_setup_file; }
teardown_file() { nginx_teardown_file; }
setup() {
	nginx_setup
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE" "the small one"
	IDX=$HTTP/$D/index
}
teardown() { fetch_teardown; }

# big_template: a tar of 24 MiB of incompressible data in $WWW/big.tar; sets BSHA, BSIZE.
big_template() {
	if [[ ! -f $WWW/big.tar ]]; then
		mkdir -p "$S/big"
		head -c $((24 * 1024 * 1024)) /dev/urandom > "$S/big/blob"
		tar -cf "$WWW/big.tar.tmp" -C "$S/big" blob
		mv "$WWW/big.tar.tmp" "$WWW/big.tar"
	fi
	BSHA=$(sha256sum "$WWW/big.tar" | cut -d' ' -f1)
	BSIZE=$(stat -c %s "$WWW/big.tar")
}

@test "nginx: templates lists the catalogue as a table and as JSON" {
	edr_run templates --index "$IDX"
	assert_status 0
	assert_line --index 0 --regexp '^NAME +SIZE +CACHED +DESCRIPTION$'
	assert_line --regexp '^t +[0-9.]+ (KiB|MiB) +no +the small one$'
	assert_line --index 2 --regexp '^minimal +- +- +' # then the built-in templates
	edr_run templates --index "$IDX" --json
	assert_lists_t_as_json
	http_log | grep -q "^GET /$D/index HTTP/1.1 status=200 " || fail "$(http_log)"
}

@test "nginx: fetch downloads, verifies and caches" {
	edr_run fetch t --index "$IDX"
	assert_status 0
	assert_output "$(cache_dir)/sha256/$TSHA"
	assert_cached "$TSHA"
	assert_no_partials
	http_log | grep -q "^GET /t.tar.gz HTTP/1.1 status=200 sent=$TSIZE range=- if-range=-\$" ||
		fail "$(http_log)"
	edr_run templates --index "$IDX"
	assert_line --regexp '^t +.* yes +the small one$'
}

@test "nginx: create --template makes a root; a second create downloads nothing" {
	edr_run create a --template t --index "$IDX" --quiet
	assert_status 0
	[[ -x $(root_of a)/bin/busybox ]]
	edr_run create b --template t --index "$IDX" --quiet
	assert_status 0
	[[ -x $(root_of b)/bin/busybox ]]
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "template downloaded more than once: $(http_log)"
	[[ $(http_count /$D/index) -eq 2 ]] || fail "$(http_log)"
	edr_run run b -- sh -c 'echo hello from b'
	assert_status 0
	assert_output "hello from b"
	assert_no_partials
}

@test "nginx: a digest mismatch deletes the download and creates nothing" {
	big_template
	index "$WWW/$D/index" t ../t.tar.gz "$BSHA" "$TSIZE"
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/t.tar.gz" "expected $BSHA, got $TSHA"
	assert_no_root r
	assert_no_partials
	[[ $(cached_count) -eq 0 ]]
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "$(http_log)"
}

@test "nginx: a 404 fails in one line naming the URL, leaving nothing" {
	index "$WWW/$D/index" t nope.tar.gz "$TSHA" "$TSIZE"
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/$D/nope.tar.gz" "404"
	assert_no_root r
	assert_no_partials
	http_log | grep -q "^GET /$D/nope.tar.gz HTTP/1.1 status=404 " || fail "$(http_log)"
}

@test "nginx: a 500 fails in one line naming the URL, leaving nothing" {
	index "$WWW/$D/index" t ../err500/t.tar.gz "$TSHA" "$TSIZE"
	edr_run fetch t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/err500/t.tar.gz" "500"
	assert_no_partials
	[[ $(cached_count) -eq 0 ]]
	http_log | grep -q "^GET /err500/t.tar.gz HTTP/1.1 status=500 " || fail "$(http_log)"
}

@test "nginx: a download killed mid-body resumes with a range request for the rest only" {
	big_template
	index "$WWW/$D/index" big ../slow/big.tar "$BSHA" "$BSIZE"
	partial=$(cache_dir)/partial/$BSHA
	"$EDR_BIN" fetch big --index "$IDX" --quiet > "$T/first.out" 2>&1 &
	pid=$!
	for i in $(seq 200); do
		[[ -s $partial && $(stat -c %s "$partial") -ge $((3 * 1024 * 1024)) ]] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -9 "$pid" || fail "fetch ended before it was killed: $(cat "$T/first.out")"
	wait "$pid" || true
	have=$(stat -c %s "$partial")
	[[ $have -gt 0 && $have -lt $BSIZE ]] || fail "partial has $have of $BSIZE bytes"
	[[ $(cached_count) -eq 0 ]]

	edr_run fetch big --index "$IDX" --quiet
	assert_status 0
	assert_output "$(cache_dir)/sha256/$BSHA"
	assert_cached "$BSHA"
	assert_no_partials

	# nginx logs the killed request once it notices the dead connection.
	for i in $(seq 50); do
		[[ $(http_count /slow/big.tar) -ge 2 ]] && break
		sleep 0.1
	done
	[[ $(http_count /slow/big.tar) -eq 2 ]] || fail "expected two requests: $(http_log)"
	first=$(http_log | grep "^GET /slow/big.tar HTTP/1.1 .* range=- if-range=-\$") ||
		fail "no first, unranged request: $(http_log)"
	second=$(http_log | grep "^GET /slow/big.tar HTTP/1.1 status=206 sent=[0-9]* range=bytes=$have- if-range=[^-]") ||
		fail "no ranged request from byte $have answered 206 with If-Range: $(http_log)"
	sent1=$(sed 's/.* sent=\([0-9]*\) .*/\1/' <<< "$first")
	sent2=$(sed 's/.* sent=\([0-9]*\) .*/\1/' <<< "$second")
	# The second transfer is exactly the rest; the first sent at least what was kept, and at
	# most a socket buffer or so more (lost in flight when the client died).
	[[ $sent2 -eq $((BSIZE - have)) ]] || fail "second request sent $sent2, want $((BSIZE - have))"
	[[ $sent2 -lt $BSIZE ]]
	[[ $sent1 -ge $have ]] || fail "first request sent $sent1 but $have bytes were kept"
	[[ $((sent1 + sent2 - BSIZE)) -le $((4 * 1024 * 1024)) ]] ||
		fail "transferred $((sent1 + sent2)) bytes for a $BSIZE-byte file"
}

@test "nginx: a redirect to file:// is refused" {
	index "$WWW/$D/index" t ../to-file/t.tar.gz "$TSHA" "$TSIZE"
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/to-file/t.tar.gz" "redirects only to https and http"
	assert_no_root r
	assert_no_partials
	[[ $(cached_count) -eq 0 ]]
	http_log | grep -q "^GET /to-file/t.tar.gz HTTP/1.1 status=302 " || fail "$(http_log)"
}

@test "nginx: a body larger than the catalogue's size is refused" {
	small=$((TSIZE - 1000))
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$small"
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/t.tar.gz" "larger than the expected $small bytes"
	assert_no_root r
	assert_no_partials
	[[ $(cached_count) -eq 0 ]]
}

@test "nginx: https with an untrusted certificate is refused, then accepted with --cacert" {
	IDX=$HTTPS/$D/index
	edr_run templates --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$IDX" "certificate"
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "certificate"
	assert_no_root r
	[[ $(https_log | wc -l) -eq 0 ]] || fail "a request got through: $(https_log)"

	edr_run templates --index "$IDX" --cacert "$CA"
	assert_status 0
	assert_line --regexp '^t +[0-9.]+ (KiB|MiB) +no +the small one$'
	edr_run create r --template t --index "$IDX" --cacert "$CA" --quiet
	assert_status 0
	[[ -x $(root_of r)/bin/busybox ]]
	assert_cached "$TSHA"
	https_log | grep -q "^GET /t.tar.gz HTTP/1.1 status=200 sent=$TSIZE " || fail "$(https_log)"
}

@test "nginx: a malformed catalogue is refused, naming its URL and the line" {
	printf '# ok\n[t]\nurl = t.tar.gz\nsha256 = %s\nthis is not a key value line\n' "$TSHA" > "$WWW/$D/index"
	edr_run templates --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$IDX" "line 5" "malformed line"
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "line 5"
	assert_no_root r
	[[ $(http_count /t.tar.gz) -eq 0 ]] || fail "$(http_log)"
}
