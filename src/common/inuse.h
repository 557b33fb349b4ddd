/* Which of the caller's processes run inside a devroot (their root or working directory
 * is in it), and stopping them for `remove --force` (see inuse.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One process inside ROOT, or 0 when none is. */
pid_t inuse_find (const char *root);
/* The same, not counting the processes SKIP[0..N_SKIP) (a root's idle keepers, which
 * `remove` stops itself: an overlay root's keeper has the root mounted). */
pid_t inuse_find_besides (const char *root, const pid_t *skip, size_t n_skip);

/* The parent of PID, from /proc/PID/status; 0 when unknown. */
pid_t inuse_parent_of (pid_t pid);

/* PID's command name (/proc/PID/comm), "?" when unknown; the caller frees it. */
char *inuse_command (pid_t pid);

/* SIGTERM every process inside ROOT (devroot NAME) but the N_SKIP of SKIP (its keepers,
 * which remove kills next), SIGKILL those alive after a grace period; die()s naming one
 * that survives. */
void inuse_stop (const char *name, const char *root, const pid_t *skip, size_t n_skip);

/* The start time of PID in clock ticks since boot (field 22 of /proc/PID/stat), 0 if gone:
 * with the PID, it names a process that a reused PID cannot be mistaken for. */
uint64_t inuse_start_time (pid_t pid);

/* The keepers of NAME's warm namespaces (stepns.c): state files LOCKS/NAME@warm-KEY.ns,
 * "PID START_TIME RUNS GENERATION". A keeper counts when its process still runs with that
 * start time and is the caller's. */
#define KEEPER_WARM_INFIX "@warm-"
/* An overlay root's holder (stepns.h) is one of them: NAME@warm-root.ns. */
#define KEEPER_ROOT "root"
/* How many live keepers NAME has; the first MAX PIDs go to PIDS. */
size_t inuse_keepers (const char *locks, const char *name, pid_t *pids, size_t max);
/* SIGKILL every keeper of NAME (its PID namespace, and anything left in it, dies with it),
 * wait until each is gone, and remove their state files: `remove` leaves no process. */
void inuse_stop_keepers (const char *locks, const char *name);
