#!/usr/bin/env bats
# What a CI job's author writes never becomes an option of the enter-devroot commands the
# drivers run: the job's image, variables, working directory and command shaped as options
# (`--bind=/:/host`, `--from=...`, `--index=URL`, `-v`) stay values. The drivers pass every
# value as `--option=VALUE` or after `--` (src/ci/driver.c), never through a shell. Played
# through the harnesses of ci-engines.bash; the layout plays no part (what is checked is
# which options reach the commands), so each test runs once.

load common
load ci-engines

setup() {
	edr_setup
	job_image_setup
	# A host directory no job may see: what a smuggled --bind=/:... or --from would expose.
	mkdir -p "$OUT"
	echo runner-secret >"$OUT/secret"
}
teardown() { edr_teardown; }

@test "ci options: a GitLab job's image shaped as an option, or a template's name shaped as one, is refused as an image, never an option of create" {
	local image n=50
	for image in "--from=$OUT" "-v" "--template=x" "template:--index=https://127.0.0.1:9/evil" \
		"template:-v" "--bind=/:/host"; do
		n=$((n + 1))
		gitlab_env "$n" "$image"
		gitlab_config
		run --separate-stderr "$EDR_BIN" gitlab prepare
		# create refuses the value as an image reference or a template name: it was one.
		assert_equal "$status" "$GL_SYSTEM_FAILURE"
		if [[ $image == template:* ]]; then
			[[ $stderr == *"enter-devroot: invalid name '${image#template:}': must match"* ]] ||
				fail "$image: $(last_run)"
		else
			[[ $stderr == *"enter-devroot: create: invalid image reference 'docker://$image'"* ]] ||
				fail "$image: $(last_run)"
		fi
		[[ ! -e $(root_of "$(gitlab_root)") ]] || fail "$image: a root was made"
		"$EDR_BIN" gitlab cleanup
	done
	run "$EDR_BIN" list
	refute_output --partial gitlab-
}

@test "ci options: a GitHub step's variables, working directory and entry point shaped as options stay values inside the root" {
	gh_dirs
	gh_hook prepare_job "$(gh_container "$IMAGE")" 2>/dev/null
	# Variables holding or named like an option are variables: none binds the host's /.
	# (The step's script is a file in the runner's temp directory, as the runner writes it.)
	echo "ls /host/$OUT 2>&1 || :; cat $OUT/secret 2>&1 || :; echo \"v=\$V\"" >"$GH/_work/_temp/step.sh"
	run --separate-stderr gh_hook run_script_step "{\"entryPoint\": \"sh\",
		\"entryPointArgs\": [\"-e\", \"/__w/_temp/step.sh\"],
		\"environmentVariables\": {\"V\": \"--bind=/:/host\", \"X --bind\": \"/:/host\"},
		\"workingDirectory\": \"/__w/repo/repo\"}"
	assert_success
	[[ $output != *runner-secret* ]] || fail "the host's file was read: $output"
	assert_line "ls: /host/$OUT: No such file or directory"
	assert_line "v=--bind=/:/host"
	# An entry point or a working directory shaped as an option: the command of that name
	# inside (none: 127), a working directory refused, never an option.
	run -127 --separate-stderr gh_hook run_script_step '{"entryPoint": "--bind=/:/host", "entryPointArgs": ["-v"],
		"workingDirectory": "/__w/repo/repo"}'
	[[ $stderr == *"--bind=/:/host: command not found"* ]] || fail "$stderr"
	run --separate-stderr gh_hook run_script_step '{"entryPoint": "pwd", "workingDirectory": "--root"}'
	assert_equal "$status" "$EDR_TOOL_EXIT"
	[[ $stderr == *"cannot change to working directory '--root'"* ]] || fail "$(last_run)"
	run gh_hook cleanup_job '{}'
	assert_success
}
