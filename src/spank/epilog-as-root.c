/* The job's epilog on each node, in slurmd's epilog process, as root: remove the job's
 * named roots on this host, and only the job's. It reads root's own record of them (written
 * by slurmstepd, stepd-as-root.c) and has each removed by enter-devroot in a child fully
 * dropped to the job's user (as-user.c), with the HOME and XDG_DATA_HOME the job had. A
 * record line naming a root that is not this job's is ignored: cleanup is keyed on the
 * job, never on the user. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spank/plugin.h"

/* The most named roots a job records (one line per step that named one). */
#define RECORD_MAX_BYTES (64 * 1024)
/* The longest HOME or XDG_DATA_HOME a record line may carry (slurmstepd's buffers). */
#define PATH_VALUE_MAX 4095

static void
remove_recorded (spank_t sp, const char *record_line, const char *job_prefix)
{
  char line[RECORD_LINE_MAX];
  if (strlen (record_line) >= sizeof line)
    return;
  strcpy (line, record_line);
  char *home = line, *data = strchr (line, '\t');
  char *root = data != NULL ? strchr (data + 1, '\t') : NULL;
  if (root == NULL)
    return;
  *data++ = '\0';
  *root++ = '\0';
  if (strncmp (root, job_prefix, strlen (job_prefix)) != 0 || strlen (home) > PATH_VALUE_MAX
      || strlen (data) > PATH_VALUE_MAX)
    return;
  char home_kv[sizeof "HOME=" + PATH_VALUE_MAX], data_kv[sizeof "XDG_DATA_HOME=" + PATH_VALUE_MAX];
  static char path[] = "PATH=/usr/bin:/bin";
  snprintf (home_kv, sizeof home_kv, "HOME=%.*s", PATH_VALUE_MAX, home);
  snprintf (data_kv, sizeof data_kv, "XDG_DATA_HOME=%.*s", PATH_VALUE_MAX, data);
  char *env[] = { path, home_kv, strcmp (data, "-") != 0 ? data_kv : NULL, NULL };
  const char *argv[] = { "enter-devroot", "remove", root, NULL };
  /* A root a failed step never made, or an earlier line removed, is not there: fine. */
  as_user_run (sp, argv, env);
}

int
epilog_remove_named_roots (spank_t sp)
{
  char path[4096], job_prefix[32];
  uint32_t job;
  if (record_path (sp, path, sizeof path) < 0 || spank_get_item (sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
    return 0;
  snprintf (job_prefix, sizeof job_prefix, "slurm-%u-", job);
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : -1;
  struct stat st;
  static char text[RECORD_MAX_BYTES + 1];
  ssize_t n = -1;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == 0)
    n = read (fd, text, RECORD_MAX_BYTES);
  close (fd);
  if (n < 0)
    {
      slurm_error ("%s: cannot read %s", PLUGIN_NAME, path);
      return -1;
    }
  text[n] = '\0';
  /* Each step that named a root added a line: a root named by several steps once. */
  for (char *line = text, *next; line != NULL && *line != '\0'; line = next)
    {
      next = strchr (line, '\n');
      if (next != NULL)
        *next++ = '\0';
      bool seen = false;
      for (char *earlier = text; earlier < line && !seen; earlier += strlen (earlier) + 1)
        seen = strcmp (earlier, line) == 0;
      if (!seen)
        remove_recorded (sp, line, job_prefix);
    }
  if (unlink (path) < 0)
    slurm_error ("%s: cannot delete %s: %m", PLUGIN_NAME, path);
  return 0;
}
