#!/usr/bin/env bats
# The CI engines' drivers, driven by harnesses that play each engine's documented side
# (ci-engines.bash): `enter-devroot gitlab` as a GitLab Runner custom executor and
# `enter-devroot github-hook` as the Actions runner's container hooks, in user-namespace
# mode on this host (the guest suite runs the GitLab driver in chroot mode). The tests where
# the layout of the drivers' roots matters run on both layouts (ci-engines.bash).

load common
load ci-engines

setup() {
	edr_setup
	job_image_setup
}
teardown() { edr_teardown; }

# ---- GitLab Runner custom executor

@test "gitlab config: prints the runner's JSON: builds_dir, cache_dir, a shared builds directory, hostname, driver and job_env" {
	layout_plays_no_part "config makes no root"
	gitlab_env 1 "$IMAGE"
	run --separate-stderr "$EDR_BIN" gitlab config --builds-dir "$W/b/" --cache-dir "$W//c"
	assert_success
	run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["builds_dir"] == sys.argv[2] and d["cache_dir"] == sys.argv[3], d
assert d["builds_dir_is_shared"] is True and d["hostname"], d
assert d["driver"]["name"] == "enter-devroot" and d["driver"]["version"], d
assert d["job_env"] == {"ENTER_DEVROOT_GITLAB_BUILDS_DIR": sys.argv[2],
                        "ENTER_DEVROOT_GITLAB_CACHE_DIR": sys.argv[3]}, d
print("ok")' "$output" "$W/b" "$W/c"
	assert_output ok
}

@test "gitlab: a job's stages share its devroot and run the runner's own binary for caches and artifacts; its checkout and cache outlive it; cleanup removes the root" {
	gitlab_runner_standin
	gitlab_env 7 "$IMAGE"
	run gitlab_job 'cat README && echo in-root > /from-step && command -v gitlab-runner' \
		'test -f /from-step && echo after-saw-step'
	assert_success
	assert_line 'source of group/project'
	assert_line /usr/local/bin/gitlab-runner
	assert_line after-saw-step
	assert_line 'no cache yet'
	assert_line "artifacts uploaded by the runner's binary"
	refute_output --partial 'Missing gitlab-runner'
	assert_equal "$(cat "$GL/layout")" "$(driver_layout)"
	# Every stage ran, in the runner's order and with its names, and succeeded.
	run cut -d' ' -f1 "$GL/stages"
	assert_output "$(printf '%s\n' prepare prepare_script get_sources restore_cache download_artifacts build_script after_script archive_cache upload_artifacts_on_success cleanup_file_variables cleanup)"
	run grep -v ' 0$' "$GL/stages"
	assert_failure
	[[ ! -e $(root_of gitlab-7) ]]
	[[ ! -e /from-step ]]
	run "$EDR_BIN" list
	refute_output --partial gitlab-
	# The project's next job on this runner and slot fetches into the same checkout and
	# restores the cache the first one archived; its root is a new one.
	gitlab_env 8 "$IMAGE"
	run gitlab_job 'test ! -e /from-step && echo fresh-root'
	assert_success
	assert_line 'Fetching changes'
	assert_line "restored: cache.zip of the runner's binary"
	assert_line fresh-root
}

@test "gitlab: a failing script exits BUILD_FAILURE_EXIT_CODE with its own status in BUILD_EXIT_CODE_FILE, even 125 and 127; prepare says in one line when the runner's binary is not on its PATH" {
	gitlab_env 8 "$IMAGE"
	gitlab_config
	mkdir "$W/no-runner"
	run env PATH="$W/no-runner" "$EDR_BIN" gitlab prepare --allow-local-images
	assert_success
	assert_line 'enter-devroot: gitlab: no gitlab-runner on the runner'"'"'s PATH: the job'"'"'s caches and artifacts are skipped ("Missing gitlab-runner")'
	assert_equal "$(root_layout gitlab-8)" "$(driver_layout)"
	run gitlab_stage build_script 'exit 0'
	assert_success
	for code in 3 125 127; do
		run --separate-stderr gitlab_stage build_script "echo before; exit $code"
		assert_equal "$status" "$GL_BUILD_FAILURE"
		assert_output before
		assert_equal "$(cat "$BUILD_EXIT_CODE_FILE")" "$code"
	done
	run gitlab_stage build_script 'no-such-command-here'
	assert_equal "$status" "$GL_BUILD_FAILURE"
	assert_equal "$(cat "$BUILD_EXIT_CODE_FILE")" 127
	"$EDR_BIN" gitlab cleanup
}

@test "gitlab: after a failed build_script the runner's failure stages still run, and the job fails" {
	layout_plays_no_part "the stages of a failed job are the runner's choice; a failing script's status is tested on both layouts"
	gitlab_env 9 "$IMAGE"
	run gitlab_job 'exit 4' 'echo after-ran'
	assert_equal "$status" "$GL_BUILD_FAILURE"
	assert_output --partial after-ran
	run cat "$GL/stages"
	assert_line "build_script $GL_BUILD_FAILURE"
	assert_line "archive_cache_on_failure 0"
	assert_line "upload_artifacts_on_failure 0"
	assert_line "cleanup 0"
	[[ ! -e $(root_of gitlab-9) ]]
}

@test "gitlab: a script's commands read nothing, not the rest of the script" {
	layout_plays_no_part "the script reaches the shell over a socket, not through the root's directory"
	gitlab_env 10 "$IMAGE"
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	# Not the runner's form, which reads from /dev/null itself since 19.1: the script as it is.
	run gitlab_stage_raw build_script $'read line; echo "read [$line]"\necho second-line-ran'
	assert_success
	assert_line 'read []'
	assert_line second-line-ran
	"$EDR_BIN" gitlab cleanup
}

