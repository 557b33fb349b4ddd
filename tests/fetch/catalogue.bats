#!/usr/bin/env bats
# `templates`, catalogue parsing errors and which catalogue is used.

load common
setup_file() { fetch_setup_file; }
teardown_file() { fetch_teardown_file; }
setup() { fetch_setup; }
teardown() { fetch_teardown; }

@test "templates lists name, size, cached state and description as a table" {
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE" "the small one" \
		other https://example.invalid/o.tar.zst "$(printf '%064d' 0)" 2048 "another one"
	edr_run templates --index "$HTTP/$D/index"
	assert_status 0
	assert_line --index 0 --regexp '^NAME +SIZE +CACHED +DESCRIPTION$'
	assert_line --regexp '^t +[0-9.]+ (KiB|MiB) +no +the small one$'
	assert_line --regexp '^other +2\.0 KiB +no +another one$'
	# Then the built-in templates (src/store/builtin.c), after the catalogue's.
	assert_line --index 3 --regexp '^minimal +- +- +busybox only'
	assert_line --regexp '^debian-bookworm +- +- +Debian 12'
}

@test "a description with terminal escape sequences is printed defanged" {
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE" $'evil \e]0;pwned\a \e[2J'
	edr_run templates --index "$HTTP/$D/index"
	assert_status 0
	assert_line --regexp '^t +.* evil \?\]0;pwned\? \?\[2J$'
	[[ $output != *$'\e'* ]] || fail "an escape character reached the terminal"
}

@test "templates --json is one JSON document with resolved URLs" {
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE" "the small one"
	edr_run templates --index "$HTTP/$D/index" --json
	assert_lists_t_as_json
}

@test "templates shows a fetched template as cached" {
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE"
	edr fetch t --index "$HTTP/$D/index" --quiet
	edr_run templates --index "$HTTP/$D/index"
	assert_line --regexp '^t +.* yes +'
}

@test "a catalogue with a malformed line is refused, naming the line" {
	printf '# ok\n[t]\nurl = t.tar.gz\nthis is not a key value line\n' > "$WWW/$D/index"
	edr_run templates --index "$HTTP/$D/index"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/$D/index" "line 4" "malformed line"
}

@test "a template without sha256 is refused, naming its line" {
	printf '\n\n[t]\nurl = t.tar.gz\nsize = 10\n' > "$WWW/$D/index"
	edr_run templates --index "$HTTP/$D/index"
	assert_edr_error "$EDR_TOOL_EXIT" "line 3" "no sha256"
}

@test "a duplicate template name is refused, naming both lines" {
	index "$WWW/$D/index" t a "$TSHA" 1 x t b "$TSHA" 1 y
	edr_run templates --index "$HTTP/$D/index"
	assert_edr_error "$EDR_TOOL_EXIT" "line 9" "duplicate template 't'" "first defined on line 3"
}

@test "a bad digest in the catalogue is refused" {
	index "$WWW/$D/index" t a "${TSHA^^}" 1
	edr_run templates --index "$HTTP/$D/index"
	assert_edr_error "$EDR_TOOL_EXIT" "line 5" "bad sha256"
}

@test "unknown keys in the catalogue are ignored" {
	printf '[t]\nurl = ../t.tar.gz\nsha256 = %s\narch = amd64\nsize = %s\n' "$TSHA" "$TSIZE" > "$WWW/$D/index"
	edr_run templates --index "$HTTP/$D/index"
	assert_status 0
	assert_line --regexp '^t +'
}

@test "an unreachable catalogue (404) fails naming its URL" {
	edr_run templates --index "$HTTP/$D/missing-index"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/$D/missing-index" "404"
}

