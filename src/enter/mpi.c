/* What an MPI launcher gives each of its tasks, carried into the root (mpi.h).
 *
 * A PMIx server (slurmstepd's mpi/pmix plugin for srun --mpi=pmix, mpirun, prterun) tells
 * its clients in their environment where it listens (PMIX_SERVER_URI*: a TCP address,
 * which the root shares with the host, as it shares the network) and where its
 * directories are (PMIX_SERVER_TMPDIR and the dstore's PMIX_DSTORE_*_BASE_PATH under
 * it: the job's data in shared memory files every client of the node maps). The
 * variables reach the command (env.c); the directories are host paths, which a root has
 * not, so they are bound in at the same paths. PMI-2 (srun --mpi=pmi2, MPICH's hydra)
 * gives each task one end of a socket instead, its number in PMI_FD: enter-devroot,
 * which closes every fd it does not know at its start, keeps that one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "common/verbose.h"
#include "enter/mpi.h"

extern char **environ;

int
mpi_pmi_fd (void)
{
  const char *v = getenv ("PMI_FD");
  char *end;
  if (v == NULL || *v < '0' || *v > '9')
    return -1;
  errno = 0;
  long fd = strtol (v, &end, 10);
  struct stat st;
  if (errno != 0 || *end != '\0' || fd <= STDERR_FILENO || fd > INT_MAX
      || fstat ((int) fd, &st) < 0 || !S_ISSOCK (st.st_mode))
    return -1;
  if (fd >= MPI_PMI_FD_MIN)
    return fcntl ((int) fd, F_SETFD, 0) == 0 ? (int) fd : -1;
  int moved = fcntl ((int) fd, F_DUPFD, MPI_PMI_FD_MIN);
  if (moved < 0)
    return -1;
  close ((int) fd);
  char number[16];
  snprintf (number, sizeof number, "%d", moved);
  if (setenv ("PMI_FD", number, 1) < 0)
    die ("out of memory");
  verbose ("PMI_FD: the PMI socket moved from fd %ld to fd %d", fd, moved);
  return moved;
}

/* PATH made canonical as a bind's DST: absolute, no "." nor empty component, no trailing
 * '/'; NULL when relative, "/" or with a ".." component. */
static char *
clean_path (const char *path)
{
  if (path == NULL || path[0] != '/')
    return NULL;
  struct strbuf b = { 0 };
  for (const char *p = path; *p != '\0';)
    {
      while (*p == '/')
        p++;
      size_t len = strcspn (p, "/");
      if (len == 2 && strncmp (p, "..", 2) == 0)
        {
          free (strbuf_steal (&b));
          return NULL;
        }
      if (len > 0 && !(len == 1 && *p == '.'))
        {
          strbuf_append_c (&b, '/');
          strbuf_append_len (&b, p, len);
        }
      p += len;
    }
  if (b.len == 0)
    {
      free (strbuf_steal (&b));
      return NULL;
    }
  return strbuf_steal (&b);
}

/* Whether PATH is the same as, or beneath, a directory bound already (FIRST..N). */
static bool
bound_already (const struct bind *binds, size_t first, size_t n, const char *path)
{
  for (size_t i = first; i < n; i++)
    {
      size_t len = strlen (binds[i].dst);
      if (strncmp (path, binds[i].dst, len) == 0 && (path[len] == '\0' || path[len] == '/'))
        return true;
    }
  return false;
}

/* PATH (from the variable WHAT) as an optional bind, where it is a directory of the
 * caller's own that no one else may write: nosuid, nodev and noexec, as enroot's hook
 * mounts it (it holds data files the clients map, nothing to run). */
