/* The store of devroots: remove, path; locking and staging (listing is in roots-list.c;
 * create is in store-create.c, which the libc-only enter-devroot does not link).
 *
 * Layout under ${XDG_DATA_HOME:-$HOME/.local/share}/enter-devroot (all 0700):
 *   roots/NAME       the root filesystems
 *   meta/NAME.json   their metadata (beside, never inside, the root)
 *   staging/NAME.XXXXXX  roots being unpacked or removed; same filesystem, so renames are
 *                    atomic; anything here whose NAME lock is free is debris of an
 *                    interrupted run and is removed by the next create or remove
 *   locks/NAME.lock  flock()ed by whoever creates or removes NAME (never deleted, so two
 *                    processes can never lock different inodes for the same name)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/account.h"
#include "common/inuse.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/slurm-job.h"
#include "common/util.h"

#define STORE_DIR_MODE 0700

static int
chmod_dir_nofollow (int dirfd, const char *name, mode_t mode)
{
  /* glibc implements AT_SYMLINK_NOFOLLOW through /proc and refuses symlinks; without /proc
   * fall back to a plain fchmodat of what fstatat just saw as a directory. */
  if (fchmodat (dirfd, name, mode, AT_SYMLINK_NOFOLLOW) == 0)
    return 0;
  if (errno != EOPNOTSUPP && errno != ENOSYS && errno != ENOENT)
    return -1;
  return fchmodat (dirfd, name, mode, 0);
}

/* Open directory NAME under DIRFD for emptying it: never through a symlink, made u+rwx
 * first when the archive left it without (a read-only directory cannot be emptied). */
static int
open_dir_for_removal (int dirfd, const char *name)
{
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  if (!S_ISDIR (st.st_mode))
    {
      errno = ENOTDIR;
      return -1;
    }
  if ((st.st_mode & S_IRWXU) != S_IRWXU
      && chmod_dir_nofollow (dirfd, name, (st.st_mode & 07777) | S_IRWXU) < 0)
    return -1;
  return openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* One directory on the way down: its name in its parent and the subdirectories still to
 * delete (its other entries are deleted as soon as they are seen). */
struct rm_frame
{
  char *name;
  char **subdirs;
  size_t n, next;
};

/* Delete every non-directory in FD, collecting the subdirectories' names in F. */
static int
rm_scan (int fd, struct rm_frame *f)
{
  DIR *d = opendir_dup (fd);
  if (d == NULL)
    return -1;
  int ret = 0;
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      struct stat st;
      if (fstatat (fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno == ENOENT)
            continue;
          ret = -1;
          break;
        }
      if (S_ISDIR (st.st_mode))
        {
          f->subdirs = xrealloc (f->subdirs, (f->n + 1) * sizeof (char *));
          f->subdirs[f->n++] = xstrdup (de->d_name);
        }
      else if (unlinkat (fd, de->d_name, 0) < 0 && errno != ENOENT)
        {
          ret = -1;
          break;
        }
    }
  int errsv = errno;
  closedir (d);
  errno = errsv;
  return ret;
}

static void
rm_frame_clear (struct rm_frame *f)
{
  free (f->name);
  free_string_array (f->subdirs, f->n);
}

/* Depth-first with a single directory fd open at a time (climbing back with ".."), so the
 * depth of the tree is not limited by the number of open files. ".." stays inside the tree:
 * it sits in the private staging directory, and processes still inside the devroot can only
 * move directories within it. */