@test "gitlab: what is not the script's fault is a system failure with one line naming the cause" {
	gitlab_env 11 "$W/missing.tar.gz"
	gitlab_config
	run --separate-stderr "$EDR_BIN" gitlab prepare --allow-local-images
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	[[ ${stderr_lines[-1]} == "enter-devroot: gitlab: cannot create the job's devroot from '$W/missing.tar.gz'"* ]] || fail "$stderr"
	[[ ! -e $(root_of gitlab-11) ]]
	# A stage of a job whose prepare never ran.
	printf 'true\n' >"$GL/scripts/s"
	run --separate-stderr "$EDR_BIN" gitlab run "$GL/scripts/s" build_script
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	assert_equal "${#stderr_lines[@]}" 1
	assert_equal "${stderr_lines[0]:0:46}" "enter-devroot: gitlab: the job's devroot was n"
	# No job response: nothing says who the job is.
	run --separate-stderr env -u JOB_RESPONSE_FILE "$EDR_BIN" gitlab prepare --allow-local-images
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: gitlab: JOB_RESPONSE_FILE is unset"* ]] || fail "$stderr"
	# A devroot removed behind the runner's back: the shell cannot start there.
	gitlab_env 12 "$IMAGE"
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	"$EDR_BIN" remove gitlab-12
	run --separate-stderr gitlab_stage build_script 'exit 3'
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	[[ ${stderr_lines[-1]} == "enter-devroot: gitlab: stage build_script: cannot start a shell in the job's devroot gitlab-12"* ]] || fail "$stderr"
	[[ ! -e $BUILD_EXIT_CODE_FILE ]]
}

@test "gitlab: a stage whose shell never answers (the job replaced its /bin/sh) is a system failure in one line; a script larger than the socket's buffer neither hangs the driver nor leaves a process" {
	layout_plays_no_part "the stage's socket, not the root's directory"
	gitlab_env 61 "$IMAGE"
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	run gitlab_stage build_script 'rm /bin/sh && printf "#!/bin/busybox ash\nexit 0\n" >/bin/sh && chmod +x /bin/sh'
	assert_success
	# 2 MiB of comments: more than a socket's buffer holds unread.
	local script=$GL/scripts/big
	head -c 2097152 /dev/zero | tr '\0' '#' | fold -w 1023 >"$script"
	echo 'exit 0' >>"$script"
	run --separate-stderr timeout 120 "$EDR_BIN" gitlab run "$script" build_script
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: gitlab: stage build_script: cannot start a shell in the job's devroot gitlab-61 (enter-devroot run exited 0)" ]] || fail "$stderr"
	run pgrep -u "$(id -u)" -af "gitlab run $script"
	assert_failure
	"$EDR_BIN" gitlab cleanup
}

@test "gitlab: no image and no --default-image fails the build in one line; --default-image is used otherwise" {
	layout_plays_no_part "which image prepare takes"
	gitlab_env 13 ""
	unset CUSTOM_ENV_CI_JOB_IMAGE
	gitlab_config
	run --separate-stderr "$EDR_BIN" gitlab prepare --allow-local-images
	assert_equal "$status" "$GL_BUILD_FAILURE"
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == *"names no image"*"--default-image"* ]] || fail "$stderr"
	run --separate-stderr "$EDR_BIN" gitlab prepare --default-image "$IMAGE"
	assert_success
	[[ -d $(root_of gitlab-13) ]]
	"$EDR_BIN" gitlab cleanup
}

@test "gitlab: services are refused with one line in the job log" {
	layout_plays_no_part "refused before any root is made"
	gitlab_env 14 "$IMAGE"
	export CUSTOM_ENV_CI_JOB_SERVICES='[{"name":"postgres:15","alias":"db"}]'
	gitlab_config
	run --separate-stderr "$EDR_BIN" gitlab prepare --allow-local-images
	assert_equal "$status" "$GL_BUILD_FAILURE"
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: gitlab: services: are not supported"*postgres* ]] || fail "$stderr"
	[[ ! -e $(root_of gitlab-14) ]]
}

