/* The tasks of a Slurm job step on one node sharing one throwaway root (slurmstep.h).
 *
 * srun gives every task the job and step ids, the node's name and index, and how many of
 * the step's tasks each node runs. The root's name is made of them (slurm-job.h names a
 * job's roots, the plugin's too), so every task of the step on a node finds the same one;
 * a file in the store's locks directory, locks/NAME.step, holds the step's count
 * (slurm-job.h's, the plugin's too) under flock(), and which run of the step it counts:
 * its slurmstepd's PID and start time. A task killed with SIGKILL never leaves: its root
 * stays until every task's run lock is free, and then the next create or doctor reaps it
 * like any abandoned throwaway root, and `remove` of it takes its count too. Meanwhile a
 * job of the same id (a new cluster counts from 1 again) finds the count another
 * slurmstepd's, gone: it starts afresh, the leftover root removed, rather than entering a
 * root that is not there or not its own. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/inuse.h"
#include "common/roots.h"
#include "common/slurm-job.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/slurmstep.h"

/* How far up the process tree a task looks for its slurmstepd: past the shells and
 * wrappers a job script runs enter-devroot through. */
#define STEP_DAEMON_DEPTH 16
#define STEP_DAEMON_COMM "slurmstepd"

/* This task's slurmstepd (slurmstep.h), or {0, 0}. */
static struct step_daemon
step_daemon_find (void)
{
  pid_t p = getppid ();
  for (int i = 0; p > 1 && i < STEP_DAEMON_DEPTH; i++, p = inuse_parent_of (p))
    {
      cleanup_free char *comm = inuse_command (p);
      if (strcmp (comm, STEP_DAEMON_COMM) == 0)
        return (struct step_daemon) { .pid = p, .started = inuse_start_time (p) };
    }
  return (struct step_daemon) { 0 };
}

/* Job and step ids: 32 bits (a busy cluster's job ids pass a million soon). */
static bool
parse_id (const char *s, unsigned *out)
{
  char *end;
  if (s == NULL || *s < '0' || *s > '9')
    return false;
  errno = 0;
  unsigned long v = strtoul (s, &end, 10);
  if (errno != 0 || v > 4294967295UL || *end != '\0')
    return false;
  *out = (unsigned) v;
  return true;
}

bool
step_share_from_env (struct step_share *s, const char *job_root)
{
  const char *job = getenv ("SLURM_JOB_ID"), *step = getenv ("SLURM_STEP_ID");
  const char *node = getenv ("SLURMD_NODENAME"), *tasks = getenv ("SLURM_STEP_TASKS_PER_NODE");
  const char *index_s = getenv ("SLURM_NODEID");
  unsigned job_id, step_id, index;
  *s = (struct step_share) { .state_fd = -1 };
  /* The step id of a batch script or interactive step is a word, not a number. */
  if (job == NULL || step == NULL || node == NULL || tasks == NULL || index_s == NULL
      || !parse_id (job, &job_id) || !parse_id (index_s, &index) || !parse_id (step, &step_id)
      || step_tasks_on_node (tasks, index, &s->local_tasks) < 0)
    return false;
  struct jobroot r = { .owner = SLURM_ROOT_EPHEMERAL, .job = job_id, .step = step,
                          .name = job_root, .where = node };
  char name[SLURM_ROOT_NAME_MAX + 1];
  if (jobroot_name (&r, name) < 0)
    return false;
  s->job_scoped = job_root != NULL;
  s->step_id = step_id;
  s->name = xstrdup (name);
  s->daemon = step_daemon_find ();
  return true;
}

void
step_file_lock (int fd, int operation, const char *path)
{
  while (flock (fd, operation) < 0)
    if (errno != EINTR)
      die_with_error ("cannot lock %s", path);
}

size_t
step_file_read (int fd, const char *path, char buf[STEP_STATE_MAX + 1])
{
  ssize_t n = pread (fd, buf, STEP_STATE_MAX, 0);
  if (n < 0)
    die_with_error ("cannot read %s", path);
  buf[n] = '\0';
  return (size_t) n;
}

void
step_file_write (int fd, const char *path, const char *text)
{
  size_t n = strlen (text);
  if (ftruncate (fd, 0) < 0 || pwrite (fd, text, n, 0) != (ssize_t) n)
    die_with_error ("cannot write %s", path);
}

/* The state into ST, and the slurmstepd it counts for into D ({0, 0} where unknown: one an
 * enter-devroot before the daemon was recorded wrote); false when it is empty (new). */