int
rm_rf_at (int dirfd, const char *name)
{
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR (st.st_mode))
    return unlinkat (dirfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;

  struct rm_frame *stack = NULL;
  size_t depth = 0;
  int ret = -1;
  int cur = open_dir_for_removal (dirfd, name);
  if (cur < 0)
    return -1;
  stack = xrealloc (stack, sizeof *stack);
  stack[depth++] = (struct rm_frame) { .name = xstrdup (name) };
  if (rm_scan (cur, &stack[0]) < 0)
    goto out;

  while (depth > 0)
    {
      struct rm_frame *f = &stack[depth - 1];
      if (f->next < f->n)
        {
          const char *child = f->subdirs[f->next++];
          int next = open_dir_for_removal (cur, child);
          if (next < 0)
            goto out;
          close (cur);
          cur = next;
          stack = xrealloc (stack, (depth + 1) * sizeof *stack);
          stack[depth++] = (struct rm_frame) { .name = xstrdup (child) };
          if (rm_scan (cur, &stack[depth - 1]) < 0)
            goto out;
          continue;
        }
      /* Emptied: climb to the parent (the caller's DIRFD for the top) and remove it. */
      int parent = -1;
      if (depth > 1)
        {
          parent = openat (cur, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (parent < 0)
            goto out;
        }
      close (cur);
      cur = parent;
      if (unlinkat (depth > 1 ? cur : dirfd, f->name, AT_REMOVEDIR) < 0)
        goto out;
      rm_frame_clear (f);
      depth--;
    }
  ret = 0;

out:
  {
    int errsv = errno;
    if (cur >= 0)
      close (cur);
    while (depth > 0)
      rm_frame_clear (&stack[--depth]);
    free (stack);
    errno = errsv;
  }
  return ret;
}

void
roots_prepare (const struct store_paths *p)
{
  const char *dirs[] = { p->base, p->roots, p->meta, p->staging, p->locks, p->overlays };
  for (size_t i = 0; i < N_ELEMENTS (dirs); i++)
    if (mkdir_p (dirs[i], STORE_DIR_MODE) < 0)
      die_with_error ("cannot create directory %s", dirs[i]);
}

int
lock_name_try (const struct store_paths *p, const char *name)
{
  cleanup_free char *path = paths_lock (p, name);
  cleanup_fd int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0)
    return -1;
  return steal_fd (&fd);
}

/* The fd holding NAME's lock, or -1 when another process holds it. */
static int
lock_name (const struct store_paths *p, const char *name)
{
  int fd = lock_name_try (p, name);
  if (fd < 0 && errno != EWOULDBLOCK)
    {
      cleanup_free char *path = paths_lock (p, name);
      die_with_error ("cannot lock %s", path);
    }
  return fd;
}

int
lock_name_or_die (const struct store_paths *p, const char *name, const char *what)
{
  int fd = lock_name (p, name);
  if (fd < 0)
    die ("cannot %s '%s': another enter-devroot is creating or removing it", what, name);
  return fd;
}

/* Remove staging debris: entries NAME.XXXXXX whose NAME nobody holds the lock of. OURS is
 * the name this process has locked (flock locks conflict even within one process). */
void
clean_stale_staging (const struct store_paths *p, const char *ours)
{
  DIR *d = opendir (p->staging);
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      const char *dot = strrchr (de->d_name, '.');
      if (dot == NULL || dot == de->d_name || strlen (dot) != strlen (STAGING_SUFFIX))
        continue;
      cleanup_free char *name = strndup (de->d_name, (size_t) (dot - de->d_name));
      if (name == NULL || !name_is_valid (name))
        continue;
      int lockfd = strcmp (name, ours) == 0 ? -2 : lock_name (p, name);
      if (lockfd == -1)
        continue; /* someone is working on it */
      if (rm_rf_at (dirfd (d), de->d_name) < 0)
        warn ("cannot remove stale staging directory %s/%s: %s", p->staging, de->d_name,
              strerror (errno));
      if (lockfd >= 0)
        close (lockfd);
    }
  closedir (d);
}

char *
roots_existing_path (const char *name, const char *what)
{
  struct store_paths p;
  name_check (name);
  store_paths_from_env (&p);
  char *root = paths_root (&p, name);
  struct stat st;
  if (lstat (root, &st) < 0 || !S_ISDIR (st.st_mode))
    die ("cannot %s '%s': no such devroot (see 'enter-devroot list')", what, name);
  store_paths_clear (&p);
  return root;
}

void
roots_refuse_overlay_path (const char *name)
{
  struct meta m;
  bool overlay = roots_read_meta (name, &m) && overlay_is_root (&m);
  meta_clear (&m);
  if (!overlay)
    return;
  struct store_paths p;
  store_paths_from_env (&p);
  cleanup_free char *dir = paths_overlay (&p, name);
  store_paths_clear (&p);
  die ("path: '%s' is an overlay root, whose tree exists only where it is entered: use "
       "'enter-devroot run %s -- CMD', 'enter-devroot export %s FILE', or its own changes "
       "in %s/upper (create --flat makes a root with a path)", name, name, name, dir);
}

