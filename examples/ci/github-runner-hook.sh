#!/bin/sh
# The GitHub Actions runner's container hooks, done by enter-devroot: jobs with a
# `container:` run in a devroot of that image, with no Docker. In the runner's directory
# (where config.sh and run.sh are), as the runner's own (unprivileged) user:
#   install -m 755 .../examples/ci/github-runner-hook.sh enter-devroot-hook.sh  # this file
#   echo "ACTIONS_RUNNER_CONTAINER_HOOKS=$PWD/enter-devroot-hook.sh" >> .env
#   echo "ACTIONS_RUNNER_REQUIRE_JOB_CONTAINER=true" >> .env   # only container jobs: a job
#                                  # without one runs on this host as the runner's user
# then restart the runner (./svc.sh stop && ./svc.sh start, or run.sh again). Needs
# user-namespace mode ('enter-devroot doctor').
#
# The runner runs this file with `bash -e` and its own PATH (its .path file), which for a
# service usually lacks ~/.local/bin, where ./quickstart installs enter-devroot: so it is
# named by its absolute path here, the first of these that exists. Name yours first if it
# is elsewhere.
#
# Options (see 'man enter-devroot', GitHub Actions runner):
#   --cacert FILE         the CA certificates of your registry (a private one);
#   --insecure-http       a registry on plain http (a local mirror);
#   --allow-volume DIR    a directory of this host a workflow's `volumes:` may bind
#                         (repeatable; DIR:ro for read-only only); by default only the
#                         runner's own work, externals and temp directories;
#   --step-user runner    steps as the runner's user, never root emulation (default:
#                         `image`, root emulation where docker would run the step as root);
#   --allow-local-images  workflows may name image files and directories of this host.
for edr in "$HOME/.local/bin/enter-devroot" /usr/local/bin/enter-devroot /usr/bin/enter-devroot; do
	if [ -x "$edr" ]; then
		exec "$edr" github-hook
	fi
done
echo "enter-devroot-hook.sh: enter-devroot is in none of ~/.local/bin, /usr/local/bin, /usr/bin: name it in $0" >&2
exit 1
