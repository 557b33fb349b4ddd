# Harnesses that play the CI engines' side of their driver protocols exactly as documented,
# since neither gitlab-runner nor the Actions runner is packaged in Debian. Load after
# common.bash.
#
# GitLab Runner, custom executor (executors/custom, docs/executors/custom.md): config_exec,
# whose JSON gives builds_dir, builds_dir_is_shared and job_env; prepare_exec; run_exec
# SCRIPT STAGE for each stage in the runner's order and with its names; cleanup_exec. The
# job response in JOB_RESPONSE_FILE, job variables prefixed with CUSTOM_ENV_, the
# exit-status conventions in BUILD_FAILURE_EXIT_CODE, SYSTEM_FAILURE_EXIT_CODE and
# BUILD_EXIT_CODE_FILE, job_env to every action after config. A stage's script is the one
# the runner generates (gitlab_script), written to a file of the runner's (here:
# $GL/scripts), never inside the devroot.

GL_BUILD_FAILURE=41
GL_SYSTEM_FAILURE=42

# job_image_setup: IMAGE, the image file the tests' jobs name: the default template, copied
# into the test's scratch directory W.
job_image_setup() {
	IMAGE=$W/image.tar.gz
	cp "$EDR_TEMPLATE" "$IMAGE"
}

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

# gitlab_env JOB_ID IMAGE [SLOT] [PROJECT]: what a runner gives its driver for one job of
# PROJECT (default group/project) in the project's concurrency slot SLOT (default 0): the
# job response as GitLab sends it in $JOB_RESPONSE_FILE (its id, the project's repo_url and
# project_id, image.name, and image.entrypoint from $GL_ENTRYPOINT, JSON, when set), the
# predefined variables as CUSTOM_ENV_ (common/build.go GetAllVariables), the exit-status
# conventions. A job's own variables come after those (GL_JOB_VARIABLES, see gitlab_config).
gitlab_env() {
	GL=$W/runner-$1
	GL_JOB_ID=$1 GL_SLOT=${3:-0} GL_PROJECT=${4:-group/project}
	GL_JOB_VARIABLES=()
	mkdir -p "$GL/scripts"
	export JOB_RESPONSE_FILE=$GL/response.json
	python3 -c '
import json, sys
job, image, project, entrypoint = sys.argv[1:5]
r = {"id": int(job), "token": "job-token-" + job,
     "job_info": {"name": "test", "stage": "test", "project_id": 4000 + len(project),
                  "project_full_path": project},
     "git_info": {"repo_url": "https://gitlab-ci-token:job-token-%s@gitlab.example.com/%s.git"
                  % (job, project), "ref": "main", "sha": "0" * 40},
     "image": {"name": image}, "variables": [], "steps": []}
if entrypoint:
    r["image"]["entrypoint"] = json.loads(entrypoint)
json.dump(r, sys.stdout)' "$1" "$2" "$GL_PROJECT" "${GL_ENTRYPOINT:-}" >"$JOB_RESPONSE_FILE"
	export CUSTOM_ENV_CI_JOB_ID=$1 CUSTOM_ENV_CI_JOB_IMAGE=$2
	export CUSTOM_ENV_CI_CONCURRENT_ID=$GL_SLOT CUSTOM_ENV_CI_CONCURRENT_PROJECT_ID=$GL_SLOT
	export CUSTOM_ENV_CI_RUNNER_SHORT_TOKEN=t0ken CUSTOM_ENV_CI_PROJECT_PATH=$GL_PROJECT
	unset CUSTOM_ENV_CI_BUILDS_DIR CUSTOM_ENV_CI_PROJECT_DIR
	export BUILD_FAILURE_EXIT_CODE=$GL_BUILD_FAILURE SYSTEM_FAILURE_EXIT_CODE=$GL_SYSTEM_FAILURE
	export BUILD_EXIT_CODE_FILE=$GL/exit-code
	rm -f "$BUILD_EXIT_CODE_FILE"
}

