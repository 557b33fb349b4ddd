#!/usr/bin/env bats
# The command-line contract: help, version, usage errors, and which NAMEs are accepted.

load common

setup() { edr_setup; }
teardown() { edr_teardown; }

@test "cli: --help exits 0 and lists every subcommand" {
	edr_run --help
	assert_status 0
	for sub in create enter run list path remove doctor export push publish; do
		assert_output --partial "$sub"
	done
}

@test "cli: --help documents the exit statuses 125, 126 and 127" {
	edr_run --help
	assert_status 0
	assert_output --partial 125
	assert_output --partial 126
	assert_output --partial 127
}

@test "cli: --version exits 0 and prints a version number" {
	edr_run --version
	assert_status 0
	assert_output --regexp '[0-9]+\.[0-9]+'
}

@test "cli: help SUBCOMMAND exits 0 for every subcommand and describes it" {
	for sub in create enter run list path remove doctor export push publish; do
		edr_run help "$sub"
		assert_status 0
		assert_output --partial "$sub"
	done
}

@test "cli: help's pointers into the man page name sections that exist there" {
	local man=$BATS_TEST_DIRNAME/../../man/enter-devroot.1.in sub section title n=0
	[[ -f $man ]] || skip "the man page is not staged"
	for sub in $("$EDR_BIN" --help | sed -n 's/^  enter-devroot \([a-z-]*\).*/\1/p' | sort -u) gitlab github-hook; do
		edr_run help "$sub"
		while IFS='|' read -r section title; do
			grep -qx ".SH $section" "$man" || fail "help $sub names section $section, which the man page lacks"
			[[ -z $title ]] || grep -qx ".SS $title" "$man" || fail "help $sub names \"$title\", which the man page lacks"
			n=$((n + 1))
		done < <(sed -n 's/.*enter-devroot(1), section \([A-Z ]*[A-Z]\)\(, "\([^"]*\)"\)\{0,1\}.*/\1|\3/p' <<<"$output")
	done
	(( n >= 2 )) || fail "no pointer into the man page was checked"
}

@test "cli: --help's usage lines show every option each subcommand takes (enter's --bind, --device and --timeout)" {
	edr_run --help
	assert_status 0
	local enter
	enter=$(sed -n '/^  enter-devroot enter /,/^  enter-devroot run /p' <<< "$output")
	[[ $enter == *"--bind SRC:DST[:ro]"* && $enter == *"--timeout SECONDS"* ]] ||
		fail "enter's usage lacks --bind or --timeout: $enter"
	[[ $enter == *"--device VENDOR/CLASS=NAME"* ]] || fail "enter's usage lacks --device: $enter"
}

@test "cli: help of an unknown subcommand is refused with 125 naming it" {
	edr_run help frobnicate
	assert_edr_error 125 frobnicate
}

@test "cli: no arguments at all is a usage error (125)" {
	edr_run
	assert_status 125
	[[ -n $stderr ]] || fail "nothing on stderr"
}

@test "cli: unknown subcommand is refused with 125 and one line naming it" {
	edr_run frobnicate
	assert_edr_error 125 frobnicate
}

@test "cli: unknown global option is refused with 125 and one line naming it" {
	edr_run --frobnicate
	assert_edr_error 125 --frobnicate
}

@test "cli: unknown option of a subcommand is refused with 125 and one line naming it" {
	for sub in "create dev" "list" "path dev" "remove dev" "doctor" "enter dev" "run dev"; do
		# shellcheck disable=SC2086
		edr_run $sub --frobnicate
		assert_edr_error 125 --frobnicate
	done
	[[ ! -e $(root_of dev) ]] || fail "a root was created"
}

@test "cli: missing NAME is refused with 125 and one line, for every subcommand taking one" {
	for sub in create enter run path remove export push; do
		edr_run "$sub"
		assert_edr_error 125
	done
	edr_run push dev
	assert_edr_error 125 "push" "DESTINATION"
}

@test "cli: run without a command after -- is refused with 125" {
	create_default dev
	edr_run run dev --
	assert_edr_error 125
	edr_run run dev
	assert_edr_error 125
}

