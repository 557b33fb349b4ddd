/* Entering a devroot, in this order (each step says why):
 *
 *   1. refuse setuid/setgid execution (done first thing in main);
 *   2. close every fd above 2: a leaked directory fd is a way out of any chroot
 *      (runc CVE-2024-21626); the kernel does not check for one. The one exception is
 *      the socket PMI_FD names, an MPI task's line to its launcher (mpi.c);
 *   3. PR_SET_NO_NEW_PRIVS: nothing run inside can gain privilege through setuid/setgid
 *      files or file capabilities planted in the root; the patched kernel requires it;
 *   4. unshare(CLONE_FS): the root and cwd we change are ours alone even if a library
 *      started a thread sharing them (libcurl's threaded resolver);
 *   5. pick the mode: auto is chroot where this kernel lets us chroot (root, or
 *      fs.unprivileged_chroot=1), else a user namespace; check every --bind (userns mode
 *      only: bind.c) before anything is created;
 *   6. run --ephemeral: create the throwaway root through the store helper (ephemeral.c);
 *   7. open the root with O_PATH|O_NOFOLLOW, fchdir into it: the working directory is
 *      inside the new root before it becomes the root, and no fd to a directory outside
 *      is open (the kernel checks neither); in chroot mode, first copy the host's
 *      resolv.conf and hosts in where the root's own is missing, empty or our last copy
 *      (hostfiles.c); the descriptor is kept for step 8 in chroot mode only;
 *   8. start the job, the signals the supervisor waits for blocked first (supervise.c):
 *      chroot mode: become a child subreaper, fork; the child makes the root's descriptor
 *      its root with fchroot(2) where the kernel has it (Linux 7.3: the path opened in
 *      step 7 is not walked again), else chroot("."), and closes it;
 *      userns mode: clone a child into new user, mount and PID namespaces; on a terminal
 *      that is ours, it takes a process group of its own and makes it the terminal's
 *      foreground group (terminal.c: ours does not exist in its PID namespace, and a
 *      shell needs one it can see for job control); it maps the
 *      caller's uid and gid to themselves, makes its mounts private, mounts a tmpfs /dev
 *      holding the host's null, zero, full, random, urandom and tty, a tmpfs /dev/shm
 *      as large as the host's, a devpts of its own and the user's terminal as console
 *      (mount_dev), a fresh /proc (pidns.c), the host's resolv.conf and hosts read-only
 *      (hostfiles.c), every --bind (bind.c: all checked before anything is created) and
 *      for an MPI task its PMIx server's directories (mpi.c) inside the root,
 *      chroot(".")s, drops its capabilities and, as PID 1, forks the command and reaps
 *      (pidns.c);
 *   9. in the command (run_command): check that getcwd() is "/" and "." is "/" (the runc
 *      lesson: never trust the cwd); chdir to --workdir, else an OCI image's WorkingDir,
 *      else the home from the root's /etc/passwd; build the environment (an OCI image's
 *      Env under ours); confine (confine.c): a Landlock domain limiting the filesystem
 *      to the root and scoping signals, abstract sockets and ptrace (unless --no-landlock;
 *      one warning line where the kernel lacks it), then a seccomp filter against
 *      terminal injection (TIOCSTI, TIOCLINUX). No setsid(): it would cost the
 *      interactive shell its controlling terminal, hence job control and ^C (see
 *      confine.c); with --root, a second filter that makes the ids read 0 and
 *      chown/set*id succeed (rootemu.c); exec, searching PATH inside the root: the
 *      command given, else for run an OCI image's Entrypoint+Cmd (as `docker run IMAGE`
 *      would), else the user's shell (always for enter);
 *  10. the supervisor, which never entered the root nor, but for a warm run's (stepns.c),
 *      any namespace (supervise.c):
 *      pass SIGINT, SIGTERM and SIGHUP on, enforce --timeout, relay a stop of the command
 *      to the caller's shell and resume it with us (terminal.c), wait; in chroot mode kill
 *      whatever the job left running (in userns mode the PID namespace died with its
 *      PID 1); take the terminal back; remove a throwaway root; exit as the command did.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "common/account.h"
#include "common/name.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/userns.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/bind.h"
#include "enter/cdi.h"
#include "enter/command.h"
#include "enter/confine.h"
#include "enter/enter.h"
#include "enter/env.h"
#include "enter/ephemeral.h"
#include "enter/hostfiles.h"
#include "enter/job.h"
#include "enter/mode.h"
#include "enter/mounts.h"
#include "enter/mpi.h"
#include "enter/pidns.h"
#include "enter/rootemu.h"
#include "enter/share.h"
#include "enter/shell.h"
#include "enter/stepns.h"
#include "enter/supervise.h"
#include "enter/terminal.h"
#include "enter/view.h"
#include "enter/warm-key.h"

void
enter_devroot (const struct cli *cli)
{
  struct enter_opts opts_image = cli->enter;
  const struct enter_opts *opts = &opts_image;
  close_fds_except (STDERR_FILENO + 1, mpi_pmi_fd ());
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    die_with_error ("cannot set no_new_privs");
  if (unshare (CLONE_FS) < 0)
    die_with_error ("cannot unshare the filesystem attributes");

  bool userns_off;
  size_t n_binds;
  struct bind *binds;
  enum enter_mode mode = mode_choose (opts, &userns_off, &binds, &n_binds);
  /* Not a local, as for root below: the job's children never return. */
  static struct cdi_view cdi;
  if (opts->devices != NULL)
    {
      cdi_resolve (opts->devices, &cdi);
      opts_image.env.device_env = cdi.edits.env;
    }

  supervise_block_signals ();
  struct ephemeral eph;
  const char *name = cli->name;
  if (cli->ephemeral)
    {
      ephemeral_create (cli, &eph, mode == ENTER_MODE_USERNS);
      name = eph.name;
    }
  /* Not a local: the children never return, so the compiler may drop a local's slot and
   * the path is unreachable (a leak to valgrind) when a failed exec exits; volatile, or
   * the store to a static nobody reads is dropped too. */
  static char *volatile root;
  static struct meta meta; /* the same: its image fields are used until the exec */
  bool direct = cli->ephemeral && eph.direct;
  /* A direct throwaway root has no directory of its own on the host: the job's tmpfs is
   * mounted on the staging directory, where the supervisor waits until the clone. */
  root = direct ? xstrdup (eph.paths.staging) : roots_existing_path (name, "enter");
  verbose ("root '%s': %s", name, root);
  bool have_meta = direct || roots_read_meta (name, &meta);
  if (direct)
    {
      meta = eph.meta; /* the static's now: the run's metadata */
      eph.meta = (struct meta) { 0 };
    }
  if (have_meta && meta.image.digest != NULL)
    opts_image.image = &meta.image;
  bool overlay = have_meta && overlay_is_root (&meta);
  mode = mode_for_root (mode, opts, name, overlay);
  command_choose (cli, name, &opts_image);
  if (!opts->no_host_dns && mode == ENTER_MODE_CHROOT)
    hostfiles_refresh_copies (name, root);
  /* An MPI task's view of its PMIx server: optional binds, after the user's. */
  if (mode == ENTER_MODE_USERNS)
    mpi_add_binds (&binds, &n_binds);
  int rootfd = open (root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rootfd < 0)
    die_with_error ("cannot enter root '%s': cannot open %s", name, root);
  struct stat root_st;
  if (fchdir (rootfd) < 0 || fstat (rootfd, &root_st) < 0)
    die_with_error ("cannot enter root '%s': cannot change directory to %s", name, root);
  /* chroot mode enters through it (start_chroot_job); userns mode mounts on the path. */
  if (mode != ENTER_MODE_CHROOT)
    {
      close (rootfd);
      rootfd = -1;
    }

  int status_read = -1;
  struct terminal term;
  terminal_probe (&term);
  if (mode != ENTER_MODE_USERNS)
    term.fd = -1; /* the job stays in our process group: it owns the terminal with us */
  struct userns_view view = { .name = name, .opts = opts, .binds = binds, .n_binds = n_binds,
                              .cdi = opts->devices != NULL ? &cdi : NULL,
                              .uid = getuid (), .gid = getgid (), .term = &term,
                              .root = root, .overlay = overlay ? &meta : NULL,
                              .scratch = direct ? root : NULL };
  struct job_share share;
  share_choose (cli, mode == ENTER_MODE_USERNS && !userns_off, &view, &term, &root_st, &share);
  pid_t job = mode == ENTER_MODE_CHROOT
                ? start_chroot_job (name, opts, rootfd)
                : start_userns_job (&view, &share, &status_read);
  /* The supervisor is not inside the root (remove's in-use check looks at working
   * directories too). */
  if (chdir ("/") < 0)
    die_with_error ("cannot change directory to /");
  if (status_read >= 0)
    terminal_watch (&term, job, status_read);
  struct supervise_opts sopts = { .timeout = opts->timeout, .escalate = true,
                                  .sweep = mode == ENTER_MODE_CHROOT,
                                  .on_sigio = terminal_on_sigio, .sigio_arg = &term };
  struct job_end end;
  supervise (job, &sopts, &end);
  if (status_read >= 0)
    terminal_on_sigio (&term); /* what PID 1 wrote last, SIGIO or not */
  if (term.have_end)
    end.status = term.end_status; /* else PID 1's own: 125 from a failed setup, or killed */
  terminal_restore (&term);
  share_leave (&share);
  /* A failed --save is run's own failure when the command's was none. */
  bool save_failed = cli->ephemeral && ephemeral_remove (&eph, &end) < 0;
  bind_free (binds, n_binds);
  cdi_view_clear (&cdi);
  free (root);
  if (save_failed && !end.timed_out && WIFEXITED (end.status) && WEXITSTATUS (end.status) == 0)
    exit (EXIT_TOOL_FAILURE);
  supervise_exit_like (&end);
}
