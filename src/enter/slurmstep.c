/* The tasks of a Slurm job step on one node sharing one throwaway root (slurmstep.h).
 *
 * srun gives every task the job and step ids, the node's name and index, and how many of
 * the step's tasks each node runs. The root's name is made of them, so every task of the
 * step on a node finds the same one; a file in the store's locks directory,
 * locks/NAME.step, counts the tasks that joined and left under flock(). Counting, rather
 * than "whoever is alone removes it", is what keeps a task that ends early from removing
 * the root under a task that has not started yet. A task killed with SIGKILL never
 * leaves: its root stays until every task's run lock is free, and then the next create or
 * doctor reaps it like any abandoned throwaway root. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/roots.h"
#include "common/util.h"
#include "enter/slurmstep.h"

/* The node name's share of a root name (NAME_MAX_LEN is 64 in all). */
#define NODE_PART_MAX 20

struct step_state
{
  unsigned joined, left, failed;
};

/* A count of tasks or nodes is never above this. */
#define COUNT_MAX 1000000

static bool
parse_uint_max (const char *s, const char **end, unsigned long max, unsigned *out)
{
  char *e;
  if (s == NULL || *s < '0' || *s > '9')
    return false;
  errno = 0;
  unsigned long v = strtoul (s, &e, 10);
  if (errno != 0 || v > max)
    return false;
  *out = (unsigned) v;
  *end = e;
  return true;
}

static bool
parse_uint (const char *s, const char **end, unsigned *out)
{
  return parse_uint_max (s, end, COUNT_MAX, out);
}

/* Job and step ids: 32 bits (a busy cluster's job ids pass a million soon). */
static bool
parse_id (const char *s, unsigned *out)
{
  const char *end;
  return parse_uint_max (s, &end, 4294967295UL, out) && *end == '\0';
}

int
step_tasks_on_node (const char *list, unsigned index, unsigned *out)
{
  const char *p = list;
  unsigned seen = 0, found = 0;
  /* The whole list is checked, not only up to INDEX: a malformed one is not trusted. */
  while (p != NULL && *p != '\0')
    {
      unsigned tasks, repeat = 1;
      if (!parse_uint (p, &p, &tasks) || tasks == 0)
        return -1;
      if (strncmp (p, "(x", 2) == 0)
        {
          if (!parse_uint (p + 2, &p, &repeat) || *p != ')' || repeat == 0)
            return -1;
          p++;
        }
      if (found == 0 && index < seen + repeat)
        found = tasks;
      seen += repeat;
      if (*p == ',' && p[1] != '\0')
        p++;
      else if (*p != '\0')
        return -1;
    }
  if (found == 0)
    return -1;
  *out = found;
  return 0;
}

bool
step_share_from_env (struct step_share *s, const char *job_root)
{
  const char *job = getenv ("SLURM_JOB_ID"), *step = getenv ("SLURM_STEP_ID");
  const char *node = getenv ("SLURMD_NODENAME"), *tasks = getenv ("SLURM_STEP_TASKS_PER_NODE");
  const char *index_s = getenv ("SLURM_NODEID"), *end;
  unsigned job_id, step_id, index;
  *s = (struct step_share) { .state_fd = -1 };
  if (job == NULL || step == NULL || node == NULL || tasks == NULL || index_s == NULL
      || !parse_id (job, &job_id) || !parse_uint (index_s, &end, &index)
      || *end != '\0' || step_tasks_on_node (tasks, index, &s->local_tasks) < 0)
    return false;
  /* The step id of a batch script or interactive step is a word, not a number. */
  if (!parse_id (step, &step_id))
    return false;
  char node_part[NODE_PART_MAX + 1];
  size_t i = 0;
  for (; node[i] != '\0' && i < NODE_PART_MAX; i++)
    {
      char c = node[i];
      bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                || c == '-' || c == '_';
      node_part[i] = ok ? c : '_';
    }
  node_part[i] = '\0';
  s->job_scoped = job_root != NULL;
  s->step_id = step_id;
  s->name = s->job_scoped ? xasprintf (SLURM_JOB_ROOT_PREFIX "%u" SLURM_JOB_ROOT_INFIX "%s.%s",
                                       job_id, job_root, node_part)
                          : xasprintf (SLURM_JOB_ROOT_PREFIX "%u.%u.%s", job_id, step_id, node_part);
  s->state_path = NULL;
  s->state_fd = -1;
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

static void
state_read (const struct step_share *s, struct step_state *st)
{
  char buf[STEP_STATE_MAX + 1];
  size_t n = step_file_read (s->state_fd, s->state_path, buf);
  *st = (struct step_state) { 0 };
  if (n > 0 && sscanf (buf, "%u %u %u", &st->joined, &st->left, &st->failed) != 3)
    die ("%s: malformed (expected three counters)", s->state_path);
}

static void
state_write (const struct step_share *s, const struct step_state *st)
{
  char buf[STEP_STATE_MAX];
  snprintf (buf, sizeof buf, "%u %u %u\n", st->joined, st->left, st->failed);
  step_file_write (s->state_fd, s->state_path, buf);
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
  struct step_state st;
  state_read (s, &st);
  if (st.failed > 0)
    {
      /* Counted as come and gone, so that the last task still removes the state file. */
      st.joined++;
      st.left++;
      if (st.left >= s->local_tasks)
        unlink (s->state_path);
      else
        state_write (s, &st);
      die ("run --ephemeral: the root of this job step on this node could not be created (the "
           "task that tried said why)");
    }
  bool first = st.joined == 0;
  st.joined++;
  state_write (s, &st);
  if (!first)
    state_unlock (s);
  return first;
}

void
step_share_created (struct step_share *s, bool ok)
{
  if (!ok)
    {
      struct step_state st;
      state_read (s, &st);
      st.failed = 1;
      state_write (s, &st);
    }
  state_unlock (s);
}

bool
step_share_leave (struct step_share *s)
{
  state_lock (s);
  struct step_state st;
  state_read (s, &st);
  st.left++;
  bool last = st.left >= s->local_tasks;
  if (last)
    unlink (s->state_path);
  else
    state_write (s, &st);
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
