#!/usr/bin/env bats
# The CI drivers in chroot mode (the patched kernel, no user namespaces): the harness of
# tests/host/ci-engines.bash plays GitLab Runner's custom executor and the Actions runner's
# container hooks, whose volumes are copied into the root and back around each step here
# (nothing can be bound).

load common
load ../host/ci-engines

setup_file() { guest_setup_file; }
setup() {
	guest_setup
	W=$T/w
	mkdir -p "$W"
	IMAGE=$W/image.tar.gz
	cp "$EDR_TEMPLATE" "$IMAGE"
}
teardown() { guest_teardown; }

@test "ci-engines: a GitLab job in chroot mode: stages share the root, its builds directory is inside, /dev/null for the runner's scripts, the runner's binary copied in, exit codes, cleanup" {
	gitlab_runner_standin
	gitlab_env 70 "$IMAGE"
	run gitlab_job "cat README && ls / > /seen-by-step && command -v gitlab-runner" \
		'test -f /seen-by-step && echo after-saw-step'
	assert_success
	assert_line 'source of group/project'
	assert_line /usr/local/bin/gitlab-runner
	assert_line after-saw-step
	refute_output --partial 'Missing gitlab-runner'
	run grep -v ' 0$' "$GL/stages"
	assert_failure
	# get_sources wrote the project directory inside the root, at the runner's path.
	[[ ! -e $(gitlab_host_project_dir)/README ]] || fail "the project directory is the host's in chroot mode"
	[[ ! -e $(root_of gitlab-70) ]]
	gitlab_env 71 "$IMAGE"
	gitlab_config
	run --separate-stderr "$EDR_BIN" gitlab prepare --allow-local-images
	assert_success
	[[ $stderr == *"(mode chroot)"* ]] || fail "$stderr"
	# Every stage of runner >= 19.1 reads `< /dev/null` (gitlab_script): a regular-file
	# stand-in where the image has no /dev/null.
	[[ -e $(root_of gitlab-71)/dev/null ]]
	run gitlab_stage get_sources "mkdir -p '$GL_BUILDS_DIR/p' && echo src > '$GL_BUILDS_DIR/p/f'"
	assert_success
	[[ $(cat "$(root_of gitlab-71)$GL_BUILDS_DIR/p/f") == src ]]
	run gitlab_stage build_script "cat '$GL_BUILDS_DIR/p/f'; exit 125"
	assert_equal "$status" "$GL_BUILD_FAILURE"
	assert_output src
	assert_equal "$(cat "$BUILD_EXIT_CODE_FILE")" 125
	"$EDR_BIN" gitlab cleanup
	[[ ! -e $(root_of gitlab-71) ]]
}

# gh_chroot_job: prepare_job of a job container in chroot mode; NAME is its root.
gh_chroot_job() {
	gh_hook prepare_job "$(gh_container "$IMAGE")" 2>"$W/prepare.err" || fail "$(cat "$W/prepare.err")"
	grep -q '(mode chroot)' "$W/prepare.err" || fail "$(cat "$W/prepare.err")"
	NAME=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["state"]["root"])' "$GH/response-prepare_job.json")
	[[ -d $(root_of "$NAME") ]]
}

@test "ci-engines: github-hook in chroot mode: the runner's volumes are copied in before each step and back after it; a failing step's status; cleanup_job" {
	gh_dirs
	local ws=$GH/_work/repo/repo out=$GH/_work/_temp/_runner_file_commands/set_output_1
	echo from-the-runner >"$ws/input.txt"
	echo stale >"$ws/removed-by-step"
	mkdir -p "$(dirname "$out")"
	: >"$out"
	echo tool >"$GH/externals/node"
	cat >"$GH/_work/_temp/step.sh" <<-'EOF'
		echo "in $PWD: $(cat input.txt) $JOB_VAR"
		echo answer=42 >>"$GITHUB_OUTPUT"
		echo made-inside >new-file
		mkdir -p sub/dir && echo deep >sub/dir/f
		rm removed-by-step
		ln -s input.txt link
		cat /__e/node && echo written-inside >/__e/node
		echo home >/github/home/h
	EOF
	gh_chroot_job
	run --separate-stderr gh_hook run_script_step '{"entryPoint": "sh", "entryPointArgs": ["-e", "/__w/_temp/step.sh"],
		"environmentVariables": {"GITHUB_OUTPUT": "/__w/_temp/_runner_file_commands/set_output_1"},
		"prependPath": [], "workingDirectory": "/__w/repo/repo"}'
	assert_success
	assert_line "in /__w/repo/repo: from-the-runner from-the-job"
	assert_line tool
	# What the step wrote is the runner's after it.
	[[ $(cat "$out") == answer=42 ]] || fail "GITHUB_OUTPUT: $(cat "$out")"
	[[ $(cat "$ws/new-file") == made-inside ]]
	[[ $(cat "$ws/sub/dir/f") == deep ]]
	[[ ! -e $ws/removed-by-step ]]
	[[ $(readlink "$ws/link") == input.txt ]]
	[[ $(cat "$GH/_work/_temp/_github_home/h") == home ]]
	# A readOnly volume is never copied back.
	[[ $(cat "$GH/externals/node") == tool ]]
	# What the runner changes between steps is what the next step sees, and a failing
	# step's status is the hook's; what it wrote before failing is copied back too.
	echo changed-by-runner >"$ws/input.txt"
	rm "$ws/new-file"
	echo 'cat input.txt; test ! -e new-file && cat /__e/node && echo partial > before-failing; exit 7' \
		>"$GH/_work/_temp/step2.sh"
	run --separate-stderr gh_hook run_script_step '{"entryPoint": "sh", "entryPointArgs": ["/__w/_temp/step2.sh"],
		"workingDirectory": "/__w/repo/repo"}'
	assert_equal "$status" 7
	assert_output "changed-by-runner
