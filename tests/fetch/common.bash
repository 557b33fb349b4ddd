# Helpers shared by the fetch bats suites. Load with `load common`.
#
# The suites run through tests/fetch/run, which exports:
#   EDR_BIN       the enter-devroot binary under test
#   EDR_TEMPLATE  a small template tarball served by the test web servers
# Each suite (bats file) starts its own servers on 127.0.0.1 in setup_file: one plain
# HTTP, one HTTPS with a certificate from a CA generated for the run; both serve $WWW
# and log every request. Every test gets its own HOME and XDG directories.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load ../lib/layout

EDR_TOOL_EXIT=125
SERVER=$BATS_TEST_DIRNAME/server.py

# ---- Per suite: certificates, servers, the template.

make_certs() { # DIR: ca.pem, server.pem, server.key (CN/SAN 127.0.0.1 and localhost)
	local d=$1
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=edr-test-ca \
		-keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 \
		-keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n' > "$d/ext"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
		-CAcreateserial -days 2 -extfile "$d/ext" -out "$d/server.pem" 2>/dev/null
}

start_server() { # NAME [server.py options]: sets <NAME>_PORT via $S/NAME.port
	local name=$1
	shift
	python3 "$SERVER" "$@" --log "$S/$name.log" --port-file "$S/$name.port" "$WWW" \
		>/dev/null 2>"$S/$name.err" &
	echo $! > "$S/$name.pid"
	local i
	for i in $(seq 100); do
		[[ -s $S/$name.port ]] && return 0
		sleep 0.1
	done
	cat "$S/$name.err" >&2
	return 1
}

fetch_check_prerequisites() {
	[[ -x ${EDR_BIN:-} ]] || { echo "EDR_BIN unset: run through tests/fetch/run" >&2; return 1; }
	[[ -f ${EDR_TEMPLATE:-} ]] || { echo "EDR_TEMPLATE unset: run through tests/fetch/run" >&2; return 1; }
}

# The file's web root WWW, empty request logs and a CA with its server certificate in S;
# whichever server the suite starts serves WWW.
fetch_prepare_site() {
	command -v python3 >/dev/null || { echo "python3 is needed (apt-get install python3)" >&2; return 1; }
	command -v openssl >/dev/null || { echo "openssl is needed (apt-get install openssl)" >&2; return 1; }
	export S=$BATS_FILE_TMPDIR
	export WWW=$S/www
	mkdir -p "$WWW"
	: > "$S/http.log"
	: > "$S/https.log"
	make_certs "$S"
}

# Once the server listens on HTTP_PORT and HTTPS_PORT: its URLs, and the template t.tar.gz
# published in WWW with its digest TSHA and size TSIZE.
fetch_publish_template() {
	export HTTP_PORT HTTPS_PORT CA=$S/ca.pem
	export HTTP=http://127.0.0.1:$HTTP_PORT HTTPS=https://127.0.0.1:$HTTPS_PORT
	cp "$EDR_TEMPLATE" "$WWW/t.tar.gz"
	export TSHA TSIZE
	TSHA=$(sha256sum "$WWW/t.tar.gz" | cut -d' ' -f1)
	TSIZE=$(stat -c %s "$WWW/t.tar.gz")
}

fetch_setup_file() {
	fetch_check_prerequisites || return 1
	fetch_prepare_site || return 1
	start_server http
	start_server https --tls "$S/server.pem" "$S/server.key"
	HTTP_PORT=$(cat "$S/http.port")
	HTTPS_PORT=$(cat "$S/https.port")
	fetch_publish_template
}

# assert_lists_t_as_json: the last `templates --json` printed the one template t, uncached.
assert_lists_t_as_json() {
	assert_status 0
	run python3 -c '
import json, sys
d = [e for e in json.loads(sys.stdin.read()) if not e.get("builtin")]
assert len(d) == 1, d
e = d[0]
print(e["name"], e["url"], e["sha256"], e["size_bytes"], e["cached"], e["description"])' <<< "$output"
	assert_success
	assert_output "t $HTTP/t.tar.gz $TSHA $TSIZE False the small one"
}

