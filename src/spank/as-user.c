/* The one way the plugin's root code acts for the user: a child that has fully dropped to
 * the job's uid, gid and supplementary groups (real, effective and saved, so it can never
 * take root back) before it touches anything, and then only execs enter-devroot, which
 * itself refuses to run with more privilege than its caller. No user-controlled path is
 * ever opened as root: the child changes to / and opens nothing before the exec.
 *
 * Once dropped, the child is the user's process: the user may trace it (ptrace,
 * pidfd_getfd) or stop it (SIGSTOP). So it holds nothing of root's when it drops (stdin,
 * stdout and stderr on /dev/null, every other fd closed: slurmd's log, output and pipes
 * were taken from it with pidfd_getfd before), runs in a session of its own, and root
 * waits for it at most config.child_timeout seconds, then kills it: a stopped child
 * cannot stall the step or the epilog. What it leaves half-removed is reaped later
 * (enter-devroot doctor and create reap a plugin root whose job Slurm no longer knows). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "spank/plugin.h"

/* How often a bounded wait looks at its child. */
#define WAIT_POLL_NS (50 * 1000 * 1000)

/* In a child: stdin on /dev/null, stdout on OUT and stderr on ERR (-1: /dev/null), and no
 * other fd open. Only async-signal-safe calls: the parent may be threaded (srun,
 * slurmstepd). -1 on failure. */
static int
child_fds (int out, int err)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0)
    return -1;
  /* dup2 clears close-on-exec on the copy: 0, 1 and 2 stay open across the exec. */
  if (dup2 (out >= 0 ? out : null, STDOUT_FILENO) < 0
      || dup2 (err >= 0 ? err : null, STDERR_FILENO) < 0 || dup2 (null, STDIN_FILENO) < 0)
    return -1;
#ifdef SYS_close_range
  if (syscall (SYS_close_range, 3U, ~0U, 0U) == 0)
    return 0;
#endif
  /* A kernel before 5.9: every possible fd (sysconf and /proc are not async-signal-safe). */
  struct rlimit rl;
  int max = getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY
                && rl.rlim_max < (1 << 20)
              ? (int) rl.rlim_max
              : 1 << 20;
  for (int fd = 3; fd < max; fd++)
    close (fd);
  return 0;
}

/* In a child: the signal mask and the dispositions a daemon may have changed, back to
 * what a program expects when it starts (exec keeps a blocked mask and ignored signals). */
static void
child_signals (void)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction (sig, &dfl, NULL); /* (glibc's own signals refuse: fine) */
}

/* The exit status of PID, or -1 when it was killed; -1 with *TIMED_OUT once TIMEOUT
 * seconds (0: no bound) have passed, after killing it and its session. */
static int
wait_status (pid_t pid, const char *what, unsigned timeout, bool *timed_out)
{
  const struct timespec poll_interval = { .tv_sec = 0, .tv_nsec = WAIT_POLL_NS };
  struct timespec start, now;
  clock_gettime (CLOCK_MONOTONIC, &start);
  int status, options = timeout > 0 ? WNOHANG : 0;
  *timed_out = false;
  for (;;)
    {
      pid_t r = waitpid (pid, &status, options);
      if (r == pid)
        break;
      if (r < 0 && errno != EINTR)
        {
          slurm_error ("%s: waiting for %s: %m", PLUGIN_NAME, what);
          return -1;
        }
      if (r != 0)
        continue;
      clock_gettime (CLOCK_MONOTONIC, &now);
      if (now.tv_sec - start.tv_sec >= (time_t) timeout)
        {
          /* Stopped, traced or only slow: SIGKILL ends it in every case. */
          *timed_out = true;
          kill (-pid, SIGKILL);
          kill (pid, SIGKILL);
          options = 0;
          continue;
        }
      nanosleep (&poll_interval, NULL);
    }
  if (*timed_out)
    {
      slurm_error ("%s: %s did not end within %u s (child_timeout=): killed", PLUGIN_NAME, what,
                   timeout);
      return -1;
    }
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  slurm_error ("%s: %s killed by signal %d", PLUGIN_NAME, what, WTERMSIG (status));
  return -1;
}

/* In the child: become UID/GID/GIDS for good, or _exit. */
static void
drop_for_good (uid_t uid, gid_t gid, const gid_t *gids, int ngids)
{
  /* slurmstepd runs some callbacks with only its effective ids switched to the user's:
   * take root back from the saved id first, so that what follows is a full drop. */
  if (geteuid () != 0 && seteuid (0) < 0)
    _exit (EXIT_CANNOT_EXEC);
  if (setgroups ((size_t) ngids, gids) < 0 || setresgid (gid, gid, gid) < 0
      || setresuid (uid, uid, uid) < 0)
    _exit (EXIT_CANNOT_EXEC);
  uid_t r, e, s;
  gid_t rg, eg, sg;
  if (getresuid (&r, &e, &s) < 0 || r != uid || e != uid || s != uid
      || getresgid (&rg, &eg, &sg) < 0 || rg != gid || eg != gid || sg != gid)
    _exit (EXIT_CANNOT_EXEC);
  /* Proof that nothing is left to take back (for a job of root, nothing was dropped). */
  if (uid != 0 && (setuid (0) == 0 || seteuid (0) == 0))
    _exit (EXIT_CANNOT_EXEC);
  if (chdir ("/") < 0)
    _exit (EXIT_CANNOT_EXEC);
}

