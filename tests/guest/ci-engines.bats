#!/usr/bin/env bats
# The CI drivers in chroot mode (the patched kernel, no user namespaces): the harness of
# tests/host/ci-engines.bash plays GitLab Runner's custom executor; the Actions hooks,
# which need bind mounts, say so in one line.

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

@test "ci-engines: a GitLab job in chroot mode: stages share the root, its builds directory is inside, exit codes, cleanup" {
	gitlab_env 70 "$IMAGE"
	gitlab_config
	run gitlab_job "cat '$GL_BUILDS_DIR/project/README' && ls / > /seen-by-step" \
		'test -f /seen-by-step && echo after-saw-step'
	assert_success
	assert_output --partial source
	assert_output --partial after-saw-step
	run grep -v ' 0$' "$GL/stages"
	assert_failure
	# get_sources wrote the builds directory inside the root, at the path config gave.
	[[ ! -e $GL_BUILDS_DIR/project/README ]] || fail "the builds directory is the host's in chroot mode"
	[[ ! -e $(root_of gitlab-t0ken-70-0) ]]
	gitlab_env 71 "$IMAGE"
	gitlab_config
	run --separate-stderr "$EDR_BIN" gitlab prepare --allow-local-images
	assert_success
	[[ $stderr == *"(mode chroot)"* ]] || fail "$stderr"
	run gitlab_stage get_sources "mkdir -p '$GL_BUILDS_DIR/p' && echo src > '$GL_BUILDS_DIR/p/f'"
	assert_success
	[[ $(cat "$(root_of gitlab-t0ken-71-0)$GL_BUILDS_DIR/p/f") == src ]]
	run gitlab_stage step_script "cat '$GL_BUILDS_DIR/p/f'; exit 125"
	assert_equal "$status" "$GL_BUILD_FAILURE"
	assert_output src
	assert_equal "$(cat "$BUILD_EXIT_CODE_FILE")" 125
	"$EDR_BIN" gitlab cleanup
	[[ ! -e $(root_of gitlab-t0ken-71-0) ]]
}

@test "ci-engines: github-hook prepare_job in chroot mode says the hooks need user-namespace mode, in one line, and leaves no root" {
	mkdir -p "$W/work"
	printf '{"command": "prepare_job", "responseFile": "%s", "state": {}, "args": {"services": [],
	  "container": {"image": "%s", "systemMountVolumes": [{"sourceVolumePath": "%s",
	  "targetVolumePath": "/__w", "readOnly": false}]}}}' "$W/r.json" "$IMAGE" "$W/work" >"$W/in.json"
	run --separate-stderr "$EDR_BIN" github-hook --allow-local-images <"$W/in.json"
	assert_equal "$status" 1
	[[ ${stderr_lines[-1]} == "enter-devroot: github-hook: cannot enter the job's devroot with the runner's directories bound: container jobs need user-namespace mode"* ]] || fail "$stderr"
	run "$EDR_BIN" list
	refute_output --partial github-
}