fetch_teardown_file() {
	local p
	for p in "$S"/*.pid; do
		[[ -f $p ]] && kill "$(cat "$p")" 2>/dev/null
	done
	true
}

# ---- Per test.

fetch_setup() {
	edr_home_setup
	unset ENTER_DEVROOT_INDEX CURL_CA_BUNDLE ENTER_DEVROOT_LOW_SPEED_TIME ENTER_DEVROOT_CONNECT_TIMEOUT
	export ENTER_DEVROOT_DEFAULT_TEMPLATE=$EDR_TEMPLATE
	# The test's own corner of the web root: http://.../$D/...
	D=t$BATS_TEST_NUMBER
	mkdir -p "$WWW/$D"
	HTTP_MARK=$(wc -l < "$S/http.log")
	HTTPS_MARK=$(wc -l < "$S/https.log")
	cd "$T" || return
}

# fetch_setup_with_t BASE: fetch_setup, and the test's catalogue listing the template t
# (t.tar.gz) as ../t.tar.gz; IDX, the catalogue's URL on the server at BASE ($HTTP, $HTTPS).
fetch_setup_with_t() {
	fetch_setup
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE"
	IDX=$1/$D/index
}

fetch_teardown() {
	chmod -R u+rwX "$BATS_TEST_TMPDIR" 2>/dev/null || true
}

edr() { "$EDR_BIN" "$@"; }
edr_run() { run --separate-stderr "$EDR_BIN" "$@"; }

last_run() {
	printf 'status: %s\n--- stdout\n%s\n--- stderr\n%s\n' "$status" "$output" "${stderr-}"
}

assert_status() {
	[[ $status -eq $1 ]] || fail "expected exit status $1, got $status
$(last_run)"
}

# assert_stderr_has NEEDLE...: every NEEDLE appears in what the last edr_run wrote on stderr.
assert_stderr_has() {
	local n
	for n in "$@"; do
		[[ ${stderr-} == *"$n"* ]] || fail "stderr does not contain '$n'
$(last_run)"
	done
}

refute_stderr_has() {
	local n
	for n in "$@"; do
		[[ ${stderr-} != *"$n"* ]] || fail "stderr contains '$n'
$(last_run)"
	done
}

# assert_edr_error STATUS [NEEDLE...]: one line "enter-devroot: <what>: <why>" naming NEEDLEs.
assert_edr_error() {
	local want=$1
	shift
	assert_status "$want"
	[[ ${#stderr_lines[@]} -eq 1 ]] || fail "expected one line on stderr, got ${#stderr_lines[@]}
$(last_run)"
	[[ ${stderr_lines[0]} =~ ^enter-devroot:\ .+:\ .+ ]] || fail "not 'enter-devroot: <what>: <why>'
$(last_run)"
	assert_stderr_has "$@"
}

# index FILE [NAME URL SHA256 SIZE [DESCRIPTION]]...: write a catalogue.
index() {
	local f=$1
	shift
	echo "# written by $BATS_TEST_NAME" > "$f"
	while [[ $# -ge 4 ]]; do
		printf '\n[%s]\nurl = %s\nsha256 = %s\nsize = %s\ndescription = %s\n' \
			"$1" "$2" "$3" "$4" "${5:-test template $1}" >> "$f"
		shift 5 2>/dev/null || shift $#
	done
}

# The requests each server saw since this test started.
http_log() { tail -n +"$((HTTP_MARK + 1))" "$S/http.log"; }
https_log() { tail -n +"$((HTTPS_MARK + 1))" "$S/https.log"; }
# How many requests for paths ending in SUFFIX (the template file, usually).
http_count() { http_log | awk -v s="$1" '{ if (substr($2, length($2) - length(s) + 1) == s) n++ } END { print n + 0 }'; }

cache_dir() { echo "$XDG_CACHE_HOME/enter-devroot"; }
root_of() { echo "$XDG_DATA_HOME/enter-devroot/roots/$1"; }

# Nothing half-done: no partial download (or validators), no staging debris, no root NAME.
assert_no_partials() {
	local left
	left=$(ls -A "$(cache_dir)/partial" 2>/dev/null || true)
	[[ -z $left ]] || fail "partial downloads left behind: $left"
}
assert_no_root() {
	[[ ! -e $(root_of "$1") ]] || fail "devroot $1 exists"
	local staging
	staging=$(ls -A "$XDG_DATA_HOME/enter-devroot/staging" 2>/dev/null || true)
	[[ -z $staging ]] || fail "staging debris: $staging"
}
# cached_count: the number of verified files in the cache.
cached_count() { ls "$(cache_dir)/sha256" 2>/dev/null | wc -l; }
assert_cached() { # HEX
	[[ -f $(cache_dir)/sha256/$1 ]] || fail "$1 is not cached"
	[[ $(sha256sum < "$(cache_dir)/sha256/$1" | cut -d' ' -f1) == "$1" ]] ||
		fail "cached $1 does not hash to its name"
}
