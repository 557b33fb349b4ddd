#!/usr/bin/env bats
# list, path and remove: where roots live and how they go away.

load common

setup() { edr_setup; }
teardown() { edr_teardown; }

# json_roots: "name path" lines from `list --json`, whatever the document's
# shape (a list of objects, or an object holding one), read with python's json.
json_roots() {
	python3 -c '
import json, sys
doc = json.load(sys.stdin)
def walk(x):
    if isinstance(x, dict):
        if "name" in x:
            print(x["name"], x.get("path", ""))
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(doc)
' | LC_ALL=C sort
}

@test "list: with no roots prints no root names and exits 0" {
	edr_run list
	assert_status 0
	refute_output --partial dev
}

@test "list: the table names every root" {
	small_tarball "$W/small.tar"
	edr_run create dev --from "$W/small.tar"
	edr_run create other.one --from "$W/small.tar"
	edr_run list
	assert_status 0
	assert_output --regexp '(^|[[:space:]])dev([[:space:]]|$)'
	assert_output --regexp '(^|[[:space:]])other\.one([[:space:]]|$)'
}

@test "list --json: one JSON document with every root's name and path" {
	small_tarball "$W/small.tar"
	edr_run create dev --from "$W/small.tar"
	edr_run create other.one --from "$W/small.tar"
	edr_run list --json
	assert_status 0
	local got
	got=$(json_roots <<< "$output") || fail "list --json is not JSON: $output"
	assert_equal "$got" "dev $(root_of dev)"$'\n'"other.one $(root_of other.one)"
}

@test "list --json: with no roots is still valid JSON naming nothing" {
	edr_run list --json
	assert_status 0
	local got
	got=$(json_roots <<< "$output") || fail "list --json is not JSON: $output"
	assert_equal "$got" ""
}

@test "list: a removed root is no longer listed" {
	small_tarball "$W/small.tar"
	edr_run create dev --from "$W/small.tar"
	edr_run remove dev
	assert_status 0
	edr_run list --json
	assert_equal "$(json_roots <<< "$output")" ""
}

@test "path: prints XDG_DATA_HOME/enter-devroot/roots/NAME exactly" {
	create_default dev
	edr_run path dev
	assert_status 0
	assert_output "$XDG_DATA_HOME/enter-devroot/roots/dev"
	[[ -d $output ]]
}

@test "path: without XDG_DATA_HOME prints HOME/.local/share/enter-devroot/roots/NAME" {
	unset XDG_DATA_HOME
	create_default dev
	edr_run path dev
	assert_status 0
	assert_output "$HOME/.local/share/enter-devroot/roots/dev"
}

@test "path: a relative XDG_DATA_HOME is ignored as the XDG spec says" {
	cd "$T"
	export XDG_DATA_HOME=relative/data
	create_default dev
	edr_run path dev
	assert_status 0
	assert_output "$HOME/.local/share/enter-devroot/roots/dev"
	[[ ! -e $T/relative ]] || fail "the relative XDG_DATA_HOME was used"
}

@test "path: an empty XDG_DATA_HOME is treated as unset" {
	export XDG_DATA_HOME=
	create_default dev
	edr_run path dev
	assert_status 0
	assert_output "$HOME/.local/share/enter-devroot/roots/dev"
}

@test "remove: the root and its metadata are gone" {
	store_snapshot
	create_default dev
	edr_run remove dev
	assert_status 0
	[[ ! -e $(root_of dev) ]] || fail "root still there"
	assert_store_unchanged
	# And nothing mentions it any more.
	run grep -rl dev "$(store)"
	assert_failure
}

@test "remove: other roots are untouched" {
	small_tarball "$W/small.tar"
	edr_run create dev --from "$W/small.tar"
	edr_run create keep --from "$W/small.tar"
	local before
	before=$(snapshot "$(root_of keep)")
	edr_run remove dev
	assert_status 0
	assert_equal "$(snapshot "$(root_of keep)")" "$before"
	assert_store_like_reference keep
}

@test "remove: a root containing read-only directories is removed" {
	mktar "$W/ro.tar" m 0555 d ro f ro/file data m 0500 d ro/inner m 0400 f ro/inner/deep data m 0000 d ro/none
	edr_run create dev --from "$W/ro.tar"
	assert_status 0
	edr_run remove dev
	assert_status 0
	[[ ! -e $(root_of dev) ]] || fail "root still there"
}

@test "remove: a root whose top directory was made read-only from inside is removed" {
	create_default dev
	edr_run run dev -- chmod 0555 /
	assert_status 0
	assert_equal "$(stat -c %a "$(root_of dev)")" 555
	edr_run remove dev
	assert_status 0
	[[ ! -e $(root_of dev) ]] || fail "root still there"
}

@test "remove: a root made read-only from inside is removed" {
	create_default dev
	edr_run run dev -- sh -c 'mkdir -p /a/b/c && echo x > /a/b/c/f && chmod -R a-w /a'
	assert_status 0
	edr_run remove dev
	assert_status 0
	[[ ! -e $(root_of dev) ]] || fail "root still there"
}

@test "remove: does not follow symlinks inside the root to delete outside files" {
	plant_sentinels
	create_default dev
	local r
	r=$(root_of dev)
	ln -s "$OUT" "$r/to-dir"
	ln -s "$OUT/file" "$r/to-file"
	ln -s "$OUT/dir" "$r/tmp/to-subdir"
	mkdir -p "$r/nest"
	ln -s ../../../../../../../../../../../../../.."$OUT" "$r/nest/up"
	edr_run remove dev
	assert_status 0
	[[ ! -e $r ]] || fail "root still there"
	assert_outside_unchanged
}

@test "remove: a missing NAME is refused with 125 naming it" {
	store_snapshot
	edr_run remove nosuch
	assert_edr_error 125 nosuch
	assert_store_unchanged
}

@test "remove: twice fails the second time with 125" {
	create_default dev
	edr_run remove dev
	assert_status 0
	edr_run remove dev
	assert_edr_error 125 dev
}

@test "remove: then create the same NAME again works" {
	create_default dev
	edr_run remove dev
	assert_status 0
	edr_run create dev
	assert_status 0
	[[ -x $(root_of dev)/bin/sh ]]
}

@test "list: the NAME column fits a long name, every column aligned" {
	local long=a-rather-long-devroot-name-for-a-toolchain-with-several-parts.x
	create_default "$long"
	create_default b
	edr_run list
	assert_status 0
	local col
	col=$(awk '{ print index($0, $2) }' <<< "$output" | sort -u)
	assert_equal "$(wc -l <<< "$col")" 1
	[[ ${lines[1]} == "$long "* ]] || fail "the long name is cut: $output"
}

@test "list: the size column says it is the size at creation, which installing more does not change" {
	create_default a
	edr_run list
	assert_line --index 0 --regexp '^NAME +SIZE-AT-CREATION +OWN +SHARED +CREATED +WARM +SOURCE$'
	local before
	before=$(awk 'NR == 2 { print $2 }' <<< "$output")
	head -c 3M /dev/zero > "$(edr path a)/big"
	edr_run list
	assert_equal "$(awk 'NR == 2 { print $2 }' <<< "$output")" "$before"
}
