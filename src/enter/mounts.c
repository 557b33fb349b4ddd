/* The mounts a userns-mode job makes in its own mount namespace: mount(2) through an fd, and
 * the job's /dev (a tmpfs with the host's harmless devices, a tmpfs of its own on shm/, a
 * devpts of its own, the user's terminal as console). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/util.h"
#include "common/verbose.h"
#include "enter/mounts.h"

/* The character devices every program expects, bound from the host into a userns-mode
 * devroot's /dev (bwrap --dev does the same): harmless ones only. */
static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

char *
mount_flags_text (unsigned long flags)
{
  static const struct
  {
    unsigned long flag;
    const char *name;
  } names[] = {
    { MS_REMOUNT, "remount" }, { MS_BIND, "bind" }, { MS_REC, "rec" },
    { MS_PRIVATE, "private" }, { MS_RDONLY, "ro" }, { MS_NOSUID, "nosuid" },
    { MS_NODEV, "nodev" }, { MS_NOEXEC, "noexec" }, { MS_RELATIME, "relatime" },
    { MS_NOATIME, "noatime" }, { MS_NODIRATIME, "nodiratime" },
  };
  struct strbuf b = { 0 };
  strbuf_append (&b, "");
  for (size_t i = 0; i < N_ELEMENTS (names); i++)
    if (flags & names[i].flag)
      {
        strbuf_append (&b, b.len > 0 ? "," : "");
        strbuf_append (&b, names[i].name);
        flags &= ~names[i].flag;
      }
  if (flags != 0)
    {
      cleanup_free char *rest = xasprintf ("%s%#lx", b.len > 0 ? "," : "", flags);
      strbuf_append (&b, rest);
    }
  if (b.len == 0)
    strbuf_append (&b, "none");
  return strbuf_steal (&b);
}

int
mount_on_fd (const char *source, int fd, const char *type, unsigned long flags,
             const char *data)
{
  char target[64];
  snprintf (target, sizeof target, "/proc/self/fd/%d", fd);
  if (verbose_on ())
    {
      char path[PATH_MAX];
      ssize_t n = readlink (target, path, sizeof path - 1);
      path[n > 0 ? n : 0] = '\0';
      cleanup_free char *f = mount_flags_text (flags);
      verbose ("mount %s -> %s (type %s, flags %s%s%s)", source != NULL ? source : "(same)",
               path, type, f, data != NULL ? ", " : "", data != NULL ? data : "");
    }
  return mount (source, target, type, flags, data);
}

