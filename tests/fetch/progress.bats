#!/usr/bin/env bats
# A progress bar on a terminal; nothing but errors otherwise, or with --quiet.

load common
setup_file() { fetch_setup_file; }
teardown_file() { fetch_teardown_file; }
setup() {
	fetch_setup
	# Slow enough (about 2.5 s) for the bar to be drawn several times.
	index "$WWW/$D/index" t "../@rate=400000/t.tar.gz" "$TSHA" "$TSIZE"
	IDX=$HTTP/$D/index
}
teardown() { fetch_teardown; }

# on_tty CMD...: run CMD with stdin/stdout/stderr on a pseudo-terminal; output in $T/tty.out.
on_tty() {
	command -v script >/dev/null || skip "script(1) not found (apt-get install bsdutils)"
	local cmd
	printf -v cmd '%q ' "$@"
	script -qec "$cmd" "$T/tty.out" > /dev/null
}

@test "no progress output when stderr is not a terminal" {
	edr_run create r --template t --index "$IDX"
	assert_status 0
	[[ -z $stderr ]] || fail "expected an empty stderr
$(last_run)"
	assert_output ""
}

@test "a progress bar with bytes, rate and ETA on a terminal" {
	on_tty "$EDR_BIN" fetch t --index "$IDX"
	# A bar redraws its line: a carriage return not ending a line (the terminal turns
	# every newline into \r\n, so those do not count).
	grep -Pq '\r[^\n]' "$T/tty.out" || fail "no redrawn line: $(cat -A "$T/tty.out")"
	grep -Eq '\[=*>? *\] +[0-9]+%  [0-9.]+ (B|KiB|MiB) / [0-9.]+ (KiB|MiB)  [0-9.]+ (B|KiB|MiB)/s' "$T/tty.out" ||
		fail "no progress bar: $(cat -A "$T/tty.out")"
	grep -q 'ETA [0-9]*:[0-9][0-9]' "$T/tty.out" || fail "no ETA: $(cat -A "$T/tty.out")"
	assert_cached "$TSHA"
}

@test "unpacking shows a progress bar on a terminal, and nothing otherwise" {
	cp "$WWW/t.tar.gz" "$T/t.tar.gz"
	index "$T/index" t t.tar.gz "$TSHA" "$TSIZE"
	on_tty "$EDR_BIN" create r --template t --index "file://$T/index"
	grep -Eq 'unpacking r  \[=+\] 100%  [0-9.]+ KiB / [0-9.]+ KiB' "$T/tty.out" ||
		fail "no unpacking bar: $(cat -A "$T/tty.out")"
	edr_run create s --template t --index "file://$T/index"
	assert_status 0
	[[ -z $stderr ]] || fail "$(last_run)"
}

@test "--quiet silences the progress bar on a terminal" {
	on_tty "$EDR_BIN" fetch t --index "$IDX" --quiet
	if grep -Pq '\r[^\n]|ETA' "$T/tty.out"; then fail "progress drawn: $(cat -A "$T/tty.out")"; fi
	assert_cached "$TSHA"
}
