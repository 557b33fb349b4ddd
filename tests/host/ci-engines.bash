# Harnesses that play the CI engines' side of their driver protocols exactly as documented,
# since neither gitlab-runner nor the Actions runner is packaged in Debian. Load after
# common.bash.
#
# GitLab Runner, custom executor (docs/executors/custom.md): config_exec, whose JSON gives
# builds_dir and job_env; prepare_exec; run_exec SCRIPT STAGE for each sub-stage in the
# documented order; cleanup_exec. Job variables are passed prefixed with CUSTOM_ENV_, the
# exit-status conventions in BUILD_FAILURE_EXIT_CODE, SYSTEM_FAILURE_EXIT_CODE and
# BUILD_EXIT_CODE_FILE, job_env to every stage after config. A stage's script is written to
# a file of the runner's (here: $GL/scripts), never inside the devroot.

GL_BUILD_FAILURE=41
GL_SYSTEM_FAILURE=42

# tests/host/run runs this file on both layouts: on the defaults, where a driver makes a
# job's root an overlay (a throwaway root nobody looks at from the host: `create --overlay`)
# wherever one mounts, then with "layout = flat" in the config file (tests/lib/layout.bash),
# which the drivers follow. So what the drivers learn from inside a root (whether the
# stage's shell started, isAlpine) and a whole job run on both; a test where the layout
# plays no part (no root, a refusal before one, a throwaway root of run --ephemeral, whose
# layout is its own) says so and runs once.
layout_plays_no_part() {
	[[ -z ${EDR_TEST_LAYOUT:-} ]] || skip "the layout plays no part: $1"
}

# driver_layout: the layout a driver gives a job's root in this pass.
driver_layout() {
	if [[ -n ${EDR_TEST_LAYOUT:-} ]]; then
		echo "$EDR_TEST_LAYOUT"
	elif "$EDR_BIN" doctor 2>/dev/null | grep -q '^overlay roots (userxattr) *work'; then
		echo overlay
	else
		echo flat
	fi
}

# root_layout NAME: flat or overlay, how root NAME is laid out in the store (an overlay
# root has its upper directory under overlays/), or none; for checking that the test's
# pass gave the driver's root the layout it means to test.
root_layout() {
	if [[ -d $XDG_DATA_HOME/enter-devroot/overlays/$1/upper ]]; then
		echo overlay
	elif [[ -d $(root_of "$1") ]]; then
		echo flat
	else
		echo none
	fi
}

# alpine_image: an Alpine-like image (busybox, no bash, /etc/alpine-release as every Alpine
# image has it) made from the template; prints its path.
alpine_image() {
	mkdir -p "$W/alpine-extra/etc"
	echo 3.20.3 >"$W/alpine-extra/etc/alpine-release"
	gzip -dc "$EDR_TEMPLATE" >"$W/alpine.tar" &&
		tar -C "$W/alpine-extra" --owner=0 --group=0 -rf "$W/alpine.tar" ./etc/alpine-release &&
		echo "$W/alpine.tar"
}

# gitlab_env JOB_ID IMAGE [SLOT]: the variables a runner passes for one job.
gitlab_env() {
	GL=$W/runner-$1
	mkdir -p "$GL/scripts"
	export CUSTOM_ENV_CI_JOB_ID=$1 CUSTOM_ENV_CI_JOB_IMAGE=$2 CUSTOM_ENV_CI_CONCURRENT_ID=${3:-0}
	export CUSTOM_ENV_CI_RUNNER_SHORT_TOKEN=t0ken
	export BUILD_FAILURE_EXIT_CODE=$GL_BUILD_FAILURE SYSTEM_FAILURE_EXIT_CODE=$GL_SYSTEM_FAILURE
	export BUILD_EXIT_CODE_FILE=$GL/exit-code
	rm -f "$BUILD_EXIT_CODE_FILE"
}

# gitlab_config [ARGS...]: config_exec; exports its job_env and sets GL_BUILDS_DIR.
gitlab_config() {
	local json
	json=$("$EDR_BIN" gitlab config "$@") || return
	printf '%s\n' "$json" >"$GL/config.json"
	eval "$(python3 -c '
import json, shlex, sys
d = json.load(open(sys.argv[1]))
for k, v in d.get("job_env", {}).items():
    print("export %s=%s" % (k, shlex.quote(v)))
print("GL_BUILDS_DIR=%s" % shlex.quote(d["builds_dir"]))
print("GL_CACHE_DIR=%s" % shlex.quote(d["cache_dir"]))' "$GL/config.json")"
}

# gitlab_stage STAGE TEXT: run_exec with a script holding TEXT; its status in $?.
gitlab_stage() {
	local script=$GL/scripts/$1
	printf '%s\n' "$2" >"$script"
	"$EDR_BIN" gitlab run "$script" "$1"
}

# gitlab_root: the name of the devroot the driver makes for the job of gitlab_env.
gitlab_root() {
	echo "gitlab-$CUSTOM_ENV_CI_RUNNER_SHORT_TOKEN-$CUSTOM_ENV_CI_JOB_ID-$CUSTOM_ENV_CI_CONCURRENT_ID"
}

