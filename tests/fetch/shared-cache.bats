#!/usr/bin/env bats
# Two users on one download cache (SECURITY.md, "A shared download cache"), as an
# administrator makes one: root's, sticky, writable by all (install -d -m 1777). The other
# user (edr-test2) plants, rewrites and holds what they like in it; what the victim
# (edr-test) gets never changes, and costs them at most a bounded wait and a message
# naming the other user. tests/fetch/run runs this file as root, which is each user in turn
# through setpriv; as anyone else every test skips.

load common

setup_file() {
	[[ $(id -u) -eq 0 ]] || return 0
	fetch_check_prerequisites || return 1
	# Not under bats's own (root-only) temporary directories: both users read these.
	S=$(mktemp -d "$TMPDIR/shared-cache.XXXXXX")
	chmod 755 "$S"
	export S WWW=$S/www
	mkdir -p "$WWW"
	: > "$S/http.log"
	make_certs "$S"
	start_server http
	HTTP_PORT=$(cat "$S/http.port")
	HTTPS_PORT=0 # no https server here
	fetch_publish_template
	chmod -R a+rX "$S"
}

teardown_file() {
	[[ -n ${S:-} ]] || return 0
	fetch_teardown_file
	rm -rf "$S"
}

setup() {
	[[ $(id -u) -eq 0 ]] || skip "needs root to be two users (tests/fetch/run runs this suite as root when it is root)"
	id "${EDR_OTHER_USER:-}" >/dev/null 2>&1 || skip "the second test user ${EDR_OTHER_USER:-} is missing"
	W=$(mktemp -d "$S/t.XXXXXX")
	chmod 755 "$W"
	SHARED=$W/cache
	install -d -m 1777 "$SHARED" "$SHARED/sha256" "$SHARED/origin" "$SHARED/partial" "$SHARED/locks"
	local who
	for who in victim attacker; do
		install -d -m 700 -o "$(user_of "$who")" "$W/$who"
	done
	D=t$BATS_TEST_NUMBER
	mkdir -p "$WWW/$D"
	chmod 755 "$WWW/$D"
	HTTP_MARK=$(wc -l < "$S/http.log")
	PIDS=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	[[ -z ${W:-} ]] || rm -rf "$W"
}

user_of() { if [[ $1 == victim ]]; then echo "$EDR_TEST_USER"; else echo "$EDR_OTHER_USER"; fi; }

# as WHO [VAR=VALUE...] CMD...: CMD as the victim or the attacker, with their own HOME and
# XDG directories and the shared cache. as_within SECONDS WHO ...: the same, killed after
# SECONDS (timeout's status 124). as_bg WHO ...: in the background, its pid added to PIDS
# (the process itself: setpriv and env exec it), for teardown to stop.
as_cmd() { # WHO: sets AS, the command prefix
	local user
	user=$(user_of "$1")
	AS=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups --reset-env
		env PATH="$PATH" LANG=C.UTF-8 HOME="$W/$1" XDG_DATA_HOME="$W/$1/data"
		XDG_CACHE_HOME="$W/$1/cache" XDG_CONFIG_HOME="$W/$1/config"
		ENTER_DEVROOT_CACHE="$SHARED" ENTER_DEVROOT_DEFAULT_TEMPLATE="$EDR_TEMPLATE")
}
as() { local AS; as_cmd "$1"; "${AS[@]}" "${@:2}"; }
as_within() { local AS; as_cmd "$2"; timeout "$1" "${AS[@]}" "${@:3}"; }
as_bg() { local AS; as_cmd "$1"; "${AS[@]}" "${@:2}" 3>&- & PIDS+=($!); }
victim_run() { run --separate-stderr as victim "$EDR_BIN" "$@"; }
victim_root() { echo "$W/victim/data/enter-devroot/roots/$1"; }

# evil_tar OUT: a root holding only the file /pwned.
evil_tar() {
	mkdir -p "$W/evil"
	echo "the attacker's" > "$W/evil/pwned"
	tar -C "$W/evil" -czf "$1" pwned
}

