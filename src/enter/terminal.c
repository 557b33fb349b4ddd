/* userns mode: the job runs in its own PID namespace, where the process group of the
 * caller's shell job (ours, the supervisor's) does not exist: getpgrp() and tcgetpgrp()
 * read 0 inside. A shell starts job control from those two numbers and gives the terminal
 * back to the group it found on exit: dash then fails (tcsetpgrp(0): "Cannot set tty
 * process group (No such process)", status 2 whatever the exit status). So the job's
 * PID 1 makes a process group of its own, visible inside as 1, and makes it the
 * terminal's foreground group; the shell sees a terminal it owns.
 *
 * Job control a process group away from ours: a terminal's ^Z now stops the job's group,
 * not us, so the caller's shell would never learn of it. PID 1 reports the command's stop
 * on its status pipe (it never stops itself: the kernel spares a namespace's init the
 * signals it does not handle), and we stop our own group the same way, giving the
 * terminal back first; `fg` continues us, and we give it to the job again and continue it.
 *
 * The session is left alone (no setsid): TIOCSTI and TIOCLINUX are refused by seccomp
 * instead (confine.c), so the terminal stays the job's controlling terminal. Changing the
 * foreground group from a background group raises SIGTTOU unless it is blocked: blocked
 * around each tcsetpgrp here, and in the supervisor for as long as the job owns the
 * terminal (a warning it prints would otherwise stop it under `stty tostop`). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/util.h"
#include "enter/terminal.h"

/* tcsetpgrp as a background process may: with SIGTTOU blocked. */
static int
set_foreground (int fd, pid_t pgrp)
{
  sigset_t ttou, saved;
  sigemptyset (&ttou);
  sigaddset (&ttou, SIGTTOU);
  sigprocmask (SIG_BLOCK, &ttou, &saved);
  int r = tcsetpgrp (fd, pgrp);
  int errsv = errno;
  sigprocmask (SIG_SETMASK, &saved, NULL);
  errno = errsv;
  return r;
}

void
terminal_probe (struct terminal *term)
{
  *term = (struct terminal) { .fd = -1, .status_fd = -1 };
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
    if (isatty (fd) && tcgetpgrp (fd) == getpgrp ())
      {
        term->fd = fd;
        return;
      }
}

void
terminal_take (const struct terminal *term)
{
  if (term->fd < 0)
    return;
  if (setpgid (0, 0) < 0 || set_foreground (term->fd, getpgrp ()) < 0)
    warn ("cannot give the terminal to the job (%s): job control inside will not work",
          strerror (errno));
}

void
terminal_watch (struct terminal *term, pid_t job, int status_fd)
{
  term->job_pgrp = job; /* PID 1 leads the job's group (terminal_take) */
  term->status_fd = status_fd;
  if (term->fd < 0)
    return;
  if (fcntl (status_fd, F_SETOWN, getpid ()) < 0
      || fcntl (status_fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0)
    die_with_error ("cannot watch the job's status pipe");
  /* We are a background group from now on: a warning we print ("timed out") on a
   * terminal set to `stty tostop` would stop us, not the job. */
  sigset_t ttou;
  sigemptyset (&ttou);
  sigaddset (&ttou, SIGTTOU);
  sigprocmask (SIG_BLOCK, &ttou, NULL);
}

/* The command stopped with STATUS: stop as it did, then resume it where we resume. */
static void
relay_stop (const struct terminal *term, int status)
{
  /* The stop signals a terminal sends keep their name ("Stopped (tty input)"); any other
   * (SIGSTOP, or whatever else might be written to the pipe) is SIGSTOP. */
  int sig = WSTOPSIG (status);
  if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
    sig = SIGSTOP;
  /* Only from the job: after `bg` the caller's shell holds the terminal (the command
   * stopped reading it in the background), and keeps it. */
  if (tcgetpgrp (term->fd) == term->job_pgrp)
    set_foreground (term->fd, getpgrp ());
  /* To our whole group, as the terminal would have sent it (a pipeline `enter | tee`
   * stops together); we stop here until the caller's shell continues us (SIGTTOU is
   * blocked since terminal_watch: unblocked for its own delivery). */
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, sig);
  kill (0, sig);
  sigprocmask (SIG_UNBLOCK, &set, NULL);
  if (sig == SIGTTOU)
    sigprocmask (SIG_BLOCK, &set, NULL);
  if (tcgetpgrp (term->fd) == getpgrp ())
    set_foreground (term->fd, term->job_pgrp); /* `fg`; after `bg`, the job stays behind */
  kill (-term->job_pgrp, SIGCONT);
}

void
terminal_on_sigio (void *arg)
{
  struct terminal *term = arg;
  int status;
  /* Up to the final status, the last thing PID 1 writes: without a terminal the pipe
   * blocks, and only PID 1's exit would end the read after it. */
  while (!term->have_end && read (term->status_fd, &status, sizeof status) == sizeof status)
    {
      if (WIFSTOPPED (status))
        relay_stop (term, status);
      else
        {
          term->have_end = true;
          term->end_status = status;
        }
    }
}

void
terminal_restore (const struct terminal *term)
{
  if (term->fd < 0)
    return;
  pid_t fg = tcgetpgrp (term->fd);
  if (fg == getpgrp ())
    return;
  /* The job's groups died with its PID namespace; a live group is the caller's shell. */
  if (fg > 0 && fg != term->job_pgrp && kill (-fg, 0) == 0)
    return;
  set_foreground (term->fd, getpgrp ());
}