# gitlab_job SCRIPT_TEXT [AFTER_TEXT]: a whole job as the runner runs it, each stage's
# status appended to $GL/stages ("STAGE STATUS"): the preparing and fetching stages, the
# user's script (build_script, the name the runner passes for it), after_script, the
# caching and artifact stages of the outcome, cleanup. The layout of the root prepare made
# goes to $GL/layout. Returns the job's outcome: 0, the build failure or the system failure
# status.
gitlab_job() {
	local outcome=0 s stage
	gitlab_config || return "$GL_SYSTEM_FAILURE"
	"$EDR_BIN" gitlab prepare --allow-local-images
	s=$?
	echo "prepare $s" >>"$GL/stages"
	root_layout "$(gitlab_root)" >"$GL/layout"
	if [[ $s -ne 0 ]]; then
		"$EDR_BIN" gitlab cleanup
		return "$s"
	fi
	for stage in prepare_script get_sources restore_cache download_artifacts build_script; do
		case $stage in
		build_script) gitlab_stage "$stage" "$1" ;;
		get_sources) gitlab_stage "$stage" "mkdir -p '$GL_BUILDS_DIR/project' && echo source > '$GL_BUILDS_DIR/project/README'" ;;
		*) gitlab_stage "$stage" ': runner stage' ;;
		esac
		s=$?
		echo "$stage $s" >>"$GL/stages"
		if [[ $s -ne 0 ]]; then
			outcome=$s
			break
		fi
	done
	if [[ $outcome -ne $GL_SYSTEM_FAILURE ]]; then
		gitlab_stage after_script "${2:-:}"
		echo "after_script $?" >>"$GL/stages"
		if [[ $outcome -eq 0 ]]; then
			for stage in archive_cache upload_artifacts_on_success; do
				gitlab_stage "$stage" ': runner stage'
				echo "$stage $?" >>"$GL/stages"
			done
		else
			for stage in archive_cache_on_failure upload_artifacts_on_failure; do
				gitlab_stage "$stage" ': runner stage'
				echo "$stage $?" >>"$GL/stages"
			done
		fi
		gitlab_stage cleanup_file_variables ': runner stage'
		echo "cleanup_file_variables $?" >>"$GL/stages"
	fi
	"$EDR_BIN" gitlab cleanup
	echo "cleanup $?" >>"$GL/stages"
	return "$outcome"
}

# The Actions runner's container hooks (actions/runner docs/adrs/1891-container-hooks.md):
# one JSON document on standard input per call, {command, responseFile, args, state}; the
# state of prepare_job's response is passed to every later call.

# gh_hook COMMAND ARGS_JSON: call the hook; GH_STATE (JSON) is the stored state, updated
# from the response file when the hook writes one.
gh_hook() {
	local response=$GH/response-$1.json
	rm -f "$response"
	python3 -c '
import json, sys
print(json.dumps({"command": sys.argv[1], "responseFile": sys.argv[2],
                  "args": json.loads(sys.argv[3]), "state": json.loads(sys.argv[4])}))' \
		"$1" "$response" "$2" "${GH_STATE:-{\}}" >"$GH/input-$1.json"
	# GH_HOOK_TIMEOUT: a hook that hangs fails the test instead of the whole run.
	timeout "${GH_HOOK_TIMEOUT:-600}" "$EDR_BIN" github-hook --allow-local-images <"$GH/input-$1.json"
	local s=$?
	if [[ -s $response ]]; then
		GH_STATE=$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["state"]))' "$response")
	fi
	return $s
}

# gh_dirs: the runner's directories on this host, as a runner lays them out.
gh_dirs() {
	GH=$W/actions-runner
	mkdir -p "$GH/_work/_temp" "$GH/_work/_actions" "$GH/_work/_tool" "$GH/externals" \
		"$GH/_work/_temp/_github_home" "$GH/_work/_temp/_github_workflow" "$GH/_work/repo/repo"
}

# gh_container IMAGE: a prepare_job "container" with the runner's system mounts.
gh_container() {
	python3 -c '
import json, sys
gh, image = sys.argv[1], sys.argv[2]
def m(src, dst, ro=False):
    return {"sourceVolumePath": src, "targetVolumePath": dst, "readOnly": ro}
print(json.dumps({"container": {
    "image": image, "workingDirectory": "/__w/repo/repo",
    "environmentVariables": {"JOB_VAR": "from-the-job"},
    "systemMountVolumes": [
        m("/var/run/docker.sock", "/var/run/docker.sock"),
        m(gh + "/_work", "/__w"),
        m(gh + "/externals", "/__e", True),
        m(gh + "/_work/_temp", "/__w/_temp"),
        m(gh + "/_work/_actions", "/__w/_actions"),
        m(gh + "/_work/_tool", "/__w/_tool"),
        m(gh + "/_work/_temp/_github_home", "/github/home"),
        m(gh + "/_work/_temp/_github_workflow", "/github/workflow")],
    "userMountVolumes": [], "portMappings": [], "registry": None},
    "services": []}))' "$GH" "$1"
}
