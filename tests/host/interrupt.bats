#!/usr/bin/env bats
# SIGINT, SIGTERM and SIGHUP during create (src/store/interrupt.c): the staging directory
# and metadata are gone as soon as the command has exited, one line says so, the status is
# 128+signal; a signal after the root is in place leaves a complete root and status 0.

load common

setup() { edr_setup; }
teardown() {
	[[ -z ${bg_pid:-} ]] || kill -9 "$bg_pid" 2>/dev/null || true
	exec 8>&- 2>/dev/null || true
	edr_teardown
}

# wait_exit PID: its exit status, waiting 30 s at most (then it is killed and the test
# fails: a create that ignores the signal must not hang the suite).
wait_exit() {
	if ! timeout 30 tail --pid="$1" -f /dev/null; then
		kill -9 "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		bg_pid=
		fail "the create did not exit within 30 s of the signal"
	fi
	local st=0
	wait "$1" || st=$?
	bg_pid=
	return "$st"
}

# The root's staging directory and the layer being unpacked into the layer store
# (src/store/layers/layers.h: layers/.HEX.XXXXXX), where the extraction happens.
staging_entries() {
	{
		find "$(store)/staging" -mindepth 1 2>/dev/null
		find "$XDG_CACHE_HOME/enter-devroot/layers" -mindepth 1 -path '*/layers/.*' 2>/dev/null
	} | wc -l
}

# assert_nothing_created STATUS: the create exited STATUS with exactly the line
# "enter-devroot: interrupted: nothing created", no root, no metadata, empty staging.
assert_nothing_created() {
	[[ $1 -eq $2 ]] || fail "expected exit status $2, got $1: $(cat "$T/err")"
	assert_equal "$(cat "$T/err")" "enter-devroot: interrupted: nothing created"
	[[ ! -e $(root_of dev) ]] || fail "a root was left"
	[[ ! -e $(store)/meta/dev.json ]] || fail "metadata was left"
	assert_equal "$(staging_entries)" 0
	assert_store_unchanged
}

# interrupt_mid_extraction SIG NUMBER [OPTION...]: a create (with OPTIONs) reading a FIFO
# that holds half of a big archive is stopped by SIG once files are unpacked in staging.
interrupt_mid_extraction() {
	big_tarball "$W/big.tar" 10 100 32768
	mkfifo "$W/fifo"
	exec 8<>"$W/fifo" # a writer exists: the create's open does not block
	store_snapshot
	"$EDR_BIN" create dev --from "$W/fifo" "${@:3}" >/dev/null 2>"$T/err" 3>&- &
	bg_pid=$!
	timeout 30 head -c $((16 << 20)) "$W/big.tar" >&8 &
	local feeder=$! i
	for i in $(seq 1000); do
		[[ $(staging_entries) -gt 100 ]] && break
		sleep 0.01
	done
	[[ $(staging_entries) -gt 100 ]] || fail "no sign of extraction: $(cat "$T/err")"
	wait "$feeder" # half the archive read: the create now waits for more
	kill -s "$1" "$bg_pid"
	local st=0
	wait_exit "$bg_pid" || st=$?
	exec 8>&-
	assert_nothing_created "$st" $((128 + $2))
}

@test "interrupt: SIGINT mid-extraction removes the staging directory, one line, exit 130" {
	interrupt_mid_extraction INT 2
}

@test "interrupt: SIGTERM mid-extraction removes the staging directory, one line, exit 143" {
	interrupt_mid_extraction TERM 15
}

@test "interrupt: SIGHUP mid-extraction removes the staging directory, one line, exit 129" {
	interrupt_mid_extraction HUP 1
}

@test "interrupt: SIGINT mid-extraction of an overlay root's layer removes the layer being made, one line, exit 130" {
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	# An overlay root's layer is unpacked into the layer store, whatever the filesystem.
	# The overlay probe's kept answer (made by the first overlay create) is no debris.
	small_tarball "$W/small.tar"
	"$EDR_BIN" create probe --overlay --from "$W/small.tar" && "$EDR_BIN" remove probe ||
		fail "an overlay create failed"
	interrupt_mid_extraction INT 2 --overlay
}

@test "interrupt: a create waiting for its first byte is interrupted at once" {
	mkfifo "$W/fifo"
	exec 8<>"$W/fifo"
	store_snapshot
	"$EDR_BIN" create dev --from "$W/fifo" >/dev/null 2>"$T/err" 3>&- &
	bg_pid=$!
	local i
	for i in $(seq 500); do
		[[ -n $(find "$(store)/staging" -mindepth 1 -maxdepth 1 2>/dev/null) ]] && break
		sleep 0.01
	done
	kill -s INT "$bg_pid"
	local st=0
	wait_exit "$bg_pid" || st=$?
	assert_nothing_created "$st" 130
}

@test "interrupt: signals at several points of a large create: 0 and a complete root, or 128+N and nothing" {
	big_tarball "$W/big.tar" 10 100 32768
	local want delay st n_done=0 n_int=0 sig sigs=(INT TERM HUP) k=0 t0 ms pct
	t0=$(date +%s%N)
	"$EDR_BIN" create ref --from "$W/big.tar" 2>/dev/null || fail "reference create failed"
	ms=$((($(date +%s%N) - t0) / 1000000))
	want=$(cd "$(root_of ref)" && find . | LC_ALL=C sort | sha256sum)
	"$EDR_BIN" remove ref
	store_snapshot
	# From the start to well after the end of a create on this machine.
	for pct in 0 5 10 25 40 55 70 85 95 100 110 150 200 400; do
		delay=$(printf '%d.%03d' $((ms * pct / 100 / 1000)) $((ms * pct / 100 % 1000)))
		sig=${sigs[k++ % 3]}
		"$EDR_BIN" create dev --from "$W/big.tar" >/dev/null 2>"$T/err" 3>&- &
		bg_pid=$!
		# Delays count from the helper's start (a signal before enter-devroot
		# runs at all kills a shell's child with no word from anyone).
		for _ in $(seq 500); do
			[[ $(readlink "/proc/$bg_pid/exe" 2>/dev/null) == */enter-devroot-store ]] && break
			kill -0 "$bg_pid" 2>/dev/null || break
			sleep 0.002
		done
		sleep "$delay"
		kill -s "$sig" "$bg_pid" 2>/dev/null || true
		st=0
		wait_exit "$bg_pid" || st=$?
		assert_equal "$(staging_entries)" 0
		if [[ $st -eq 0 ]]; then
			n_done=$((n_done + 1))
			[[ ! -s $T/err ]] || fail "a complete create printed: $(cat "$T/err")"
			assert_equal "$(cd "$(root_of dev)" && find . | LC_ALL=C sort | sha256sum)" "$want"
			"$EDR_BIN" remove dev
		else
			n_int=$((n_int + 1))
			local num
			num=$(kill -l "$sig")
			assert_nothing_created "$st" $((128 + num))
		fi
	done
	echo "# $n_done complete, $n_int interrupted" >&3
	[[ $n_int -gt 0 ]] || fail "no create was interrupted: the archive is too small for this machine"
}