/* The most keepers of one root remove looks at, their holders included. */
#define KEEPERS_MAX 32

/* NAME's keepers and their holders into PIDS (KEEPERS_MAX): not processes inside, as remove
 * stops them itself. A warm run's keeper; an overlay root's has the root mounted, which the
 * in-use check would otherwise count, and so has its holder outside (its parent), made in
 * the namespaces of the root's holder. */
static size_t
keepers_and_holders (const struct store_paths *p, const char *name, pid_t *pids)
{
  size_t n = inuse_keepers (p->locks, name, pids, KEEPERS_MAX / 2);
  if (n > KEEPERS_MAX / 2)
    n = KEEPERS_MAX / 2;
  for (size_t i = 0, k = n; i < k; i++)
    {
      pid_t parent = inuse_parent_of (pids[i]);
      if (parent > 1)
        pids[n++] = parent;
    }
  return n;
}

/* die() unless NAME exists and, without FORCE, nothing of the caller's runs inside it
 * (removing it would leave a shell in an emptied root, its home gone). SEVERAL: one of
 * several names, none of which is removed then, and the line says so. */
static void
check_removable (const struct store_paths *p, const char *name, bool force, bool several)
{
  name_check (name);
  cleanup_free char *root = paths_root (p, name);
  struct stat st;
  const char *none = several ? "; nothing removed" : "";
  if (lstat (root, &st) < 0)
    die ("cannot remove '%s': no such devroot%s", name, none);
  pid_t keepers[KEEPERS_MAX];
  size_t n_keepers = keepers_and_holders (p, name, keepers);
  pid_t pid = force ? 0 : inuse_find_besides (root, keepers, n_keepers);
  if (pid != 0)
    {
      cleanup_free char *comm = inuse_command (pid);
      die ("cannot remove '%s': process %ld (%s) is running inside it (stop it, or use "
           "'remove --force')%s", name, (long) pid, comm, none);
    }
}

/* Report a failed removal step: die() when FATAL (remove), else one warning line and -1
 * (a throwaway root's cleanup must go on). */
__attribute__((format (printf, 2, 3))) static int
removal_failed (bool fatal, const char *format, ...)
{
  int errsv = errno;
  va_list args;
  va_start (args, format);
  cleanup_free char *msg = xvasprintf (format, args);
  va_end (args);
  if (fatal)
    {
      errno = errsv;
      die_with_error ("%s", msg);
    }
  warn ("%s: %s", msg, strerror (errsv));
  errno = errsv;
  return -1;
}

/* Rename ROOT to a new name staging/NAME.XXXXXX (STAGING_SUFFIX), into *TRASH. A rename
 * only adds an entry to staging/, where a directory made for the name (mkdtemp) would need
 * a block: a full disk, the reason many remove a root, has none. -1 with errno. */
static int
move_aside (const struct store_paths *p, const char *name, const char *root, char **trash)
{
  static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const size_t n = strlen (STAGING_SUFFIX) - 1;
  for (int tries = 0; tries < 100; tries++)
    {
      uint64_t r;
      if (getrandom (&r, sizeof r, GRND_NONBLOCK) != sizeof r)
        r = (uint64_t) getpid () * 0x9e3779b97f4a7c15u + (uint64_t) tries;
      char suffix[sizeof STAGING_SUFFIX] = { 0 };
      for (size_t i = 0; i < n; i++, r /= sizeof letters - 1)
        suffix[i] = letters[r % (sizeof letters - 1)];
      *trash = xasprintf ("%s/%s.%s", p->staging, name, suffix);
      if (tree_place (root, *trash) == 0)
        return 0;
      int errsv = errno;
      free (steal_pointer (trash));
      if (errsv != EEXIST)
        {
          errno = errsv;
          return -1;
        }
    }
  errno = EEXIST;
  return -1;
}