@test "gitlab: two jobs of one project at once get two devroots and two checkouts: the second one's clone leaves the first one's files alone" {
	layout_plays_no_part "each job's root and checkout are its own on either layout"
	export GL_GIT_STRATEGY=clone
	# The first job waits inside its build_script, its files written, for /go in its root.
	(
		gitlab_env 21 "$IMAGE" 0
		gitlab_job 'echo job21 > mine && echo job21 > /mine
			i=0; while [ ! -e /go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
			cat mine /mine; ls'
	) >"$W/job21.out" 2>&1 &
	local first=$!
	for _ in $(seq 600); do
		grep -q '^download_artifacts 0' "$W/runner-21/stages" 2>/dev/null && break
		sleep 0.1
	done
	# The second job of the project, in the next slot, from clone to cleanup.
	gitlab_env 22 "$IMAGE" 1
	run gitlab_job 'echo job22 > mine && echo job22 > /mine && cat mine /mine'
	assert_success
	assert_line job22
	refute_line job21
	"$EDR_BIN" run gitlab-21 -- touch /go
	wait "$first" || fail "$(cat "$W/job21.out")"
	run cat "$W/job21.out"
	assert_line job21
	refute_line job22
	assert_line README
	[[ ! -e $(root_of gitlab-21) && ! -e $(root_of gitlab-22) ]]
}

@test "gitlab: a job whose variables name another job's id and slot is refused, and the other job's later stages still run in its own root and image" {
	layout_plays_no_part "the job's name comes from the job response on either layout"
	gitlab_env 81 "$IMAGE" 2
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	gitlab_stage get_sources 'echo victim > /whoami'
	# Another job, of another image, whose variables (after the runner's: the last value
	# wins) name the first one's id and slot.
	local image
	image=$(alpine_image)
	gitlab_env 82 "$image" 0
	GL_JOB_VARIABLES=(CI_JOB_ID=81 CI_CONCURRENT_ID=2 CI_CONCURRENT_PROJECT_ID=2)
	gitlab_config
	[[ $CUSTOM_ENV_CI_JOB_ID == 81 ]]
	run --separate-stderr "$EDR_BIN" gitlab prepare --allow-local-images
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: gitlab: CUSTOM_ENV_CI_JOB_ID is '81' but the runner's job response is job 82: refused"* ]] || fail "$stderr"
	run --separate-stderr gitlab_stage build_script 'rm -f /whoami'
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	# The runner's cleanup after the failed prepare: the job's own root, which is none.
	"$EDR_BIN" gitlab cleanup
	[[ ! -e $(root_of gitlab-82) ]]
	# The first job goes on in its root, of its image.
	gitlab_env 81 "$IMAGE" 2
	gitlab_config
	run gitlab_stage build_script 'cat /whoami; test ! -e /etc/alpine-release && echo not-alpine'
	assert_success
	assert_output "victim
not-alpine"
	"$EDR_BIN" gitlab cleanup
	[[ ! -e $(root_of gitlab-81) ]]
}

@test "gitlab: a job sees and writes only its own project's checkout and cache, even with its variables naming another project's directory; no hook can be planted in another's checkout" {
	gitlab_runner_standin
	gitlab_env 91 "$IMAGE" 0 b/y
	gitlab_config
	local victim=$GL_PROJECT_DIR victim_cache=$GL_PROJECT_CACHE
	run gitlab_job 'echo built-b/y'
	assert_success
	local attack="find '$GL_BUILDS_DIR' '$GL_CACHE_DIR' | grep -c b/y || true
mkdir -p '$victim/.git/hooks' '$victim_cache/default'
printf '#!/bin/sh\necho planted-hook-ran\n' > '$victim/.git/hooks/post-checkout'
chmod +x '$victim/.git/hooks/post-checkout'
echo poisoned > '$victim_cache/default/cache.zip'
echo planted"
	# a/x's job on the same runner and slot.
	gitlab_env 92 "$IMAGE" 0 a/x
	gitlab_config
	run gitlab_job "$attack"
	assert_success
	assert_line planted
	assert_line 0
	# Its variables name b/y's project directory: that is not a/x's, and nothing is bound
	# there (a/x's checkout is its root's own, said in one line).
	gitlab_env 93 "$IMAGE" 0 a/x
	GL_JOB_VARIABLES=("CI_PROJECT_DIR=$victim")
	run gitlab_job "$attack"
	assert_success
	assert_line "enter-devroot: gitlab: the job's project directory $victim is not $GL_BUILDS_DIR/RUNNER/SLOT/a/x: it is the job's devroot's own, gone with it"
	assert_line 0
	# b/y's next job: its own checkout fetched, no hook of a/x's, its own cache.
	gitlab_env 94 "$IMAGE" 0 b/y
	run gitlab_job 'echo built-b/y-again'
	assert_success
	assert_line 'Fetching changes'
	refute_line planted-hook-ran
	assert_line "restored: cache.zip of the runner's binary"
	assert_line built-b/y-again
}

@test "gitlab: the stages start through the image's Entrypoint, the job's image: entrypoint: instead, or none for [\"\"], as the docker executor starts its container" {
	oci_image "$W/lay" "" '{"Entrypoint": ["/bin/sh", "-c", "FROM_ENTRYPOINT=image; export FROM_ENTRYPOINT; exec \"$@\"", "image-ep"]}'
	local step='echo "entrypoint: ${FROM_ENTRYPOINT:-none}"'
	gitlab_env 101 "oci:$W/lay"
	run gitlab_job "$step"
	assert_success
	assert_line 'entrypoint: image'
	assert_equal "$(cat "$GL/layout")" "$(driver_layout)"
	GL_ENTRYPOINT='["/bin/sh", "-c", "FROM_ENTRYPOINT=job; export FROM_ENTRYPOINT; exec \"$@\"", "job-ep"]' \
		gitlab_env 102 "oci:$W/lay"
	run gitlab_job "$step"
	assert_success
	assert_line 'entrypoint: job'
	GL_ENTRYPOINT='[""]' gitlab_env 103 "oci:$W/lay"
	run gitlab_job "$step"
	assert_success
	assert_line 'entrypoint: none'
}

@test "gitlab prepare --mode chroot: the root gets the builds and cache directories, a /dev/null stand-in where it has none, and a copy of the runner's binary, all inside it" {
	layout_plays_no_part "chroot mode's roots are flat"
	gitlab_runner_standin
	gitlab_env 71 "$IMAGE"
	gitlab_config
	run --separate-stderr "$EDR_BIN" gitlab prepare --allow-local-images --mode chroot
	assert_success
	[[ $stderr == *"devroot gitlab-71 ready (mode chroot)"* ]] || fail "$stderr"
	local root
	root=$(root_of gitlab-71)
	[[ -f $root/dev/null && ! -L $root/dev/null && ! -s $root/dev/null ]]
	assert_equal "$(stat -c %a "$root/dev/null")" 666
	cmp "$W/runner-bin/gitlab-runner" "$root/usr/local/bin/gitlab-runner"
	[[ -d $root$GL_BUILDS_DIR && -d $root$GL_CACHE_DIR ]]
	"$EDR_BIN" gitlab cleanup
	[[ ! -e $root ]]
	# An image whose /dev is a symlink out of it, and whose /dev/null is its own: what
	# prepare makes is inside the root, and the image's /dev/null is kept.
	mkdir -p "$W/escape" "$W/linkdir/${W#/}/escape" "$W/own/dev"
	ln -s "$W/escape" "$W/linkdir/dev"
	echo the-image-s-own >"$W/own/dev/null"
	gzip -dc "$EDR_TEMPLATE" >"$W/link.tar"
	tar --delete -f "$W/link.tar" ./dev/
	tar -C "$W/linkdir" --owner=0 --group=0 -rf "$W/link.tar" ./dev "./${W#/}"
	gitlab_env 72 "$W/link.tar"
	gitlab_config
	run --separate-stderr "$EDR_BIN" gitlab prepare --allow-local-images --mode chroot
	assert_success
	root=$(root_of gitlab-72)
	[[ -L $root/dev && -f $root$W/escape/null ]]
	[[ ! -e $W/escape/null ]]
	"$EDR_BIN" gitlab cleanup
	gzip -dc "$EDR_TEMPLATE" >"$W/own.tar"
	tar -C "$W/own" --owner=0 --group=0 -rf "$W/own.tar" ./dev/null
	gitlab_env 73 "$W/own.tar"
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images --mode chroot
	assert_equal "$(cat "$(root_of gitlab-73)/dev/null")" the-image-s-own
	"$EDR_BIN" gitlab cleanup
}

@test "gitlab: run as root (the packaged runner's service) every action refuses in one line unless --allow-root; config's reaches the later actions through job_env" {
	layout_plays_no_part "refused before any root is made"
	unshare --user --map-root-user true 2>/dev/null || skip "no user namespace to be root in"
	gitlab_env 110 "$IMAGE"
	printf 'true\n' >"$GL/scripts/s"
	local action refusal="enter-devroot: gitlab: refusing to run jobs as root (euid 0)"
	for action in config prepare "run $GL/scripts/s build_script" cleanup; do
		# shellcheck disable=SC2086 # the action's words
		run --separate-stderr unshare --user --map-root-user "$EDR_BIN" gitlab $action
		assert_equal "$status" "$GL_SYSTEM_FAILURE"
		assert_equal "${#stderr_lines[@]}" 1
		[[ ${stderr_lines[0]} == "$refusal"*--allow-root ]] || fail "$action: $stderr"
	done
	run --separate-stderr unshare --user --map-root-user "$EDR_BIN" gitlab config --allow-root
	assert_success
	run python3 -c 'import json, sys; print(json.loads(sys.argv[1])["job_env"]["ENTER_DEVROOT_GITLAB_ALLOW_ROOT"])' "$output"
	assert_output 1
	ENTER_DEVROOT_GITLAB_ALLOW_ROOT=1 run --separate-stderr unshare --user --map-root-user "$EDR_BIN" gitlab cleanup
	assert_success
	run --separate-stderr unshare --user --map-root-user "$EDR_BIN" gitlab cleanup --allow-root
	assert_success
}

@test "github-hook: run as root (a runner started with sudo) refuses in one line unless --allow-root" {
	layout_plays_no_part "refused before any root is made"
	unshare --user --map-root-user true 2>/dev/null || skip "no user namespace to be root in"
	gh_dirs
	echo '{"command": "cleanup_job", "responseFile": null, "args": {}, "state": {}}' >"$GH/in.json"
	run --separate-stderr unshare --user --map-root-user "$EDR_BIN" github-hook <"$GH/in.json"
	assert_equal "$status" 1
	assert_equal "$stderr" "enter-devroot: github-hook: refusing to run jobs as root (euid 0): they would be root on this host; run the runner as an unprivileged user, or pass --allow-root"
	run --separate-stderr unshare --user --map-root-user "$EDR_BIN" github-hook --allow-root <"$GH/in.json"
	[[ $stderr != *"refusing to run jobs as root"* ]] || fail "--allow-root still refused: $stderr"
}

@test "gitlab: SIGTERM then SIGKILL to the driver's process group mid-stage leaves nothing of the job after cleanup" {
	gitlab_env 30 "$IMAGE"
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	gitlab_stage prepare_script :
	# The job says it started in its project directory, the host's on either layout.
	local started
	started=$(gitlab_host_project_dir)/started
	gitlab_script "mkdir -p '$GL_PROJECT_DIR'
sleep 1000 &
(trap '' TERM; exec sleep 1001) &
echo started > '$GL_PROJECT_DIR/started'
sleep 1002" >"$GL/scripts/long"
	setsid "$EDR_BIN" gitlab run "$GL/scripts/long" build_script &
	local driver=$!
	for _ in $(seq 100); do [[ -e $started ]] && break; sleep 0.1; done
	[[ -e $started ]]
	# The stage's run is warm (the first stage's cold run made the mount points): a keeper
	# holds its namespaces. Checked once the job is gone: a failure now would leave it running.
	keeper=$(warm_pids gitlab-30)
	kill -TERM -- "-$driver"
	sleep 1
	kill -KILL -- "-$driver" 2>/dev/null || true
	wait "$driver" || true
	"$EDR_BIN" gitlab cleanup
	[[ ! -e $(root_of gitlab-30) ]]
	for _ in $(seq 50); do pgrep -u "$(id -u)" -f 'sleep 100[012]' >/dev/null || break; sleep 0.1; done
	run pgrep -u "$(id -u)" -af 'sleep 100[012]'
	assert_failure
	# Nor its keeper (killed by cleanup's remove --force, if not with the process group).
	[[ -n $keeper ]] || fail "the stage's run was not warm: no keeper to check"
	# (Exited, it may wait a while as a zombie for a PID 1 that reaps slowly.)
	local k
	for k in $keeper; do
		st=$(sed 's/.*) //' "/proc/$k/stat" 2>/dev/null) && [[ ${st%% *} != Z ]] &&
			fail "the keeper $k of the job's root survived cleanup"
	done
	true
}

# ci_device_spec: a CDI spec of the test's own, test.example.com/ci=d: the host's /dev/zero
# as /dev/ci-dev and a variable (devices.bats has the rest of --device).
ci_device_spec() {
	mkdir -p "$T/specs" "$XDG_CONFIG_HOME/enter-devroot"
	echo "cdi-spec-dirs = $T/specs" >>"$XDG_CONFIG_HOME/enter-devroot/config"
	printf '%s\n' 'cdiVersion: 0.5.0' 'kind: test.example.com/ci' 'devices:' '- name: d' \
		'  containerEdits:' '    deviceNodes: [{path: /dev/ci-dev, hostPath: /dev/zero}]' \
		'    env: [CI_DEVICE=given]' >"$T/specs/ci.yaml"
}

@test "gitlab: run_args' --device gives every stage the CDI device; a malformed one is a system failure in one line" {
	layout_plays_no_part "the device is bound in the job's own /dev, on either layout (devices.bats runs both)"
	ci_device_spec
	gitlab_env 31 "$IMAGE"
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	GL_RUN_ARGS=(--device test.example.com/ci=d)
	run --separate-stderr gitlab_stage build_script 'stat -c %t:%T /dev/ci-dev; echo "$CI_DEVICE"'
	[[ $status -eq 0 ]] || fail "$(last_run)"
	assert_equal "$output" "$(stat -c %t:%T /dev/zero)
given"
	GL_RUN_ARGS=(--device=nvidia.com/gpu)
	run --separate-stderr gitlab_stage build_script 'echo ran'
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: gitlab: --device 'nvidia.com/gpu': expected VENDOR/CLASS=NAME"* ]] || fail "$stderr"
	refute_output ran
	"$EDR_BIN" gitlab cleanup
}

# ---- GitHub Actions runner container hooks

@test "github-hook: --device gives every step, script or container action, the CDI device; a malformed one is refused in one line" {
	layout_plays_no_part "the device is bound in the job's own /dev, on either layout (devices.bats runs both)"
	ci_device_spec
	gh_dirs
	GH_HOOK_ARGS=(--device test.example.com/ci=d)
	gh_hook prepare_job "$(gh_container "$IMAGE")" 2>"$W/prepare.err" || fail "$(cat "$W/prepare.err")"
	printf '%s\n' 'stat -c %t:%T /dev/ci-dev' 'echo "$CI_DEVICE"' >"$GH/_work/_temp/dev.sh"
	run --separate-stderr gh_hook run_script_step '{"entryPoint": "sh", "entryPointArgs": ["-e", "/__w/_temp/dev.sh"], "environmentVariables": {}}'
	[[ $status -eq 0 ]] || fail "$(last_run)"
	assert_equal "$output" "$(stat -c %t:%T /dev/zero)
given"
	run --separate-stderr gh_hook run_container_step "$(gh_container_step "$IMAGE" stat '{}' -c %t:%T /dev/ci-dev)"
	assert_success
	assert_output "$(stat -c %t:%T /dev/zero)"
	gh_hook cleanup_job '{}'
	GH_HOOK_ARGS=(--device nvidia.com/gpu)
	run --separate-stderr gh_hook cleanup_job '{}'
	assert_failure
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: --device 'nvidia.com/gpu': expected VENDOR/CLASS=NAME"* ]] || fail "$stderr"
}

@test "github-hook: prepare_job answers with state, context and isAlpine; steps run inside with the runner's mounts, the workflow's volumes, CI and GITHUB_ACTIONS, as root, their variables on no command line; cleanup_job removes the root and the job's volumes" {
	gh_dirs
	mkdir -p "$GH/_work/cache" "$W/admin-cache" "$GH/_work/_temp/my dir"
	echo from-work >"$GH/_work/cache/f"
	echo from-admin >"$W/admin-cache/f"
	echo js-file >"$GH/_work/_temp/my dir/index.js"
	GH_HOOK_ARGS=(--allow-volume "$W/admin-cache")
	cat >"$GH/_work/_temp/step.sh" <<-EOF
	$(gh_step_wait /__w/_temp)
	echo "script in \$PWD as \$(id -u): \$JOB_VAR \$STEP_VAR"
	echo "secrets: \$SECRET_TOKEN \$ACTIONS_RUNTIME_TOKEN \$XDG_DATA_HOME"
	printf 'multi: %s\n' "\$MULTI"
	echo "ci: CI=\$CI GITHUB_ACTIONS=\$GITHUB_ACTIONS HOME=\$HOME"
	echo "\$PATH" | cut -d: -f1
	cat /cache/f /admin/f /ext/tool
	ls -A /anon | wc -l
	echo anon-write >/anon/x
	echo made >/__w/_temp/from-step
	exit 5
	EOF
	echo tool >"$GH/externals/tool"
	# Not through `run`: the harness keeps the runner's state in this shell.
	# Values of this test's own: other tests may run beside it.
	local secret=s3cret-$RANDOM$RANDOM token=rt-$RANDOM$RANDOM s=0
	GH_JOB_VAR=job-$RANDOM$RANDOM
	gh_hook prepare_job "$(gh_container "$IMAGE" "$GH/_work/cache:/cache:ro" "$W/admin-cache:/admin" \
		"$GH/externals:/ext:ro" /anon)" 2>"$W/prepare.err" || fail "$(cat "$W/prepare.err")"
	grep -q 'not binding /var/run/docker.sock' "$W/prepare.err"
	run python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["isAlpine"] is False, r
c = r["context"]["container"]
assert c["id"] == r["state"]["root"] and c["id"].startswith("github-"), r
print(c["id"])' "$GH/response-prepare_job.json"
	assert_success
	local name=$output
	assert_equal "$(root_layout "$name")" "$(driver_layout)"
	# The anonymous volume: a directory of the job's own, in the driver's data directory.
	local jobdir=$XDG_DATA_HOME/enter-devroot/github-hook/$name
	[[ -d $jobdir/volume-0 ]] || fail "no $jobdir/volume-0"
	# A step with secrets in its variables (the runner's ACTIONS_RUNTIME_TOKEN, a workflow's
	# `env: X: ${{ secrets.X }}`): while it runs, no process's command line shows a value.
	gh_hook_watch run_script_step "{\"entryPoint\": \"sh\", \"entryPointArgs\": [\"-e\", \"/__w/_temp/step.sh\"],
		\"environmentVariables\": {\"STEP_VAR\": \"from-the-step\", \"SECRET_TOKEN\": \"$secret\",
		\"ACTIONS_RUNTIME_TOKEN\": \"$token\", \"MULTI\": \"line1-$secret\\nline2\", \"XDG_DATA_HOME\": \"/elsewhere\"},
		\"prependPath\": [\"/__w/_tool/bin\"], \"workingDirectory\": \"/__w/repo/repo\"}" ||
		s=$?
	assert_equal "$s" 5
	grep -q "^enter-devroot run $name " "$GH/cmdlines" || fail "the step's run is not among the command lines read"
	run grep -F -e "$secret" -e "$token" -e "$GH_JOB_VAR" "$GH/cmdlines"
	assert_failure
	run cat "$GH/watch.out"
	assert_line "script in /__w/repo/repo as 0: $GH_JOB_VAR from-the-step"
	assert_line "secrets: $secret $token /elsewhere"
	assert_line "multi: line1-$secret"
	assert_line line2
	assert_line "ci: CI=true GITHUB_ACTIONS=true HOME=/github/home"
	assert_line /__w/_tool/bin
	assert_line from-work
	assert_line from-admin
	assert_line tool
	assert_line 0
	[[ $(cat "$GH/_work/_temp/from-step") == made ]]
	[[ $(cat "$jobdir/volume-0/x") == anon-write ]]
	# A JavaScript action's step: node and its script's path, which the runner gives in
	# double quotes (NodeScriptActionHandler.cs), split on spaces (ContainerHookManager.cs).
	run gh_hook run_script_step '{"entryPoint": "cat", "entryPointArgs": ["\"/__w/_temp/my", "dir/index.js\""],
		"environmentVariables": {}, "prependPath": [], "workingDirectory": "/__w/repo/repo"}'
	assert_success
	assert_output js-file
	# A step puts a symlink to the runner's user's files where a volume's directory was: the
	# next step refuses to mount it.
	mkdir -p "$W/dotssh"
	echo private-key >"$W/dotssh/id"
	echo "mv /__w/cache /__w/cache.old && ln -s '$W/dotssh' /__w/cache" >"$GH/_work/_temp/swap.sh"
	run gh_hook run_script_step '{"entryPoint": "sh", "entryPointArgs": ["-e", "/__w/_temp/swap.sh"], "environmentVariables": {}}'
	assert_success
	[[ -L $GH/_work/cache ]]
	run --separate-stderr gh_hook run_script_step '{"entryPoint": "cat", "entryPointArgs": ["/cache/id"], "environmentVariables": {}}'
	assert_failure
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: volume /cache: its directory $GH/_work/cache is a symlink now"* ]] || fail "$stderr"
	refute_output --partial private-key
	run gh_hook cleanup_job '{}'
	assert_success
	[[ ! -e $(root_of "$name") ]]
	[[ ! -e $jobdir ]]
}

