#!/usr/bin/env bats
# create is atomic: racing creates, and a create killed mid-extraction.

load common

setup() { edr_setup; }
teardown() {
	[[ -z ${bg_pid:-} ]] || kill -9 "$bg_pid" 2>/dev/null || true
	edr_teardown
}

# tree_listing DIR: relative paths and types.
tree_listing() {
	(cd "$1" && find . -mindepth 1 -printf '%p|%y\n' | LC_ALL=C sort)
}

@test "concurrency: two creates of the same NAME: exactly one succeeds, the root is complete" {
	mkdir -p "$W/tree"
	small_tree "$W/tree"
	local i
	for i in $(seq 60); do echo "$i" > "$W/tree/f$i"; done
	tar -C "$W/tree" -cf "$W/t.tar" .
	# What one create alone makes of it (create may add the user's home).
	local want
	XDG_DATA_HOME=$T/ref-solo "$EDR_BIN" create solo --from "$W/t.tar" || fail "solo create failed"
	want=$(tree_listing "$T/ref-solo/enter-devroot/roots/solo")
	for i in 1 2 3 4 5 6; do
		"$EDR_BIN" create "race$i" --from "$W/t.tar" > "$T/a.out" 2> "$T/a.err" 3>&- &
		local pa=$!
		"$EDR_BIN" create "race$i" --from "$W/t.tar" > "$T/b.out" 2> "$T/b.err" 3>&- &
		local pb=$!
		local sa=0 sb=0
		wait "$pa" || sa=$?
		wait "$pb" || sb=$?
		if [[ $sa -eq 0 ]]; then
			[[ $sb -eq 125 ]] || fail "round $i: both or neither succeeded: $sa $sb; $(cat "$T/b.err")"
			[[ $(wc -l < "$T/b.err") -eq 1 ]] || fail "round $i: loser did not print one line: $(cat "$T/b.err")"
			grep -q "^enter-devroot: .*race$i" "$T/b.err" || fail "round $i: loser's error does not name race$i: $(cat "$T/b.err")"
		else
			[[ $sa -eq 125 && $sb -eq 0 ]] || fail "round $i: expected one 0 and one 125, got $sa $sb; $(cat "$T/a.err" "$T/b.err")"
			[[ $(wc -l < "$T/a.err") -eq 1 ]] || fail "round $i: loser did not print one line: $(cat "$T/a.err")"
		fi
		assert_equal "$(tree_listing "$(root_of "race$i")")" "$want"
	done
	assert_store_like_reference race1 race2 race3 race4 race5 race6
}

@test "concurrency: creates of different NAMEs in parallel all succeed" {
	small_tarball "$W/small.tar"
	local pids=() i
	for i in 1 2 3 4; do
		"$EDR_BIN" create "par$i" --from "$W/small.tar" 3>&- &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || fail "a parallel create failed"
	done
	for i in 1 2 3 4; do
		[[ -f $(root_of "par$i")/marker ]] || fail "par$i incomplete"
	done
	assert_store_like_reference par1 par2 par3 par4
}

# count_entries: how many paths the store (and the other XDG dirs) hold now.
count_entries() {
	find "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$HOME" 2>/dev/null | wc -l
}

@test "concurrency: a create killed mid-extraction leaves no root; the next create cleans the debris" {
	big_tarball "$W/big.tar" 40 1000 4096
	store_snapshot
	"$EDR_BIN" create dev --from "$W/big.tar" >/dev/null 2>&1 3>&- &
	bg_pid=$!
	local i
	for i in $(seq 2000); do
		[[ $(count_entries) -gt 500 ]] && break
		kill -0 "$bg_pid" 2>/dev/null || break
		sleep 0.01
	done
	kill -9 "$bg_pid" 2>/dev/null || true
	wait "$bg_pid" 2>/dev/null || true
	bg_pid=
	[[ ! -e $(root_of dev) ]] || skip "create finished before it could be killed (machine too fast)"
	[[ $(count_entries) -gt 500 ]] || fail "no sign of extraction before the kill"
	# The half-extracted tree sits in a private directory: libarchive-style path
	# checks are raceable, so nobody else may write (or even look) there. It is the
	# layer being made in the layer store (src/store/layers/layers.h), in a staging directory.
	local staging
	staging=$(find "$XDG_DATA_HOME" "$XDG_CACHE_HOME" -type d -name d00 -printf '%h\n' | head -1)
	[[ -n $staging ]] || fail "cannot find the staging directory"
	[[ $staging != "$(root_of dev)" ]] || fail "extraction happened in place, not in staging"
	assert_equal "$(stat -c %a "$staging")" 700
	assert_equal "$(stat -c %a "$(dirname "$staging")")" 700
	# The killed create left staging debris; the next create of any NAME removes it.
	small_tarball "$W/small.tar"
	edr_run create other --from "$W/small.tar"
	assert_status 0
	assert_store_like_reference other
	run find "$XDG_CACHE_HOME/enter-devroot/layers" -maxdepth 1 -name '.*' ! -name .
	assert_output ""
	# The NAME is not stuck behind a stale lock or staging dir.
	edr_run create dev --from "$W/small.tar"
	assert_status 0
	[[ -f $(root_of dev)/marker ]]
	assert_store_like_reference other dev
}

@test "concurrency: remove while a run is inside the root does not break the store" {
	create_default dev
	"$EDR_BIN" run dev -- sh -c 'sleep 1' 3>&- &
	bg_pid=$!
	sleep 0.2
	edr_run remove dev
	assert_no_crash
	wait "$bg_pid" || true
	bg_pid=
	if [[ $status -eq 0 ]]; then
		[[ ! -e $(root_of dev) ]] || fail "remove succeeded but the root is still there"
	else
		assert_edr_error 125 dev
		[[ -d $(root_of dev) ]] || fail "remove failed but the root is gone"
	fi
}
