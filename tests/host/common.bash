# Helpers shared by the host bats suites. Load with `load common`.
#
# The suites run through tests/host/run, which exports:
#   EDR_BIN       the enter-devroot binary under test
#   EDR_TEMPLATE  the embedded default template tarball
#   EDR_PROBE     tests/host/probe.c built static (may be empty: tests needing it skip)
#   EDR_MKTAR     tests/host/mktar.py
# Every test gets its own HOME and XDG directories under BATS_TEST_TMPDIR, so tests
# are independent of each other and of the caller's account.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load ../lib/layout
load ../lib/edr-run

EDR_MKTAR=${EDR_MKTAR:-$BATS_TEST_DIRNAME/mktar.py}
EDR_TOOL_EXIT=125 # every failure of enter-devroot itself

edr_setup() {
	[[ -x ${EDR_BIN:-} ]] || fail "EDR_BIN is not an executable: run the suites through tests/host/run"
	[[ -f ${EDR_TEMPLATE:-} ]] || fail "EDR_TEMPLATE is not a file: run the suites through tests/host/run"
	edr_home_setup
	export ENTER_DEVROOT_DEFAULT_TEMPLATE=$EDR_TEMPLATE
	OUT=$T/outside # sentinels that no archive or command may touch
	W=$T/w         # the test's own scratch files (tarballs, trees)
	mkdir -p "$W"
	umask 022
	cd "$T" || return
}

# Roots may hold read-only directories; let bats remove the test's tmpdir.
edr_teardown() {
	chmod -R u+rwX "$BATS_TEST_TMPDIR" 2>/dev/null || true
}

edr() { "$EDR_BIN" "$@"; }

is_root() { [[ $(id -u) -eq 0 ]]; }

store() { echo "$XDG_DATA_HOME/enter-devroot"; }
# warm_pids NAME: the processes that keep NAME warm, as `list` shows them in its WARM column
# (comma-separated there), one per word.
# warm_column NAME reads a listing on standard input.
warm_column() { awk -v n="$1" '$1 == n && $6 != "-" { gsub(",", " ", $6); print $6 }'; }
warm_pids() { "$EDR_BIN" list | warm_column "$1"; }
root_of() { echo "$XDG_DATA_HOME/enter-devroot/roots/$1"; }

# assert_no_crash: the last edr_run ended with 0 or 125, never a signal or
# another code.
assert_no_crash() {
	[[ $status -eq 0 || $status -eq $EDR_TOOL_EXIT ]] ||
		fail "expected exit status 0 or 125, got $status
$(last_run)"
}

# --- archives ------------------------------------------------------------------

# mktar OUT ENTRY...: see mktar.py for the entry language.
mktar() {
	python3 "$EDR_MKTAR" "$@" || fail "mktar.py $* failed"
}

# small_tree DIR: a tiny rootfs-shaped tree with a marker file.
small_tree() {
	mkdir -p "$1/etc" "$1/bin" "$1/tmp"
	chmod 1777 "$1/tmp"
	echo "marker $(basename "$1")" > "$1/marker"
	echo 'root:x:0:0:root:/root:/bin/sh' > "$1/etc/passwd"
}

# small_tarball OUT: an uncompressed tarball of small_tree.
small_tarball() {
	local d
	d=$(mktemp -d "$W/tree.XXXXXX")
	small_tree "$d"
	tar -C "$d" -cf "$1" . || fail "tar failed"
	rm -rf "$d"
}

# big_tarball OUT DIRS FILES SIZE: DIRS directories of FILES files of SIZE bytes each,
# so that extraction takes long enough to interrupt.
big_tarball() {
	python3 - "$@" <<'PY'
import io, sys, tarfile
dirs, files, size = (int(a) for a in sys.argv[2:5])
with tarfile.open(sys.argv[1], "w") as tar:
    data = b"x" * size
    for d in range(dirs):
        info = tarfile.TarInfo("d%02d" % d)
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
        for f in range(files):
            info = tarfile.TarInfo("d%02d/f%04d" % (d, f))
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
PY
}

# --- snapshots -------------------------------------------------------------------

