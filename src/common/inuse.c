/* Is a devroot in use? Which of the caller's processes run inside it, and stopping them.
 *
 * A process is inside a devroot when its root directory or its working directory is the
 * devroot's directory or beneath it. Both are read through /proc/PID/root and
 * /proc/PID/cwd, which the kernel lets a process open for the same user's processes only
 * (ptrace read access): a devroot belongs to its user, and so do the processes that can
 * be inside it. Paths are not compared (a process in userns mode lives in another mount
 * namespace, and a path can be renamed): the directory is opened and its ancestors are
 * walked with "..", comparing device and inode with the devroot's, which works across
 * mount namespaces and chroots alike.
 *
 * Stopping goes through pidfds: each process is opened with pidfd_open and checked again
 * through /proc afterwards, so a PID reused in between is never signalled; SIGTERM first,
 * SIGKILL to those still alive after the grace period, as `podman rm --force` does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/inuse.h"
#include "common/util.h"

/* How long processes get to exit after SIGTERM, then after SIGKILL. */
#define STOP_GRACE_MS 5000
#define KILL_WAIT_MS 5000
/* Processes inside may fork while they are stopped: scan and stop again, this often. */
#define STOP_ROUNDS 4
/* Deeper than any path can be (PATH_MAX / 2 components): a walk that long is a loop. */
#define MAX_ANCESTORS 2048
/* At most this many processes are stopped per round. */
#define SCAN_BATCH 256
/* The caller's ancestors skipped by the scan, nearest first. */
#define MAX_ANCESTOR_PIDS 64

struct dev_ino
{
  dev_t dev;
  ino_t ino;
};

/* What is inside a devroot: its directory and beneath; for an overlay root (overlay.h),
 * whose tree is a mount in other mount namespaces only (walking ".." up from it never
 * meets the mount point beneath), every process of a mount namespace where its overlay is
 * mounted, found by the upperdir= option mountinfo shows. */
struct target
{
  struct dev_ino dir;
  char *upperdir; /* ",upperdir=ESCAPED" as in /proc/PID/mountinfo, or NULL */
  ino_t last_ns;  /* the last mount namespace looked at, and whether it had the overlay */
  bool last_ns_has;
};

