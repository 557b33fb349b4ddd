/* The CI engine drivers, run by enter-devroot-store for `enter-devroot gitlab ...` and
 * `enter-devroot github-hook` (driver.h says what they share). ARGV: the words after the
 * subcommand. They return the exit status, or exit with the engine's own statuses. */
#pragma once

/* gitlab.c: GitLab Runner's custom executor (config, prepare, run SCRIPT STAGE, cleanup). */
int ci_gitlab (char **argv);
/* github-hook.c: the GitHub Actions runner's container hooks (JSON on standard input). */
int ci_github_hook (char **argv);
