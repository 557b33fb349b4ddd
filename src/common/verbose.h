/* -v/--verbose and ENTER_DEVROOT_DEBUG: each step on stderr, one line each, prefixed
 * "enter-devroot: " as errors are (charliecloud's -v does the same). Both programs print
 * them: the flag is parsed once (cli.c) and passed on in the environment, so the store
 * helper enter-devroot execs, and the enter-devroot it execs back, print them too. */
#pragma once

#include <stdbool.h>

#define VERBOSE_ENV "ENTER_DEVROOT_DEBUG"

/* -v: turn the lines on here and, through VERBOSE_ENV=1, in every program we exec. */
void verbose_enable (void);

/* Whether the lines are on: -v was given, or VERBOSE_ENV is set and not empty or "0"
 * (read once: entering replaces the environment before the last lines). */
bool verbose_on (void);

/* One line (no newline in FORMAT) when on; errno is kept, so a call may sit between a
 * failing call and the die_with_error that reports it. */
__attribute__((format (printf, 1, 2))) void verbose (const char *format, ...);