/* Whether the directory FD (consumed) is the devroot or beneath it. */
static bool
dir_is_inside (int fd, const struct dev_ino *root)
{
  bool inside = false;
  struct stat st, up;
  for (int i = 0; fd >= 0 && i < MAX_ANCESTORS && fstat (fd, &st) == 0; i++)
    {
      if (st.st_dev == root->dev && st.st_ino == root->ino)
        {
          inside = true;
          break;
        }
      int parent = openat (fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (parent < 0 || fstat (parent, &up) < 0
          || (up.st_dev == st.st_dev && up.st_ino == st.st_ino))
        {
          if (parent >= 0)
            close (parent);
          break; /* the top of the tree */
        }
      close (fd);
      fd = parent;
    }
  if (fd >= 0)
    close (fd);
  return inside;
}

/* Whether the mount namespace of the process (PROCFD) has T's overlay mounted. */
static bool
namespace_has_overlay (int procfd, struct target *t)
{
  struct stat ns;
  if (fstatat (procfd, "ns/mnt", &ns, 0) < 0)
    return false;
  if (ns.st_ino == t->last_ns)
    return t->last_ns_has;
  cleanup_free char *info = load_file_at (procfd, "mountinfo", 16 * 1024 * 1024, NULL);
  bool has = false;
  for (const char *p = info; p != NULL && (p = strstr (p, t->upperdir)) != NULL; p++)
    {
      char next = p[strlen (t->upperdir)];
      if (next == ',' || next == '\n' || next == '\0')
        {
          has = true;
          break;
        }
    }
  if (info != NULL)
    {
      t->last_ns = ns.st_ino;
      t->last_ns_has = has;
    }
  return has;
}

/* Whether process PID (its /proc directory open as PROCFD) is inside the devroot. */
static bool
process_is_inside (int procfd, struct target *t)
{
  static const char *const links[] = { "root", "cwd" };
  for (size_t i = 0; i < N_ELEMENTS (links); i++)
    {
      int fd = openat (procfd, links[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0 && dir_is_inside (fd, &t->dir))
        return true;
    }
  return t->upperdir != NULL && namespace_has_overlay (procfd, t);
}

static int
open_proc_pid (pid_t pid)
{
  char path[32];
  snprintf (path, sizeof path, "/proc/%ld", (long) pid);
  return open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static bool
pid_is_inside (pid_t pid, struct target *t)
{
  cleanup_fd int procfd = open_proc_pid (pid);
  struct stat st;
  return procfd >= 0 && fstat (procfd, &st) == 0 && st.st_uid == getuid ()
         && process_is_inside (procfd, t);
}

/* ",upperdir=PATH" escaped as the kernel's seq_show_option shows it in mountinfo. */
static char *
upperdir_option (const char *path)
{
  struct strbuf sb = { 0 };
  strbuf_append (&sb, ",upperdir=");
  for (const unsigned char *c = (const unsigned char *) path; *c != '\0'; c++)
    if (strchr (",= \t\n\\", *c) != NULL)
      strbuf_appendf (&sb, "\\%03o", *c);
    else
      strbuf_append_c (&sb, (char) *c);
  return strbuf_steal (&sb);
}

/* ROOT's identity, and for an overlay root (ROOT is STORE/roots/NAME and
 * STORE/overlays/NAME/upper a directory) its upper directory's mount option. */
static int
target_init (const char *root, struct target *t)
{
  struct stat st;
  *t = (struct target) { 0 };
  if (lstat (root, &st) < 0)
    return -1;
  t->dir = (struct dev_ino) { st.st_dev, st.st_ino };
  const char *slash = strrchr (root, '/');
  size_t base_len = slash != NULL ? (size_t) (slash - root) : 0;
  if (slash == NULL || base_len < strlen ("/roots")
      || strncmp (slash - strlen ("/roots"), "/roots", strlen ("/roots")) != 0)
    return 0;
  cleanup_free char *upper = xasprintf ("%.*s/overlays/%s/upper",
                                        (int) (base_len - strlen ("/roots")), root, slash + 1);
  if (lstat (upper, &st) == 0 && S_ISDIR (st.st_mode))
    t->upperdir = upperdir_option (upper);
  return 0;
}

pid_t
inuse_parent_of (pid_t pid)
{
  char path[48];
  snprintf (path, sizeof path, "/proc/%ld/status", (long) pid);
  cleanup_free char *status = load_file_at (AT_FDCWD, path, 64 * 1024, NULL);
  const char *p = status != NULL ? strstr (status, "\nPPid:") : NULL;
  return p != NULL ? (pid_t) strtol (p + strlen ("\nPPid:"), NULL, 10) : 0;
}

/* Whether PID is this process or one of its ancestors: the shell that runs `remove` from
 * a directory inside the devroot is waiting for us, not running in the devroot, and
 * --force must never kill it. */
static bool
is_self_or_ancestor (pid_t pid)
{
  pid_t p = getpid ();
  for (int i = 0; p > 0 && i < MAX_ANCESTOR_PIDS; i++, p = inuse_parent_of (p))
    if (p == pid)
      return true;
  return false;
}

/* The caller's processes inside ROOT, at most MAX of them into PIDS; how many were found
 * (possibly more than MAX). */
static size_t
scan (struct target *root, pid_t *pids, size_t max)
{
  DIR *d = opendir ("/proc");
  if (d == NULL)
    die_with_error ("cannot read /proc to find the processes inside the devroot");
  size_t n = 0;
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    {
      char *end;
      long v = strtol (de->d_name, &end, 10);
      if (*end != '\0' || v <= 0)
        continue;
      if (pid_is_inside ((pid_t) v, root) && !is_self_or_ancestor ((pid_t) v))
        {
          if (n < max)
            pids[n] = (pid_t) v;
          n++;
        }
    }
  closedir (d);
  return n;
}

char *
inuse_command (pid_t pid)
{
  char path[48];
  snprintf (path, sizeof path, "/proc/%ld/comm", (long) pid);
  char *comm = read_first_line (path);
  return comm != NULL ? comm : xstrdup ("?");
}

/* How many processes inside inuse_find looks at to name one the user started. */
#define INUSE_FIND_CANDIDATES 16

static bool
pid_in (pid_t pid, const pid_t *set, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (set[i] == pid)
      return true;
  return false;
}

pid_t
inuse_find_besides (const char *root, const pid_t *skip, size_t n_skip)
{
  struct target id;
  if (target_init (root, &id) < 0)
    return 0;
  pid_t pids[INUSE_FIND_CANDIDATES];
  size_t n = scan (&id, pids, N_ELEMENTS (pids));
  free (id.upperdir);
  if (n > N_ELEMENTS (pids))
    n = N_ELEMENTS (pids);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (!pid_in (pids[i], skip, n_skip))
      pids[kept++] = pids[i];
  n = kept;
  /* A userns-mode job's PID 1 is enter-devroot's own init: name what the user started. */
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *comm = inuse_command (pids[i]);
      if (strcmp (comm, PROGRAM_NAME) != 0)
        return pids[i];
    }
  return n > 0 ? pids[0] : 0;
}

pid_t
inuse_find (const char *root)
{
  return inuse_find_besides (root, NULL, 0);
}

static int
pidfd_open_ (pid_t pid)
{
  return (int) syscall (SYS_pidfd_open, pid, 0);
}

static int
pidfd_send_signal_ (int pidfd, int sig)
{
  return (int) syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until every pidfd in FDS (-1 entries are done) is readable (its process exited),
 * or MS have passed; exited ones are closed and set to -1. How many are left. */
static size_t
wait_exits (int *fds, size_t n, long ms)
{
  long deadline = now_ms () + ms;
  for (;;)
    {
      size_t left = 0;
      struct pollfd p[SCAN_BATCH];
      for (size_t i = 0; i < n; i++)
        {
          p[i] = (struct pollfd) { .fd = fds[i], .events = POLLIN };
          left += fds[i] >= 0;
        }
      long wait = deadline - now_ms ();
      if (left == 0 || wait <= 0)
        return left;
      if (poll (p, n, (int) wait) < 0 && errno != EINTR)
        die_with_error ("cannot wait for the processes inside the devroot");
      for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)))
          {
            close (fds[i]);
            fds[i] = -1;
          }
    }
}

