/* The one way the plugin's root code acts for the user: a child that has fully dropped to
 * the job's uid, gid and supplementary groups (real, effective and saved, so it can never
 * take root back) before it touches anything, and then only execs enter-devroot, which
 * itself refuses to run with more privilege than its caller. No user-controlled path is
 * ever opened as root: the child changes to / and opens nothing before the exec. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spank/plugin.h"

/* Exit statuses of a child that never reached enter-devroot (as a shell's). */
#define EXIT_CANNOT_DROP 126
#define EXIT_CANNOT_EXEC 127

static int
wait_status (pid_t pid, const char *what)
{
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        slurm_error ("%s: waiting for %s: %m", PLUGIN_NAME, what);
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
    _exit (EXIT_CANNOT_DROP);
  if (setgroups ((size_t) ngids, gids) < 0 || setresgid (gid, gid, gid) < 0
      || setresuid (uid, uid, uid) < 0)
    _exit (EXIT_CANNOT_DROP);
  uid_t r, e, s;
  gid_t rg, eg, sg;
  if (getresuid (&r, &e, &s) < 0 || r != uid || e != uid || s != uid
      || getresgid (&rg, &eg, &sg) < 0 || rg != gid || eg != gid || sg != gid)
    _exit (EXIT_CANNOT_DROP);
  /* Proof that nothing is left to take back (for a job of root, nothing was dropped). */
  if (uid != 0 && (setuid (0) == 0 || seteuid (0) == 0))
    _exit (EXIT_CANNOT_DROP);
  if (chdir ("/") < 0)
    _exit (EXIT_CANNOT_DROP);
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
      drop_for_good (uid, gid, gids, ngids);
      exec_enter_devroot (argv, env);
      _exit (EXIT_CANNOT_EXEC);
    }
  free (looked_up);
  int status = wait_status (pid, config.enter_devroot);
  if (status == EXIT_CANNOT_DROP || status == EXIT_CANNOT_EXEC)
    slurm_error ("%s: cannot run %s %s as uid %u: %s", PLUGIN_NAME, config.enter_devroot,
                 argv[1], (unsigned) uid,
                 status == EXIT_CANNOT_DROP ? "dropping privileges failed" : "exec failed");
  return status;
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
      /* Nothing but async-signal-safe calls in a child of a threaded process (srun). */
      int to = out_fd >= 0 ? out_fd : open ("/dev/null", O_WRONLY | O_CLOEXEC);
      if (to < 0 || dup2 (to, STDOUT_FILENO) < 0)
        _exit (EXIT_CANNOT_EXEC);
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
  int status = wait_status (pid, config.enter_devroot);
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