# snapshot DIR: every path below DIR with type, mode, size, link count, mtime,
# symlink target and content hash; equal snapshots mean nothing changed.
# One sha256sum for all the files: a shell and a sha256sum per file cost a root's
# snapshot 600 forks, and the host suite seconds of CPU each time.
snapshot() {
	(cd "$1" && find . -printf '%p|%y|%m|%s|%n|%T@|%l\n' | LC_ALL=C sort &&
		{ find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum -- || true; })
}

# plant_sentinels: files and a directory outside every root, with old mtimes,
# that hostile archives and commands will aim at; recorded for
# assert_outside_unchanged. Also snapshots the rest of BATS_TEST_TMPDIR.
plant_sentinels() {
	mkdir -p "$OUT/dir"
	echo "sentinel file" > "$OUT/file"
	echo "sentinel inner" > "$OUT/dir/inner"
	chmod 0640 "$OUT/file"
	chmod 0750 "$OUT/dir"
	touch -h -d @1000000000 "$OUT/file" "$OUT/dir/inner" "$OUT/dir" "$OUT"
	ESCAPE_TAG=edr-escape-$$-$RANDOM
	snapshot "$OUT" > "$T/outside.before"
	# Only the link count: other programs on the host may rewrite /etc/passwd
	# (useradd) while a test runs; a hardlink made by an archive would raise it.
	stat -c %h /etc/passwd > "$T/passwd.before"
	ls -A "$T" > "$T/toplevel.before"
}

# assert_outside_unchanged: nothing planted by plant_sentinels changed, no new
# entry appeared next to the test's directories, none in /tmp under the escape tag.
assert_outside_unchanged() {
	local now
	now=$(snapshot "$OUT")
	[[ $now == "$(cat "$T/outside.before")" ]] ||
		fail "files outside the root changed:
$(diff <(cat "$T/outside.before") <(echo "$now"))"
	[[ $(stat -c %h /etc/passwd) == "$(cat "$T/passwd.before")" ]] ||
		fail "/etc/passwd gained a hardlink"
	local extra
	extra=$(comm -13 <(LC_ALL=C sort "$T/toplevel.before") <(ls -A "$T" | LC_ALL=C sort) |
		grep -vxE '.*\.before|create\.out|ref-.*|separate-stderr-.*' || true)
	[[ -z $extra ]] || fail "new entries appeared in the test directory: $extra"
	[[ ! -e /tmp/$ESCAPE_TAG ]] || fail "/tmp/$ESCAPE_TAG was written"
	[[ ! -e /$ESCAPE_TAG ]] || fail "/$ESCAPE_TAG was written"
}

