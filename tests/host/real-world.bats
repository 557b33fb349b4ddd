#!/usr/bin/env bats
# Tarballs as real tools write them (src/store/extract.c): duplicates that GNU tar and
# bsdtar accept are accepted, and a refusal says how to repack.

load common

setup() { edr_setup; }
teardown() { edr_teardown; }

@test "real-world: a path listed twice to GNU tar -T (a hard link to itself) is skipped with one warning" {
	mkdir -p "$W/tree/etc"
	echo 'root:x:0:0:root:/root:/bin/sh' > "$W/tree/etc/passwd"
	echo "one copy" > "$W/tree/etc/twice"
	printf './etc/passwd\n./etc/twice\n./etc/twice\n' > "$W/list"
	tar -C "$W/tree" -cf "$W/t.tar" --no-recursion -T "$W/list"
	# The archive holds what the issue describes: the second copy is a link to itself.
	tar -tvf "$W/t.tar" | grep -q 'etc/twice link to ./etc/twice' || skip "this GNU tar does not write a self-link"
	edr_run create dev --from "$W/t.tar"
	assert_status 0
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: "*"skipped 1 duplicate member(s) stored as a hard link to itself"* ]] ||
		fail "not the one warning: $(last_run)"
	assert_equal "$(cat "$(root_of dev)/etc/twice")" "one copy"
	assert_equal "$(stat -c %h "$(root_of dev)/etc/twice")" 1
}

@test "real-world: a hard link to itself with no earlier file of that name is refused" {
	mktar "$W/t.tar" d etc h etc/alone etc/alone
	edr_run create dev --from "$W/t.tar"
	assert_edr_error 125 "etc/alone" "hardlink to itself"
	[[ ! -e $(root_of dev) ]] || fail "a root was made"
}

@test "real-world: a later duplicate regular file replaces the earlier one, as every tar does" {
	mktar "$W/t.tar" d etc f etc/dup first f etc/other x f etc/dup second
	edr_run create dev --from "$W/t.tar"
	assert_status 0
	assert_equal "$(cat "$(root_of dev)/etc/dup")" second
}

@test "real-world: a path through a merged-/usr symlink is refused, and the message says how to repack" {
	mktar "$W/t.tar" d usr d usr/lib l lib usr/lib f lib/libc.so.6 x
	store_snapshot
	edr_run create dev --from "$W/t.tar"
	assert_edr_error 125 "lib/libc.so.6" "'lib', a symlink to 'usr/lib'" "repack the archive with canonical paths ('usr/lib/...' rather than 'lib/...')"
	assert_store_unchanged
}

@test "real-world: the repack hint follows an absolute symlink target too" {
	mktar "$W/t.tar" d usr d usr/bin l bin /usr/bin f bin/sh x
	edr_run create dev --from "$W/t.tar"
	assert_edr_error 125 "('usr/bin/...' rather than 'bin/...')"
}