@test "github-hook: volumes outside the runner's directories, named volumes, options and ports are refused in one line; a failed prepare_job leaves no root and no job directory" {
	layout_plays_no_part "refused before any root is made, or the root removed, on either layout"
	gh_dirs
	mkdir -p "$HOME/.ssh"
	ln -s "$HOME/.ssh" "$GH/_work/ssh-link"
	local v ssh ext
	ssh=$(realpath "$HOME/.ssh") ext=$(realpath "$GH/externals")
	for v in "$HOME/.ssh:/ssh" "$GH/_work/ssh-link:/ssh" "$GH/externals:/ext" my_docker_volume:/volume_mount \
		"$GH/_work/missing:/m"; do
		run --separate-stderr gh_hook prepare_job "$(gh_container "$IMAGE" "$v")"
		assert_equal "$status" 1
		assert_equal "${#stderr_lines[@]}" 1
		case $v in
		*.ssh:* | *ssh-link:*) [[ ${stderr_lines[0]} == "enter-devroot: github-hook: volume $v: $ssh is not in a directory the runner mounts"*--allow-volume* ]] ;;
		*externals:*) [[ ${stderr_lines[0]} == "enter-devroot: github-hook: volume $v: the runner mounts $ext read-only: add :ro" ]] ;;
		my_docker*) [[ ${stderr_lines[0]} == "enter-devroot: github-hook: volume $v: named volumes are not supported"* ]] ;;
		*) [[ ${stderr_lines[0]} == "enter-devroot: github-hook: volume $v: No such file or directory" ]] ;;
		esac || fail "$v: $stderr"
	done
	local c
	c=$(gh_container "$IMAGE" | python3 -c 'import json,sys; d=json.load(sys.stdin); d["container"]["createOptions"]="--cpus 1"; print(json.dumps(d))')
	run --separate-stderr gh_hook prepare_job "$c"
	assert_equal "$status" 1
	[[ $stderr == "enter-devroot: github-hook: the job container: options '--cpus 1' are docker's, not supported"* ]] || fail "$stderr"
	c=$(gh_container "$IMAGE" | python3 -c 'import json,sys; d=json.load(sys.stdin); d["container"]["portMappings"]=["80:8080"]; print(json.dumps(d))')
	run --separate-stderr gh_hook prepare_job "$c"
	assert_equal "$status" 1
	[[ $stderr == "enter-devroot: github-hook: the job container: ports (80:8080) are not supported"* ]] || fail "$stderr"
	# A directory of the runner's in its work directory that an earlier job replaced with a
	# symlink to the runner's user's files.
	mv "$GH/_work/_tool" "$GH/_work/_tool.old"
	ln -s "$HOME/.ssh" "$GH/_work/_tool"
	run --separate-stderr gh_hook prepare_job "$(gh_container "$IMAGE")"
	assert_equal "$status" 1
	[[ $stderr == "enter-devroot: github-hook: the runner's directory $GH/_work/_tool is $ssh, outside its work directory $(realpath "$GH/_work") (a symlink a job left there?): not mounting it" ]] ||
		fail "$stderr"
	rm "$GH/_work/_tool"
	mv "$GH/_work/_tool.old" "$GH/_work/_tool"
	run --separate-stderr "$EDR_BIN" github-hook --allow-volume "$W/none" <<<'{}'
	assert_equal "$status" 1
	[[ $stderr == "enter-devroot: github-hook: --allow-volume '$W/none': No such file or directory" ]] || fail "$stderr"
	# A prepare_job that fails once the root and the anonymous volume's directory are made
	# (its response cannot be written) removes both.
	GH_RESPONSE=$W/missing/response.json gh_hook prepare_job "$(gh_container "$IMAGE" /anon)" 2>"$W/prepare.err" &&
		fail "prepare_job succeeded"
	grep -q "cannot write the response to $W/missing/response.json" "$W/prepare.err" ||
		fail "$(cat "$W/prepare.err")"
	grep -q "creating devroot github-" "$W/prepare.err"
	run "$EDR_BIN" list
	refute_output --partial github-
	run find "$XDG_DATA_HOME/enter-devroot" -path '*github-hook/*'
	assert_output ""
}