static bool
state_read (const struct step_share *s, struct step_count *st, struct step_daemon *d)
{
  char buf[STEP_STATE_MAX + 1];
  size_t n = step_file_read (s->state_fd, s->state_path, buf);
  *st = (struct step_count) { 0 };
  *d = (struct step_daemon) { 0 };
  if (n == 0)
    return false;
  long pid = 0;
  unsigned long long started = 0;
  int got = sscanf (buf, "%u %u %u %u %ld %llu", &st->joined, &st->left, &st->created,
                    &st->failed, &pid, &started);
  if (got != 4 && got != 6)
    die ("%s: malformed (expected four counters, then a PID and a start time)",
         s->state_path);
  *d = (struct step_daemon) { .pid = (pid_t) pid, .started = started };
  return true;
}

static void
state_write (const struct step_share *s, const struct step_count *st)
{
  char buf[STEP_STATE_MAX];
  snprintf (buf, sizeof buf, "%u %u %u %u %ld %llu\n", st->joined, st->left, st->created,
            st->failed, (long) s->daemon.pid, (unsigned long long) s->daemon.started);
  step_file_write (s->state_fd, s->state_path, buf);
}

/* Whether the state read, counting for slurmstepd WAS, is another run's of the step than
 * this task's, one whose slurmstepd is gone: then it is not counted (dies where that
 * slurmstepd still runs: that is a live step of the same name, which no cluster makes).
 * Where this task's slurmstepd is unknown, nothing tells: the state is counted, as it
 * was before the daemon was recorded. */
static bool
state_is_stale (const struct step_share *s, const struct step_daemon *was)
{
  if (s->daemon.pid <= 0 || (was->pid == s->daemon.pid && was->started == s->daemon.started))
    return false;
  if (was->pid > 0 && inuse_start_time (was->pid) == was->started)
    die ("run --ephemeral: %s counts the tasks of slurmstepd %ld, which runs, and this task's "
         "is %ld: two Slurm clusters with the same node names share this store?",
         s->state_path, (long) was->pid, (long) s->daemon.pid);
  return true;
}

static void
state_lock (struct step_share *s)
{
  step_file_lock (s->state_fd, LOCK_EX, s->state_path);
}

static void
state_unlock (struct step_share *s)
{
  flock (s->state_fd, LOCK_UN);
}

/* The state file the step's tasks share, read, changed by the caller, then written back
 * (or deleted by the last task) with its lock held. */
static void
state_save (struct step_share *s, const struct step_count *st, bool last)
{
  if (last)
    unlink (s->state_path);
  else
    state_write (s, st);
}

bool
step_share_join (const struct store_paths *p, struct step_share *s)
{
  /* A job's root is entered by several steps, some at once (srun --overlap): each counts
   * its own tasks. */
  s->state_path = s->job_scoped ? xasprintf ("%s/%s.%u.step", p->locks, s->name, s->step_id)
                                : xasprintf ("%s/%s.step", p->locks, s->name);
  s->state_fd = open (s->state_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (s->state_fd < 0)
    die_with_error ("cannot open %s", s->state_path);
  state_lock (s);
  struct step_count st;
  struct step_daemon was;
  if (state_read (s, &st, &was) && state_is_stale (s, &was))
    {
      verbose ("run --ephemeral: %s was left by an earlier run of the step (slurmstepd %ld, "
               "gone): not counted", s->state_path, (long) was.pid);
      st = (struct step_count) { 0 };
      s->stale = true;
    }
  enum step_join join = step_count_join (&st);
  if (join == STEP_JOIN_FAILED)
    {
      state_save (s, &st, step_count_leave (&st, s->local_tasks));
      die ("run --ephemeral: the root of this job step on this node could not be created (the "
           "task that tried said why)");
    }
  state_write (s, &st);
  if (join == STEP_JOIN_SHARE)
    state_unlock (s);
  return join == STEP_JOIN_CREATE;
}

void
step_share_created (struct step_share *s, bool ok)
{
  struct step_count st;
  struct step_daemon was;
  state_read (s, &st, &was);
  step_count_created (&st, ok);
  state_write (s, &st);
  state_unlock (s);
}

bool
step_share_leave (struct step_share *s)
{
  state_lock (s);
  struct step_count st;
  struct step_daemon was;
  state_read (s, &st, &was);
  bool last = step_count_leave (&st, s->local_tasks);
  state_save (s, &st, last);
  state_unlock (s);
  return last;
}

void
step_share_clear (struct step_share *s)
{
  if (s->state_fd >= 0)
    close (s->state_fd);
  free (s->name);
  free (s->state_path);
  *s = (struct step_share) { .state_fd = -1 };
}
