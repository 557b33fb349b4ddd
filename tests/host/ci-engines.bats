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
	IMAGE=$W/image.tar.gz
	cp "$EDR_TEMPLATE" "$IMAGE"
}
teardown() { edr_teardown; }

# ---- GitLab Runner custom executor

@test "gitlab config: prints the runner's JSON with builds_dir, cache_dir, hostname, driver and job_env" {
	layout_plays_no_part "config makes no root"
	gitlab_env 1 "$IMAGE"
	run --separate-stderr "$EDR_BIN" gitlab config --builds-dir "$W/b" --cache-dir "$W/c"
	assert_success
	run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["builds_dir"] == sys.argv[2] and d["cache_dir"] == sys.argv[3], d
assert d["builds_dir_is_shared"] is False and d["hostname"], d
assert d["driver"]["name"] == "enter-devroot" and d["driver"]["version"], d
assert d["job_env"]["ENTER_DEVROOT_GITLAB_BUILDS_DIR"] == sys.argv[2], d
print("ok")' "$output" "$W/b" "$W/c"
	assert_output ok
}

@test "gitlab: a job's stages share its devroot, the builds directory is the host's, cleanup removes the root" {
	gitlab_env 7 "$IMAGE"
	gitlab_config
	run gitlab_job "cat '$GL_BUILDS_DIR/project/README' && echo step-ran > '$GL_BUILDS_DIR/project/out' && echo in-root > /from-step" \
		'test -f /from-step && echo after-saw-step'
	assert_success
	assert_output --partial source
	assert_output --partial after-saw-step
	assert_equal "$(cat "$GL/layout")" "$(driver_layout)"
	# Every stage ran, in the documented order, and succeeded.
	run cut -d' ' -f1 "$GL/stages"
	assert_output "$(printf '%s\n' prepare prepare_script get_sources restore_cache download_artifacts build_script after_script archive_cache upload_artifacts_on_success cleanup_file_variables cleanup)"
	run grep -v ' 0$' "$GL/stages"
	assert_failure
	# The builds directory is a host directory bound in: the job's files outlive the job.
	[[ $(cat "$GL_BUILDS_DIR/project/out") == step-ran ]]
	[[ ! -e $(root_of gitlab-t0ken-7-0) ]]
	[[ ! -e /from-step ]]
	run "$EDR_BIN" list
	refute_output --partial gitlab-
}

@test "gitlab: a failing script exits BUILD_FAILURE_EXIT_CODE with its own status in BUILD_EXIT_CODE_FILE, even 125 and 127" {
	gitlab_env 8 "$IMAGE"
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	assert_equal "$(root_layout gitlab-t0ken-8-0)" "$(driver_layout)"
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
	[[ ! -e $(root_of gitlab-t0ken-9-0) ]]
}

@test "gitlab: a script's commands read nothing, not the rest of the script" {
	layout_plays_no_part "the script reaches the shell over a socket, not through the root's directory"
	gitlab_env 10 "$IMAGE"
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	run gitlab_stage build_script $'read line; echo "read [$line]"\necho second-line-ran'
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
	[[ ! -e $(root_of gitlab-t0ken-11-0) ]]
	# A stage of a job whose prepare never ran.
	printf 'true\n' >"$GL/scripts/s"
	run --separate-stderr "$EDR_BIN" gitlab run "$GL/scripts/s" build_script
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	assert_equal "${#stderr_lines[@]}" 1
	assert_equal "${stderr_lines[0]:0:46}" "enter-devroot: gitlab: the job's devroot was n"
	# A devroot removed behind the runner's back: the shell cannot start there.
	gitlab_env 12 "$IMAGE"
	"$EDR_BIN" gitlab prepare --allow-local-images
	"$EDR_BIN" remove gitlab-t0ken-12-0
	run --separate-stderr gitlab_stage build_script 'exit 3'
	assert_equal "$status" "$GL_SYSTEM_FAILURE"
	[[ ${stderr_lines[-1]} == "enter-devroot: gitlab: stage build_script: cannot start a shell in the job's devroot gitlab-t0ken-12-0"* ]] || fail "$stderr"
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
	[[ ${stderr_lines[0]} == "enter-devroot: gitlab: stage build_script: cannot start a shell in the job's devroot gitlab-t0ken-61-0 (enter-devroot run exited 0)" ]] || fail "$stderr"
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
	[[ -d $(root_of gitlab-t0ken-13-0) ]]
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
	[[ ! -e $(root_of gitlab-t0ken-14-0) ]]
}

