/* The host's /etc/resolv.conf and /etc/hosts, visible inside a devroot, as ch-run and
 * enroot do: the network inside is the host's, so its name resolution must be too (an
 * mmdebstrap root has an empty resolv.conf, the default root none at all).
 *
 * userns mode: in the private mount namespace, each host file is bound read-only over the
 * root's file, which is created empty if missing. A symlink in its place is left alone
 * (binding onto it would follow it), as is a root without an etc/ directory.
 *
 * chroot mode has no mounts: before the chroot, the root's file is replaced by a copy of
 * the host's, but only when it is missing, empty, or still the copy made last time (the
 * copy's inode, size and ctime are recorded in the root's metadata): a file the user
 * edited, and a symlink, are never touched. The copy is written to a temporary name and
 * renamed over the old one (never through a symlink), under the root's name lock, so a
 * create or remove running at the same time is never raced; when the lock is busy the
 * root is entered as it is.
 *
 * Both are conveniences: a failure is at most one warning line, never fatal. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/meta.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/mounts.h"
#include "enter/hostfiles.h"

/* resolv.conf is a few lines, hosts rarely more than a few hundred. */
#define HOSTFILE_MAX_SIZE (1024 * 1024)
#define HOSTFILE_MODE 0644

struct hostfile
{
  const char *name; /* in /etc, on the host and in the root */
  size_t meta_field; /* index in struct meta's host_copies */
};

static const struct hostfile hostfiles[] = {
  { "resolv.conf", META_COPY_RESOLV_CONF },
  { "hosts", META_COPY_HOSTS },
};

static int
open_root_etc (int rootfd)
{
  return openat (rootfd, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* ---- userns mode */

/* A read-only remount must keep the flags the kernel locked on the source's mount
 * (nosuid, nodev, noexec...), or it is refused. */
static unsigned long
locked_mount_flags (const char *path)
{
  struct statvfs sv;
  if (statvfs (path, &sv) < 0)
    return 0;
  unsigned long flags = 0;
  if (sv.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

static void
bind_one (const char *name, int etc, const struct hostfile *h)
{
  cleanup_free char *host = xasprintf ("/etc/%s", h->name);
  struct stat st;
  if (stat (host, &st) < 0 || !S_ISREG (st.st_mode))
    return; /* nothing to show */
  if (fstatat (etc, h->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      cleanup_fd int fd = -1;
      if (errno == ENOENT)
        fd = openat (etc, h->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     HOSTFILE_MODE);
      if (fd < 0)
        {
          warn ("root '%s': the host's /etc/%s is not visible inside: cannot create "
                "the file to bind it on: %s", name, h->name, strerror (errno));
          return;
        }
    }
  else if (!S_ISREG (st.st_mode))
    return; /* a symlink (or anything else): binding onto it would follow it */
  cleanup_fd int target = openat (etc, h->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0 || fstat (target, &st) < 0 || !S_ISREG (st.st_mode)
      || mount_on_fd (host, target, "none", MS_BIND, NULL) < 0)
    {
      warn ("root '%s': the host's /etc/%s is not visible inside: %s", name, h->name,
            strerror (errno));
      return;
    }
  /* The fd names the file under the new mount: reopen to remount the bind itself. */
  cleanup_fd int bound = openat (etc, h->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (bound < 0
      || mount_on_fd (NULL, bound, "none",
                      MS_REMOUNT | MS_BIND | MS_RDONLY | locked_mount_flags (host), NULL) < 0)
    warn ("root '%s': the host's /etc/%s is visible but writable: %s", name, h->name,
          strerror (errno));
}

void
hostfiles_bind (const char *name)
{
  cleanup_fd int etc = open_root_etc (AT_FDCWD);
  if (etc < 0)
    return;
  for (size_t i = 0; i < N_ELEMENTS (hostfiles); i++)
    bind_one (name, etc, &hostfiles[i]);
}

/* ---- chroot mode */

/* Replace etc/NAME by CONTENT through a temporary file; the new file's stamp, or NULL. */
static char *
write_copy (int etc, const char *file, const char *content, size_t len)
{
  cleanup_atomic_file struct atomic_file f;
  if (atomic_file_open (&f, etc, file, HOSTFILE_MODE) < 0)
    return NULL;
  struct stat st;
  /* The stamp after the rename, which changes the ctime it holds. */
  if (write_all (f.fd, content, len) < 0 || fchmod (f.fd, HOSTFILE_MODE) < 0
      || atomic_file_commit (&f, 0) < 0 || fstat (f.fd, &st) < 0)
    return NULL;
  return meta_copy_stamp (&st);
}

/* Refresh one file; true when the metadata's stamp changed. */
static bool
refresh_one (const char *name, int etc, const struct hostfile *h, char **stamp)
{
  cleanup_free char *host = xasprintf ("/etc/%s", h->name);
  size_t len;
  cleanup_free char *content = load_regular_file (host, HOSTFILE_MAX_SIZE, &len);
  if (content == NULL)
    return false;
  struct stat st;
  if (fstatat (etc, h->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (!S_ISREG (st.st_mode))
        return false; /* a symlink is the root's own choice */
      cleanup_free char *now = meta_copy_stamp (&st);
      bool ours = *stamp != NULL && strcmp (*stamp, now) == 0;
      if (st.st_size != 0 && !ours)
        return false; /* the root's own file, or one the user edited */
      if (ours && (size_t) st.st_size == len)
        {
          size_t cur_len;
          /* Never through a symlink nor waiting on a FIFO, should the root have put one
           * there since the look above: such a file is left alone. */
          cleanup_free char *cur = load_regular_file_at (etc, h->name, HOSTFILE_MAX_SIZE,
                                                         &cur_len);
          if (cur == NULL || (cur_len == len && memcmp (cur, content, len) == 0))
            return false; /* up to date, or not the copy the look found */
        }
    }
  else if (errno != ENOENT)
    return false;
  char *fresh = write_copy (etc, h->name, content, len);
  if (fresh == NULL)
    {
      warn ("root '%s': cannot copy the host's /etc/%s into it: %s", name, h->name,
            strerror (errno));
      return false;
    }
  verbose ("copied the host's /etc/%s into root '%s'", h->name, name);
  free (*stamp);
  *stamp = fresh;
  return true;
}

void
hostfiles_refresh_copies (const char *name, const char *root)
{
  struct store_paths p;
  store_paths_from_env (&p);
  cleanup_fd int lockfd = lock_name_try (&p, name);
  cleanup_free char *meta_path = paths_meta (&p, name);
  store_paths_clear (&p);
  if (lockfd < 0)
    return; /* being created or removed: enter it as it is */
  struct meta m = { 0 };
  if (meta_read (meta_path, &m) < 0)
    return; /* no metadata to record the copy in: never write one we could not recognise */
  cleanup_fd int rootfd = open (root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_fd int etc = rootfd >= 0 ? open_root_etc (rootfd) : -1;
  bool changed = false;
  for (size_t i = 0; etc >= 0 && i < N_ELEMENTS (hostfiles); i++)
    changed |= refresh_one (name, etc, &hostfiles[i], &m.host_copies[hostfiles[i].meta_field]);
  if (changed)
    meta_write (meta_path, &m);
  meta_clear (&m);
}
