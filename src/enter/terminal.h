/* userns mode and the user's terminal: the job's process group owns it (terminal.c). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

struct terminal
{
  int fd;          /* the controlling terminal (one of 0, 1, 2); -1: none of ours */
  pid_t job_pgrp;  /* the job's process group, as the supervisor numbers it */
  int status_fd;   /* the read end of the pipe PID 1 writes wait statuses to */
  bool have_end;   /* the command's final wait status has been read */
  int end_status;
};

/* The supervisor, before the clone: TERM->fd is the first of stdin, stdout and stderr that
 * is a terminal whose foreground process group is ours (an interactive `enter`); else -1,
 * and nothing below touches any terminal. */
void terminal_probe (struct terminal *term);

/* The job's PID 1, first thing after the clone: a process group of its own, made the
 * terminal's foreground group, so that inside the PID namespace getpgrp() and tcgetpgrp()
 * agree (a shell starts its job control from them) and the shell can hand the terminal
 * to its own jobs and back. */
void terminal_take (const struct terminal *term);

/* The supervisor, after the clone: watch STATUS_FD (PID 1's pipe) with SIGIO, so that a
 * stop of the command is relayed to the caller's shell (terminal_on_sigio). */
void terminal_watch (struct terminal *term, pid_t job, int status_fd);

/* The supervisor, on SIGIO, and once more when the job has ended (with or without a
 * terminal: the final status): read what PID 1 wrote. A stopped command (^Z of a command that
 * is no shell, a background read) stops us the same way, the terminal given back to our
 * process group first; once continued in the foreground, the terminal goes back to the
 * job and the job is continued. A final status is kept in TERM. ARG is the terminal. */
void terminal_on_sigio (void *arg);

/* The supervisor, when the job has ended: the terminal back to our process group, unless
 * the caller's shell has since given it to another live process group. */
void terminal_restore (const struct terminal *term);
