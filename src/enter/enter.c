/* Entering a devroot, in process, in this order (each step says why):
 *
 *   1. refuse setuid/setgid execution (done first thing in main);
 *   2. close every fd above 2: a leaked directory fd is a way out of any chroot
 *      (runc CVE-2024-21626), and the patched kernel refuses chroot while one is open;
 *   3. PR_SET_NO_NEW_PRIVS: nothing run inside can gain privilege through setuid/setgid
 *      files or file capabilities planted in the root; the patched kernel requires it;
 *   4. unshare(CLONE_FS): the root and cwd we change are ours alone even if a library
 *      started a thread sharing them (libcurl's threaded resolver);
 *   5. open the root with O_PATH|O_NOFOLLOW, fchdir into it, close it, chroot("."): the
 *      working directory is inside the new root before it becomes the root, and no fd to
 *      a directory outside is open (both rules of the kernel patch);
 *      on EPERM in auto mode, or in userns mode: an identity-mapped user namespace, a
 *      private mount namespace with a tmpfs /dev holding the host's null, zero, full,
 *      random, urandom and tty (mount_dev), the host's resolv.conf and hosts bound
 *      read-only (hostfiles.c; in chroot mode copied in before, where the root's own is
 *      missing, empty or our last copy), then chroot(".") again;
 *   6. check that getcwd() is "/" and "." is "/" (the runc lesson: never trust the cwd);
 *   7. chdir to --workdir, else an OCI image's WorkingDir, else the home from the root's
 *      /etc/passwd;
 *   8. build the environment (an OCI image's Env under ours);
 *   9. confine (confine.c): a Landlock domain limiting the filesystem to the root and
 *      scoping signals, abstract sockets and ptrace (unless --no-landlock; one warning
 *      line where the kernel lacks it), then a seccomp filter against terminal injection
 *      (TIOCSTI, TIOCLINUX). No setsid(): it would cost the interactive shell its
 *      controlling terminal, hence job control and ^C (see confine.c); with --root, a
 *      second filter that makes the ids read 0 and chown/set*id succeed (rootemu.c);
 *  10. exec, searching PATH inside the root: the command given, else an OCI image's
 *      Entrypoint+Cmd (as `docker run IMAGE` would), else the user's shell.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/account.h"
#include "common/util.h"
#include "enter/confine.h"
#include "enter/enter.h"
#include "enter/env.h"
#include "enter/hostfiles.h"
#include "enter/rootemu.h"
#include "enter/userns.h"

#define DEFAULT_SHELL "/bin/sh"
#define PASSWD_MAX_SIZE (16 * 1024 * 1024)

extern char **environ;

/* The character devices every program expects, bound from the host into a userns-mode
 * devroot's /dev (bwrap --dev does the same): harmless ones only. */
static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

int
mount_on_fd (const char *source, int fd, const char *type, unsigned long flags,
             const char *data)
{
  char target[64];
  snprintf (target, sizeof target, "/proc/self/fd/%d", fd);
  return mount (source, target, type, flags, data);
}

/* userns mode, before chroot: in a private mount namespace, a fresh tmpfs on the root's
 * dev/ directory (the root on disk is not touched) holding the host's null, zero, full,
 * random, urandom and tty (bind mounts), fd, stdin, stdout and stderr symlinks and a shm/
 * directory. The working directory is the new root. A root without a dev/ directory gets
 * nothing; a failure is one warning line, not fatal: the root is usable without. */
