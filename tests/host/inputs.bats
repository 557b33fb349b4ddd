#!/usr/bin/env bats
# What users type: --from - (standard input), --from DIR (a tree copied under the rules of
# an archive), --index PATH (a plain path), --template minimal with no catalogue.

load common

setup() { edr_setup; }
teardown() { edr_teardown; }

@test "inputs: --from - reads the archive from a pipe on standard input" {
	run --separate-stderr bash -c 'cat "$1" | "$2" create dev --from -' _ "$EDR_TEMPLATE" "$EDR_BIN"
	assert_status 0
	edr_run run dev -- sh -c 'echo inside'
	assert_output inside
	edr_run list --json
	assert_output --partial '"source": "-"'
}

@test "inputs: --from - reads a file redirected to standard input, and refuses a bad one in one line" {
	edr_run create dev --from - < "$EDR_TEMPLATE"
	assert_status 0
	[[ -x $(root_of dev)/bin/busybox ]] || fail "no busybox in the root"
	store_snapshot
	echo "not an archive" > "$W/junk"
	edr_run create bad --from - < "$W/junk"
	assert_edr_error 125 "standard input"
	assert_store_unchanged
}

@test "inputs: --from - of a stream whose layer is stored: the copy unpacked again is removed in the background, and -v says so" {
	edr_run create a --keep-layers --from - < "$EDR_TEMPLATE"
	assert_status 0
	local layers=$XDG_CACHE_HOME/enter-devroot/layers
	# The stream's digest is known only once it is read: unpacked again, then dropped.
	run --separate-stderr bash -c 'cat "$1" | "$2" -v create b --keep-layers --from -' _ "$EDR_TEMPLATE" "$EDR_BIN"
	assert_status 0
	[[ $stderr == *"is stored already: removing the copy just unpacked ($layers/."* ]] ||
		fail "-v does not say what it does: $stderr"
	local i
	for i in $(seq 100); do
		[[ -z $(ls -A "$layers" | grep '^\.') ]] && break
		sleep 0.1
	done
	[[ -z $(ls -A "$layers" | grep '^\.') ]] || fail "the copy is still there: $(ls -A "$layers")"
	assert_equal "$(ls "$layers/sha256" | wc -l)" 1
	edr_run run b -- true
	assert_status 0
}

# odd_tree DIR: a file, a hard link to it, a setuid file, a symlink to outside, a FIFO,
# a read-only directory.
odd_tree() {
	mkdir -p "$1/etc" "$1/bin" "$1/ro"
	echo 'root:x:0:0:root:/root:/bin/sh' > "$1/etc/passwd"
	echo data > "$1/bin/tool"
	ln "$1/bin/tool" "$1/bin/tool-link"
	echo suid > "$1/bin/suid" && chmod 4755 "$1/bin/suid"
	mkdir -p "$OUT" && echo outside > "$OUT/file"
	ln -s "$OUT/file" "$1/etc/to-outside"
	mkfifo "$1/fifo"
	echo x > "$1/ro/file" && chmod 555 "$1/ro"
}

@test "inputs: --from DIR copies the tree under an archive's rules" {
	odd_tree "$W/tree"
	plant_sentinels
	edr_run create dev --from "$W/tree"
	assert_status 0
	assert_equal "${#stderr_lines[@]}" 0 || fail "$(last_run)"
	local r
	r=$(root_of dev)
	assert_equal "$(cat "$r/bin/tool")" data
	assert_equal "$(stat -c %i "$r/bin/tool")" "$(stat -c %i "$r/bin/tool-link")"
	assert_equal "$(stat -c %a "$r/bin/suid")" 755
	assert_equal "$(readlink "$r/etc/to-outside")" "$OUT/file"
	[[ -p $r/fifo ]] || fail "the FIFO was not copied as one"
	assert_equal "$(stat -c %a "$r/ro")" 555
	# A copy: writing in the root leaves the tree alone, and nothing outside changed.
	echo changed > "$r/bin/tool"
	assert_equal "$(cat "$W/tree/bin/tool")" data
	assert_outside_unchanged
	edr_run list --json
	assert_output --partial "\"source\": \"$W/tree\""
	chmod 755 "$W/tree/ro"
}

@test "inputs: --from DIR keeps a sparse file sparse, ending in a hole, at its size" {
	small_tree "$W/tree"
	truncate -s 1G "$W/tree/sparse"
	printf 'middle' | dd of="$W/tree/sparse" bs=1 seek=$((512 << 20)) conv=notrunc status=none
	edr_run create dev --from "$W/tree" --max-size 2G
	assert_status 0
	local f
	f=$(root_of dev)/sparse
	assert_equal "$(stat -c %s "$f")" $((1 << 30))
	cmp "$W/tree/sparse" "$f" || fail "the copy differs"
	(($(stat -c %b "$f") * $(stat -c %B "$f") < 1 << 20)) || fail "the holes were written: $(du -h "$f")"
}

