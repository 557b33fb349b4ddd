/* The process that waits while a job runs (see supervise.h).
 *
 * Signals are blocked and taken with sigtimedwait(), never by handlers: the loop below is
 * the only place anything happens, and a signal that arrives between fork() and the loop
 * waits in the pending set. A CI runner cancels a job with SIGTERM (GitLab), SIGINT then
 * SIGTERM (GitHub Actions) or SIGHUP (a closed session); each is passed on to the child.
 * If the child is still there SUPERVISE_KILL_GRACE_SECONDS later, it gets SIGKILL. When
 * the child is gone, a sweeping supervisor (chroot mode: no PID namespace to take the
 * job's other processes with it) kills every process reparented to it, repeatedly, until
 * it has no child left. SIGIO is taken the same way and handed to the caller's on_sigio
 * (terminal.c: PID 1 wrote on its status pipe); a child's stops are reported on a pipe
 * when asked (PID 1, for the supervisor outside to relay them). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/inuse.h"
#include "common/util.h"
#include "enter/supervise.h"

static sigset_t saved_mask;

static void
waited_signals (sigset_t *set)
{
  sigemptyset (set);
  sigaddset (set, SIGCHLD);
  sigaddset (set, SIGINT);
  sigaddset (set, SIGTERM);
  sigaddset (set, SIGHUP);
  sigaddset (set, SIGIO); /* terminal.c's watch on PID 1's status pipe */
}

void
supervise_block_signals (void)
{
  /* A caller that set SIGCHLD to SIG_IGN would have our children reaped behind our back. */
  if (signal (SIGCHLD, SIG_DFL) == SIG_ERR)
    die_with_error ("cannot reset SIGCHLD");
  sigset_t set;
  waited_signals (&set);
  if (sigprocmask (SIG_BLOCK, &set, &saved_mask) < 0)
    die_with_error ("cannot block signals");
}

void
supervise_restore_signals (void)
{
  if (sigprocmask (SIG_SETMASK, &saved_mask, NULL) < 0)
    die_with_error ("cannot restore the signal mask");
}

void
supervise_become_subreaper (void)
{
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    die_with_error ("cannot become a child subreaper");
}

static double
now_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* SIGKILL every process whose parent is us; how many were found. */
static int
kill_children (void)
{
  DIR *d = opendir ("/proc");
  if (d == NULL)
    {
      warn ("cannot read /proc to find what the job left running: %s", strerror (errno));
      return 0;
    }
  pid_t self = getpid ();
  int found = 0;
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    {
      char *end;
      long pid = strtol (de->d_name, &end, 10);
      if (*end != '\0' || pid <= 0 || inuse_parent_of ((pid_t) pid) != self)
        continue;
      kill ((pid_t) pid, SIGKILL);
      found++;
    }
  closedir (d);
  return found;
}

/* Kill and reap every process reparented to us. A killed process's own children are
 * reparented to us in turn, so repeat until waitpid has nothing left to wait for. */
static void
sweep_orphans (void)
{
  for (;;)
    {
      int status;
      pid_t pid;
      while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
        ;
      if (pid < 0 && errno == ECHILD)
        return;
      if (kill_children () == 0 && waitpid (-1, &status, 0) < 0 && errno == ECHILD)
        return;
    }
}

static void
reap (pid_t child, const struct supervise_opts *opts, bool *done, int *status)
{
  int st;
  pid_t pid;
  int flags = WNOHANG | (opts->report_stops ? WUNTRACED : 0);
  while ((pid = waitpid (-1, &st, flags)) > 0)
    if (pid == child && WIFSTOPPED (st))
      {
        if (write_all (opts->stops_fd, &st, sizeof st) < 0)
          warn ("cannot report that the command stopped: %s", strerror (errno));
      }
    else if (pid == child)
      {
        *done = true;
        *status = st;
      }
}

void
supervise (pid_t child, const struct supervise_opts *opts, struct job_end *end)
{
  *end = (struct job_end) { 0 };
  sigset_t set;
  waited_signals (&set);
  double stop_at = opts->timeout > 0 ? now_seconds () + opts->timeout : 0; /* 0: none */
  double kill_at = 0;                                                       /* 0: none */
  bool killed = false, done = false;

  while (!done)
    {
      double next = stop_at;
      if (kill_at > 0 && (next == 0 || kill_at < next))
        next = kill_at;
      siginfo_t si;
      int sig;
      if (next > 0)
        {
          double left = next - now_seconds ();
          if (left < 0)
            left = 0;
          time_t whole = (time_t) left;
          struct timespec ts = { .tv_sec = whole, .tv_nsec = (long) ((left - (double) whole) * 1e9) };
          sig = sigtimedwait (&set, &si, &ts);
        }
      else
        sig = sigwaitinfo (&set, &si);

      if (sig == SIGCHLD)
        reap (child, opts, &done, &end->status);
      else if (sig == SIGIO)
        {
          if (opts->on_sigio != NULL)
            opts->on_sigio (opts->sigio_arg);
        }
      else if (sig > 0)
        {
          /* Sent by the kernel (a terminal's ^C, ^\ or hangup): the foreground process
           * group, the command included, has it already. */
          if (si.si_code == SI_KERNEL)
            continue;
          kill (child, sig);
          if (end->cancel_signal == 0)
            end->cancel_signal = sig;
          if (opts->escalate && !killed && kill_at == 0)
            kill_at = now_seconds () + SUPERVISE_KILL_GRACE_SECONDS;
        }
      else if (errno == EAGAIN)
        {
          double t = now_seconds ();
          if (kill_at > 0 && t >= kill_at)
            {
              kill (child, SIGKILL);
              killed = true;
              kill_at = 0;
            }
          if (stop_at > 0 && t >= stop_at)
            {
              warn ("timed out after %u s: stopping the command", opts->timeout);
              end->timed_out = true;
              stop_at = 0;
              kill (child, SIGTERM);
              if (!killed && kill_at == 0)
                kill_at = t + SUPERVISE_KILL_GRACE_SECONDS;
            }
        }
      else if (errno != EINTR)
        die_with_error ("cannot wait for signals");
    }
  if (opts->sweep)
    sweep_orphans ();
}

void
supervise_exit_like (const struct job_end *end)
{
  if (end->timed_out)
    exit (EXIT_TIMED_OUT);
  if (WIFEXITED (end->status))
    exit (WEXITSTATUS (end->status));
  int sig = WIFSIGNALED (end->status) ? WTERMSIG (end->status) : SIGKILL;
  if (sig == SIGKILL && end->cancel_signal != 0)
    sig = end->cancel_signal;
  /* Die of the same signal, so the caller's shell sees what it would have seen without us;
   * without a core dump of our own. */
  struct rlimit no_core = { 0, 0 };
  setrlimit (RLIMIT_CORE, &no_core);
  signal (sig, SIG_DFL);
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, sig);
  sigprocmask (SIG_UNBLOCK, &set, NULL);
  raise (sig);
  exit (128 + sig);
}
