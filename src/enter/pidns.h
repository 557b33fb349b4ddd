/* userns mode: the job's own PID namespace, its /proc, and the tiny init that is its PID 1. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* In the new PID namespace's first process, working directory the root, before chroot: a
 * fresh procfs (this namespace's processes only) on the root's proc/ directory. A root
 * without one gets no /proc; a failure is one warning line (a host whose own /proc is
 * partly masked refuses a new one), not fatal. */
void pidns_mount_proc (const char *name);

/* PID 1, after chroot and before forking the command: drop every capability it holds in
 * the user namespace. dies on failure. */
void pidns_drop_capabilities (const char *name);

/* PID 1's life once COMMAND is forked: reap whatever is reparented to it, pass SIGINT,
 * SIGTERM and SIGHUP that the supervisor outside sends on to COMMAND, and when COMMAND
 * ends, write its wait status (an int) to STATUS_FD and exit (with REPORT_STOPS, each stop
 * of COMMAND too: a stopped wait status, before the final one); the kernel then kills every
 * other process of the namespace. */
__attribute__((noreturn)) void pidns_init (pid_t command, int status_fd, bool report_stops);