@test "shared cache: a manifest the other user rewrites between its hash and its read never yields their image" {
	# The registry (plain http, --insecure-http) serves the good image; the attacker's
	# image (the same base layer plus /pwned) is only in the cache, every file of it
	# correct for its name, and the attacker owns the good manifest's cached file.
	evil_tar "$W/pwned.tar.gz"
	python3 - "$WWW/v2/$D/app" "$W/attacker-files" "$EDR_TEMPLATE" "$W/pwned.tar.gz" <<-'EOF'
	import gzip, hashlib, json, os, sys
	reg, planted, base, evil = sys.argv[1:5]
	for d in (reg + "/blobs", reg + "/manifests", planted):
	    os.makedirs(d, exist_ok=True)
	def blob(data, serve):
	    h = hashlib.sha256(data).hexdigest()
	    if serve:
	        for d in ("blobs", "manifests"):
	            open("%s/%s/sha256:%s" % (reg, d, h), "wb").write(data)
	    open("%s/%s" % (planted, h), "wb").write(data)
	    return h
	def image(layers, serve, name):
	    descs, diff_ids = [], []
	    for data in layers:
	        descs.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
	                      "digest": "sha256:" + blob(data, serve), "size": len(data)})
	        diff_ids.append("sha256:" + hashlib.sha256(gzip.decompress(data)).hexdigest())
	    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Cmd": ["true"]},
	                         "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
	    manifest = json.dumps({"schemaVersion": 2,
	        "mediaType": "application/vnd.oci.image.manifest.v1+json",
	        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
	                   "digest": "sha256:" + blob(config, serve), "size": len(config)},
	        "layers": descs}).encode()
	    return manifest
	base = open(base, "rb").read()
	good = image([base], True, "good")
	evil = image([base, open(evil, "rb").read()], False, "evil")
	# The same length, behind 2 MiB of the same leading spaces (JSON allows them): the
	# hash and a second read of the file then read the part that differs milliseconds
	# apart, and the attacker needs no luck in timing.
	size = max(len(good), len(evil))
	for m, serve, name in ((good, True, "good"), (evil, False, "evil")):
	    m = b" " * (2 << 20) + m + b" " * (size - len(m))
	    open("%s/%s.manifest" % (planted, name), "w").write(blob(m, serve))
	EOF
	chmod -R a+rX "$WWW/v2" "$W/attacker-files"
	local good evil
	good=$(cat "$W/attacker-files/good.manifest")
	evil=$(cat "$W/attacker-files/evil.manifest")
	as attacker sh -c 'cd "$1" && for f in *; do case $f in *.manifest) ;; *) cp "$f" "$2/sha256/$f"; chmod 644 "$2/sha256/$f";; esac; done' \
		sh "$W/attacker-files" "$SHARED"
	[[ -O $SHARED/sha256/$good ]] && fail "setup: the planted manifest is root's"
	# The attacker swaps the part that differs, theirs and the good one, as fast as they can.
	as_bg attacker python3 -c '
import os, sys
path, good, evil = sys.argv[1:4]
g, e = open(good, "rb").read(), open(evil, "rb").read()
at = 2 << 20
fd = os.open(path, os.O_RDWR)
while True:
    os.pwrite(fd, e[at:], at)
    os.pwrite(fd, g[at:], at)
' "$SHARED/sha256/$good" "$W/attacker-files/$good" "$W/attacker-files/$evil"
	local n pwned=0 failed=0 log=
	for n in $(seq 20); do
		run --separate-stderr as victim "$EDR_BIN" create "v$n" \
			--from "docker://127.0.0.1:$HTTP_PORT/$D/app@sha256:$good" --insecure-http --quiet
		[[ $status -eq 0 ]] || { failed=$((failed + 1)); log+="create v$n: $status: $stderr"$'\n'; }
		[[ ! -e $(victim_root "v$n")/pwned ]] || pwned=$((pwned + 1))
	done
	[[ $pwned -eq 0 ]] || fail "the attacker's image was created $pwned times in 20"
	[[ $failed -eq 0 ]] || fail "$failed creates of 20 failed: $log"
	# The attacker's file stays theirs: not the victim's to delete or replace.
	[[ $(stat -c %U "$SHARED/sha256/$good") == "$EDR_OTHER_USER" ]] || fail "the attacker's file was replaced"
}