static void
mount_dev (const char *name)
{
  if (unshare (CLONE_NEWNS) < 0)
    {
      warn ("root '%s': no /dev: cannot create a mount namespace: %s", name, strerror (errno));
      return;
    }
  /* Our mounts must not propagate back to the caller's namespace. */
  /* (The kernel ignores the type of a propagation change or a bind; "none" rather than
   * NULL keeps valgrind quiet.) */
  if (mount ("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
    {
      warn ("root '%s': no /dev: cannot make the mounts private: %s", name, strerror (errno));
      return;
    }
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
      int fd = openat (dev, dev_nodes[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       0666);
      if (fd >= 0)
        {
          close (fd);
          fd = openat (dev, dev_nodes[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
        }
      if (fd < 0 || mount_on_fd (host, fd, "none", MS_BIND, NULL) < 0)
        warn ("root '%s': no /dev/%s: %s", name, dev_nodes[i], strerror (errno));
      if (fd >= 0)
        close (fd);
    }
  static const char *const links[][2] = {
    { "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
    { "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
  };
  for (size_t i = 0; i < N_ELEMENTS (links); i++)
    if (symlinkat (links[i][1], dev, links[i][0]) < 0)
      warn ("root '%s': no /dev/%s: %s", name, links[i][0], strerror (errno));
  /* mkdirat applies the umask: set the sticky, world-writable mode explicitly. */
  if (mkdirat (dev, "shm", 01777) < 0 || fchmodat (dev, "shm", 01777, 0) < 0)
    warn ("root '%s': no /dev/shm: %s", name, strerror (errno));
}

static void
chroot_via_userns (const char *name, int chroot_errno, const struct enter_opts *opts)
{
  if (userns_enter_identity () < 0)
    {
      int errsv = errno;
      cleanup_free char *userns_why = userns_unavailable_reason (errsv);
      if (chroot_errno == 0)
        die ("cannot enter root '%s': user namespaces unavailable (%s): see "
             "'enter-devroot doctor'", name, userns_why);
      cleanup_free char *chroot_why = chroot_refused_reason (chroot_errno);
      die ("cannot enter root '%s': chroot refused (%s) and user namespaces unavailable "
           "(%s): see 'enter-devroot doctor'", name, chroot_why, userns_why);
    }
  mount_dev (name);
  if (!opts->no_host_dns)
    hostfiles_bind (name);
  if (chroot (".") < 0)
    die_with_error ("cannot enter root '%s': chroot inside a user namespace", name);
}

/* Whether the plain chroot will be tried and is expected to work, for what must happen
 * before it (the copies of the host files): in auto mode on a kernel that refuses it, the
 * root is left as it is, the user namespace binds the host's files instead. */
static bool
chroot_likely (enum enter_mode mode)
{
  if (mode != ENTER_MODE_AUTO)
    return mode == ENTER_MODE_CHROOT;
  cleanup_free char *v = read_first_line (SYSCTL_UNPRIVILEGED_CHROOT);
  return geteuid () == 0 || (v != NULL && strcmp (v, "1") == 0);
}

static void
change_root (const char *name, const char *root, const struct enter_opts *opts)
{
  enum enter_mode mode = opts->mode;
  if (!opts->no_host_dns && chroot_likely (mode))
    hostfiles_refresh_copies (name, root);
  int rootfd = open (root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rootfd < 0)
    die_with_error ("cannot enter root '%s': cannot open %s", name, root);
  if (fchdir (rootfd) < 0)
    die_with_error ("cannot enter root '%s': cannot change directory to %s", name, root);
  close (rootfd);

  if (mode == ENTER_MODE_USERNS)
    {
      chroot_via_userns (name, 0, opts);
      return;
    }
  if (chroot (".") == 0)
    return;
  int errsv = errno;
  if (mode == ENTER_MODE_AUTO && errsv == EPERM)
    {
      chroot_via_userns (name, errsv, opts);
      return;
    }
  cleanup_free char *why = chroot_refused_reason (errsv);
  die ("cannot enter root '%s': chroot refused (%s): see 'enter-devroot doctor'", name, why);
}

/* After chroot the working directory must be the new root, and nothing else. */
static void
verify_inside (const char *name)
{
  char cwd[2];
  struct stat dot, slash;
  if (getcwd (cwd, sizeof cwd) == NULL || strcmp (cwd, "/") != 0)
    die ("cannot enter root '%s': the working directory is not the new root", name);
  if (stat (".", &dot) < 0 || stat ("/", &slash) < 0)
    die_with_error ("cannot enter root '%s': stat", name);
  if (dot.st_dev != slash.st_dev || dot.st_ino != slash.st_ino)
    die ("cannot enter root '%s': the working directory is not the new root", name);
}

static bool
is_directory (const char *path)
{
  struct stat st;
  return path != NULL && path[0] == '/' && stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

/* A vector of the image's Entrypoint followed by TAIL (its Cmd, or run --entrypoint's
 * arguments); NULL when that is empty. The strings are borrowed. */
static char **
image_command (const struct meta_image *image, char *const *tail)
{
  size_t ne = image != NULL ? strv_length (image->entrypoint) : 0;
  size_t nt = strv_length (tail);
  if (ne + nt == 0)
    return NULL;
  char **argv = xcalloc (ne + nt + 1, sizeof (char *));
  for (size_t i = 0; i < ne; i++)
    argv[i] = image->entrypoint[i];
  for (size_t i = 0; i < nt; i++)
    argv[ne + i] = tail[i];
  return argv;
}

__attribute__((noreturn)) static void
exec_command (char **argv, char **envp)
{
  /* execvp searches the PATH of environ: point it at the new environment so the search
   * happens inside the root with the root's PATH. */
  environ = envp;
  execvp (argv[0], argv);
  int errsv = errno;
  if (errsv == ENOENT)
    die_status (EXIT_NOT_FOUND, "%s: command not found", argv[0]);
  die_status (EXIT_CANNOT_EXEC, "cannot execute %s: %s", argv[0], strerror (errsv));
}

void
enter_root (const char *name, const char *root, const struct enter_opts *opts)
{
  close_fds_from (STDERR_FILENO + 1);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    die_with_error ("cannot set no_new_privs");
  if (unshare (CLONE_FS) < 0)
    die_with_error ("cannot unshare the filesystem attributes");
  change_root (name, root, opts);
  verify_inside (name);

  struct account acct = { 0 };
  /* Freed here, not by a cleanup attribute: this function never returns, and a failed exec
   * exits from below with the buffer unreachable (a leak to valgrind). acct holds copies. */
  char *passwd = load_file_at (AT_FDCWD, "/etc/passwd", PASSWD_MAX_SIZE, NULL);
  if (passwd != NULL)
    account_parse_passwd (passwd, opts->root ? 0 : getuid (), &acct); /* --root: root's */
  free (passwd);
  const char *home = is_directory (acct.home) ? acct.home : "/";

  const struct meta_image *image = opts->image;
  const char *workdir = opts->workdir != NULL ? opts->workdir
                        : image != NULL && image->workdir != NULL && image->workdir[0] != '\0'
                        ? image->workdir : home;
  if (chdir (workdir) < 0)
    die_with_error ("cannot change to working directory '%s' in root '%s'", workdir, name);

  const char *shell = acct.shell != NULL && acct.shell[0] == '/' ? acct.shell : DEFAULT_SHELL;
  struct env_user user = { .home = home, .user = acct.name, .shell = shell, .devroot = name };
  char **envp = env_build (environ, &opts->env, image != NULL ? image->env : NULL, &user);

  /* enter runs the shell interactively, not as a login shell, like chroot(1): the
   * environment is exactly the one built above, not what profile scripts make of it.
   * With commands piped in rather than a terminal, it is a plain script reader, so its
   * output is theirs alone (no banner, no prompts), as `ssh host < script` behaves. */
  char *shell_argv[] = { xstrdup (shell), isatty (STDIN_FILENO) ? xstrdup ("-i") : NULL, NULL };
  char **argv = opts->argv;
  if (argv != NULL && opts->entrypoint)
    argv = image_command (image, opts->argv);
  else if (argv == NULL)
    argv = image_command (image, image != NULL ? image->cmd : NULL);
  if (argv == NULL)
    argv = shell_argv;
  confine_root (name, opts->no_landlock);
  if (opts->root)
    rootemu_install (name);
  else if (opts->argv != NULL)
    rootemu_hint (name, opts->argv);
  exec_command (argv, envp);
}