/* Bind the host's device node HOST on a new file NODE in the tmpfs DEV; -1 with errno. */
static int
bind_host_node (int dev, const char *node, const char *host)
{
  int fd = openat (dev, node, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0)
    return -1;
  close (fd);
  cleanup_fd int at = openat (dev, node, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (at < 0)
    return -1;
  return mount_on_fd (host, at, "none", MS_BIND, NULL);
}

/* DEV/pts: a devpts instance of the job's own (a user namespace with its own mount
 * namespace may mount one), so that script, tmux, ssh -t and expect can make
 * pseudo-terminals, and DEV/ptmx pointing into it, as on the host. Its ptys are the
 * root's alone: the host's are not in it. ptmxmode=0666 as /dev/ptmx is; no gid=5 (the tty
 * group is not mapped in the user namespace): a new pty's group is its opener's. */
static void
mount_devpts (const char *name, int dev)
{
  cleanup_fd int pts = -1;
  if (mkdirat (dev, "pts", 0755) < 0
      || (pts = openat (dev, "pts", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0
      || mount_on_fd ("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC,
                      "newinstance,ptmxmode=0666,mode=0620") < 0)
    {
      warn ("root '%s': no /dev/pts (no pseudo-terminals inside): %s", name, strerror (errno));
      return;
    }
  if (symlinkat ("pts/ptmx", dev, "ptmx") < 0)
    warn ("root '%s': no /dev/ptmx: %s", name, strerror (errno));
}

/* DEV/shm: a tmpfs of the job's own, as large as the host's /dev/shm (and holding as many
 * files), with its nosuid, nodev and noexec: POSIX shared memory (shm_open) and MPI's
 * shared-memory transports (Open MPI's vader/sm segments, 4 MiB a rank and more) live
 * there, which /dev's 1 MiB could not hold. The tasks of a Slurm step on a node share it
 * with the namespaces they share (stepns.c). Not the host's own /dev/shm: that would
 * hand the job every segment of the user's other programs and jobs, which the root
 * otherwise keeps out (SECURITY.md). Its pages are charged as the host's are, to the
 * memory cgroup of whoever writes them. */
static void
mount_shm (const char *name, int dev)
{
  struct statvfs host;
  cleanup_free char *data = NULL;
  unsigned long flags = MS_NOSUID | MS_NODEV;
  if (statvfs ("/dev/shm", &host) == 0 && host.f_blocks > 0)
    {
      data = host.f_files > 0
               ? xasprintf ("mode=1777,size=%llu,nr_inodes=%llu",
                            (unsigned long long) host.f_blocks * host.f_frsize,
                            (unsigned long long) host.f_files)
               : xasprintf ("mode=1777,size=%llu",
                            (unsigned long long) host.f_blocks * host.f_frsize);
      if (host.f_flag & ST_NOEXEC)
        flags |= MS_NOEXEC;
    }
  else
    data = xstrdup ("mode=1777"); /* the host has none: tmpfs's own default, half the RAM */
  cleanup_fd int shm = -1;
  if (mkdirat (dev, "shm", 0755) < 0
      || (shm = openat (dev, "shm", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0
      || mount_on_fd ("tmpfs", shm, "tmpfs", flags, data) < 0)
    warn ("root '%s': no /dev/shm: %s", name, strerror (errno));
}

/* DEV/console: the terminal the user entered from, bound from the host (as podman and
 * docker do with -t). Its host name, /dev/pts/N, is on the host's devpts, which the root
 * does not see: without a name for it inside, `tty` says "not a tty" and programs that
 * look for their terminal by name (ttyname) fail. /dev/tty, the controlling terminal, works
 * either way. */
static void
mount_console (const char *name, int dev, const struct terminal *term)
{
  if (term->fd < 0)
    return;
  char host[PATH_MAX];
  /* ttyname checks that the name is this very terminal; the bind then goes on that path. */
  if (ttyname_r (term->fd, host, sizeof host) != 0)
    return; /* a terminal with no name on the host: none inside either */
  if (bind_host_node (dev, "console", host) < 0)
    warn ("root '%s': no /dev/console for the terminal %s: %s", name, host, strerror (errno));
}

/* userns mode, before chroot: in the job's private mount namespace, a fresh tmpfs on the
 * root's dev/ directory (the root on disk is not touched) holding the host's null, zero,
 * full, random, urandom and tty (bind mounts), fd, stdin, stdout and stderr symlinks, a
 * tmpfs on shm/ as large as the host's /dev/shm, a devpts of its own on pts/ with ptmx,
 * and the user's terminal as console. The working directory is the new root. A root without a dev/ directory gets
 * nothing; a failure is one warning line, not fatal: the root is usable without. */
void
mount_dev (const char *name, const struct terminal *term)
{
  cleanup_fd int at = open ("dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (at < 0)
    return; /* no dev/ directory (or a symlink in its place): nothing to mount on */
  if (mount_on_fd ("tmpfs", at, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m") < 0)
    {
      warn ("root '%s': no /dev: cannot mount a tmpfs on it: %s", name, strerror (errno));
      return;
    }
  cleanup_fd int dev = open ("dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dev < 0)
    {
      warn ("root '%s': no /dev: cannot open the new tmpfs: %s", name, strerror (errno));
      return;
    }
  for (size_t i = 0; i < N_ELEMENTS (dev_nodes); i++)
    {
      cleanup_free char *host = xasprintf ("/dev/%s", dev_nodes[i]);
      struct stat st;
      if (stat (host, &st) < 0 || !S_ISCHR (st.st_mode))
        continue;
      if (bind_host_node (dev, dev_nodes[i], host) < 0)
        warn ("root '%s': no /dev/%s: %s", name, dev_nodes[i], strerror (errno));
    }
  static const char *const links[][2] = {
    { "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
    { "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
  };
  for (size_t i = 0; i < N_ELEMENTS (links); i++)
    if (symlinkat (links[i][1], dev, links[i][0]) < 0)
      warn ("root '%s': no /dev/%s: %s", name, links[i][0], strerror (errno));
  mount_shm (name, dev);
  mount_devpts (name, dev);
  mount_console (name, dev, term);
}
