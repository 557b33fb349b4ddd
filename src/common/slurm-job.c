/* A Slurm job's roots: names, the count of a step's tasks, the job's end (slurm-job.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/slurm-job.h"

/* A count of tasks or nodes is never above this. */
#define COUNT_MAX 1000000
/* What squeue may print about one job. */
#define SQUEUE_OUTPUT_MAX 4096

static const char *
owner_prefix (enum jobroot_owner owner)
{
  return owner == SLURM_ROOT_PLUGIN ? SLURM_PLUGIN_ROOT_PREFIX : SLURM_EPHEMERAL_ROOT_PREFIX;
}

static bool
where_char (char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
         || c == '_';
}

int
jobroot_name (const struct jobroot *r, char out[SLURM_ROOT_NAME_MAX + 1])
{
  char where[SLURM_WHERE_MAX + 1];
  size_t i = 0;
  for (; r->where[i] != '\0' && i < SLURM_WHERE_MAX; i++)
    where[i] = where_char (r->where[i]) ? r->where[i] : '_';
  where[i] = '\0';
  int n = r->name != NULL
            ? snprintf (out, SLURM_ROOT_NAME_MAX + 1, "%s%u-%s.%s",
                        owner_prefix (r->owner), r->job, r->name, where)
            : snprintf (out, SLURM_ROOT_NAME_MAX + 1, "%s%u.%s.%s", owner_prefix (r->owner),
                        r->job, r->step, where);
  return n > 0 && n <= SLURM_ROOT_NAME_MAX ? 0 : -1;
}

void
jobroot_host (char out[SLURM_WHERE_MAX + 1])
{
  char host[256] = "host";
  if (gethostname (host, sizeof host - 1) < 0)
    snprintf (host, sizeof host, "host");
  host[sizeof host - 1] = '\0';
  size_t i = 0;
  for (; host[i] != '\0' && host[i] != '.' && i < SLURM_WHERE_MAX; i++)
    out[i] = where_char (host[i]) ? host[i] : '_';
  out[i] = '\0';
}

bool
jobroot_parse (const char *name, enum jobroot_owner owner,
                  char job[SLURM_JOB_ID_DIGITS_MAX + 1], bool *named, const char **where)
{
  const char *prefix = owner_prefix (owner);
  size_t len = strlen (prefix);
  if (strncmp (name, prefix, len) != 0)
    return false;
  const char *id = name + len, *dot = strrchr (name, '.');
  size_t digits = strspn (id, "0123456789");
  if (digits == 0 || digits > SLURM_JOB_ID_DIGITS_MAX || (id[digits] != '.' && id[digits] != '-')
      || dot == id + digits || dot[1] == '\0')
    return false;
  memcpy (job, id, digits);
  job[digits] = '\0';
  *named = id[digits] == '-';
  *where = dot + 1;
  return true;
}

static bool
parse_count (const char *s, const char **end, unsigned *out)
{
  char *e;
  if (*s < '0' || *s > '9')
    return false;
  errno = 0;
  unsigned long v = strtoul (s, &e, 10);
  if (errno != 0 || v > COUNT_MAX)
    return false;
  *out = (unsigned) v;
  *end = e;
  return true;
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
      if (!parse_count (p, &p, &tasks) || tasks == 0)
        return -1;
      if (strncmp (p, "(x", 2) == 0)
        {
          if (!parse_count (p + 2, &p, &repeat) || *p != ')' || repeat == 0)
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

/* Counting, rather than "whoever is alone removes it", is what keeps a task that ends
 * early from removing the root under a task that has not started yet. */
enum step_join
step_count_join (struct step_count *c)
{
  c->joined++;
  if (c->failed > 0)
    return STEP_JOIN_FAILED;
  return c->created > 0 ? STEP_JOIN_SHARE : STEP_JOIN_CREATE;
}

void
step_count_created (struct step_count *c, bool ok)
{
  if (ok)
    c->created = 1;
  else
    c->failed = 1;
}

bool
step_count_ready (const struct step_count *c)
{
  return c->created > 0 && c->failed == 0;
}

bool
step_count_leave (struct step_count *c, unsigned local_tasks)
{
  return ++c->left >= local_tasks;
}

bool
squeue_job_ended (const char *job)
{
  int out[2];
  if (pipe2 (out, O_CLOEXEC) < 0)
    return false;
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (out[0]);
      close (out[1]);
      return false;
    }
  if (pid == 0)
    {
      if (dup2 (out[1], STDOUT_FILENO) < 0 || dup2 (out[1], STDERR_FILENO) < 0)
        _exit (127);
      execlp ("squeue", "squeue", "--noheader", "--format=%T", "--jobs", job, (char *) NULL);
      _exit (127);
    }
  close (out[1]);
  char text[SQUEUE_OUTPUT_MAX + 1];
  size_t len = 0;
  ssize_t n;
  while (len < SQUEUE_OUTPUT_MAX
         && ((n = read (out[0], text + len, SQUEUE_OUTPUT_MAX - len)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0)
      len += (size_t) n;
  bool whole = len < SQUEUE_OUTPUT_MAX;
  text[len] = '\0';
  close (out[0]);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return false;
  if (!WIFEXITED (status) || !whole)
    return false;
  if (WEXITSTATUS (status) == 0)
    return strspn (text, " \t\n") == len; /* known, and in no state: ended */
  return strstr (text, "Invalid job id") != NULL;
}