@test "shared cache: a FIFO the other user planted as a cached file or its origin hangs neither create nor cache list" {
	as attacker mkfifo -m 666 "$SHARED/sha256/$TSHA" "$SHARED/origin/$TSHA"
	run --separate-stderr as_within 60 victim "$EDR_BIN" create r --from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	[[ $status -ne 124 ]] || fail "create hung on the FIFO"
	assert_status 0
	assert_stderr_has "sha256/$TSHA is not a regular file: ignored, fetching it again"
	[[ -d $(victim_root r) ]] || fail "no root"
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "not fetched again: $(http_log)"
	[[ -p $SHARED/sha256/$TSHA ]] || fail "the attacker's FIFO was removed"
	run --separate-stderr as_within 60 victim "$EDR_BIN" cache list
	[[ $status -ne 124 ]] || fail "cache list hung on the FIFO"
	assert_status 0
}

@test "shared cache: a lock the other user holds forever ends create after the bounded wait, in one line naming them" {
	# A hostile holder that says nothing: named by the lock file's owner.
	as_bg attacker python3 -c '
import fcntl, os, sys, time
f = open(sys.argv[1], "a")
os.chmod(sys.argv[1], 0o666)
fcntl.lockf(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(300)' "$SHARED/locks/$TSHA.lock" "$W/attacker/held"
	local i
	for i in $(seq 100); do [[ -e $W/attacker/held ]] && break; sleep 0.1; done
	[[ -e $W/attacker/held ]] || fail "the lock holder did not start"
	SECONDS=0
	run --separate-stderr as_within 60 victim ENTER_DEVROOT_LOCK_TIMEOUT=2 "$EDR_BIN" create r \
		--from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	[[ $status -ne 124 ]] || fail "create waited for the lock for ever"
	assert_edr_error "$EDR_TOOL_EXIT" "cannot lock $SHARED/locks/$TSHA.lock" \
		"user $EDR_OTHER_USER" "no download progress for 2 s"
	[[ $SECONDS -lt 20 ]] || fail "took ${SECONDS}s"
	[[ ! -e $(victim_root r) ]] || fail "a root was created"
	# An enter-devroot holder whose download stalls: named by what it wrote, pid and host.
	kill "${PIDS[0]}"
	as_bg attacker ENTER_DEVROOT_LOW_SPEED_TIME=300 "$EDR_BIN" create a --from "$HTTP/@stall/t.tar.gz" \
		--sha256 "$TSHA" --quiet 2>/dev/null
	for i in $(seq 100); do grep -q '^pid ' "$SHARED/locks/$TSHA.lock" && break; sleep 0.1; done
	run --separate-stderr as_within 60 victim ENTER_DEVROOT_LOCK_TIMEOUT=2 "$EDR_BIN" create r \
		--from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cannot lock"
	local named="held by pid [0-9]+ on $(hostname), uid $(id -u "$EDR_OTHER_USER"), "
	[[ ${stderr_lines[0]} =~ $named ]] || fail "the holder is not named: $(last_run)"
}

@test "shared cache: a cache directory another user owns, or others can write without the sticky bit, is refused" {
	# The attacker's own "shared" cache: they could swap anything in it.
	local theirs=$W/theirs
	install -d -m 1777 -o "$EDR_OTHER_USER" "$theirs" "$theirs/sha256" "$theirs/origin" \
		"$theirs/partial" "$theirs/locks"
	run --separate-stderr as victim ENTER_DEVROOT_CACHE="$theirs" "$EDR_BIN" create r \
		--from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cache directory $theirs" "owned by user $EDR_OTHER_USER"
	[[ ! -e $(victim_root r) ]] || fail "a root was created"
	# Root's, open to all, not sticky: anyone could rename the victim's files.
	chmod -t "$SHARED/partial"
	victim_run create r --from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cache directory $SHARED/partial" "without the sticky bit"
	chmod +t "$SHARED/partial"
	# Root's and sticky, but a subdirectory missing: made by root, not by the first user.
	rmdir "$SHARED/locks"
	victim_run create r --from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cache directory $SHARED/locks is missing" "root creates it"
	[[ ! -e $SHARED/locks ]] || fail "the victim made $SHARED/locks"
	[[ $(http_count /t.tar.gz) -eq 0 ]] || fail "something was downloaded: $(http_log)"
}

@test "shared cache: the other user's cached file serves through a private copy; one not matching its name is ignored, fetched again, left alone" {
	as attacker "$EDR_BIN" create a --from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	[[ $(stat -c '%U %a' "$SHARED/sha256/$TSHA") == "$EDR_OTHER_USER 644" ]] ||
		fail "not the attacker's, readable by all: $(stat -c '%U %a' "$SHARED/sha256/$TSHA")"
	victim_run create r --from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	assert_status 0
	[[ $(http_count /t.tar.gz) -eq 1 ]] || fail "fetched again although cached: $(http_log)"
	# The attacker replaces their file's content, keeping its name.
	evil_tar "$W/pwned.tar.gz"
	as attacker sh -c 'cat "$1" > "$2"' sh "$W/pwned.tar.gz" "$SHARED/sha256/$TSHA"
	victim_run create r2 --from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	assert_status 0
	assert_stderr_has "sha256/$TSHA does not match its name" "ignored, fetching it again" \
		"not deleted: it is user $EDR_OTHER_USER"
	[[ ! -e $(victim_root r2)/pwned ]] || fail "the attacker's file was unpacked"
	[[ $(http_count /t.tar.gz) -eq 2 ]] || fail "not fetched again: $(http_log)"
	cmp -s "$W/pwned.tar.gz" "$SHARED/sha256/$TSHA" || fail "the attacker's file was changed or removed"
	[[ -z $(ls -A "$SHARED/partial") ]] || fail "debris in partial/: $(ls -A "$SHARED/partial")"
}

@test "shared cache: a catalogue the other user saved in the shared cache is not used when the index is unreachable" {
	# Before: the last catalogue of an index was kept in the cache (catalogs/), where the
	# attacker can write one mapping a template to their own archive.
	evil_tar "$W/pwned.tar.gz"
	local evil port idx
	evil=$(sha256sum < "$W/pwned.tar.gz" | cut -d' ' -f1)
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	idx=http://127.0.0.1:$port/index
	as attacker sh -c 'cp "$1" "$2/sha256/$3" && chmod 644 "$2/sha256/$3" && mkdir -p -m 755 "$2/catalogs" &&
		printf "[t]\nurl = pwned.tar.gz\nsha256 = %s\n" "$3" > "$2/catalogs/$4" && chmod 644 "$2/catalogs/$4"' \
		sh "$W/pwned.tar.gz" "$SHARED" "$evil" "$(printf %s "$idx" | sha256sum | cut -d' ' -f1)"
	victim_run create r --template t --index "$idx" --quiet
	assert_edr_error "$EDR_TOOL_EXIT" "cannot download $idx"
	[[ ! -e $(victim_root r) ]] || fail "a root was created from the attacker's catalogue"
}

@test "shared cache: cache clean removes the caller's files and leaves the other user's alone" {
	as attacker "$EDR_BIN" create a --from "$HTTP/t.tar.gz" --sha256 "$TSHA" --quiet
	echo mine > "$WWW/$D/mine"
	local mine
	mine=$(sha256sum < "$WWW/$D/mine" | cut -d' ' -f1)
	as victim "$EDR_BIN" create r --from "$HTTP/$D/mine" --sha256 "$mine" --quiet 2>/dev/null || true
	[[ -e $SHARED/sha256/$mine ]] || fail "setup: the victim's file is not cached"
	run --separate-stderr as victim "$EDR_BIN" cache clean
	assert_status 0
	assert_output --partial "removed 1 file"
	assert_output --partial "of other users left alone"
	[[ ! -e $SHARED/sha256/$mine ]] || fail "the victim's file is still there"
	[[ -f $SHARED/sha256/$TSHA ]] || fail "the attacker's file was removed"
}
