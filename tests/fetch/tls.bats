#!/usr/bin/env bats
# TLS is always verified: a private CA must be named with --cacert or CURL_CA_BUNDLE.

load common
setup_file() { fetch_setup_file; }
teardown_file() { fetch_teardown_file; }
setup() { fetch_setup_with_t "$HTTPS"; }
teardown() { fetch_teardown; }

@test "https with an untrusted certificate is refused" {
	edr_run templates --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "$IDX" "certificate"
	edr_run create r --template t --index "$IDX"
	assert_edr_error "$EDR_TOOL_EXIT" "certificate"
	assert_no_root r
	[[ $(https_log | wc -l) -eq 0 ]] || fail "a request got through: $(https_log)"
}

@test "https with --cacert naming the CA works: templates, fetch, create" {
	edr_run templates --index "$IDX" --cacert "$CA"
	assert_status 0
	assert_line --regexp '^t +'
	edr_run create r --template t --index "$IDX" --cacert "$CA" --quiet
	assert_status 0
	assert_cached "$TSHA"
	https_log | grep -q "GET /t.tar.gz .* status=200 sent=$TSIZE\$" || fail "$(https_log)"
}

@test "CURL_CA_BUNDLE is honoured like curl does" {
	CURL_CA_BUNDLE=$CA edr_run fetch t --index "$IDX"
	assert_status 0
	assert_cached "$TSHA"
}

@test "a certificate from another CA is refused even with --cacert" {
	mkdir "$T/other"
	make_certs "$T/other"
	edr_run fetch t --index "$IDX" --cacert "$T/other/ca.pem"
	assert_edr_error "$EDR_TOOL_EXIT" "certificate"
	[[ $(cached_count) -eq 0 ]]
}

@test "an unreadable --cacert is an error naming the file" {
	edr_run templates --index "$IDX" --cacert "$T/no-such-ca.pem"
	assert_edr_error "$EDR_TOOL_EXIT" "$T/no-such-ca.pem"
}
