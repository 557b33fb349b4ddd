/* slurmstepd, once per step on each node, as root (user_init runs with only the effective
 * ids switched to the user's). It never touches a user path, and never runs enter-devroot:
 * a step's own root is made and removed by the tasks' run --ephemeral, as the user. For a
 * job's named root it records the root in root's own runtime directory for the epilog (one
 * small file per root, written whole or not at all by atomic-file.c), and maps the memory
 * the step's tasks share before it forks them (the first of them creates the root while
 * the others wait: task-as-user.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <slurm/slurm.h>

#include "common/atomic-file.h"
#include "common/util.h"
#include "spank/plugin.h"

/* Lives in a shared anonymous mapping: every task forked after user_init sees it. The mutex
 * is robust: a task killed while creating the root hands it to the next one, which sees
 * EOWNERDEAD and finds the root neither made nor failed (so it creates it instead). */
struct step_shared
{
  pthread_mutex_t lock;
  struct step_count count; /* slurm-job.h: run --ephemeral counts a step's tasks so too */
};

static struct step_shared *shared;

int
stepd_user_init (spank_t sp)
{
  (void) sp;
  if (!devroot_requested () || request.name == NULL)
    return 0;
  void *m = mmap (NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    {
      slurm_error ("%s: mmap: %m", PLUGIN_NAME);
      return -1;
    }
  shared = m;
  pthread_mutexattr_t a;
  if (pthread_mutexattr_init (&a) != 0 || pthread_mutexattr_setpshared (&a, PTHREAD_PROCESS_SHARED) != 0
      || pthread_mutexattr_setrobust (&a, PTHREAD_MUTEX_ROBUST) != 0
      || pthread_mutex_init (&shared->lock, &a) != 0)
    {
      slurm_error ("%s: cannot make the step's shared lock", PLUGIN_NAME);
      return -1;
    }
  pthread_mutexattr_destroy (&a);
  shared->count = (struct step_count) { 0 };
  return 0;
}

struct step_count *
step_shared_lock (void)
{
  if (shared == NULL)
    return NULL;
  int r = pthread_mutex_lock (&shared->lock);
  if (r == EOWNERDEAD)
    r = pthread_mutex_consistent (&shared->lock);
  return r == 0 ? &shared->count : NULL;
}

void
step_shared_unlock (void)
{
  pthread_mutex_unlock (&shared->lock);
}

/* A value of the job's environment fit for a record line: absolute, no tab or newline. */
static bool
record_value (spank_t sp, const char *name, char *buf, size_t size)
{
  if (spank_getenv (sp, name, buf, (int) size) != ESPANK_SUCCESS)
    return false;
  return buf[0] == '/' && strpbrk (buf, "\t\n") == NULL;
}

/* The runtime directory, made by root for root only; anything else there is refused. */
static int
runtime_dir (void)
{
  if (mkdir (config.runtime_path, 0700) < 0 && errno != EEXIST)
    {
      slurm_error ("%s: cannot create %s: %m", PLUGIN_NAME, config.runtime_path);
      return -1;
    }
  struct stat st;
  if (lstat (config.runtime_path, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != 0
      || (st.st_mode & 077) != 0)
    {
      slurm_error ("%s: %s is not a directory of root's with mode 0700", PLUGIN_NAME,
                   config.runtime_path);
      return -1;
    }
  return 0;
}

/* Count the records in directory DIRFD; -1 when it cannot be read. */
static int
count_records (int dirfd)
{
  DIR *d = opendir_dup (dirfd);
  if (d == NULL)
    return -1;
  int n = 0;
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    n += de->d_name[0] != '.';
  closedir (d);
  return n;
}

/* ROOT's record, LEN bytes of LINE, in DIRFD whole or not at all (atomic-file.h: its
 * temporary starts with '.', which count_records and the epilog pass over): 0 when it is
 * there, as written here or by a step of the job running beside this one; -1 with errno. */
static int
write_record (int dirfd, const char *root, const char *line, size_t len)
{
  cleanup_atomic_file struct atomic_file f;
  if (atomic_file_open (&f, dirfd, root, 0600) < 0 || write_all (f.fd, line, len) < 0)
    return -1;
  return atomic_file_commit (&f, ATOMIC_NOREPLACE) == 0 || errno == EEXIST ? 0 : -1;
}

/* Add ROOT's record, LINE, to the job's directory of records PATH (made by root for root
 * only), unless a step of the job recorded it already; -1 with one line in the log, or on
 * the step's stderr when the job has NAMED_ROOTS_MAX of them already. */
static int
record_named_root (const char *path, const char *root, const char *line, size_t len)
{
  if (mkdir (path, 0700) < 0 && errno != EEXIST)
    {
      slurm_error ("%s: cannot create %s: %m", PLUGIN_NAME, path);
      return -1;
    }
  int dirfd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (dirfd < 0 || fstat (dirfd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 077) != 0)
    {
      slurm_error ("%s: %s is not a directory of root's with mode 0700", PLUGIN_NAME, path);
      if (dirfd >= 0)
        close (dirfd);
      return -1;
    }
  int r = -1;
  if (faccessat (dirfd, root, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    r = 0; /* an earlier step of the job named it */
  else if (count_records (dirfd) >= NAMED_ROOTS_MAX)
    slurm_error ("%s: --devroot-name: the job has %d named roots on this host already, the "
                 "most it may have; the command was not run", PLUGIN_NAME, NAMED_ROOTS_MAX);
  else if (write_record (dirfd, root, line, len) < 0)
    slurm_error ("%s: cannot record the job's named root in %s/%s: %m", PLUGIN_NAME, path,
                 root);
  else
    r = 0;
  close (dirfd);
  return r;
}

/* Whether this is the batch step of sbatch, to be left on the host (--devroot-batch=host):
 * there the script can run srun, whose steps enter roots. */
static bool
batch_step_on_host (spank_t sp)
{
  uint32_t step;
  if (!devroot_requested () || request.refused != NULL || batch_mode_of () != BATCH_HOST)
    return false;
  return spank_get_item (sp, S_JOB_STEPID, &step) == ESPANK_SUCCESS && step == SLURM_BATCH_SCRIPT;
}

int
stepd_init_post_opt (spank_t sp)
{
  if (batch_step_on_host (sp))
    {
      /* Passed on to the script's srun steps as DEVROOT_* variables, which a step's own
       * options override, and `unset DEVROOT_IMAGE` turns off. sbatch also puts its
       * options in the script's environment, which srun would take as its own options
       * (spank(7)), such that a step's --no- form would contradict the script's flag. */
      if (options_to_job_env (sp) < 0)
        return -1;
      /* The step asks for no root: no shared state, no record, the tasks exec as usual. */
      free (request.image);
      free (request.name);
      request.image = request.name = NULL;
      return 0;
    }
  if (request.name == NULL || request.refused != NULL)
    return 0;
  char root[ROOT_NAME_MAX + 1], path[4096], home[4096], data[4096], line[RECORD_LINE_MAX];
  if (root_name (sp, root) < 0 || record_path (sp, path, sizeof path) < 0)
    return -1;
  if (!record_value (sp, "HOME", home, sizeof home))
    {
      slurm_error ("%s: --devroot-name needs an absolute HOME in the job's environment", PLUGIN_NAME);
      return -1;
    }
  if (!record_value (sp, "XDG_DATA_HOME", data, sizeof data))
    snprintf (data, sizeof data, "-");
  int n = snprintf (line, sizeof line, "%s\t%s\n", home, data);
  if (n <= 0 || (size_t) n >= sizeof line || runtime_dir () < 0)
    return -1;
  return record_named_root (path, root, line, (size_t) n);
}

/* The step's end on this node. */
int
stepd_exit (spank_t sp)
{
  (void) sp;
  if (shared != NULL)
    munmap (shared, sizeof *shared);
  shared = NULL;
  return 0;
}