@test "ci drivers on an Alpine-like root (busybox sh, no bash): a GitLab job runs end to end; github-hook's prepare_job answers isAlpine true" {
	local image
	image=$(alpine_image)
	gitlab_env 60 "$image"
	run gitlab_job 'test -f /etc/alpine-release && ! command -v bash && echo ran-in-alpine'
	assert_success
	assert_line ran-in-alpine
	assert_equal "$(cat "$GL/layout")" "$(driver_layout)"
	run grep -v ' 0$' "$GL/stages"
	assert_failure
	[[ ! -e $(root_of "$(gitlab_root)") ]]
	# The hook, for a job whose container is that image.
	gh_dirs
	gh_hook prepare_job "$(gh_container "$image")" 2>"$W/prepare.err" || fail "$(cat "$W/prepare.err")"
	run python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["isAlpine"], r["state"]["root"])' "$GH/response-prepare_job.json"
	assert_success
	local name=${output#* }
	assert_equal "${output%% *}" True
	assert_equal "$(root_layout "$name")" "$(driver_layout)"
	run gh_hook run_script_step '{"entryPoint": "cat", "entryPointArgs": ["/etc/alpine-release"]}'
	assert_success
	assert_line 3.20.3
	gh_hook cleanup_job '{}'
	[[ ! -e $(root_of "$name") ]]
}

