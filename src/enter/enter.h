/* Entering a devroot: the in-process sequence from "a path" to "exec inside it". */
#pragma once

#include "common/options.h"

/* Enter ROOT (the directory of devroot NAME) and exec there. Never returns: the process
 * becomes the command, or exits 125 (setup failed), 126 or 127 (see run's exit status). */
__attribute__((noreturn)) void enter_root (const char *name, const char *root,
                                           const struct enter_opts *opts);