/* Remove NAME's root and metadata; the caller holds NAME's lock. Move it out of sight
 * first, so an interrupted remove never leaves a half root under its name; the next run
 * finishes deleting it. -1 with errno ENOENT when there is no such root (silently), else
 * as removal_failed(FATAL). */
static int
remove_locked (const struct store_paths *p, const char *name, bool fatal)
{
  cleanup_free char *root = paths_root (p, name);
  struct stat st;
  if (lstat (root, &st) < 0)
    return -1;
  /* Moving a directory to another parent needs write permission on it. */
  if (S_ISDIR (st.st_mode) && (st.st_mode & S_IWUSR) == 0
      && chmod_dir_nofollow (AT_FDCWD, root, (st.st_mode & 07777) | S_IRWXU) < 0)
    warn ("cannot make %s writable: %s", root, strerror (errno));
  cleanup_free char *trash = NULL;
  if (move_aside (p, name, root, &trash) < 0)
    {
      if (errno == ENOENT)
        return -1;
      return removal_failed (fatal, "cannot remove '%s': cannot move %s aside", name, root);
    }
  /* An overlay root's upper and work go with it, into the same trash (a removal cut short
   * leaves them where the next one finishes the job). */
  cleanup_free char *overlay = paths_overlay (p, name);
  cleanup_free char *overlay_trash = xasprintf ("%s/.overlay", trash);
  if (tree_place (overlay, overlay_trash) < 0 && errno != ENOENT)
    warn ("cannot move %s aside: %s", overlay, strerror (errno));
  cleanup_free char *meta_path = paths_meta (p, name);
  if (unlink (meta_path) < 0 && errno != ENOENT)
    warn ("cannot remove metadata %s: %s", meta_path, strerror (errno));
  if (rm_rf_at (AT_FDCWD, trash) < 0)
    return removal_failed (fatal, "cannot remove '%s': deleting %s", name, trash);
  return 0;
}

/* A Slurm step's state files of root NAME (locks/NAME.step, and a job's root's
 * locks/NAME.STEP.step): the last task of a step removes its own, but tasks killed with
 * SIGKILL leave theirs; once the root goes they count nothing, and a later job of the
 * same id (a new cluster's) must not take them for its own (slurmstep.c). */
static void
remove_step_state (const struct store_paths *p, const char *name)
{
  DIR *d = opendir (p->locks);
  if (d == NULL)
    return;
  size_t n = strlen (name);
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    {
      const char *rest = de->d_name + n;
      if (strncmp (de->d_name, name, n) != 0 || !str_has_suffix (rest, ".step"))
        continue;
      size_t middle = strlen (rest) - strlen (".step");
      if (middle == 0
          || (rest[0] == '.' && middle > 1 && strspn (rest + 1, "0123456789") == middle - 1))
        unlinkat (dirfd (d), de->d_name, 0);
    }
  closedir (d);
}

static void
remove_one (struct store_paths *p, const char *name, bool force)
{
  cleanup_free char *root = paths_root (p, name);
  roots_prepare (p);
  /* Held until we return; never read. */
  cleanup_fd int lockfd __attribute__((unused)) = lock_name_or_die (p, name, "remove");
  clean_stale_staging (p, name);
  check_removable (p, name, force, false);
  pid_t keepers[KEEPERS_MAX];
  size_t n_keepers = keepers_and_holders (p, name, keepers);
  if (force)
    inuse_stop (name, root, keepers, n_keepers);
  /* After the runs (a warm run's processes are inside the root; its keeper is not). */
  inuse_stop_keepers (p->locks, name);
  if (remove_locked (p, name, true) < 0)
    die ("cannot remove '%s': no such devroot", name);
  remove_step_state (p, name);
}

void
roots_remove (char *const *names, bool force)
{
  struct store_paths p;
  store_paths_from_env (&p);
  for (size_t i = 0; names[i] != NULL; i++)
    check_removable (&p, names[i], force, names[1] != NULL);
  for (size_t i = 0; names[i] != NULL; i++)
    remove_one (&p, names[i], force);
  store_paths_clear (&p);
}