# gitlab_config [ARGS...]: config_exec; exports its job_env, sets GL_BUILDS_DIR and
# GL_CACHE_DIR, and then what the runner computes from its answer (build.go StartBuild):
# the project directory, BUILDS/RUNNER/SLOT/PROJECT when builds_dir_is_shared, else
# BUILDS/PROJECT (GL_PROJECT_DIR, CUSTOM_ENV_CI_PROJECT_DIR), and the cache directory
# CACHE/PROJECT (GL_PROJECT_CACHE). Then the job's own variables, GL_JOB_VARIABLES
# ("KEY=VALUE"...), which the runner puts after its own: the last value wins.
gitlab_config() {
	local json kv
	json=$("$EDR_BIN" gitlab config "$@") || return
	printf '%s\n' "$json" >"$GL/config.json"
	eval "$(python3 -c '
import json, posixpath, shlex, sys
d = json.load(open(sys.argv[1]))
token, slot, project = sys.argv[2:5]
for k, v in d.get("job_env", {}).items():
    print("export %s=%s" % (k, shlex.quote(v)))
unique = posixpath.join(token, slot, project) if d["builds_dir_is_shared"] else project
print("GL_BUILDS_DIR=%s" % shlex.quote(d["builds_dir"]))
print("GL_CACHE_DIR=%s" % shlex.quote(d["cache_dir"]))
print("GL_PROJECT_DIR=%s" % shlex.quote(posixpath.join(d["builds_dir"], unique)))
print("GL_PROJECT_CACHE=%s" % shlex.quote(posixpath.join(d["cache_dir"], project)))' \
		"$GL/config.json" t0ken "$GL_SLOT" "$GL_PROJECT")"
	export CUSTOM_ENV_CI_BUILDS_DIR=$GL_BUILDS_DIR CUSTOM_ENV_CI_PROJECT_DIR=$GL_PROJECT_DIR
	for kv in "${GL_JOB_VARIABLES[@]}"; do
		export "CUSTOM_ENV_$kv"
	done
}

# gitlab_script TEXT: the script gitlab-runner >= 19.1 generates for a stage whose
# commands are TEXT (shells/bash.go BashWriter.Finish, helpers/shell_escape.go): the
# commands quoted with $'...' and eval'ed in a subshell whose standard input is /dev/null.
gitlab_script() {
	python3 -c '
import sys
lit = set(b",-./0123456789@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
quo = set(b" !\"#$%&()*+:;<=>?[]^`{|}~")
esc = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r",
       39: "\\\x27", 92: "\\\\"}
def shell_escape(s):
    out, quoted = [], False
    for c in s.encode():
        if c in lit:
            out.append(chr(c))
        else:
            quoted = True
            out.append(chr(c) if c in quo else esc.get(c, "\\x%02x" % c))
    return "$\x27" + "".join(out) + "\x27" if quoted or not s else "".join(out)
term = "trap \x27exit 1\x27 TERM"
sys.stdout.write("#!/usr/bin/env bash\n\n" + term + "\n\n"
                 + "case \"$(set -o)\" in *\"pipefail\"*) set -o pipefail;; esac; set -o errexit\n"
                 + "set +o noclobber\n"
                 + "(" + term + "; eval " + shell_escape(sys.argv[1] + "\n") + ") < /dev/null\n"
                 + "exit 0\n")' "$1"
}

# gitlab_stage STAGE TEXT: run_exec with the runner's script for TEXT (after the run_args in
# the array GL_RUN_ARGS, when set); its status in $?.
gitlab_stage() {
	local script=$GL/scripts/$1
	gitlab_script "$2" >"$script"
	"$EDR_BIN" gitlab run ${GL_RUN_ARGS[@]+"${GL_RUN_ARGS[@]}"} "$script" "$1"
}

