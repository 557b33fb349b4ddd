/* edr-attack: the attacks a process inside a devroot could try on the world outside it,
 * and the outside helpers they need. Built static (it runs inside a busybox root).
 *
 * Each attack prints one word on stdout: "ok" when the attack worked, else the name of
 * the errno that stopped it (EPERM, EACCES, ...). The tests compare that word inside a
 * devroot with the same attack outside (or with --no-landlock), so they can fail.
 *
 *   tiocsti [high]           ioctl(0, TIOCSTI): push a byte into the terminal's input;
 *                            "high" sets bit 32 of the request (CVE-2019-10063)
 *   tiocsti-i386             the same through the i386 entry (int $0x80, ioctl = 54)
 *   tiocsti-x32              the same through the x32 syscall number (0x40000000 | 514)
 *   tioclinux                ioctl(0, TIOCLINUX, paste selection)
 *   tioclinux-shift          ioctl(0, TIOCLINUX, get shift state): needs no capability,
 *                            works on a VT that is the caller's controlling terminal
 *   kill PID                 kill(PID, 0)
 *   ptrace PID               PTRACE_ATTACH then detach
 *   vmwrite PID              process_vm_writev into PID (an unmapped address: EFAULT
 *                            means the permission check passed)
 *   getfd PID                pidfd_open(PID) + pidfd_getfd(fd 0)
 *   connect-abstract NAME    connect to the abstract unix socket @NAME
 *   recvfd SOCK PATH         receive a directory fd over the unix socket SOCK, then
 *                            openat(fd, PATH) and read it
 *   chroot-escape PATH       the classic nested chroot breakout (mkdir, chroot without
 *                            chdir, ".." up, chroot "."), then open PATH
 *   dotdot PATH              chdir("..") many times from the root, then open PATH
 * Not an attack:
 *   fchroot DIR              set no_new_privs, fchroot(2) on an O_PATH descriptor of DIR
 *   fchroot-failfs           set no_new_privs, fchroot(FD_FAILFS_ROOT)
 *   ctty                     "ok" when stdin is our controlling terminal, in our session
 *   i386-ids                 the ids the i386 entry reports (int $0x80: getuid, getuid32,
 *                            geteuid32, getgid32), for --root's compat rules
 * Outside helpers (long-running; they exit after one client or 60 s):
 *   listen-abstract NAME     listen on @NAME, print "ready"
 *   sendfd SOCK DIR          listen on the pathname socket SOCK, send an fd of DIR
 *   no-landlock CMD...       exec CMD with landlock_create_ruleset failing ENOSYS (a
 *                            seccomp filter: a kernel without Landlock, for real)
 *   no-openat2 CMD...        exec CMD with openat2 failing ENOSYS: a kernel before 5.6
 *   no-fchroot CMD...        exec CMD with fchroot failing ENOSYS: a kernel before 7.3
 *   landlock-fails CMD...    exec CMD with landlock_restrict_self failing EPERM: a kernel
 *                            that has Landlock but refuses the domain
 *   landlock-abi N CMD...    run CMD with the Landlock version query answering N (a
 *                            seccomp user notification answered here): an older
 *                            kernel's ABI; the rulesets CMD builds still go to this one
 *   rename FROM TO           rename(FROM, TO)
 *   ruleset FS SCOPED        landlock_create_ruleset with those handled_access_fs and
 *                            scoped masks (numbers): checks landlock-abi's emulation
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELPER_TIMEOUT 60

static int
result (long r)
{
  if (r >= 0)
    {
      puts ("ok");
      return 0;
    }
  const char *n = strerrorname_np (errno);
  puts (n != NULL ? n : "E?");
  return 1;
}

static pid_t
pid_arg (const char *s)
{
  return (pid_t) strtol (s, NULL, 10);
}

static socklen_t
abstract_addr (struct sockaddr_un *a, const char *name)
{
  memset (a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  size_t n = strlen (name);
  if (n > sizeof a->sun_path - 2)
    exit (2);
  memcpy (a->sun_path + 1, name, n);
  return offsetof (struct sockaddr_un, sun_path) + 1 + n;
}

static socklen_t
path_addr (struct sockaddr_un *a, const char *path)
{
  memset (a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (strlen (path) >= sizeof a->sun_path)
    exit (2);
  strcpy (a->sun_path, path);
  return sizeof *a;
}

static int
listen_on (struct sockaddr_un *a, socklen_t len)
{
  int s = socket (AF_UNIX, SOCK_STREAM, 0);
  if (s < 0 || bind (s, (struct sockaddr *) a, len) < 0 || listen (s, 1) < 0)
    {
      perror ("edr-attack: listen");
      exit (2);
    }
  puts ("ready");
  fflush (stdout);
  alarm (HELPER_TIMEOUT);
  return s;
}

static int
open_and_read (int dirfd, const char *path)
{
  int fd = openat (dirfd, path, O_RDONLY);
  if (fd < 0)
    return result (-1);
  char buf[1];
  return result (read (fd, buf, sizeof buf));
}

/* Send FD over the connected unix socket S (SCM_RIGHTS, one byte of data). */
static int
send_fd_on (int s, int fd)
{
  char byte = 'x';
  struct iovec iov = { &byte, 1 };
  union { char buf[CMSG_SPACE (sizeof (int))]; struct cmsghdr align; } u;
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                      .msg_controllen = sizeof u.buf };
  struct cmsghdr *c1 = CMSG_FIRSTHDR (&m);
  c1->cmsg_level = SOL_SOCKET;
  c1->cmsg_type = SCM_RIGHTS;
  c1->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c1), &fd, sizeof fd);
  return sendmsg (s, &m, 0) == 1 ? 0 : -1;
}