@test "gitlab: two jobs at once get two devroots and never see each other's files" {
	layout_plays_no_part "each job's root is a root of its own on either layout"
	gitlab_env 21 "$IMAGE" 0
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	(
		gitlab_env 22 "$IMAGE" 1
		"$EDR_BIN" gitlab prepare --allow-local-images
		gitlab_stage build_script 'echo job22 > /mine; sleep 1; cat /mine'
	) >"$W/job22.out" 2>&1 &
	local other=$!
	run gitlab_stage build_script 'echo job21 > /mine; sleep 1; cat /mine'
	assert_success
	assert_output job21
	wait "$other"
	[[ $(cat "$W/job22.out") == *job22* ]]
	[[ $("$EDR_BIN" run gitlab-t0ken-21-0 -- cat /mine) == job21 ]]
	[[ $("$EDR_BIN" run gitlab-t0ken-22-1 -- cat /mine) == job22 ]]
	"$EDR_BIN" gitlab cleanup
	CUSTOM_ENV_CI_JOB_ID=22 CUSTOM_ENV_CI_CONCURRENT_ID=1 "$EDR_BIN" gitlab cleanup
	[[ ! -e $(root_of gitlab-t0ken-21-0) && ! -e $(root_of gitlab-t0ken-22-1) ]]
}

@test "gitlab: SIGTERM then SIGKILL to the driver's process group mid-stage leaves nothing of the job after cleanup" {
	gitlab_env 30 "$IMAGE"
	gitlab_config
	"$EDR_BIN" gitlab prepare --allow-local-images
	echo : >"$GL/scripts/first"
	"$EDR_BIN" gitlab run "$GL/scripts/first" prepare_script
	# The job says it started in the builds directory, the host's on either layout.
	printf '%s\n' 'sleep 1000 &' '(trap "" TERM; exec sleep 1001) &' "echo started > '$GL_BUILDS_DIR/started'" 'sleep 1002' >"$GL/scripts/long"
	setsid "$EDR_BIN" gitlab run "$GL/scripts/long" build_script &
	local driver=$!
	for _ in $(seq 100); do [[ -e $GL_BUILDS_DIR/started ]] && break; sleep 0.1; done
	[[ -e $GL_BUILDS_DIR/started ]]
	# The stage's run is warm (the first stage's cold run made the mount points): a keeper
	# holds its namespaces. Checked once the job is gone: a failure now would leave it running.
	keeper=$(warm_pids gitlab-t0ken-30-0)
	kill -TERM -- "-$driver"
	sleep 1
	kill -KILL -- "-$driver" 2>/dev/null || true
	wait "$driver" || true
	"$EDR_BIN" gitlab cleanup
	[[ ! -e $(root_of gitlab-t0ken-30-0) ]]
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
		[[ ! -e $(root_of gitlab-t0ken-40-0) ]]
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

@test "examples/ci: the GitLab config.toml is valid TOML naming the driver's documented keys; the Actions hook execs github-hook by its absolute path, found without the runner's PATH" {
	layout_plays_no_part "the examples' keys and options"
	local examples=$BATS_TEST_DIRNAME/../../examples/ci
	run python3 -c '
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))["runners"][0]
assert c["executor"] == "custom", c
x = c["custom"]
for action in ("config", "prepare", "run", "cleanup"):
    assert x[action + "_exec"] == "enter-devroot", x
    assert x[action + "_args"][:2] == ["gitlab", action], x
assert c["builds_dir"] and c["cache_dir"], c
print(" ".join(x["prepare_args"][2:]))' "$examples/gitlab-runner-config.toml"
	assert_success
	# The example's prepare options are ones prepare takes.
	gitlab_env 50 "$IMAGE"
	unset CUSTOM_ENV_CI_JOB_IMAGE
	gitlab_config
	local args=$output
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