@test "cli: an option missing its value is refused with 125 naming the option" {
	create_default dev
	edr_run run dev --workdir
	assert_edr_error 125 --workdir
	edr_run create other --from
	assert_edr_error 125 --from
	edr_run create other --sha256
	assert_edr_error 125 --sha256
	[[ ! -e $(root_of other) ]] || fail "a root was created"
}

@test "cli: unexpected extra argument is refused with 125" {
	edr_run list extra
	assert_edr_error 125 extra
	edr_run path a b
	assert_edr_error 125
}

bad_names=(
	''
	'.'
	'..'
	'.hidden'
	'_under'
	'-x'
	'a/b'
	'../escape'
	'a b'
	'dév'
	'名前'
	'a:b'
	'a*'
	"$(printf 'a%.0s' {1..65})"
)

@test "cli: create refuses every bad NAME with 125 and one line, creating nothing" {
	store_snapshot
	for name in "${bad_names[@]}"; do
		edr_run create "$name" --from "$EDR_TEMPLATE"
		if [[ -z $name ]]; then
			assert_edr_error 125
		else
			assert_edr_error 125 "$name"
		fi
	done
	assert_store_unchanged
}

@test "cli: run, enter, path and remove refuse a bad NAME with 125 naming it" {
	for name in '..' 'a/b' '-x' 'a b' "$(printf 'b%.0s' {1..65})"; do
		for sub in path remove enter; do
			edr_run "$sub" "$name"
			assert_edr_error 125 "$name"
		done
		edr_run run "$name" -- true
		assert_edr_error 125 "$name"
	done
}

