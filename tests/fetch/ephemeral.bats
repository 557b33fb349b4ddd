#!/usr/bin/env bats
# run --ephemeral --template: many CI jobs at once from one template with a cold cache.

load common
setup_file() { fetch_setup_file; }
teardown_file() { fetch_teardown_file; }
setup() { fetch_setup_with_t "$HTTP"; }
teardown() { fetch_teardown; }

@test "8 concurrent run --ephemeral --template with a cold cache: one download, 8 roots, all removed" {
	local i pids=() st
	[[ $(cached_count) -eq 0 ]] || fail "the cache is not cold"
	for i in 1 2 3 4 5 6 7 8; do
		timeout 120 "$EDR_BIN" run --ephemeral --template t --index "$IDX" --quiet -- \
			sh -c 'echo $ENTER_DEVROOT_NAME; ls /bin/busybox' > "$T/job$i.out" 2> "$T/job$i.err" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		st=0
		wait "${pids[$i]}" || st=$?
		[[ $st -eq 0 ]] || fail "job $((i + 1)) exited $st: $(cat "$T/job$((i + 1)).err")"
	done
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "template downloaded $(http_count /t.tar.gz) times: $(http_log)"
	# 8 roots existed, each with its own name, each with the template's files
	assert_equal "$(cat "$T"/job*.out | grep -c '^/bin/busybox$')" 8
	assert_equal "$(cat "$T"/job*.out | grep '^ephemeral-' | sort -u | wc -l)" 8
	# and all are gone
	assert_equal "$("$EDR_BIN" list)" ""
	assert_equal "$(ls -A "$XDG_DATA_HOME/enter-devroot/roots")" ""
	assert_equal "$(ls -A "$XDG_DATA_HOME/enter-devroot/meta")" ""
	assert_no_partials
	assert_cached "$TSHA"
}
