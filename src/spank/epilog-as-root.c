/* The job's epilog on each node, in slurmd's epilog process, as root: remove the job's
 * named roots on this host, and only the job's. It reads root's own record of them (a
 * directory of one small file per root, written by slurmstepd, stepd-as-root.c) and has
 * each removed by enter-devroot in a child fully dropped to the job's user (as-user.c),
 * with the HOME and XDG_DATA_HOME the job had. A record naming a root that is not this
 * job's is ignored: cleanup is keyed on the job, never on the user. Whatever is left (a
 * removal killed at child_timeout, an epilog that crashed) is reaped by enter-devroot
 * doctor or create once Slurm no longer knows the job (src/common/roots.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spank/plugin.h"

/* The longest HOME or XDG_DATA_HOME a record may carry (slurmstepd's buffers). */
#define PATH_VALUE_MAX 4095

/* Read the record ROOT of directory DIRFD ("HOME<TAB>XDG_DATA_HOME\n", root's) into
 * LINE; its HOME and XDG_DATA_HOME, or false. */
static bool
read_record (int dirfd, const char *root, char line[RECORD_LINE_MAX], char **home, char **data)
{
  int fd = openat (dirfd, root, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  ssize_t n = -1;
  if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == 0)
    n = read (fd, line, RECORD_LINE_MAX - 1);
  if (fd >= 0)
    close (fd);
  if (n <= 0 || line[n - 1] != '\n')
    return false;
  line[n - 1] = '\0';
  *home = line;
  *data = strchr (line, '\t');
  if (*data == NULL)
    return false;
  *(*data)++ = '\0';
  return strchr (*data, '\t') == NULL && strlen (*home) <= PATH_VALUE_MAX
         && strlen (*data) <= PATH_VALUE_MAX;
}

/* Remove ROOT as the job's user; what as_user_run returns. */
static int
remove_root (spank_t sp, const char *root, const char *home, const char *data)
{
  char home_kv[sizeof "HOME=" + PATH_VALUE_MAX], data_kv[sizeof "XDG_DATA_HOME=" + PATH_VALUE_MAX];
  static char path[] = "PATH=/usr/bin:/bin";
  snprintf (home_kv, sizeof home_kv, "HOME=%s", home);
  snprintf (data_kv, sizeof data_kv, "XDG_DATA_HOME=%s", data);
  char *env[] = { path, home_kv, strcmp (data, "-") != 0 ? data_kv : NULL, NULL };
  const char *argv[] = { "enter-devroot", "remove", root, NULL };
  return as_user_run (sp, argv, env);
}

/* Whether NAME is a named root of job JOB (decimal) as root_name makes them (slurm-job.h). */
static bool
job_root_name (const char *name, const char *job)
{
  char id[SLURM_JOB_ID_DIGITS_MAX + 1];
  bool named;
  const char *where;
  size_t len = strlen (name);
  return len <= ROOT_NAME_MAX
         && strspn (name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
              == len
         && jobroot_parse (name, SLURM_ROOT_PLUGIN, id, &named, &where) && named
         && strcmp (id, job) == 0;
}

int
epilog_remove_named_roots (spank_t sp)
{
  char path[4096], job_id[SLURM_JOB_ID_DIGITS_MAX + 1];
  uint32_t job;
  if (record_path (sp, path, sizeof path) < 0 || spank_get_item (sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
    return 0;
  snprintf (job_id, sizeof job_id, "%u", job);
  int dirfd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0)
    return errno == ENOENT ? 0 : -1;
  struct stat st;
  DIR *d = NULL;
  if (fstat (dirfd, &st) == 0 && st.st_uid == 0)
    d = fdopendir (dirfd);
  if (d == NULL)
    {
      slurm_error ("%s: cannot read %s", PLUGIN_NAME, path);
      close (dirfd);
      return -1;
    }
  bool stopped = false;
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    {
      char line[RECORD_LINE_MAX], *home, *data;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      /* Another epilog of the job on this host (a second slurmd) may be at it too. A name
       * starting with '.' is no record: the temporary of one (atomic-file.h) that a killed
       * slurmstepd left, only deleted. */
      if (!stopped && de->d_name[0] != '.' && job_root_name (de->d_name, job_id)
          && read_record (dirfd, de->d_name, line, &home, &data)
          && remove_root (sp, de->d_name, home, data) == AS_USER_TIMED_OUT)
        {
          /* The user's own process, stopped or traced: each further one could be too.
           * What is left is the reaper's (enter-devroot doctor or create). */
          slurm_error ("%s: the job's other named roots are left to enter-devroot doctor",
                       PLUGIN_NAME);
          stopped = true;
        }
      if (unlinkat (dirfd, de->d_name, 0) < 0 && errno != ENOENT)
        slurm_error ("%s: cannot delete %s/%s: %m", PLUGIN_NAME, path, de->d_name);
    }
  closedir (d);
  /* A root a failed step never made, or another epilog removed, is not there: fine. */
  if (rmdir (path) < 0 && errno != ENOENT)
    slurm_error ("%s: cannot delete %s: %m", PLUGIN_NAME, path);
  return 0;
}
