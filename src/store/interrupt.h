/* SIGINT, SIGTERM and SIGHUP during a long command (create, fetch): undo, say so in one
 * line, exit 128+signal (see interrupt.c). */
#pragma once

#include <stdbool.h>

/* Catch the three signals from now on: they only set a flag, which the long loops read. */
void interrupt_install (void);

/* The signal caught and not yet acted on, 0 if none (always 0 once committed). */
int interrupt_pending (void);

/* If a signal arrived: run what die() runs (the staging directory is removed), print
 * "interrupted: nothing created" and NOTE, exit 128+signal. */
void interrupt_check (void);
void interrupt_check_note (const char *note);

/* The command's result is in place (a create's root renamed into its name): from here it
 * completes and exits 0 whatever arrives, so the status tells the truth. */
void interrupt_commit (void);