# gitlab_stage_raw STAGE TEXT: run_exec with TEXT itself as the script (what runners
# before 19.1 left on the shell's standard input is the driver's to close).
gitlab_stage_raw() {
	local script=$GL/scripts/$1
	printf '%s\n' "$2" >"$script"
	"$EDR_BIN" gitlab run ${GL_RUN_ARGS[@]+"${GL_RUN_ARGS[@]}"} "$script" "$1"
}

# gitlab_root: the name of the devroot the driver makes for the job of gitlab_env.
gitlab_root() {
	echo "gitlab-$GL_JOB_ID"
}

# gitlab_host_project_dir: where the job's project directory is on this host (the man page,
# CI ENGINES): BUILDS/RUNNER/SLOT/NAME/BASENAME, NAME the project's path with '/' as %2F.
gitlab_host_project_dir() {
	echo "$GL_BUILDS_DIR/t0ken/$GL_SLOT/${GL_PROJECT//\//%2F}/${GL_PROJECT##*/}"
}

# gitlab_runner_standin: a stand-in for the runner's own binary first on PATH, as the
# packaged runner's /usr/bin/gitlab-runner is on its service's: `--version` answers, the
# cache archiver writes its --file (a line saying who made it) and the extractor prints
# it, the artifacts uploader says so. What it prints shows that it ran inside the job.
gitlab_runner_standin() {
	mkdir -p "$W/runner-bin"
	cat >"$W/runner-bin/gitlab-runner" <<-'EOF'
		#!/bin/sh
		cmd=$1
		shift
		while [ $# -gt 0 ]; do
			[ "$1" = --file ] && file=$2
			shift
		done
		case $cmd in
		--version) echo "Version: 19.3.0 (stand-in)" ;;
		cache-archiver) mkdir -p "$(dirname "$file")" && echo "cache.zip of the runner's binary" >"$file" ;;
		cache-extractor) if [ -f "$file" ]; then echo "restored: $(cat "$file")"; else echo "no cache yet"; fi ;;
		artifacts-uploader) echo "artifacts uploaded by the runner's binary" ;;
		*) exit 1 ;;
		esac
	EOF
	chmod 755 "$W/runner-bin/gitlab-runner"
	export PATH=$W/runner-bin:$PATH
}

# gitlab_guard COMMAND ACTION: COMMAND behind the runner's guard (shells/abstract.go
# guardRunnerCommand): without gitlab-runner inside, ACTION is skipped with a warning and
# the stage succeeds.
gitlab_guard() {
	printf 'if gitlab-runner --version >/dev/null 2>&1 ; then\n  %s\nelse\n  echo "Missing gitlab-runner. %s is disabled."\nfi' "$1" "$2"
}

# gitlab_job SCRIPT_TEXT [AFTER_TEXT]: a whole job as the runner runs it, each stage's
# status appended to $GL/stages ("STAGE STATUS"), each stage's script the runner's
# (gitlab_script): the preparing stage, get_sources (GL_GIT_STRATEGY: fetch, the default,
# keeps the checkout's .git and runs its post-checkout hook as `git checkout` would, then
# cleans everything else as `git clean -ffdx`; clone removes the project directory first,
# `rm -r -f` as the runner's RmDir), restore_cache, download_artifacts, the user's script
# (build_script, the name the runner passes for it) in the project directory, after_script,
# the caching and artifact stages of the outcome (the cache and artifact commands behind
# the runner's `gitlab-runner --version` guard, shells/abstract.go guardRunnerCommand),
# cleanup_file_variables, cleanup. The layout of the root prepare made goes to $GL/layout.
# Returns the job's outcome: 0, the build failure or the system failure status.
gitlab_job() {
	local outcome=0 s stage cd cache_file
	gitlab_config || return "$GL_SYSTEM_FAILURE"
	"$EDR_BIN" gitlab prepare --allow-local-images
	s=$?
	echo "prepare $s" >>"$GL/stages"
	root_layout "$(gitlab_root)" >"$GL/layout"
	if [[ $s -ne 0 ]]; then
		"$EDR_BIN" gitlab cleanup
		return "$s"
	fi
	cd="cd '$GL_PROJECT_DIR'"
	cache_file=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
		"$GL_PROJECT_CACHE/default/cache.zip" "$GL_PROJECT_DIR")
	local get_sources="mkdir -p '$GL_PROJECT_DIR' '$GL_PROJECT_DIR.tmp' && $cd