static void
add_dir (struct bind **binds, size_t *n, size_t first, const char *what, const char *path)
{
  cleanup_free char *dir = clean_path (path);
  struct stat st;
  if (dir == NULL || bound_already (*binds, first, *n, dir))
    return;
  if (stat (dir, &st) < 0 || !S_ISDIR (st.st_mode))
    return; /* not made (yet, or by this server): nothing to show */
  if (st.st_uid != getuid () || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    {
      verbose ("%s: %s is not bound: not a directory of yours that only you can write", what,
               dir);
      return;
    }
  verbose ("%s: binding the PMIx server's directory %s at the same path", what, dir);
  *binds = xrealloc (*binds, (*n + 2) * sizeof **binds);
  (*binds)[*n] = (struct bind) { .src = xstrdup (dir), .dst = steal_pointer (&dir),
                                 .dir = true, .optional = true,
                                 .attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                                          | MOUNT_ATTR_NOEXEC };
  (*n)++;
  (*binds)[*n] = (struct bind) { 0 };
}

/* Slurm's directory for the step's clients (TmpFS/spmix_appdir_UID_JOB.STEP; before
 * 21.08 without UID_), found where enroot's hook looks for it: PMIX_SYSTEM_TMPDIR, which
 * is TmpFS where TmpFS is the default /tmp. */
static void
add_slurm_appdir (struct bind **binds, size_t *n, size_t first)
{
  const char *base = getenv ("PMIX_SYSTEM_TMPDIR"), *job = getenv ("SLURM_JOB_ID");
  const char *step = getenv ("SLURM_STEP_ID"), *uid = getenv ("SLURM_JOB_UID");
  if (base == NULL || job == NULL || step == NULL)
    return;
  char names[2][PATH_MAX];
  snprintf (names[0], sizeof names[0], "%s/spmix_appdir_%s_%s.%s", base,
            uid != NULL ? uid : "", job, step);
  snprintf (names[1], sizeof names[1], "%s/spmix_appdir_%s.%s", base, job, step);
  for (size_t i = uid != NULL ? 0 : 1; i < N_ELEMENTS (names); i++)
    add_dir (binds, n, first, "PMIX_SYSTEM_TMPDIR", names[i]);
}

void
mpi_add_binds (struct bind **binds, size_t *n)
{
  if (getenv ("PMIX_NAMESPACE") == NULL || getenv ("PMIX_RANK") == NULL)
    return;
  size_t first = *n; /* the user's --bind entries are theirs: only ours are compared */
  add_dir (binds, n, first, "PMIX_SERVER_TMPDIR", getenv ("PMIX_SERVER_TMPDIR"));
  static const char prefix[] = "PMIX_DSTORE_", suffix[] = "_BASE_PATH=";
  for (char **e = environ; *e != NULL; e++)
    {
      const char *eq = strchr (*e, '=');
      size_t name_len = eq != NULL ? (size_t) (eq - *e) + 1 : 0;
      if (eq != NULL && str_has_prefix (*e, prefix) && name_len > strlen (suffix)
          && strncmp (eq + 1 - strlen (suffix), suffix, strlen (suffix)) == 0)
        add_dir (binds, n, first, "PMIX_DSTORE_*_BASE_PATH", eq + 1);
    }
  add_slurm_appdir (binds, n, first);
}

/* Open MPI 4's parameter for the mechanism its shared-memory transport (vader) copies
 * large messages between two ranks with, and the value that uses no other process's
 * memory. */
#define OMPI_SINGLE_COPY_VAR "OMPI_MCA_btl_vader_single_copy_mechanism"
#define OMPI_SINGLE_COPY_NONE "none"

char **
mpi_env_defaults (char **envp, bool landlock)
{
  if (!landlock || (getenv ("PMIX_RANK") == NULL && getenv ("PMI_RANK") == NULL))
    return envp;
  size_t n = strv_length (envp);
  for (size_t i = 0; i < n; i++)
    if (str_has_prefix (envp[i], OMPI_SINGLE_COPY_VAR "="))
      return envp; /* the caller's choice */
  envp = xrealloc (envp, (n + 2) * sizeof *envp);
  envp[n] = xstrdup (OMPI_SINGLE_COPY_VAR "=" OMPI_SINGLE_COPY_NONE);
  envp[n + 1] = NULL;
  verbose ("an MPI task in a Landlock domain: %s=%s (no single copy between ranks)",
           OMPI_SINGLE_COPY_VAR, OMPI_SINGLE_COPY_NONE);
  return envp;
}
