#!/bin/sh
# The GitHub Actions runner's container hooks, done by enter-devroot: jobs with a
# `container:` run in a devroot of that image, as the runner's user, with no Docker.
# In the runner's directory (where config.sh and run.sh are):
#   install -m 755 enter-devroot-hook.sh .          # this file
#   echo "ACTIONS_RUNNER_CONTAINER_HOOKS=$PWD/enter-devroot-hook.sh" >> .env
#   echo "ACTIONS_RUNNER_REQUIRE_JOB_CONTAINER=true" >> .env   # optional: only container jobs
# then restart the runner. Needs user-namespace mode ('enter-devroot doctor').
exec enter-devroot github-hook