if [ -d .git ]; then echo Fetching changes; else mkdir .git; echo Initialized empty Git repository; fi
if [ -x .git/hooks/post-checkout ]; then .git/hooks/post-checkout; fi
find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
echo 'source of $GL_PROJECT' > README"
	if [[ ${GL_GIT_STRATEGY:-fetch} == clone ]]; then
		get_sources="if [ -d '$GL_PROJECT_DIR' ]; then chmod -R u+rwX '$GL_PROJECT_DIR'; fi
rm -r -f '$GL_PROJECT_DIR'
$get_sources"
	fi
	for stage in prepare_script get_sources restore_cache download_artifacts build_script; do
		case $stage in
		get_sources) gitlab_stage "$stage" "$get_sources" ;;
		restore_cache) gitlab_stage "$stage" "$cd
$(gitlab_guard "gitlab-runner cache-extractor --file $cache_file --timeout 10" 'Extracting cache')" ;;
		build_script) gitlab_stage "$stage" "$cd
$1" ;;
		*) gitlab_stage "$stage" 'echo "Running on $(hostname)..."' ;;
		esac
		s=$?
		echo "$stage $s" >>"$GL/stages"
		if [[ $s -ne 0 ]]; then
			outcome=$s
			break
		fi
	done
	if [[ $outcome -ne $GL_SYSTEM_FAILURE ]]; then
		gitlab_stage after_script "$cd
${2:-:}"
		echo "after_script $?" >>"$GL/stages"
		local archive=archive_cache upload=upload_artifacts_on_success
		if [[ $outcome -ne 0 ]]; then
			archive=archive_cache_on_failure upload=upload_artifacts_on_failure
		fi
		gitlab_stage "$archive" "$cd
$(gitlab_guard "gitlab-runner cache-archiver --file $cache_file --timeout 10 --path vendor" 'Creating cache')"
		echo "$archive $?" >>"$GL/stages"
		gitlab_stage "$upload" "$cd
$(gitlab_guard "gitlab-runner artifacts-uploader --url https://gitlab.example.com --id $GL_JOB_ID" 'Uploading artifacts')"
		echo "$upload $?" >>"$GL/stages"
		gitlab_stage cleanup_file_variables "rm -f '$GL_PROJECT_DIR.tmp/CI_SERVER_TLS_CA_FILE'"
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

# oci_image DIR USER [CONFIG_JSON]: an OCI layout at DIR of the template's files whose
# config names USER (docker's USER; "" for none) and holds CONFIG_JSON's keys (an object:
# {"Entrypoint": [...]}).
oci_image() {
	python3 - "$1" "$2" "$EDR_TEMPLATE" "${3:-{\}}" <<-'EOF'
	import gzip, hashlib, json, os, sys
	out, user, template = sys.argv[1], sys.argv[2], sys.argv[3]
	extra = json.loads(sys.argv[4])
	os.makedirs(os.path.join(out, "blobs", "sha256"))
	def blob(data):
	    d = hashlib.sha256(data).hexdigest()
	    open(os.path.join(out, "blobs", "sha256", d), "wb").write(data)
	    return {"digest": "sha256:" + d, "size": len(data)}
	layer = open(template, "rb").read()
	import platform
	arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
	config = {"architecture": arch, "os": "linux", "config": dict({"User": user} if user else {}, **extra),
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