@test "inputs: --from DIR over --max-size is refused and leaves nothing" {
	small_tree "$W/tree"
	head -c $((2 << 20)) /dev/zero > "$W/tree/big"
	store_snapshot
	edr_run create dev --from "$W/tree" --max-size 1M
	assert_edr_error 125 "big" "--max-size"
	assert_store_unchanged
}

@test "inputs: --index takes a plain path to a catalogue file, as --from does" {
	cp "$EDR_TEMPLATE" "$W/t.tar.gz"
	printf '[t]\nurl = t.tar.gz\nsha256 = %s\nsize = %s\n' \
		"$(sha256sum < "$W/t.tar.gz" | cut -d' ' -f1)" "$(stat -c %s "$W/t.tar.gz")" > "$W/index"
	cd "$W"
	edr_run templates --index index
	assert_status 0
	assert_output --partial t
	edr_run create dev --template t --index "$W/index"
	assert_status 0
	[[ -x $(root_of dev)/bin/busybox ]] || fail "no busybox in the root"
	edr_run templates --index "$W/no-such-index"
	assert_edr_error 125 "$W/no-such-index"
}

@test "inputs: --template minimal is the embedded default when no catalogue is configured" {
	unset ENTER_DEVROOT_INDEX
	edr_run create dev --template minimal
	assert_status 0
	[[ -x $(root_of dev)/bin/busybox ]] || fail "no busybox in the root"
	edr_run create other --template not-a-template
	assert_edr_error 125 "no template catalogue configured"
}

@test "inputs: the config file warns once about a key it does not know, and reads the rest" {
	mkdir -p "$XDG_CONFIG_HOME/enter-devroot"
	printf '# a comment\nidnex = https://example.invalid/index\n; another comment\n' \
		> "$XDG_CONFIG_HOME/enter-devroot/config"
	unset ENTER_DEVROOT_INDEX
	edr_run create dev --template minimal
	assert_status 0
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: warning: $XDG_CONFIG_HOME/enter-devroot/config: line 2: unknown key 'idnex' ignored"* ]] ||
		fail "$(last_run)"
}

@test "inputs: --from DIR of a root in use: a process in it swapping a file with a symlink to a host secret never gets the secret copied" {
	edr create src >/dev/null 2>&1 || fail "cannot create devroot src"
	local r try ok=0 refused=0 end
	r=$(root_of src)
	plant_secret
	head -c 100000 /dev/zero | tr '\0' x > "$r/etc/data" # larger than the secret
	ln -s "$HOME/secret" "$r/etc/data.swap"
	race_in_root src /etc/data /etc/data.swap 30
	end=$((SECONDS + 20))
	for ((try = 0; try < 50 && SECONDS < end; try++)); do
		edr_run create "c$try" --from "$r"
		if [[ $status -eq 0 ]]; then
			ok=$((ok + 1))
			! grep -rqa "$SECRET" "$(root_of "c$try")" || { stop_racer; fail "create $try: the host secret is in the new root"; }
			edr remove "c$try" || fail "cannot remove c$try"
		else
			assert_edr_error 125 "$r"
			echo "${stderr_lines[0]}" >> "$T/refusals"
			[[ ! -e $(root_of "c$try") ]] || fail "create $try failed and left a root"
			refused=$((refused + 1))
		fi
	done
	stop_racer
	[[ -z $(ls -A "$(store)/staging") ]] || fail "staging debris: $(ls -A "$(store)/staging")"
	echo "# $try creates: $ok made, $refused refused" >&3
	# On a loaded machine the racer may never hit the window: then nothing was shown.
	((refused > 0)) || skip "the racer never caught the copy in the act ($try tries)"
	# Refused as a tree that changed, naming the path.
	run grep -v "$r: /etc/data[.a-z]* changed while being read" "$T/refusals"
	assert_output ""
}

@test "inputs: fetch minimal, a built-in template, needs no catalogue: it prints the embedded template's path" {
	edr_run fetch minimal
	assert_status 0
	assert_output "$EDR_TEMPLATE"
	[[ -z $stderr ]] || fail "$(last_run)"
}

@test "inputs: fetch of a name neither built in nor in a catalogue says both, in one line" {
	edr_run fetch no-such-template
	assert_edr_error 125 "template 'no-such-template'" "not a built-in template" \
		"no template catalogue configured" "--index"
}

@test "inputs: --from REGISTRY:PORT/REPO or REPO:TAG without docker:// (docker's habit) says did you mean docker://" {
	local ref
	for ref in 127.0.0.1:5000/team/tiny ubuntu:22.04 localhost/tiny; do
		edr_run create x --from "$ref"
		assert_edr_error 125 "cannot open $ref" "did you mean docker://$ref"
	done
	# A missing file is only that.
	edr_run create x --from "$W/missing.tar"
	assert_edr_error 125 "cannot open $W/missing.tar"
	[[ $stderr != *docker://* ]] || fail "$(last_run)"
}
