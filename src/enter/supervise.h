/* The process that waits while a job runs: it passes cancellation on, enforces --timeout,
 * and makes sure nothing the job started outlives it. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* How long a job has to end after SIGTERM (from --timeout) or a forwarded cancellation
 * signal before everything it started gets SIGKILL. */
#define SUPERVISE_KILL_GRACE_SECONDS 5

/* The exit status of run when --timeout stopped the command (as timeout(1)). */
#define EXIT_TIMED_OUT 124

struct supervise_opts
{
  unsigned timeout; /* seconds before SIGTERM to the child; 0: none */
  bool escalate;    /* SIGKILL the child SUPERVISE_KILL_GRACE_SECONDS after a cancellation */
  bool sweep;       /* a child subreaper: kill every orphan left once the child is gone */
  bool report_stops; /* write the child's wait status to STOPS_FD each time it stops */
  int stops_fd;
  void (*on_sigio) (void *); /* called with SIGIO_ARG when SIGIO arrives */
  void *sigio_arg;
};

struct job_end
{
  int status;        /* the child's wait status */
  int cancel_signal; /* SIGINT, SIGTERM or SIGHUP received and passed on; 0: none */
  bool timed_out;    /* --timeout expired */
};

/* Block SIGCHLD, SIGIO and the cancellation signals (SIGINT, SIGTERM, SIGHUP) so that none is
 * lost between a fork and supervise(); call before forking the child. */
void supervise_block_signals (void);
/* In a forked child: the signal mask the process had before supervise_block_signals(). */
void supervise_restore_signals (void);

/* Wait for CHILD, reaping any other child too, and passing on to it each cancellation
 * signal a process sent us (a terminal's ^C already reached the whole foreground process
 * group: passed on, the command would get it twice). Fills END. */
void supervise (pid_t child, const struct supervise_opts *opts, struct job_end *end);

/* Become a child subreaper, so that what the job daemonises (setsid, double fork) is
 * reparented to us, where supervise's sweep finds it. */
void supervise_become_subreaper (void);

/* Exit as the job ended: 124 if it timed out, its exit status, else die of its signal
 * (of the cancellation signal received when our SIGKILL ended it). */
__attribute__((noreturn)) void supervise_exit_like (const struct job_end *end);
