#!/usr/bin/env bats
# enter-devroot is three programs (src/common/helper.h): enter-devroot links the C library
# only, so that entering a root costs what chroot(8) costs, and execs enter-devroot-store
# (which links libarchive, libcurl and libcrypto) for create, templates, fetch and cache,
# and runs enter-devroot-cdi (libjansson and libyaml) for --device's CDI specs. The helpers
# are looked up beside the running binary, then in the compiled-in libexec directory;
# never on PATH.

load common

setup() {
	edr_setup
	HELPER=$(dirname "$EDR_BIN")/enter-devroot-store
	[[ -x $HELPER ]] || fail "no enter-devroot-store beside $EDR_BIN"
	# A pair of copies, and a fake helper that only leaves a mark.
	mkdir -p "$W/pair" "$W/fake" "$W/alone" "$W/onpath"
	cp "$EDR_BIN" "$HELPER" "$W/pair/"
	cp "$EDR_BIN" "$W/fake/"
	cp "$EDR_BIN" "$W/alone/"
	for d in fake onpath; do
		printf '#!/bin/sh\necho "$0 $*" >> %s/mark\nexit 99\n' "$W" > "$W/$d/enter-devroot-store"
		chmod 755 "$W/$d/enter-devroot-store"
	done
}

teardown() { edr_teardown; }

@test "split: enter-devroot links the C library only" {
	command -v readelf >/dev/null || skip "readelf not installed (binutils)"
	if readelf -s --wide "$EDR_BIN" | grep -q '__asan_init\|__ubsan_handle'; then
		skip "a sanitizer build links its run-time"
	fi
	run readelf -d --wide "$EDR_BIN"
	assert_success
	needed=$(grep '(NEEDED)' <<< "$output" | sed 's/.*\[\(.*\)\]/\1/' | sort | tr '\n' ' ')
	[[ $needed == "libc.so.6 " ]] || fail "enter-devroot needs: $needed"
	# ... and the helper is the one that carries the libraries.
	run readelf -d --wide "$HELPER"
	assert_output --partial libarchive
	assert_output --partial libcurl
}

@test "split: enter-devroot-cdi links the C library, libjansson and libyaml, none of the store's" {
	command -v readelf >/dev/null || skip "readelf not installed (binutils)"
	local cdi
	cdi=$(dirname "$EDR_BIN")/enter-devroot-cdi
	if readelf -s --wide "$cdi" | grep -q '__asan_init\|__ubsan_handle'; then
		skip "a sanitizer build links its run-time"
	fi
	run readelf -d --wide "$cdi"
	assert_success
	needed=$(grep '(NEEDED)' <<< "$output" | sed 's/.*\[\(.*\)\]/\1/' | sort | tr '\n' ' ')
	[[ $needed == "libc.so.6 libjansson.so.4 libyaml-0.so.2 " ]] || fail "enter-devroot-cdi needs: $needed"
}

@test "split: create from a copied pair uses the helper beside the binary" {
	run --separate-stderr "$W/pair/enter-devroot" create dev
	assert_status 0
	[[ -x $(root_of dev)/bin/sh ]] || fail "no root unpacked"
	run --separate-stderr "$W/pair/enter-devroot" run dev -- /bin/sh -c 'echo in-root'
	assert_status 0
	assert_output in-root
}

@test "split: create, templates, fetch and cache exec the helper with the same arguments" {
	for args in "create dev --from $EDR_TEMPLATE" "templates" "fetch minimal" "cache list"; do
		# shellcheck disable=SC2086
		run "$W/fake/enter-devroot" $args
		[[ $status -eq 99 ]] || fail "'$args' did not run the helper (status $status): $output"
	done
	run cat "$W/mark"
	assert_line --index 0 "$W/fake/enter-devroot-store create dev --from $EDR_TEMPLATE"
	assert_line --index 1 "$W/fake/enter-devroot-store templates"
	assert_line --index 2 "$W/fake/enter-devroot-store fetch minimal"
	assert_line --index 3 "$W/fake/enter-devroot-store cache list"
}

@test "split: enter, run, list, path, remove, doctor, help and version never run the helper" {
	edr create dev
	run "$W/fake/enter-devroot" run dev -- /bin/true
	assert_success
	run "$W/fake/enter-devroot" enter dev <<< 'exit 0'
	assert_success
	"$W/fake/enter-devroot" list > /dev/null
	"$W/fake/enter-devroot" path dev > /dev/null
	"$W/fake/enter-devroot" doctor > /dev/null || true
	"$W/fake/enter-devroot" --help > /dev/null
	"$W/fake/enter-devroot" create --help > /dev/null
	"$W/fake/enter-devroot" --version > /dev/null
	"$W/fake/enter-devroot" remove dev
	[[ ! -e $W/mark ]] || fail "the helper ran: $(cat "$W/mark")"
	[[ ! -e $(root_of dev) ]] || fail "remove did not remove"
}

@test "split: usage errors are found before the helper runs" {
	run --separate-stderr "$W/fake/enter-devroot" create
	assert_status "$EDR_TOOL_EXIT"
	run --separate-stderr "$W/fake/enter-devroot" fetch a b
	assert_status "$EDR_TOOL_EXIT"
	[[ ! -e $W/mark ]] || fail "the helper ran: $(cat "$W/mark")"
}

@test "split: a helper on PATH is never used; a missing helper is one line naming it" {
	# The compiled-in libexec directory is configure's --prefix: ~/.local after a user's
	# ./quickstart, /usr/local after root's; doctor says where the binary looks.
	local compiled
	compiled=$("$W/alone/enter-devroot" doctor 2>/dev/null | sed -n 's/^create and fetch run  *\([^:]*\).*/\1/p')
	[[ -n $compiled ]] || fail "doctor does not say where the helper is looked up"
	if [[ -x $compiled ]]; then
		skip "an installed enter-devroot-store would be found: $compiled"
	fi
	run --separate-stderr env PATH="$W/onpath:$PATH" "$W/alone/enter-devroot" create dev
	assert_edr_error "$EDR_TOOL_EXIT" "create" "/enter-devroot-store" "reinstall"
	[[ ${stderr_lines[0]} != *"$W"* ]] || fail "looked for the helper under the test's directories: ${stderr_lines[0]}"
	[[ ! -e $W/mark ]] || fail "the helper on PATH ran: $(cat "$W/mark")"
	[[ ! -e $(store)/roots/dev ]] || fail "a root appeared"
}

@test "split: run --device with no enter-devroot-cdi is one line naming it; nothing runs" {
	local compiled
	compiled=$("$W/alone/enter-devroot" doctor 2>/dev/null | sed -n 's/^--device runs  *\([^:]*\).*/\1/p')
	[[ -n $compiled ]] || fail "doctor does not say where enter-devroot-cdi is looked up"
	[[ ! -x $compiled ]] || skip "an installed enter-devroot-cdi would be found: $compiled"
	edr create dev
	run --separate-stderr "$W/alone/enter-devroot" run --device a.example.com/b=0 dev -- touch /ran
	assert_edr_error "$EDR_TOOL_EXIT" "--device" "/enter-devroot-cdi" "reinstall"
	[[ ! -e $(root_of dev)/ran ]] || fail "the command ran"
}

@test "split: the helper run by hand does only its own commands" {
	run --separate-stderr "$HELPER" run dev -- /bin/true
	assert_edr_error "$EDR_TOOL_EXIT" "enter-devroot-store is a helper" "enter-devroot run"
	run --separate-stderr "$HELPER" create dev
	assert_status 0
	[[ -x $(root_of dev)/bin/sh ]] || fail "no root unpacked"
}
