/* Entering a devroot: the in-process sequence from "a path" to "exec inside it". */
#pragma once

#include "common/options.h"

/* Enter ROOT (the directory of devroot NAME) and exec there. Never returns: the process
 * becomes the command, or exits 125 (setup failed), 126 or 127 (see run's exit status). */
__attribute__((noreturn)) void enter_root (const char *name, const char *root,
                                           const struct enter_opts *opts);

/* mount(2) onto what FD (an O_PATH fd) names, through /proc/self/fd: the target is the
 * file that was opened, never a path looked up again. */
int mount_on_fd (const char *source, int fd, const char *type, unsigned long flags,
                 const char *data);
