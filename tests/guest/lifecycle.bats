#!/usr/bin/env bats
# A devroot's life on the patched kernel (chroot mode): create interrupted by a signal
# leaves nothing; remove refuses a root in use, and --force stops what runs in it.

load common

setup_file() { guest_setup_file; }
setup() { guest_setup; }
teardown() {
	[[ -z ${bg_pid:-} ]] || kill -9 "$bg_pid" 2>/dev/null || true
	exec 8>&- 2>/dev/null || true
	guest_teardown
}

# wait_exit PID: its exit status, 60 s at most (then killed, and the test fails).
wait_exit() {
	if ! timeout 60 tail --pid="$1" -f /dev/null; then
		kill -9 "$1" 2>/dev/null
		bg_pid=
		fail "process $1 did not exit within 60 s"
	fi
	local st=0
	wait "$1" || st=$?
	bg_pid=
	return "$st"
}

@test "lifecycle: SIGINT mid-extraction leaves no root and an empty staging directory, exit 130" {
	python3 - "$T/big.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as tar:
    data = b"y" * 32768
    for f in range(400):
        info = tarfile.TarInfo("d/f%03d" % f)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
PY
	export XDG_DATA_HOME=$T/data
	local staging=$XDG_DATA_HOME/enter-devroot/staging
	mkfifo "$T/fifo"
	exec 8<>"$T/fifo"
	"$EDR_BIN" create big --from "$T/fifo" >/dev/null 2>"$T/err" 3>&- &
	bg_pid=$!
	timeout 60 head -c $((6 << 20)) "$T/big.tar" >&8 || fail "the create did not read half the archive"
	local n
	# The extraction happens in the layer being made (src/store/layers/layers.h: layers/.HEX.XXXXXX).
	n=$( { find "$staging" -mindepth 1; find "${XDG_CACHE_HOME:-$HOME/.cache}/enter-devroot/layers" -mindepth 1 -path '*/layers/.*'; } 2>/dev/null | wc -l)
	[[ $n -gt 50 ]] || fail "no sign of extraction in staging ($n entries)"
	kill -s INT "$bg_pid"
	local st=0
	wait_exit "$bg_pid" || st=$?
	exec 8>&-
	assert_equal "$st" 130
	assert_equal "$(cat "$T/err")" "enter-devroot: interrupted: nothing created"
	assert_equal "$(find "$staging" -mindepth 1 | wc -l)" 0
	[[ ! -e $XDG_DATA_HOME/enter-devroot/roots/big ]] || fail "a root was left"
}

@test "lifecycle: remove refuses a root a chrooted sleep runs in, naming it; --force stops it and removes the root" {
	export XDG_DATA_HOME=$T/data
	"$EDR_BIN" create busy || fail "create busy failed"
	"$EDR_BIN" run busy --mode=chroot -- sleep 600 >/dev/null 2>&1 3>&- &
	bg_pid=$!
	# run stays outside as the job's supervisor; the sleep is its child, in the root.
	local i sleep_pid=
	for i in $(seq 500); do
		sleep_pid=$(pgrep -P "$bg_pid" -x sleep) && break
		sleep 0.02
	done
	[[ -n $sleep_pid ]] || fail "no sleep started below run ($bg_pid)"
	edr_run remove busy
	assert_edr_error 125 "'busy'" "process $sleep_pid (sleep)"
	[[ -d $XDG_DATA_HOME/enter-devroot/roots/busy/bin ]] || fail "the root was touched"
	kill -0 "$sleep_pid" || fail "the sleep was stopped"
	edr_run remove --force busy
	assert_status 0
	local st=0
	wait_exit "$bg_pid" || st=$?
	assert_equal "$st" 143 # the command died of SIGTERM
	[[ ! -e $XDG_DATA_HOME/enter-devroot/roots/busy ]] || fail "the root is still there"
}
