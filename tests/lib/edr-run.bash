# Running enter-devroot the bats way and checking how it ended, shared by the host and guest
# suites' common.bash (the guest's loads nothing else of the host's: see its header).
# Needs bats-support (fail) and EDR_BIN.

# Run the tool the bats way, stderr kept apart so error lines can be checked.
edr_run() { run --separate-stderr "$EDR_BIN" "$@"; }

# edr_run_127 ARGS...: edr_run where exit status 127 is the expected outcome
# (tells bats so, which keeps its BW01 warning quiet).
edr_run_127() { run -127 --separate-stderr "$EDR_BIN" "$@"; }

# Show what the last edr_run printed, for failure messages.
last_run() {
	printf 'status: %s\n--- stdout\n%s\n--- stderr\n%s\n' "$status" "$output" "${stderr-}"
}

# assert_status N: the last edr_run exited with N.
assert_status() {
	[[ $status -eq $1 ]] || fail "expected exit status $1, got $status
$(last_run)"
}

# assert_edr_error STATUS [NEEDLE...]: the last edr_run exited STATUS and wrote
# exactly one line on stderr, shaped "enter-devroot: <what failed>: <why>",
# containing every NEEDLE (the name, file or entry at fault).
assert_edr_error() {
	local want=$1 n
	shift
	assert_status "$want"
	[[ ${#stderr_lines[@]} -eq 1 ]] ||
		fail "expected exactly one line on stderr, got ${#stderr_lines[@]}
$(last_run)"
	[[ ${stderr_lines[0]} =~ ^enter-devroot:\ .+:\ .+ ]] ||
		fail "error line is not 'enter-devroot: <what failed>: <why>'
$(last_run)"
	for n in "$@"; do
		[[ ${stderr_lines[0]} == *"$n"* ]] ||
			fail "error line does not name '$n'
$(last_run)"
	done
}