@test "github-hook: run_container_step runs in a throwaway root of its image, as root, with the action's args as it wrote them, CI and GITHUB_ACTIONS, its variables on no command line; a workspace replaced by a symlink, a Dockerfile action and services are refused in one line" {
	layout_plays_no_part "a throwaway root of run --ephemeral, whose layout is its own"
	gh_dirs
	gh_hook prepare_job "$(gh_container "$IMAGE")" 2>"$W/prepare.err" || fail "$(cat "$W/prepare.err")"
	local secret=s3cret-$RANDOM$RANDOM s=0 script
	script="$(gh_step_wait /github/runner_temp)
for a; do echo \"[\$a]\"; done
echo \"as \$(id -u) in \$PWD: CI=\$CI GITHUB_ACTIONS=\$GITHUB_ACTIONS \$SECRET_TOKEN\"
exit 6"
	gh_hook_watch run_container_step "$(gh_container_step "$IMAGE" sh "{\"SECRET_TOKEN\": \"$secret\"}" \
		-c "$script" sh 'hello world' 'say "hi"' '' "it's")" || s=$?
	assert_equal "$s" 6
	grep -q "^enter-devroot run --ephemeral " "$GH/cmdlines" || fail "the step's run is not among the command lines read"
	run grep -F -e "$secret" "$GH/cmdlines"
	assert_failure
	run cat "$GH/watch.out"
	assert_output "$(printf '%s\n' '[hello world]' '[say "hi"]' '[]' "[it's]" \
		"as 0 in /github/workspace: CI=true GITHUB_ACTIONS=true $secret")"
	run "$EDR_BIN" list
	refute_output --partial ephemeral-
	# As the runner's user with --step-user runner.
	GH_HOOK_ARGS=(--step-user runner)
	run --separate-stderr gh_hook run_container_step "$(gh_container_step "$IMAGE" id '{}' -u)"
	assert_success
	assert_output "$(id -u)"
	GH_HOOK_ARGS=()
	# The job's workspace replaced by a symlink (as a step of the job container could do
	# through /__w) is not mounted.
	mv "$GH/_work/repo/repo" "$GH/_work/repo/repo.old"
	ln -s "$HOME" "$GH/_work/repo/repo"
	run --separate-stderr gh_hook run_container_step "$(gh_container_step "$IMAGE" ls '{}' /github/workspace)"
	assert_failure
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: run_container_step: the runner's directory for /github/workspace, $(realpath "$HOME"), is not in the job's"* ]] || fail "$stderr"
	run --separate-stderr gh_hook run_container_step '{"dockerfile": "Dockerfile", "image": null}'
	assert_failure
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: run_container_step: Dockerfile actions"* ]] || fail "$stderr"
	gh_hook cleanup_job '{}'
	GH_STATE=
	run --separate-stderr gh_hook prepare_job "{\"container\": {\"image\": \"$IMAGE\"}, \"services\": [{\"image\": \"redis\"}]}"
	assert_failure
	assert_equal "${#stderr_lines[@]}" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: services: are not supported"* ]] || fail "$stderr"
	run "$EDR_BIN" list
	refute_output --partial github-
}

@test "github-hook: steps look like root (run --root) where docker's would run as root, an image with no User or root; as the runner's user for another User; --step-user root or runner decides instead" {
	layout_plays_no_part "root emulation is run's; the image's User is in the root's metadata on either layout"
	gh_dirs
	oci_image "$W/user-4242" 4242
	oci_image "$W/user-root" root:root
	local image want args
	for image in "oci:$W/user-4242 $(id -u) image" "oci:$W/user-root 0 image" "$IMAGE $(id -u) runner" \
		"oci:$W/user-4242 0 root"; do
		read -r image want args <<<"$image"
		GH_HOOK_ARGS=(--step-user "$args")
		gh_hook prepare_job "$(gh_container "$image")" 2>"$W/prepare.err" || fail "$(cat "$W/prepare.err")"
		run gh_hook run_script_step '{"entryPoint": "id", "entryPointArgs": ["-u"], "environmentVariables": {}}'
		assert_success
		[[ $output == "$want" ]] || fail "$image with --step-user $args: id -u is $output, not $want"
		gh_hook cleanup_job '{}'
	done
}

@test "github-hook: bad input is one line and exit 1" {
	layout_plays_no_part "refused before any root is made"
	run --separate-stderr "$EDR_BIN" github-hook <<<'not json'
	assert_equal "$status" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: standard input: not the runner's JSON"* ]] || fail "$stderr"
	run --separate-stderr "$EDR_BIN" github-hook <<<'{"command": "launch_missiles"}'
	assert_equal "$status" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: unknown command 'launch_missiles'"* ]] || fail "$stderr"
	run --separate-stderr "$EDR_BIN" github-hook <<<'{"command": "run_script_step", "args": {}, "state": {"root": "../x"}}'
	assert_equal "$status" 1
	[[ ${stderr_lines[0]} == *"state names no devroot"* ]] || fail "$stderr"
	run --separate-stderr "$EDR_BIN" github-hook --mode bogus <<<'{}'
	assert_equal "$status" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: --mode 'bogus': expected auto, userns or chroot" ]] || fail "$stderr"
	run --separate-stderr "$EDR_BIN" github-hook <<<'{"command": "run_script_step", "args": {}, "state": {"root": "x", "mode": "docker"}}'
	assert_equal "$status" 1
	[[ ${stderr_lines[0]} == *"state names no mode this hook knows ('docker')" ]] || fail "$stderr"
}

@test "ci drivers: a job's image naming a file or directory of the runner's host is refused unless the runner allows it" {
	layout_plays_no_part "refused before any root is made"
	mkdir -p "$W/private/etc"
	echo runner-secret >"$W/private/etc/secret"
	tar -C "$W/private" -czf "$W/private.tar.gz" etc
	gitlab_env 40 "$W/private"
	for image in "$W/private" "$W/private.tar.gz" "oci:$W/private" "docker-archive:$W/private.tar.gz" "file://$W/private.tar.gz" ./w/private; do
		export CUSTOM_ENV_CI_JOB_IMAGE=$image
		run --separate-stderr "$EDR_BIN" gitlab prepare
		assert_equal "$status" "$GL_BUILD_FAILURE"
		assert_equal "${#stderr_lines[@]}" 1
		[[ ${stderr_lines[0]} == "enter-devroot: gitlab: image: '$image' names a file or directory on the runner's host"*--allow-local-images* ]] || fail "$stderr"
		[[ ! -e $(root_of gitlab-40) ]]
	done
	# The administrator's own default image may be local.
	unset CUSTOM_ENV_CI_JOB_IMAGE
	run --separate-stderr "$EDR_BIN" gitlab prepare --default-image "$IMAGE"
	assert_success
	"$EDR_BIN" gitlab cleanup
	gh_dirs
	run --separate-stderr "$EDR_BIN" github-hook <<<"{\"command\": \"prepare_job\", \"responseFile\": \"$W/r.json\", \"state\": {}, \"args\": {\"container\": {\"image\": \"$W/private.tar.gz\"}}}"
	assert_equal "$status" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: image '$W/private.tar.gz' names a file or directory on the runner's host"* ]] || fail "$stderr"
	run "$EDR_BIN" list
	refute_output --partial github-
}

@test "examples/ci: the GitLab config.toml is valid TOML naming the driver's documented keys by absolute paths, as a service's PATH needs; the Actions hook execs github-hook by its absolute path, found without the runner's PATH" {
	layout_plays_no_part "the examples' keys and options"
	local examples=$BATS_TEST_DIRNAME/../../examples/ci
	run python3 -c '
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))["runners"][0]
assert c["executor"] == "custom", c
x = c["custom"]
for action in ("config", "prepare", "run", "cleanup"):
    assert x[action + "_exec"] == x["config_exec"], x
    assert x[action + "_args"][:2] == ["gitlab", action], x