/* The fd sent by send_fd_on over S, or -1. */
static int
recv_fd_on (int s)
{
  char byte;
  struct iovec iov = { &byte, 1 };
  union { char buf[CMSG_SPACE (sizeof (int))]; struct cmsghdr align; } u;
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                      .msg_controllen = sizeof u.buf };
  if (recvmsg (s, &m, 0) != 1)
    return -1;
  struct cmsghdr *c1 = CMSG_FIRSTHDR (&m);
  if (c1 == NULL || c1->cmsg_level != SOL_SOCKET || c1->cmsg_type != SCM_RIGHTS)
    return -1;
  int fd;
  memcpy (&fd, CMSG_DATA (c1), sizeof fd);
  return fd;
}

static int
send_fd (const char *sock, const char *dir)
{
  int dfd = open (dir, O_RDONLY | O_DIRECTORY);
  if (dfd < 0)
    {
      perror ("edr-attack: sendfd: open");
      return 2;
    }
  struct sockaddr_un a;
  unlink (sock);
  int s = listen_on (&a, path_addr (&a, sock));
  int c = accept (s, NULL, NULL);
  if (c < 0)
    return 2;
  return send_fd_on (c, dfd) == 0 ? 0 : 2;
}

static int
recv_fd (const char *sock, const char *path)
{
  struct sockaddr_un a;
  socklen_t len = path_addr (&a, sock);
  int s = socket (AF_UNIX, SOCK_STREAM, 0);
  if (s < 0 || connect (s, (struct sockaddr *) &a, len) < 0)
    {
      perror ("edr-attack: recvfd: connect");
      return 2;
    }
  int dfd = recv_fd_on (s);
  if (dfd < 0)
    return 2;
  return open_and_read (dfd, path);
}

static int
chroot_escape (const char *path)
{
  mkdir ("/.edr-escape", 0700);
  if (chroot ("/.edr-escape") < 0)
    return result (-1);
  for (int i = 0; i < 64; i++)
    if (chdir ("..") < 0)
      return result (-1);
  if (chroot (".") < 0)
    return result (-1);
  return open_and_read (AT_FDCWD, path);
}