void
exec_enter_devroot (const char *const *argv, char *const *env)
{
  /* execve's prototype predates const; it modifies neither the array nor the strings. */
  union
  {
    const char *const *in;
    char *const *out;
  } args = { .in = argv };
  execve (config.enter_devroot, args.out, env);
}

/* UID's primary group into *GID and its groups (malloc'd, *N of them), or NULL. */
static gid_t *
user_groups (uid_t uid, gid_t *gid, int *n)
{
  struct passwd pw, *found = NULL;
  char buf[4096];
  if (getpwuid_r (uid, &pw, buf, sizeof buf, &found) != 0 || found == NULL)
    return NULL;
  *gid = pw.pw_gid;
  int count = 0;
  getgrouplist (pw.pw_name, pw.pw_gid, NULL, &count);
  gid_t *groups = calloc ((size_t) count + 1, sizeof *groups);
  if (groups == NULL || getgrouplist (pw.pw_name, pw.pw_gid, groups, &count) < 0)
    {
      free (groups);
      return NULL;
    }
  *n = count;
  return groups;
}

int
as_user_run (spank_t sp, const char *const *argv, char *const *env)
{
  uid_t uid;
  gid_t gid;
  gid_t *gids = NULL;
  int ngids = 0;
  gid_t *looked_up = NULL;
  if (spank_get_item (sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
    {
      slurm_error ("%s: cannot read the job's uid", PLUGIN_NAME);
      return -1;
    }
  if (spank_get_item (sp, S_JOB_GID, &gid) != ESPANK_SUCCESS
      || spank_get_item (sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &ngids) != ESPANK_SUCCESS)
    {
      /* The job's epilog has the uid only: the user's groups are the passwd database's. */
      looked_up = user_groups (uid, &gid, &ngids);
      if (looked_up == NULL)
        {
          slurm_error ("%s: cannot find the groups of uid %u", PLUGIN_NAME, (unsigned) uid);
          return -1;
        }
      gids = looked_up;
    }
  pid_t pid = fork ();
  if (pid < 0)
    {
      slurm_error ("%s: fork: %m", PLUGIN_NAME);
      return -1;
    }
  if (pid == 0)
    {
      /* Before the drop, while nothing of the user's can look at us: after it, what we
       * hold is theirs to take. Its own session: the timeout kills all of it. */
      if (child_fds (-1, -1) < 0 || setsid () < 0)
        _exit (EXIT_CANNOT_EXEC);
      child_signals ();
      drop_for_good (uid, gid, gids, ngids);
      exec_enter_devroot (argv, env);
      _exit (EXIT_CANNOT_EXEC);
    }
  free (looked_up);
  char what[256];
  snprintf (what, sizeof what, "%s %s %s", config.enter_devroot, argv[1],
            argv[2] != NULL ? argv[2] : "");
  bool timed_out;
  int status = wait_status (pid, what, config.child_timeout, &timed_out);
  if (status == EXIT_CANNOT_EXEC)
    slurm_error ("%s: cannot run %s as uid %u: dropping privileges or exec failed", PLUGIN_NAME,
                 what, (unsigned) uid);
  return timed_out ? AS_USER_TIMED_OUT : status;
}

pid_t
spawn_enter_devroot_to (const char *const *argv, char *const *env, int out_fd)
{
  pid_t pid = fork ();
  if (pid < 0)
    {
      slurm_error ("%s: fork: %m", PLUGIN_NAME);
      return -1;
    }
  if (pid == 0)
    {
      /* Nothing but async-signal-safe calls in a child of a threaded process (srun). The
       * caller is the user's own process: what the child may hold is the user's already,
       * but nothing of srun's or slurmstepd's (their sockets, their pipes) goes with it. */
      if (child_fds (out_fd, STDERR_FILENO) < 0)
        _exit (EXIT_CANNOT_EXEC);
      child_signals ();
      exec_enter_devroot (argv, env);
      _exit (EXIT_CANNOT_EXEC);
    }
  return pid;
}

pid_t
spawn_enter_devroot (const char *const *argv, char *const *env, enum child_stdout out)
{
  return spawn_enter_devroot_to (argv, env, out == STDOUT_TO_STDERR ? STDERR_FILENO : -1);
}

int
wait_enter_devroot (pid_t pid)
{
  /* The user's own child, waited for by the user's own process: the job's time limit
   * bounds it (a pull of a large image may rightly take long). */
  bool timed_out;
  int status = wait_status (pid, config.enter_devroot, 0, &timed_out);
  if (status == EXIT_CANNOT_EXEC)
    slurm_error ("%s: cannot run %s (enter_devroot= in plugstack.conf)", PLUGIN_NAME,
                 config.enter_devroot);
  return status;
}

int
run_and_wait (const char *const *argv, char *const *env, enum child_stdout out)
{
  pid_t pid = spawn_enter_devroot (argv, env, out);
  return pid < 0 ? -1 : wait_enter_devroot (pid);
}
