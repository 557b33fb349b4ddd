#!/usr/bin/env bats
# The CI recipes of examples/ci, replayed locally (examples/ci/replay) against a local git
# repository holding examples/ci/project: clone, build with make inside a throwaway
# devroot, run the project's tests there, artifacts back on the host through --bind.
#
# The recipes name their build root in EDR_ROOT (--template debian-bookworm-build); here it
# is the embedded busybox template with the host's compiler and make bound in read-only
# (/usr, /lib, /lib64, /etc/alternatives), so the test needs no network and no Debian mirror.
#
# The recipes' roots are throwaway roots (run --ephemeral): overlays wherever an
# unprivileged overlay mounts, whatever layout create gives named roots, unless
# ENTER_DEVROOT_LAYOUT says otherwise. So the pass on overlay named roots (tests/host/run,
# tests/lib/layout.bash) would replay them as the default pass does: it skips them, and one
# test of the default pass replays a recipe on a flat throwaway root.

load common

setup() {
	edr_setup
	is_root && skip "the recipes run as an unprivileged CI user (userns mode)"
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	[[ -d ${EDR_EXAMPLES:-}/ci ]] || fail "EDR_EXAMPLES is not set: run through tests/host/run"
	command -v git >/dev/null || skip "git is not installed"
	command -v make >/dev/null && command -v cc >/dev/null || skip "make and cc are not installed"
	python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"
	# The project as a local git repository, the way a forge would serve it.
	REPO=$W/project.git
	cp -R "$EDR_EXAMPLES/ci/project" "$W/project"
	git -C "$W/project" init --quiet
	git -C "$W/project" add .
	git -C "$W/project" -c user.name=ci -c user.email=ci@localhost commit --quiet -m project
	git clone --quiet --bare "$W/project" "$REPO"
	# enter-devroot as the runner would find it on PATH.
	mkdir -p "$W/bin"
	ln -s "$EDR_BIN" "$W/bin/enter-devroot"
	export PATH=$W/bin:$PATH
	local lib binds=()
	for lib in /usr /lib /lib64 /etc/alternatives; do
		[[ -d $lib ]] && binds+=(--bind "$lib:$lib:ro")
	done
	export EDR_ROOT="--from $EDR_TEMPLATE ${binds[*]}"
}
teardown() { edr_teardown; }

# throwaway_layout_is_its_own: skip in the pass on overlay named roots (see above).
throwaway_layout_is_its_own() {
	[[ $(edr_layout) == flat ]] ||
		skip "the recipes' throwaway roots do not follow create's layout: the default pass replays them"
}

# replay RECIPE: run examples/ci/replay on it; the checkout is $W/run/checkout.
replay() {
	run --separate-stderr python3 "$EDR_EXAMPLES/ci/replay" "$EDR_EXAMPLES/ci/$1" "$REPO" "$W/run"
}

assert_built_and_clean() {
	assert_status 0
	[[ -x $W/run/checkout/artifacts/hello ]] || fail "no artifact on the host
$(last_run)"
	assert_equal "$("$W/run/checkout/artifacts/hello")" "hello from a devroot"
	[[ -x $W/run/checkout/test-greet ]] || fail "the project's tests were not built"
	assert_equal "$("$EDR_BIN" list)" ""
	assert_equal "$(ls -A "$(store)/roots")" ""
}

@test "ci recipe: GitHub Actions workflow, replayed: clone, make and make check in a throwaway root, the artifact on the host" {
	throwaway_layout_is_its_own
	replay github-actions.yml
	assert_built_and_clean
}

@test "ci recipe: GitLab CI (shell executor), replayed: clone, make and make check in a throwaway root, the artifact on the host" {
	throwaway_layout_is_its_own
	replay .gitlab-ci.yml
	assert_built_and_clean
}

@test "ci recipe: GitLab CI replayed with ENTER_DEVROOT_LAYOUT=flat: the same build in a flat throwaway root, removed after" {
	throwaway_layout_is_its_own
	export ENTER_DEVROOT_LAYOUT=flat
	replay .gitlab-ci.yml
	assert_built_and_clean
}

@test "ci recipe: a failing test fails the replayed job, and the throwaway root is still removed" {
	throwaway_layout_is_its_own
	sed -i 's/"hello from a devroot") == 0/"something else") == 0/' "$W/project/test-greet.c"
	git -C "$W/project" -c user.name=ci -c user.email=ci@localhost commit --quiet -am "break the test"
	git -C "$W/project" push --quiet "$REPO" HEAD
	replay .gitlab-ci.yml
	[[ $status -ne 0 ]] || fail "the job passed with a failing test
$(last_run)"
	[[ ! -e $W/run/checkout/artifacts/hello ]] || fail "an artifact was kept from a failed job"
	assert_equal "$(ls -A "$(store)/roots")" ""
}

@test "ci recipe: the GitHub workflow builds enter-devroot from its release tarball, installing only its build dependencies" {
	throwaway_layout_is_its_own
	run python3 - "$EDR_EXAMPLES/ci/github-actions.yml" "$BATS_TEST_DIRNAME/../../scripts/install-deps" <<-'EOF'
	import re, sys, yaml
	doc = yaml.safe_load(open(sys.argv[1]))
	steps = [s for job in doc["jobs"].values() for s in job["steps"]]
	install = next(s["run"] for s in steps if s.get("name", "").startswith("Install"))
	deps = set(re.search(r"^build=\(([^)]*)\)", open(sys.argv[2]).read(), re.M).group(1).split())
	wanted = set()
	for m in re.finditer(r"apt-get install([^\n]*)", install.replace("\\\n", " ")):
	    wanted |= {w for w in m.group(1).split() if not w.startswith("-")}
	print("not build dependencies:", " ".join(sorted(wanted - deps)) or "none")
	print("tarball:", "EDR_SOURCE" in doc.get("env", {}) and "$EDR_SOURCE" in install)
	print("installs:", "./configure" in install and "make install" in install)
	EOF
	assert_success
	assert_output "$(printf 'not build dependencies: none\ntarball: True\ninstalls: True')"
}

@test "replay: bad arguments are one line each, never a traceback; a recipe named as in examples/ci is found from anywhere" {
	cd "$W"
	run python3 "$EDR_EXAMPLES/ci/replay" nosuch.yml "$REPO" "$W/r1"
	assert_failure
	assert_output "replay: cannot read the recipe nosuch.yml: No such file or directory"
	mkdir "$W/exists"
	run python3 "$EDR_EXAMPLES/ci/replay" github-actions.yml "$REPO" "$W/exists"
	assert_failure
	assert_output "replay: cannot create WORKDIR $W/exists: File exists (it must not exist yet)"
	run python3 "$EDR_EXAMPLES/ci/replay" github-actions.yml "$W/no-repo" "$W/r2"
	assert_failure
	assert_line "replay: cannot clone $W/no-repo into $W/r2/checkout"
	refute_output --partial Traceback
}
