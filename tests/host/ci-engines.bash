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

# gitlab_stage STAGE TEXT: run_exec with a script holding TEXT (after the run_args in the
# array GL_RUN_ARGS, when set); its status in $?.
gitlab_stage() {
	local script=$GL/scripts/$1
	printf '%s\n' "$2" >"$script"
	"$EDR_BIN" gitlab run ${GL_RUN_ARGS[@]+"${GL_RUN_ARGS[@]}"} "$script" "$1"
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

# gh_hook COMMAND ARGS_JSON: call the hook (with the administrator's options in the array
# GH_HOOK_ARGS; the responseFile GH_RESPONSE if set); GH_STATE (JSON) is the stored state,
# updated from the response file when the hook writes one.
gh_hook() {
	local response=${GH_RESPONSE:-$GH/response-$1.json}
	rm -f "$response"
	python3 -c '
import json, sys
print(json.dumps({"command": sys.argv[1], "responseFile": sys.argv[2],
                  "args": json.loads(sys.argv[3]), "state": json.loads(sys.argv[4])}))' \
		"$1" "$response" "$2" "${GH_STATE:-{\}}" >"$GH/input-$1.json"
	# GH_HOOK_TIMEOUT: a hook that hangs fails the test instead of the whole run.
	timeout "${GH_HOOK_TIMEOUT:-600}" "$EDR_BIN" github-hook --allow-local-images ${GH_HOOK_ARGS[@]+"${GH_HOOK_ARGS[@]}"} \
		<"$GH/input-$1.json"
	local s=$?
	if [[ -s $response ]]; then
		GH_STATE=$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["state"]))' "$response")
	fi
	return $s
}

# gh_hook_watch COMMAND ARGS_JSON: gh_hook in the background, its output in $GH/watch.out
# and $GH/watch.err; once the step has said it started (made $GH/_work/_temp/started:
# gh_step_wait), every process's command line on this host goes to $GH/cmdlines, one a
# line; then $GH/_work/_temp/go tells the step to go on, and the hook's status is returned.
gh_hook_watch() {
	local pid i f
	rm -f "$GH/_work/_temp/started" "$GH/_work/_temp/go"
	gh_hook "$1" "$2" >"$GH/watch.out" 2>"$GH/watch.err" &
	pid=$!
	for i in $(seq 600); do [[ -e $GH/_work/_temp/started ]] && break; sleep 0.1; done
	for f in /proc/[0-9]*/cmdline; do
		{ tr '\0' ' ' <"$f" && echo; } 2>/dev/null
	done >"$GH/cmdlines"
	: >"$GH/_work/_temp/go"
	wait "$pid"
}

# gh_step_wait DIR: the part of a step's script that waits for gh_hook_watch to have read
# the command lines; DIR is the runner's temp directory inside (/__w/_temp in a job
# container, /github/runner_temp in a container action).
gh_step_wait() {
	printf '%s\n' "echo started > $1/started" \
		"i=0; while [ ! -e $1/go ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done"
}

# gh_dirs: the runner's directories on this host, as a runner lays them out.
gh_dirs() {
	GH=$W/actions-runner
	mkdir -p "$GH/_work/_temp" "$GH/_work/_actions" "$GH/_work/_tool" "$GH/externals" \
		"$GH/_work/_temp/_github_home" "$GH/_work/_temp/_github_workflow" "$GH/_work/repo/repo" \
		"$GH/_work/_temp/_runner_file_commands"
}

# gh_container IMAGE [VOLUME...]: a prepare_job "container" as the runner serialises it
# (HookInput.cs HookContainer, camelCase with its nulls, as in runner-container-hooks'
# examples/prepare-job.json), with JOB_VAR=$GH_JOB_VAR (default from-the-job) in its
# environment, the runner's system mounts (ContainerOperationProvider.cs
# MountWellKnownDirectories) and the workflow's `volumes:` VOLUMEs parsed as the runner
# parses them (ContainerInfo.cs ParseVolumeString: SRC:DST[:ro], DST:ro, DST alone with a
# null source).
gh_container() {
	python3 -c '
import json, sys
gh, image = sys.argv[1], sys.argv[2]
def m(src, dst, ro=False, user=None):
    return {"userProvidedValue": user, "sourceVolumePath": src, "targetVolumePath": dst,
            "readOnly": ro}
def parse(v):
    p = v.split(":")
    if len(p) == 3:
        return m(p[0], p[1], p[2].lower() == "ro", v)
    if len(p) == 2:
        return m(None, p[0], True, v) if p[1].lower() == "ro" else m(p[0], p[1], False, v)
    return m(None, v, False, v)
print(json.dumps({"container": {
    "image": image, "dockerfile": None, "entryPointArgs": [], "entryPoint": None,
    "workingDirectory": "/__w/repo/repo", "createOptions": None, "registry": None,
    "environmentVariables": {"HOME": "/github/home", "JOB_VAR": sys.argv[3]},
    "portMappings": [],
    "systemMountVolumes": [
        m("/var/run/docker.sock", "/var/run/docker.sock"),
        m(gh + "/_work", "/__w"),
        m(gh + "/externals", "/__e", True),
        m(gh + "/_work/_temp", "/__w/_temp"),
        m(gh + "/_work/_actions", "/__w/_actions"),
        m(gh + "/_work/_tool", "/__w/_tool"),
        m(gh + "/_work/_temp/_github_home", "/github/home"),
        m(gh + "/_work/_temp/_github_workflow", "/github/workflow")],
    "userMountVolumes": [parse(v) for v in sys.argv[4:]]},
    "services": []}))' "$GH" "$1" "${GH_JOB_VAR:-from-the-job}" "${@:2}"
}

