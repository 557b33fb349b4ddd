#!/usr/bin/env bats
# The loop a team runs to share a tailored root: create from a template, install with
# --root apt-get, export, publish into a directory, serve it with nginx on 127.0.0.1, and
# create from that catalogue in another account (another HOME and XDG directories): the
# installed program runs there.

load common

setup_file() { repo_setup_file; }
teardown_file() { nginx_stop; }
setup() { rootemu_setup deb; }

teardown() {
	# The site's nginx (started per test, on its own port) is stopped by its pid.
	[[ -z ${SITE_S:-} ]] || S=$SITE_S nginx_stop
	rootemu_teardown
}

@test "loop: create, --root apt-get install, export, publish, serve, create --template elsewhere: the program runs" {
	run --separate-stderr "$EDR_BIN" run deb --root -- sh -c 'apt-get update && apt-get install -y edr-greet'
	assert_success
	local site=$T/site
	mkdir -p "$site"
	run --separate-stderr "$EDR_BIN" export deb "$T/tailored.tar.zst"
	assert_success
	run --separate-stderr "$EDR_BIN" publish "$site" "$T/tailored.tar.zst" --description "bookworm with edr-greet"
	assert_success
	SITE_S=$T/site-nginx
	mkdir -p "$SITE_S"
	S=$SITE_S serve_dir "$site" || fail "nginx did not start"
	local index=$SERVE_URL/index
	# Someone else: another HOME, data and cache.
	export HOME=$T/other XDG_DATA_HOME=$T/other/data XDG_CACHE_HOME=$T/other/cache XDG_CONFIG_HOME=$T/other/config
	mkdir -p "$HOME"
	run --separate-stderr "$EDR_BIN" templates --index "$index"
	assert_success
	assert_output --partial tailored
	assert_output --partial "bookworm with edr-greet"
	run --separate-stderr "$EDR_BIN" create mine --template tailored --index "$index" --quiet
	assert_success
	run --separate-stderr "$EDR_BIN" run mine -- edr-greet
	assert_success
	assert_output "hello from a package installed with --root"
	run --separate-stderr "$EDR_BIN" run mine -- dpkg -l edr-greet
	assert_line --regexp '^ii  edr-greet +1\.0 '
	grep -q 'GET /tailored.tar.zst' "$SITE_S/nginx/access.log" || fail "not downloaded from nginx"
}