assert x["config_exec"].startswith("/") and x["config_exec"].endswith("/enter-devroot"), x
assert c["builds_dir"] and c["cache_dir"], c
print(" ".join(x["prepare_args"][2:]))' "$examples/gitlab-runner-config.toml"
	assert_success
	local args=$output
	# The example's prepare options are ones prepare takes.
	gitlab_env 50 "$IMAGE"
	unset CUSTOM_ENV_CI_JOB_IMAGE
	gitlab_config
	run --separate-stderr "$EDR_BIN" gitlab prepare ${args/template:debian-bookworm-build/$IMAGE}
	assert_success
	"$EDR_BIN" gitlab cleanup
	# The Actions hook as the runner runs it (`bash -e HOOK`), as a service whose PATH (the
	# runner's .path) lacks ~/.local/bin, where ./quickstart installs enter-devroot.
	local h=$W/runner-home
	mkdir -p "$h/.local/bin"
	ln -s "$EDR_BIN" "$h/.local/bin/enter-devroot"
	ln -s "$(dirname "$EDR_BIN")/enter-devroot-store" "$h/.local/bin/enter-devroot-store"
	gh_dirs
	run --separate-stderr env HOME="$h" PATH=/usr/bin:/bin bash -e "$examples/github-runner-hook.sh" \
		<<<"{\"command\": \"prepare_job\", \"responseFile\": \"$W/response.json\", \"state\": null, \"args\": {\"container\": null, \"services\": []}}"
	assert_success
	python3 -c 'import json, sys; assert json.load(open(sys.argv[1])) == {"state": {}, "context": {"services": []}}' \
		"$W/response.json"
	run --separate-stderr env HOME="$h" PATH=/usr/bin:/bin bash -e "$examples/github-runner-hook.sh" <<<'{"command": 1}'
	assert_equal "$status" 1
	[[ ${stderr_lines[0]} == "enter-devroot: github-hook: "* ]] || fail "$stderr"
	# Nowhere: one line that says what to do.
	if [[ ! -e /usr/local/bin/enter-devroot && ! -e /usr/bin/enter-devroot ]]; then
		run --separate-stderr env HOME="$W/nowhere" PATH=/usr/bin:/bin bash -e "$examples/github-runner-hook.sh" <<<'{}'
		assert_equal "$status" 1
		assert_equal "${#stderr_lines[@]}" 1
		[[ ${stderr_lines[0]} == "enter-devroot-hook.sh: enter-devroot is in none of"*"name it in"* ]] || fail "$stderr"
	fi
}
