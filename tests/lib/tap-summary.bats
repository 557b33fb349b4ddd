#!/usr/bin/env bats
# tap-summary counts TAP results; CI trusts its last line, so it is specified here.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

summary="$BATS_TEST_DIRNAME/tap-summary"


# summarize FILE-CONTENT... : each argument is one stream, written to its own file.
summarize() {
	local i=0 files=()
	for s in "$@"; do
		i=$((i + 1))
		printf '%s' "$s" > "$BATS_TEST_TMPDIR/s$i.tap"
		files+=("$BATS_TEST_TMPDIR/s$i.tap")
	done
	run "$summary" "${files[@]}"
}

@test "tap-summary: all passing stream exits 0 with the exact final line" {
	summarize $'1..2\nok 1 a\nok 2 b\n'
	assert_success
	assert_line --index -1 '2 passed, 0 failed, 0 skipped'
}

@test "tap-summary: a failure makes the exit status non-zero" {
	summarize $'1..2\nok 1 a\nnot ok 2 b\n# (in test file x, line 3)\n'
	assert_failure
	assert_line --index -1 '1 passed, 1 failed, 0 skipped'
}

@test "tap-summary: ok with a SKIP directive counts as skipped, in any case" {
	summarize $'1..3\nok 1 a # skip no root\nok 2 b # SKIP\nok 3 c #Skip\n'
	assert_success
	assert_line --index -1 '0 passed, 0 failed, 3 skipped'
}

@test "tap-summary: not ok with a TODO directive counts as skipped, not failed" {
	summarize $'1..2\nnot ok 1 a # TODO later\nok 2 b\n'
	assert_success
	assert_line --index -1 '1 passed, 0 failed, 1 skipped'
}

@test "tap-summary: missing plan counts as a failure" {
	summarize $'ok 1 a\nok 2 b\n'
	assert_failure
	assert_line --index -1 '2 passed, 1 failed, 0 skipped'
	assert_output --partial 'no plan'
}

@test "tap-summary: empty stream counts as a failure" {
	summarize ''
	assert_failure
	assert_line --index -1 '0 passed, 1 failed, 0 skipped'
}

@test "tap-summary: crash mid-run (fewer results than planned) counts the missing as failed" {
	summarize $'1..5\nok 1 a\nok 2 b\n'
	assert_failure
	assert_line --index -1 '2 passed, 3 failed, 0 skipped'
	assert_output --partial 'planned 5, ran 2'
}

@test "tap-summary: more results than planned counts as a failure" {
	summarize $'1..1\nok 1 a\nok 2 b\n'
	assert_failure
	assert_line --index -1 '2 passed, 1 failed, 0 skipped'
}

@test "tap-summary: plan at the end is accepted" {
	summarize $'ok 1 a\nok 2 b\n1..2\n'
	assert_success
	assert_line --index -1 '2 passed, 0 failed, 0 skipped'
}

@test "tap-summary: Bail out! counts as a failure" {
	summarize $'1..1\nBail out! no binary\n'
	assert_failure
	assert_output --partial 'bailed out'
}

@test "tap-summary: indented and diagnostic lines are ignored" {
	summarize $'TAP version 13\n1..1\n# not ok 7 in a comment\n  not ok 1 subtest\nok 1 a\n  ---\n  ...\n'
	assert_success
	assert_line --index -1 '1 passed, 0 failed, 0 skipped'
}

@test "tap-summary: several files give per-stream lines and a total" {
	summarize $'1..2\nok 1\nok 2\n' $'1..2\nok 1\nnot ok 2\n' $'1..1\nok 1 # skip x\n'
	assert_failure
	assert_line --index 0 "$BATS_TEST_TMPDIR/s1.tap: 2 passed, 0 failed, 0 skipped"
	assert_line --index 1 "$BATS_TEST_TMPDIR/s2.tap: 1 passed, 1 failed, 0 skipped"
	assert_line --index 2 "$BATS_TEST_TMPDIR/s3.tap: 0 passed, 0 failed, 1 skipped"
	assert_line --index 3 '3 passed, 1 failed, 1 skipped'
}

@test "tap-summary: concatenated streams on stdin are counted separately" {
	run "$summary" < <(printf '1..2\nok 1\nok 2\n1..3\nok 1\n')
	assert_failure
	assert_line --index 0 'stdin: 2 passed, 0 failed, 0 skipped'
	assert_line --index 1 'stdin#2: 1 passed, 2 failed, 0 skipped (planned 3, ran 1)'
	assert_line --index -1 '3 passed, 2 failed, 0 skipped'
}

@test "tap-summary: reads stdin when given -" {
	run "$summary" - < <(printf '1..1\nok 1\n')
	assert_success
	assert_line --index -1 '1 passed, 0 failed, 0 skipped'
}

@test "tap-summary: a plan of 1..0 with nothing run passes" {
	summarize $'1..0 # skip all\n'
	assert_success
	assert_line --index -1 '0 passed, 0 failed, 0 skipped'
}