/* One round: SIGTERM every process found inside, SIGKILL the ones still alive after the
 * grace period, wait for them. */
static void
stop_round (const char *name, struct target *root, const pid_t *pids, size_t n)
{
  int fds[SCAN_BATCH];
  for (size_t i = 0; i < n; i++)
    {
      fds[i] = pidfd_open_ (pids[i]);
      /* Opened, then checked: the pidfd names the process that is inside, not a PID that
       * was reused since the scan. */
      if (fds[i] >= 0
          && (!pid_is_inside (pids[i], root) || pidfd_send_signal_ (fds[i], SIGTERM) < 0))
        {
          close (fds[i]);
          fds[i] = -1;
        }
    }
  if (wait_exits (fds, n, STOP_GRACE_MS) == 0)
    return;
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      {
        cleanup_free char *comm = inuse_command (pids[i]);
        warn ("remove '%s': process %ld (%s) did not exit on SIGTERM: sending SIGKILL", name,
              (long) pids[i], comm);
        if (pidfd_send_signal_ (fds[i], SIGKILL) < 0 && errno != ESRCH)
          die_with_error ("cannot remove '%s': cannot kill process %ld", name, (long) pids[i]);
      }
  wait_exits (fds, n, KILL_WAIT_MS);
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

void
inuse_stop (const char *name, const char *root, const pid_t *skip, size_t n_skip)
{
  struct target id;
  if (target_init (root, &id) < 0)
    return;
  for (int round = 0; round < STOP_ROUNDS; round++)
    {
      pid_t pids[SCAN_BATCH];
      size_t n = scan (&id, pids, SCAN_BATCH);
      if (n > SCAN_BATCH)
        n = SCAN_BATCH;
      size_t kept = 0;
      for (size_t i = 0; i < n; i++)
        if (!pid_in (pids[i], skip, n_skip))
          pids[kept++] = pids[i];
      if (kept == 0)
        break;
      stop_round (name, &id, pids, kept);
    }
  free (id.upperdir);
  pid_t pid = inuse_find_besides (root, skip, n_skip);
  if (pid != 0)
    {
      cleanup_free char *comm = inuse_command (pid);
      die ("cannot remove '%s': process %ld (%s) is still inside it after SIGKILL", name,
           (long) pid, comm);
    }
}

uint64_t
inuse_start_time (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%ld/stat", (long) pid);
  cleanup_free char *stat = read_first_line (path);
  const char *p = stat != NULL ? strrchr (stat, ')') : NULL;
  if (p == NULL)
    return 0;
  /* After the comm: state (field 3), then fields 4 to 21, then starttime. */
  unsigned long long t = 0;
  if (sscanf (p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
              "%*d %*d %llu", &t) != 1)
    return 0;
  return t;
}

/* Whether ENTRY of LOCKS is a state file of NAME's warm keepers. */
static bool
is_keeper_state (const char *entry, const char *name)
{
  size_t n = strlen (name);
  return strncmp (entry, name, n) == 0 && str_has_prefix (entry + n, KEEPER_WARM_INFIX)
         && str_has_suffix (entry, ".ns");
}

/* The keeper named by state file ENTRY of directory D, opened as a pidfd once checked to
 * be the recorded process (start time) and the caller's; -1 when none runs. */
static int
keeper_open (int d, const char *entry, pid_t *pid_out)
{
  cleanup_free char *text = load_file_at (d, entry, 256, NULL);
  long pid = 0;
  unsigned long long started = 0;
  if (text == NULL || sscanf (text, "%ld %llu", &pid, &started) != 2 || pid <= 1)
    return -1;
  int fd = pidfd_open_ ((pid_t) pid);
  if (fd < 0)
    return -1;
  char proc[48];
  struct stat st;
  snprintf (proc, sizeof proc, "/proc/%ld", pid);
  if (inuse_start_time ((pid_t) pid) != started || stat (proc, &st) < 0
      || st.st_uid != getuid ())
    {
      close (fd);
      return -1;
    }
  *pid_out = (pid_t) pid;
  return fd;
}

size_t
inuse_keepers (const char *locks, const char *name, pid_t *pids, size_t max)
{
  DIR *d = opendir (locks);
  if (d == NULL)
    return 0;
  size_t n = 0;
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    {
      pid_t pid;
      int fd = is_keeper_state (de->d_name, name) ? keeper_open (dirfd (d), de->d_name, &pid)
                                                  : -1;
      if (fd < 0)
        continue;
      close (fd);
      if (n < max)
        pids[n] = pid;
      n++;
    }
  closedir (d);
  return n;
}

void
inuse_stop_keepers (const char *locks, const char *name)
{
  DIR *d = opendir (locks);
  if (d == NULL)
    return;
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    {
      if (!is_keeper_state (de->d_name, name))
        continue;
      pid_t pid;
      int fd = keeper_open (dirfd (d), de->d_name, &pid);
      if (fd >= 0)
        {
          if (pidfd_send_signal_ (fd, SIGKILL) < 0 && errno != ESRCH)
            die_with_error ("cannot remove '%s': cannot stop the keeper of its namespaces "
                            "(process %ld)", name, (long) pid);
          int fds[1] = { fd };
          if (wait_exits (fds, 1, KILL_WAIT_MS) > 0)
            die ("cannot remove '%s': the keeper of its namespaces (process %ld) is still "
                 "running after SIGKILL", name, (long) pid);
        }
      /* Its holder removes these too once the keeper is gone; whichever is first. */
      cleanup_free char *hold = xasprintf ("%shold", de->d_name);
      unlinkat (dirfd (d), de->d_name, 0);
      unlinkat (dirfd (d), hold, 0);
    }
  closedir (d);
}