bool
ephemeral_abandoned (const struct store_paths *p, const char *name)
{
  if (!str_has_prefix (name, EPHEMERAL_PREFIX))
    return false;
  cleanup_free char *path = paths_run_lock (p, name);
  cleanup_fd int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && flock (fd, LOCK_SH | LOCK_NB) < 0)
    return false; /* a run is in it */
  if (fd < 0 && errno != ENOENT)
    return false; /* (a run takes the lock before creating the root) */
  /* A job's named root waits, between steps, for the job's next one. */
  char job[SLURM_JOB_ID_DIGITS_MAX + 1];
  bool named;
  const char *where;
  if (jobroot_parse (name, SLURM_ROOT_EPHEMERAL, job, &named, &where) && named)
    return squeue_job_ended (job);
  return true;
}

/* Remove NAME's root under its name's lock: 1, 0 when there was none, -1 after a warning
 * line; the lock's fd into *LOCKFD (-1 when it could not be taken). */
static int
lock_and_remove (const struct store_paths *p, const char *name, int *lockfd)
{
  *lockfd = lock_name (p, name);
  if (*lockfd < 0)
    {
      warn ("cannot remove '%s': another enter-devroot is creating or removing it", name);
      errno = EBUSY;
      return -1;
    }
  return remove_locked (p, name, false) == 0 ? 1 : errno == ENOENT ? 0 : -1;
}

int
roots_remove_leftover (const struct store_paths *p, const char *name)
{
  int lockfd;
  int ret = lock_and_remove (p, name, &lockfd);
  if (lockfd >= 0)
    close (lockfd);
  return ret;
}

int
roots_remove_ephemeral (const struct store_paths *p, const char *name)
{
  int lockfd;
  int ret = lock_and_remove (p, name, &lockfd);
  if (lockfd < 0)
    return ret;
  /* The name is random and never used again: its lock files would only pile up. */
  cleanup_free char *lock = paths_lock (p, name);
  cleanup_free char *run_lock = paths_run_lock (p, name);
  unlink (lock);
  unlink (run_lock);
  remove_step_state (p, name);
  close (lockfd);
  return ret;
}

/* Whether NAME is a root the Slurm plugin made on this host (slurm-job.h): a step's, or a
 * job's named root of this host (a named root another host made, in a home both share, is
 * that host's to reap). Its job id into JOB. */
static bool
plugin_root_job (const char *name, char job[SLURM_JOB_ID_DIGITS_MAX + 1])
{
  bool named;
  const char *where;
  if (!jobroot_parse (name, SLURM_ROOT_PLUGIN, job, &named, &where))
    return false;
  char here[SLURM_WHERE_MAX + 1];
  jobroot_host (here);
  return !named || strcmp (where, here) == 0;
}

/* A plugin root whose job Slurm no longer knows and that nothing runs in: the plugin's
 * removal failed, timed out or never ran (a crashed epilog, a node that went down). */
static bool
plugin_root_abandoned (const struct store_paths *p, const char *name)
{
  char id[SLURM_JOB_ID_DIGITS_MAX + 1];
  if (!plugin_root_job (name, id))
    return false;
  cleanup_free char *root = paths_root (p, name);
  return inuse_find (root) == 0 && squeue_job_ended (id);
}

int
reap_abandoned_ephemeral (const struct store_paths *p)
{
  /* What a removal killed half-way left (the plugin kills its removals at child_timeout):
   * a root moved aside in staging/, whose name's lock is free. */
  clean_stale_staging (p, "");
  DIR *d = opendir (p->roots);
  if (d == NULL)
    return 0;
  int reaped = 0;
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    {
      if (!name_is_valid (de->d_name))
        continue;
      if (plugin_root_abandoned (p, de->d_name))
        {
          if (roots_remove_ephemeral (p, de->d_name) > 0)
            reaped++;
          continue;
        }
      if (!ephemeral_abandoned (p, de->d_name))
        continue;
      /* Take the run lock as the owner would, so two reapers never race each other. */
      cleanup_free char *path = paths_run_lock (p, de->d_name);
      cleanup_fd int fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0)
        continue;
      if (roots_remove_ephemeral (p, de->d_name) > 0)
        reaped++;
    }
  closedir (d);
  return reaped;
}