# data_layout DIR NAME...: the store's paths and types with the insides of the
# named roots left out (their contents are checked separately).
data_layout() {
	local dir=$1 filter=() n
	shift
	for n in "$@"; do
		filter+=(-e "^./enter-devroot/roots/$n/")
	done
	[[ -d $dir ]] || return 0
	(cd "$dir" && find . -mindepth 1 -printf '%p|%y\n' | LC_ALL=C sort) |
		if [[ ${#filter[@]} -gt 0 ]]; then grep -v "${filter[@]}" || true; else cat; fi
}

# reference_layout NAME: the store layout a clean create of NAME leaves (a tiny
# tarball into a scratch XDG_DATA_HOME). The test does not know where the tool
# keeps metadata or locks, only that a hostile create may leave no more.
reference_layout() {
	local ref=$T/ref-$1
	[[ -d $ref ]] || {
		mkdir -p "$ref"
		small_tarball "$T/ref-$1.tar"
		XDG_DATA_HOME=$ref "$EDR_BIN" create "$1" --from "$T/ref-$1.tar" >/dev/null 2>&1 ||
			fail "reference create of $1 failed"
	}
	data_layout "$ref" "$1"
}

# allowed_leftover PATH|TYPE: what a failed or killed create may leave in the
# store: the store's own skeleton (directories at most two levels down) and
# empty lock files (a lock file that is never deleted is a sound design).
allowed_leftover() {
	local rel=${1%|*} type=${1##*|}
	local p=$XDG_DATA_HOME/${rel#./}
	case $type in
	d) [[ $rel != ./*/*/* ]] ;;
	f) [[ ! -s $p && $(basename "$p") == *lock* ]] ;;
	*) false ;;
	esac
}

# assert_store_like_reference NAME...: the store holds exactly what clean
# creates of NAME... leave (plus allowed leftovers of failed ones), and nothing
# else: no staging debris, no extra metadata.
assert_store_like_reference() {
	local want="" n l
	for n in "$@"; do
		want+=$(reference_layout "$n")$'\n'
	done
	want=$(echo -n "$want" | LC_ALL=C sort -u | sed '/^$/d')
	local got
	got=$(data_layout "$XDG_DATA_HOME" "$@")
	local missing extra
	missing=$(comm -23 <(echo "$want") <(echo "$got"))
	[[ -z $missing ]] || fail "store lacks what a clean create of $* leaves:
$missing"
	extra=$(comm -13 <(echo "$want") <(echo "$got"))
	while read -r l; do
		[[ -z $l ]] || allowed_leftover "$l" || fail "store holds more than a clean create of $* leaves: $l
$(diff <(echo "$want") <(echo "$got"))"
	done <<< "$extra"
}

# store_snapshot: record the store before an operation that must leave nothing.
store_snapshot() {
	data_layout "$XDG_DATA_HOME" > "$T/store.before"
}

# assert_store_unchanged: after a failure, the store has nothing new except
# allowed leftovers (skeleton directories, empty lock files); in particular no
# root, no staging debris and no metadata.
assert_store_unchanged() {
	local new l
	new=$(comm -13 "$T/store.before" <(data_layout "$XDG_DATA_HOME"))
	while read -r l; do
		[[ -z $l ]] || allowed_leftover "$l" || fail "failure left something behind: $l
$(data_layout "$XDG_DATA_HOME")"
	done <<< "$new"
	local gone
	gone=$(comm -23 "$T/store.before" <(data_layout "$XDG_DATA_HOME"))
	[[ -z $gone ]] || fail "failure removed store entries: $gone"
}

# --- roots -----------------------------------------------------------------------

# create_default NAME: a root from the embedded default template.
create_default() {
	"$EDR_BIN" create "$1" >"$T/create.out" 2>&1 ||
		fail "create $1 from the default template failed: $(cat "$T/create.out")"
}

# passwd_entry SHELL HOME: a line for the calling user in a root's /etc/passwd.
passwd_entry() {
	echo "$(id -un):x:$(id -u):$(id -g):edr test user:$2:$1"
}

# drop_account ROOT: remove the calling user's passwd entry and home from a
# root (create gives the user one), so a test can set up its own.
drop_account() {
	sed -i -e "/^$(id -un):/d" -e "/^[^:]*:[^:]*:$(id -u):/d" "$1/etc/passwd"
	rm -rf "${1:?}/home/$(id -un)"
}

# need_probe: skip unless the static probe was built.
need_probe() {
	[[ -x ${EDR_PROBE:-} ]] || skip "edr-probe not built (needs a C compiler and static libc)"
}

# install_probe NAME: copy edr-probe into the root as /edr-probe.
install_probe() {
	need_probe
	cp "$EDR_PROBE" "$(root_of "$1")/edr-probe"
}

# plant_secret: a host file the roots cannot see, $HOME/secret (0600), holding $SECRET.
plant_secret() {
	SECRET="host-secret-$RANDOM$RANDOM-never-in-a-root"
	printf '%s\n' "$SECRET" > "$HOME/secret"
	chmod 600 "$HOME/secret"
}

# race_in_root NAME A B SECONDS: the attacker, a process inside root NAME (entered with
# `run`) exchanging the paths A and B (renameat2 RENAME_EXCHANGE) in a tight loop for
# SECONDS, in the background (its pid added to RACERS). Returns once the names swap.
race_in_root() {
	local r a out=$T/racer.$RANDOM.out
	r=$(root_of "$1")
	[[ -x $r/edr-probe ]] || install_probe "$1"
	"$EDR_BIN" run "$1" -- /edr-probe swap "$2" "$3" "$4" > "$out" 2>&1 &
	local racer=$!
	RACERS+=("$racer")
	a=$(stat -c %i "$r$2")
	for _ in $(seq 100); do
		[[ $(stat -c %i "$r$2" 2>/dev/null) != "$a" ]] && return 0
		kill -0 "$racer" 2>/dev/null || fail "the racer ended: $(cat "$out")"
		sleep 0.1
	done
	fail "the racer never swapped $2 and $3: $(cat "$out")"
}

# stop_racer: end the racers race_in_root started.
stop_racer() {
	local pid
	for pid in "${RACERS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	RACERS=()
}