# gh_runner_args ARG...: the JSON array of entryPointArgs the runner sends for a container
# action's `args:` ARGs: each wrapped in "..." with its double quotes escaped, joined
# (ContainerActionHandler.cs), split on ' ', each piece trimmed and empty ones dropped
# (HookInput.cs HookContainer).
gh_runner_args() {
	python3 -c '
import json, sys
s = "".join(" \"%s\"" % a.replace("\"", "\\\"") if a else " \"\"" for a in sys.argv[1:])
print(json.dumps([p.strip() for p in s.split(" ") if p.strip()]))' "$@"
}

# oci_image DIR USER: an OCI layout at DIR of the template's files whose config names USER
# (docker's USER; "" for none).
oci_image() {
	python3 - "$1" "$2" "$EDR_TEMPLATE" <<-'EOF'
	import gzip, hashlib, json, os, sys
	out, user, template = sys.argv[1], sys.argv[2], sys.argv[3]
	os.makedirs(os.path.join(out, "blobs", "sha256"))
	def blob(data):
	    d = hashlib.sha256(data).hexdigest()
	    open(os.path.join(out, "blobs", "sha256", d), "wb").write(data)
	    return {"digest": "sha256:" + d, "size": len(data)}
	layer = open(template, "rb").read()
	import platform
	arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
	config = {"architecture": arch, "os": "linux", "config": {"User": user} if user else {},
	          "rootfs": {"type": "layers",
	                     "diff_ids": ["sha256:" + hashlib.sha256(gzip.decompress(layer)).hexdigest()]}}
	manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
	            "config": dict(blob(json.dumps(config).encode()),
	                           mediaType="application/vnd.oci.image.config.v1+json"),
	            "layers": [dict(blob(layer), mediaType="application/vnd.oci.image.layer.v1.tar+gzip")]}
	m = dict(blob(json.dumps(manifest).encode()), mediaType=manifest["mediaType"],
	         annotations={"org.opencontainers.image.ref.name": "latest"})
	json.dump({"schemaVersion": 2, "manifests": [m]}, open(os.path.join(out, "index.json"), "w"))
	json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(out, "oci-layout"), "w"))
	EOF
}

# gh_container_step IMAGE ENTRYPOINT ENV_JSON ARG...: run_container_step's args for a
# container action as the runner sends them (HookInput.cs ContainerStepArgs, as in
# runner-container-hooks' examples/run-container-step.json), with the mounts it gives an
# action (ContainerActionHandler.cs) and its `args:` ARGs in the runner's form.
gh_container_step() {
	local image=$1 entry=$2 env=$3
	shift 3
	python3 -c '
import json, sys
gh, image, entry, env, args = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
t = gh + "/_work/_temp"
def m(src, dst):
    return {"userProvidedValue": None, "sourceVolumePath": src, "targetVolumePath": dst,
            "readOnly": False}
print(json.dumps({"image": image, "dockerfile": None, "entryPointArgs": args,
    "entryPoint": entry or None, "workingDirectory": "/github/workspace", "createOptions": None,
    "registry": None, "environmentVariables": env, "portMappings": [],
    "systemMountVolumes": [m("/var/run/docker.sock", "/var/run/docker.sock"),
        m(t, "/github/runner_temp"), m(t + "/_github_home", "/github/home"),
        m(t + "/_github_workflow", "/github/workflow"),
        m(t + "/_runner_file_commands", "/github/file_commands"),
        m(gh + "/_work/repo/repo", "/github/workspace")],
    "userMountVolumes": []}))' "$GH" "$image" "$entry" "$env" "$(gh_runner_args "$@")"
}
