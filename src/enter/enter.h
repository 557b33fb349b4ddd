/* Entering a devroot: the in-process sequence from "a path" to "exec inside it". */
#pragma once

#include "common/cli.h"

/* enter or run (CLI's NAME, or a throwaway root with run --ephemeral): run the command
 * inside the root and exit as it did: its exit status or its signal, 124 when --timeout
 * stopped it, 125 when setting up failed, 126 or 127 (see run's exit status). */
__attribute__((noreturn)) void enter_devroot (const struct cli *cli);

/* MS_* FLAGS as words ("bind,ro"), for -v: newly allocated. */
char *mount_flags_text (unsigned long flags);

/* mount(2) onto what FD (an O_PATH fd) names, through /proc/self/fd: the target is the
 * file that was opened, never a path looked up again. */
int mount_on_fd (const char *source, int fd, const char *type, unsigned long flags,
                 const char *data);