static int
dotdot (const char *path)
{
  for (int i = 0; i < 64; i++)
    if (chdir ("..") < 0)
      return result (-1);
  return open_and_read (AT_FDCWD, path);
}

/* Exec ARGV with syscall NR failing ERR (seccomp; inherited across exec). */
static int
exec_with_failing (long nr, int err, char **argv)
{
  struct sock_filter f[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog p = { .len = sizeof f / sizeof f[0], .filter = f };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p, 0, 0) < 0)
    {
      perror ("edr-attack: seccomp");
      return 2;
    }
  execvp (argv[0], argv);
  perror ("edr-attack: exec");
  return 127;
}

/* Whether a kernel of Landlock ABI ABI would refuse the landlock_create_ruleset call REQ,
 * as its errno, else 0. Such a kernel's struct landlock_ruleset_attr ends after
 * handled_access_fs (ABI 1-3), handled_access_net (4-5) or scoped (6): a longer attr
 * must be zero past that end (E2BIG), and it knows fewer filesystem rights (EINVAL). */
static int
old_kernel_refuses (int lfd, const struct seccomp_notif *req, long abi)
{
  if (req->data.args[2] == LANDLOCK_CREATE_RULESET_VERSION)
    return 0;
  if (req->data.args[2] != 0)
    return EINVAL;
  size_t size = req->data.args[1];
  size_t ksize = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
  uint64_t fs_known = (1ULL << (abi >= 5 ? 16 : abi >= 3 ? 15 : abi >= 2 ? 14 : 13)) - 1;
  uint64_t attr[8] = { 0 };
  if (req->data.args[0] == 0 || size < ksize || size > sizeof attr)
    return 0; /* this kernel answers as that one would (EFAULT, EINVAL, its own checks) */
  struct iovec local = { attr, size }, remote = { (void *) req->data.args[0], size };
  if (process_vm_readv (req->pid, &local, 1, &remote, 1, 0) != (ssize_t) size
      || ioctl (lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
    {
      perror ("edr-attack: landlock-abi: read the ruleset attr");
      return EIO;
    }
  for (size_t i = ksize; i < size; i++)
    if (((unsigned char *) attr)[i] != 0)
      return E2BIG;
  return attr[0] & ~fs_known ? EINVAL : 0;
}

/* Run ARGV as if on a kernel of Landlock ABI ABI (1 or more): the child's seccomp filter
 * turns its landlock_create_ruleset calls into user notifications, which the parent
 * answers: the version query with ABI, a ruleset that kernel would refuse with its
 * errno; the rest goes on to this kernel, which applies an older ABI's rights and no
 * scopes exactly as that kernel would. The child builds the filter (the parent stays
 * unfiltered) and hands the listener over; the parent answers until no task uses the
 * filter, then returns the child's status. */
static int
exec_with_landlock_abi (long abi, char **argv)
{
  int sv[2];
  if (abi < 1 || socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return 2;
  pid_t pid = fork ();
  if (pid < 0)
    return 2;
  if (pid == 0)
    {
      struct sock_filter f[] = {
        BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
        BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_create_ruleset, 0, 1),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      };
      struct sock_fprog p = { .len = sizeof f / sizeof f[0], .filter = f };
      int lfd = -1;
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
          || (lfd = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                             SECCOMP_FILTER_FLAG_NEW_LISTENER, &p)) < 0
          || send_fd_on (sv[1], lfd) < 0)
        {
          perror ("edr-attack: landlock-abi: seccomp listener");
          _exit (2);
        }
      close (lfd);
      close (sv[0]);
      close (sv[1]);
      execvp (argv[0], argv);
      perror ("edr-attack: exec");
      _exit (127);
    }
  close (sv[1]);
  int lfd = recv_fd_on (sv[0]);
  close (sv[0]);
  /* Until the child exits: what it leaves behind (a warm run's keeper, which inherits the
   * filter and waits out its idle time) makes no more rulesets, and waiting for it too
   * cost each run ten seconds. */
  int cfd = (int) syscall (SYS_pidfd_open, pid, 0);
  struct pollfd pfd[2] = { { .fd = lfd, .events = POLLIN }, { .fd = cfd, .events = POLLIN } };
  while (lfd >= 0)
    {
      if (poll (pfd, cfd >= 0 ? 2 : 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (!(pfd[0].revents & POLLIN))
        {
          /* POLLHUP: the child and all it started have exited; or the child has. */
          if (pfd[0].revents != 0 || (cfd >= 0 && (pfd[1].revents & POLLIN)))
            break;
          continue;
        }
      struct seccomp_notif req;
      struct seccomp_notif_resp resp;
      memset (&req, 0, sizeof req);
      if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        continue; /* ENOENT: the caller died meanwhile */
      memset (&resp, 0, sizeof resp);
      resp.id = req.id;
      int err = old_kernel_refuses (lfd, &req, abi);
      if (err != 0)
        resp.error = -err;
      else if (req.data.args[2] == LANDLOCK_CREATE_RULESET_VERSION)
        resp.val = abi;
      else
        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      ioctl (lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
  int st;
  if (waitpid (pid, &st, 0) < 0)
    return 2;
  return WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: edr-attack ATTACK [ARGS] (see attack.c)\n");
      return 2;
    }
  const char *what = argv[1];
  const char *a1 = argc > 2 ? argv[2] : "";
  const char *a2 = argc > 3 ? argv[3] : "";

  if (strcmp (what, "tiocsti") == 0)
    {
      unsigned long req = TIOCSTI;
      if (strcmp (a1, "high") == 0)
        req |= 1UL << 32;
      char c = '#';
      return result (syscall (SYS_ioctl, 0, req, &c));
    }
#ifdef __x86_64__
  if (strcmp (what, "tiocsti-i386") == 0)
    {
      /* A static, non-PIE executable: this byte's address fits the i386 ABI's 32 bits. */
      static char c = '#';
      long r;
      __asm__ volatile ("int $0x80" : "=a" (r)
                        : "0" (54L), "b" (0L), "c" ((long) TIOCSTI), "d" (&c) : "memory");
      if (r < 0 && r > -4096)
        {
          errno = (int) -r;
          r = -1;
        }
      return result (r);
    }
  if (strcmp (what, "i386-ids") == 0)
    {
      static const long nrs[] = { 24, 199, 201, 200 }; /* getuid getuid32 geteuid32 getgid32 */
      for (size_t i = 0; i < sizeof nrs / sizeof nrs[0]; i++)
        {
          long r;
          __asm__ volatile ("int $0x80" : "=a" (r) : "0" (nrs[i]) : "memory");
          printf ("%s%ld", i > 0 ? " " : "", r);
        }
      printf ("\n");
      return 0;
    }
  if (strcmp (what, "tiocsti-x32") == 0)
    {
      char c = '#';
      return result (syscall (0x40000000L | 514, 0, (long) TIOCSTI, &c));
    }
#endif
  if (strcmp (what, "tioclinux") == 0)
    {
      char sub = 3; /* TIOCL_PASTESEL */
      return result (ioctl (0, TIOCLINUX, &sub));
    }
  if (strcmp (what, "tioclinux-shift") == 0)
    {
      char sub = 6; /* TIOCL_GETSHIFTSTATE */
      return result (ioctl (0, TIOCLINUX, &sub));
    }
  if (strcmp (what, "kill") == 0)
    return result (kill (pid_arg (a1), 0));
  if (strcmp (what, "ptrace") == 0)
    {
      pid_t pid = pid_arg (a1);
      if (ptrace (PTRACE_ATTACH, pid, NULL, NULL) < 0)
        return result (-1);
      waitpid (pid, NULL, __WALL);
      ptrace (PTRACE_DETACH, pid, NULL, NULL);
      return result (0);
    }
  if (strcmp (what, "vmwrite") == 0)
    {
      char buf[8] = { 0 };
      struct iovec local = { buf, sizeof buf }, remote = { (void *) 0x1000, sizeof buf };
      ssize_t r = process_vm_writev (pid_arg (a1), &local, 1, &remote, 1, 0);
      if (r < 0 && errno == EFAULT)
        r = 0; /* permitted: only the address was wrong */
      return result (r);
    }
  if (strcmp (what, "getfd") == 0)
    {
      int pfd = syscall (SYS_pidfd_open, pid_arg (a1), 0);
      if (pfd < 0)
        return result (-1);
      return result (syscall (SYS_pidfd_getfd, pfd, 0, 0));
    }
  if (strcmp (what, "connect-abstract") == 0)
    {
      struct sockaddr_un a;
      socklen_t len = abstract_addr (&a, a1);
      int s = socket (AF_UNIX, SOCK_STREAM, 0);
      return result (s < 0 ? -1 : connect (s, (struct sockaddr *) &a, len));
    }
  if (strcmp (what, "recvfd") == 0)
    return recv_fd (a1, a2);
  if (strcmp (what, "chroot-escape") == 0)
    return chroot_escape (a1);
  if (strcmp (what, "ctty") == 0)
    {
      pid_t sid;
      if (ioctl (0, TIOCGSID, &sid) < 0)
        return result (-1);
      errno = ESRCH;
      return result (sid == getsid (0) ? 0 : -1);
    }
  if (strcmp (what, "dotdot") == 0)
    return dotdot (a1);
  if (strcmp (what, "listen-abstract") == 0)
    {
      struct sockaddr_un a;
      int s = listen_on (&a, abstract_addr (&a, a1));
      return accept (s, NULL, NULL) < 0 ? 2 : 0;
    }
  if (strcmp (what, "sendfd") == 0)
    return send_fd (a1, a2);
  /* A kernel built without Landlock, for real. */
  if (strcmp (what, "no-landlock") == 0 && argc > 2)
    return exec_with_failing (SYS_landlock_create_ruleset, ENOSYS, argv + 2);
  if (strcmp (what, "no-openat2") == 0 && argc > 2)
    return exec_with_failing (SYS_openat2, ENOSYS, argv + 2);
  /* fchroot(2), Linux 7.3: 472 on every architecture; FD_FAILFS_ROOT is -10004. */
  if (strcmp (what, "fchroot") == 0 || strcmp (what, "fchroot-failfs") == 0)
    {
      int fd = what[7] == '\0' ? open (a1, O_PATH | O_DIRECTORY | O_CLOEXEC) : -10004;
      if (what[7] == '\0' && fd < 0)
        return result (-1);
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return result (-1);
      return result (syscall (472, fd, 0));
    }
  if (strcmp (what, "no-fchroot") == 0 && argc > 2)
    return exec_with_failing (472, ENOSYS, argv + 2);
  if (strcmp (what, "landlock-fails") == 0 && argc > 2)
    return exec_with_failing (SYS_landlock_restrict_self, EPERM, argv + 2);
  if (strcmp (what, "landlock-abi") == 0 && argc > 3)
    return exec_with_landlock_abi (strtol (a1, NULL, 10), argv + 3);
  if (strcmp (what, "rename") == 0)
    return result (rename (a1, a2));
  if (strcmp (what, "ruleset") == 0)
    {
      uint64_t attr[3] = { strtoull (a1, NULL, 0), 0, strtoull (a2, NULL, 0) };
      return result (syscall (SYS_landlock_create_ruleset, attr, sizeof attr, 0));
    }
  fprintf (stderr, "edr-attack: unknown attack %s\n", what);
  return 2;
}