@test "cli: a NAME of exactly 64 characters is accepted" {
	local name
	name=$(printf 'x%.0s' {1..63})9
	[[ ${#name} -eq 64 ]]
	small_tarball "$W/small.tar"
	edr_run create "$name" --from "$W/small.tar"
	assert_status 0
	[[ -f $(root_of "$name")/marker ]] || fail "root of $name not created"
	edr_run path "$name"
	assert_status 0
	assert_output "$(root_of "$name")"
}

@test "cli: NAMEs with dots, underscores, dashes and digits are accepted" {
	small_tarball "$W/small.tar"
	for name in a.b_c-1 A 0 9-. Z_.; do
		edr_run create "$name" --from "$W/small.tar"
		assert_status 0
		[[ -f $(root_of "$name")/marker ]] || fail "root of $name not created"
	done
}

@test "cli: --mode with an unknown value is refused with 125 naming it" {
	create_default dev
	edr_run run dev --mode=bogus -- true
	assert_edr_error 125 bogus
	edr_run enter dev --mode bogus
	assert_edr_error 125 bogus
}

# complete WORD...: what the bash completion offers for the last WORD of
# "enter-devroot WORD...", one per line (completion/enter-devroot.bash, staged by run).
complete_words() {
	run bash -c 'PATH=$(dirname "$1"):$PATH; source "$2"; shift 2
		COMP_WORDS=(enter-devroot "$@"); COMP_CWORD=$#; _enter_devroot 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$EDR_BIN" \
		"$BATS_TEST_DIRNAME/../../completion/enter-devroot.bash" "$@"
}

@test "completion: --template and fetch complete template names (the built-in ones with no catalogue)" {
	complete_words create x --template m
	assert_output minimal
	complete_words run --ephemeral --template debian-bookworm
	assert_output "$(printf 'debian-bookworm\ndebian-bookworm-build')"
	complete_words fetch g
	assert_output "$(printf 'gcc\ngolang')"
}

@test "completion: -v/--verbose before the subcommand, and the words after it as without" {
	complete_words --verb
	[[ $output == --verbose ]] || fail "$output"
	complete_words -v ru
	assert_output run
	complete_words --verbose -v run r --ro
	[[ $output == --root ]] || fail "$output"
	complete_words -v create x --template m
	assert_output minimal
}

@test "completion: run NAME offers no --ephemeral-only option, and -- to start the command; run --ephemeral does" {
	complete_words run dev --
	[[ $output == *--workdir* ]] && grep -qx -- -- <<<"$output" || fail "$output"
	[[ $output != *--save* && $output != *--from* && $output != *--template* && $output != *--ephemeral* ]] ||
		fail "ephemeral-only options offered after a NAME: $output"
	complete_words run --ephemeral --s
	assert_output "$(printf -- '--save\n--sha256')"
	complete_words run --ephemeral --from img --sa
	assert_output -- --save
	complete_words run dev -- ech
	[[ $output == *echo* ]] || fail "the command's name is not completed: $output"
}

@test "completion: --bind completes files as well as directories" {
	mkdir -p "$W/dir"
	: > "$W/dotgitconfig"
	complete_words run r --bind "$W/d"
	assert_output "$(printf '%s\n' "$W/dir" "$W/dotgitconfig")"
}

@test "completion: run and enter offer --device, whose value is never taken for the root's NAME" {
	complete_words enter r --dev
	assert_output -- --device
	complete_words run --device nvidia.com/gpu=0 --eph
	assert_output -- --ephemeral
	complete_words run --device nvidia.com/gpu=0 r --
	[[ $output != *--ephemeral* ]] || fail "the root's NAME was not seen: $output"
}

@test "completion: push completes the destination's three transports after the root's name" {
	complete_words push dev d
	assert_output "$(printf 'docker-archive:\ndocker://')"
	complete_words push dev --cacert ca.pem o
	assert_output oci:
}

@test "quickstart's notes: ~/.local/bin that Debian's ~/.profile adds at the next login, bash-completion missing" {
	local notes=$BATS_TEST_DIRNAME/../../scripts/after-install-notes h=$W/home
	mkdir -p "$h"
	cp /etc/skel/.profile "$h/.profile" 2>/dev/null ||
		printf 'if [ -d "$HOME/.local/bin" ] ; then\n    PATH="$HOME/.local/bin:$PATH"\nfi\n' > "$h/.profile"
	run --separate-stderr env HOME="$h" PATH=/usr/bin:/bin BASH_COMPLETION_SCRIPT="$W/none" "$notes" "$h/.local"
	assert_success
	[[ $stderr == *"$h/.local/bin is not on this session's PATH: your ~/.profile adds it at your next login"* ]] ||
		fail "$(last_run)"
	[[ $stderr == *"needs Debian's bash-completion package"* ]] || fail "$(last_run)"
	# No such ~/.profile: add it yourself. bash-completion there: nothing to say of it.
	rm "$h/.profile"
	: > "$W/loader"
	run --separate-stderr env HOME="$h" PATH=/usr/bin:/bin BASH_COMPLETION_SCRIPT="$W/loader" "$notes" "$h/.local"
	[[ $stderr == *"$h/.local/bin is not on your PATH: add it"* && $stderr != *bash-completion* ]] ||
		fail "$(last_run)"
	# Nothing left to do: nothing said.
	run --separate-stderr env HOME="$h" PATH="$h/.local/bin:/usr/bin:/bin" BASH_COMPLETION_SCRIPT="$W/loader" "$notes" "$h/.local"
	assert_success
	[[ -z $stderr ]] || fail "$(last_run)"
}

@test "scripts/install-deps: apt-get install gets DEBIAN_FRONTEND=noninteractive through sudo" {
	# Stand-ins: every package missing, a user who is not root, a sudo that resets the
	# environment as sudo's env_reset does, an apt-get that says what it got.
	mkdir -p "$W/stub"
	printf '#!/bin/sh\nexit 1\n' > "$W/stub/dpkg-query"
	printf '#!/bin/sh\necho 1000\n' > "$W/stub/id"
	printf '#!/bin/sh\nexec env -i PATH="$PATH" "$@"\n' > "$W/stub/sudo"
	printf '#!/bin/sh\necho "$1 DEBIAN_FRONTEND=${DEBIAN_FRONTEND-unset}" >> %s/apt.log\n' "$W" > "$W/stub/apt-get"
	chmod 755 "$W/stub/"*
	run env PATH="$W/stub:$PATH" "$BATS_TEST_DIRNAME/../../scripts/install-deps" build
	assert_success
	grep -qx 'install DEBIAN_FRONTEND=noninteractive' "$W/apt.log" || fail "$(cat "$W/apt.log")"
}
