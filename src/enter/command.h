/* Step 9 of entering (enter.c): what the job runs, and running it inside the root. */
#pragma once

#include "common/cli.h"

/* Before anything is made: `enter` runs the interactive shell inside, whatever the root was
 * made from; `run NAME` with no command runs the image's Entrypoint and Cmd (OPTS->image,
 * else none), as `docker run IMAGE` would. Sets OPTS->image_cmd; dies when run has no
 * command to run in NAME. */
void command_choose (const struct cli *cli, const char *name, struct enter_opts *opts);

/* In the job's child, its root and working directory the root's "/" (chroot(2) done):
 * check that it is, go to the working directory, build the environment, confine, and
 * exec the command (or the shell) found on the root's PATH. */
__attribute__((noreturn)) void run_command (const char *name, const struct enter_opts *opts);