@test "an unreachable catalogue: the copy last fetched is used, with one warning; cached templates still create" {
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE"
	edr fetch t --index "$HTTP/$D/index" --quiet
	rm "$WWW/$D/index"
	edr_run create r --template t --index "$HTTP/$D/index"
	assert_status 0
	[[ ${#stderr_lines[@]} -eq 1 && ${stderr_lines[0]} == *"cannot download $HTTP/$D/index"*"using the copy fetched at"* ]] ||
		fail "expected one warning line: $stderr"
	[[ -d $(root_of r) ]] || fail "no root"
	edr_run templates --index "$HTTP/$D/index"
	assert_status 0
	assert_line --regexp '^t +.* yes +'
	# Another index URL has no saved copy: the error is the plain one.
	edr_run templates --index "$HTTP/$D/other-index"
	assert_edr_error "$EDR_TOOL_EXIT" "$HTTP/$D/other-index" "404"
}

@test "a template not in the catalogue is refused by fetch and create" {
	index "$WWW/$D/index" t ../t.tar.gz "$TSHA" "$TSIZE"
	edr_run fetch nope --index "$HTTP/$D/index"
	assert_edr_error "$EDR_TOOL_EXIT" "template 'nope': not in catalogue"
	edr_run create r --template nope --index "$HTTP/$D/index"
	assert_edr_error "$EDR_TOOL_EXIT" "template 'nope': not in catalogue"
	assert_no_root r
}

@test "without any catalogue configured, templates lists the built-in ones: minimal and images" {
	edr_run templates
	assert_status 0
	assert_line --index 0 --regexp '^NAME +SIZE +CACHED +DESCRIPTION$'
	assert_line --index 1 --regexp '^minimal +- +- +busybox only'
	assert_line --regexp '^debian-bookworm +- +- +Debian 12'
	edr_run templates --json
	run python3 -c 'import json, sys; print(" ".join(e["name"] + "=" + e["url"] for e in json.load(sys.stdin)))' <<< "$output"
	assert_output --partial "minimal=embedded debian-bookworm=docker://debian:bookworm"
}

@test "without any catalogue configured, create --template of a name nobody lists says how to configure one" {
	edr_run create r --template nope
	assert_edr_error "$EDR_TOOL_EXIT" "no template catalogue configured" "--index" "ENTER_DEVROOT_INDEX"
}

@test "index precedence: config file < ENTER_DEVROOT_INDEX < --index" {
	for w in conf env opt; do
		index "$WWW/$D/$w" "from-$w" ../t.tar.gz "$TSHA" "$TSIZE"
	done
	mkdir -p "$XDG_CONFIG_HOME/enter-devroot"
	printf '# mine\nindex = %s\n' "$HTTP/$D/conf" > "$XDG_CONFIG_HOME/enter-devroot/config"

	edr_run templates
	assert_line --regexp '^from-conf '
	ENTER_DEVROOT_INDEX=$HTTP/$D/env edr_run templates
	assert_line --regexp '^from-env '
	ENTER_DEVROOT_INDEX=$HTTP/$D/env edr_run templates --index "$HTTP/$D/opt"
	assert_line --regexp '^from-opt '
	refute_line --regexp '^from-(env|conf) '
}

@test "a malformed config file is refused, naming it and the line" {
	mkdir -p "$XDG_CONFIG_HOME/enter-devroot"
	printf '\nindex\n' > "$XDG_CONFIG_HOME/enter-devroot/config"
	edr_run templates
	assert_edr_error "$EDR_TOOL_EXIT" "$XDG_CONFIG_HOME/enter-devroot/config" "line 2"
}

@test "a file:// catalogue with relative template URLs works" {
	cp "$WWW/t.tar.gz" "$T/t.tar.gz"
	index "$T/index" t t.tar.gz "$TSHA" "$TSIZE"
	edr_run create r --template t --index "file://$T/index" --quiet
	assert_status 0
	[[ -d $(root_of r)/bin ]]
	edr_run list --json
	assert_output --partial "template t (file://$T/t.tar.gz)"
}

@test "an endless catalogue body is cut at a limit with a clear error" {
	local start=$SECONDS
	ENTER_DEVROOT_LOW_SPEED_TIME=3 edr_run templates --index "$HTTP/$D/@endless/index"
	assert_edr_error "$EDR_TOOL_EXIT" "index"
	((SECONDS - start < 60)) || fail "took $((SECONDS - start)) s to give up on an endless catalogue"
}

@test "template names that try to be paths are refused in the catalogue and on the command line" {
	local n
	for n in ../x a/b /abs .. .; do
		index "$WWW/$D/index" "$n" ../t.tar.gz "$TSHA" "$TSIZE" "evil"
		edr_run fetch "$n" --index "$HTTP/$D/index" --quiet
		assert_edr_error "$EDR_TOOL_EXIT"
		[[ -z $(find "$XDG_DATA_HOME" "$XDG_CACHE_HOME" -name x -o -name b -o -name abs 2>/dev/null) ]] ||
			fail "name '$n' made a path"
	done
}

@test "a remote catalogue cannot point at file:// or other schemes" {
	local u
	for u in file:///etc/passwd ftp://127.0.0.1/t.tar.gz gopher://127.0.0.1/t dict://127.0.0.1/t scp://127.0.0.1/t; do
		index "$WWW/$D/index" t "$u" "$TSHA" "$TSIZE" "evil"
		edr_run fetch t --index "$HTTP/$D/index" --quiet
		assert_edr_error "$EDR_TOOL_EXIT"
	done
}