tool"
	[[ $(cat "$ws/before-failing") == partial ]]
	run gh_hook cleanup_job '{}'
	assert_success
	[[ ! -e $(root_of "$NAME") ]]
	# The runner's directories are still all there.
	[[ -d $GH/_work/_temp && -d $GH/_work/_actions && -d $GH/_work/_tool && -f $ws/input.txt ]]
}

@test "ci-engines: github-hook in chroot mode: a step's symlinks to /etc/passwd and outside, a FIFO, a symlink swapped for a directory write nothing outside the volume and never hang" {
	gh_dirs
	local ws=$GH/_work/repo/repo
	echo secret-kept >"$W/outside"
	local passwd
	passwd=$(sha256sum /etc/passwd)
	gh_chroot_job
	export GH_HOOK_TIMEOUT=120
	# The steps' scripts, in the runner's temp directory (its arguments are `-e FILE`).
	echo "ln -s /etc/passwd passwd; ln -s '$W/outside' outside; ln -s '$W' escape; mkfifo fifo; echo x > f; ln f hard" \
		>"$GH/_work/_temp/plant.sh"
	echo 'for f in passwd outside; do rm $f; echo planted > $f; done; rm escape; mkdir escape; echo planted > escape/outside; test ! -e fifo' \
		>"$GH/_work/_temp/through.sh"
	echo 'rm -rf /github/home && ln -s /etc /github/home' >"$GH/_work/_temp/swap.sh"
	run --separate-stderr gh_hook run_script_step '{"entryPoint": "sh", "entryPointArgs": ["-e", "/__w/_temp/plant.sh"],
		"workingDirectory": "/__w/repo/repo"}'
	assert_success
	# Symlinks are copied as symlinks, never followed; the FIFO is not copied, one line.
	[[ $(readlink "$ws/passwd") == /etc/passwd && $(readlink "$ws/outside") == "$W/outside" ]]
	[[ $(readlink "$ws/escape") == "$W" ]]
	[[ ! -e $ws/fifo ]]
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: /__w/repo/repo/fifo: not copied back from the devroot (a device, FIFO or socket)" ]] || fail "$stderr"
	[[ $(cat "$ws/hard") == x && $(stat -c %h "$ws/hard") == 1 ]]
	# The next step writes through those names: the runner's copies are replaced, never
	# written through. (The FIFO the runner never had is gone from the root: copying in
	# mirrors the runner's side.)
	run --separate-stderr gh_hook run_script_step '{"entryPoint": "sh", "entryPointArgs": ["-e", "/__w/_temp/through.sh"],
		"workingDirectory": "/__w/repo/repo"}'
	assert_success
	[[ $(cat "$ws/passwd") == planted && ! -L $ws/passwd && $(cat "$ws/escape/outside") == planted ]]
	[[ $(cat "$W/outside") == secret-kept ]]
	[[ $(sha256sum /etc/passwd) == "$passwd" ]]
	# The step removes a volume's target: it is not copied back, the runner's directory
	# is left whole, and the step fails.
	run --separate-stderr gh_hook run_script_step '{"entryPoint": "sh", "entryPointArgs": ["-e", "/__w/_temp/swap.sh"],
		"workingDirectory": "/"}'
	assert_equal "$status" 1
	[[ ${stderr_lines[-1]} == "enter-devroot: github-hook: /github/home: not copied back to $GH/_work/_temp/_github_home: no longer a directory inside the devroot" ]] || fail "$stderr"
	[[ -d $GH/_work/_temp/_github_home ]]
	run gh_hook cleanup_job '{}'
	assert_success
}
