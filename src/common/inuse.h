/* Which of the caller's processes run inside a devroot (their root or working directory
 * is in it), and stopping them for `remove --force` (see inuse.c). */
#pragma once

#include <sys/types.h>

/* One process inside ROOT, or 0 when none is. */
pid_t inuse_find (const char *root);

/* The parent of PID, from /proc/PID/status; 0 when unknown. */
pid_t inuse_parent_of (pid_t pid);

/* PID's command name (/proc/PID/comm), "?" when unknown; the caller frees it. */
char *inuse_command (pid_t pid);

/* SIGTERM every process inside ROOT (devroot NAME), SIGKILL those alive after a grace
 * period; die()s naming one that survives. */
void inuse_stop (const char *name, const char *root);
