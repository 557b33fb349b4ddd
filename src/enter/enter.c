/* Entering a devroot, in this order (each step says why, and names the file that does
 * it; enter_devroot below calls them in this order and supervises the job itself):
 *
 *   1. refuse setuid/setgid execution (done first thing in main);
 *   2. close every fd above 2: a leaked directory fd is a way out of any chroot
 *      (runc CVE-2024-21626); the kernel does not check for one. The one exception is
 *      the socket PMI_FD names, an MPI task's line to its launcher (mpi.c);
 *   3. PR_SET_NO_NEW_PRIVS: nothing run inside can gain privilege through setuid/setgid
 *      files or file capabilities planted in the root; the patched kernel requires it;
 *   4. unshare(CLONE_FS): the root and cwd we change are ours alone even if a library
 *      started a thread sharing them (libcurl's threaded resolver);
 *   5. pick the mode (mode.c): auto is chroot where this kernel lets us chroot (root, or
 *      fs.unprivileged_chroot=1), else a user namespace, which --device needs too (its
 *      nodes are binds: cdi.c); check every --bind (userns mode only: bind.c) before
 *      anything is created;
 *   6. resolve the root (root.c): NAME, or with run --ephemeral a throwaway root created
 *      through the store helper (ephemeral.c); its metadata says which image it was made
 *      from and whether it is an overlay root, which only userns mode enters (mode.c);
 *   7. open the root with O_PATH|O_NOFOLLOW, fchdir into it (root.c): the working
 *      directory is inside the new root before it becomes the root, and no fd to a
 *      directory outside is open (the kernel checks neither); in chroot mode, first copy
 *      the host's resolv.conf and hosts in where the root's own is missing, empty or our
 *      last copy (hostfiles.c); the descriptor is kept for step 8 in chroot mode only;
 *   8. start the job (job.c), the signals the supervisor waits for blocked first
 *      (supervise.c):
 *      chroot mode: become a child subreaper, fork; the child makes the root's descriptor
 *      its root with fchroot(2) where the kernel has it (Linux 7.3: the path opened in
 *      step 7 is not walked again), else chroot("."), and closes it;
 *      userns mode: clone a child into new user, mount and PID namespaces (or into those
 *      an overlay root's holder, a Slurm step's tasks or a warm run share: share.c,
 *      stepns.c); on a terminal that is ours, it takes a process group of its own and
 *      makes it the terminal's foreground group (terminal.c: ours does not exist in its
 *      PID namespace, and a shell needs one it can see for job control); it builds the
 *      root's view (view.c): it maps the caller's uid and gid to themselves, makes its
 *      mounts private, mounts a tmpfs /dev holding the host's null, zero, full, random,
 *      urandom and tty, a tmpfs /dev/shm as large as the host's, a devpts of its own and
 *      the user's terminal as console (mount_dev), a fresh /proc (pidns.c), the host's
 *      resolv.conf and hosts read-only (hostfiles.c), every --bind (bind.c: all checked
 *      before anything is created) and for an MPI task its PMIx server's directories
 *      (mpi.c) inside the root; it chroot(".")s, drops its capabilities and, as PID 1,
 *      forks the command and reaps (pidns.c);
 *   9. in the command (command.c): check that getcwd() is "/" and "." is "/" (the runc
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
 *  10. the supervisor (enter_devroot, supervise.c), which never entered the root nor, but
 *      for a warm run's or an overlay root's holder's (share.c, stepns.c), any namespace:
 *      pass SIGINT, SIGTERM and SIGHUP on, enforce --timeout, relay a stop of the command
 *      to the caller's shell and resume it with us (terminal.c), wait; in chroot mode kill
 *      whatever the job left running (in userns mode the PID namespace died with its
 *      PID 1); take the terminal back; remove a throwaway root (root.c); exit as the
 *      command did.
 */
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "enter/bind.h"
#include "enter/cdi.h"
#include "enter/command.h"
#include "enter/enter.h"
#include "enter/job.h"
#include "enter/mode.h"
#include "enter/mpi.h"
#include "enter/root.h"
#include "enter/share.h"
#include "enter/supervise.h"
#include "enter/terminal.h"
#include "enter/view.h"

void
enter_devroot (const struct cli *cli)
{
  /* CLI's options, and what the steps below add to them: --device's variables, the
   * image the root was made from, whether run runs the image's command. */
  struct enter_opts opts = cli->enter;
  /* 2-4. No descriptor but the standard ones (and PMI_FD's), no new privileges, a
   * filesystem context of our own. */
  close_fds_except (STDERR_FILENO + 1, mpi_pmi_fd ());
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    die_with_error ("cannot set no_new_privs");
  if (unshare (CLONE_FS) < 0)
    die_with_error ("cannot unshare the filesystem attributes");

  /* 5. The mode (mode.c), and every --bind and --device resolved for it. */
  bool userns_off;
  size_t n_binds;
  struct bind *binds;
  enum enter_mode mode = mode_choose (&opts, &userns_off, &binds, &n_binds);
  /* Not a local, as for root below: the job's children never return. */
  static struct cdi_view cdi;
  if (opts.devices != NULL)
    {
      cdi_resolve (opts.devices, &cdi);
      opts.env.device_env = cdi.edits.env;
    }

  /* 6. The root (root.c): NAME, or a throwaway one made now; the mode it needs. */
  supervise_block_signals ();
  /* Not a local: the children never return, so the compiler may drop a local's slot, and
   * the path and metadata (its image fields are used until the exec) are unreachable (a
   * leak to valgrind) when a failed exec exits. */
  static struct enter_root root;
  root_resolve (cli, mode == ENTER_MODE_USERNS, &root);
  if (root.image != NULL)
    opts.image = root.image;
  mode = mode_for_root (mode, &opts, root.name, root.overlay);
  command_choose (cli, root.name, &opts);

  /* 7. Into the root's directory (root.c); an MPI task's view of its PMIx server first:
   * optional binds, after the user's. */
  if (mode == ENTER_MODE_USERNS)
    mpi_add_binds (&binds, &n_binds);
  struct stat root_st;
  int rootfd = root_open (&root, mode, &opts, &root_st);

  /* 8. The job: in userns mode, the view of the root it is given (view.c) and the
   * namespaces it shares (share.c); started (job.c), its child runs step 9 (command.c). */
  struct terminal term;
  terminal_probe (&term);
  if (mode != ENTER_MODE_USERNS)
    term.fd = -1; /* the job stays in our process group: it owns the terminal with us */
  struct userns_view view = { .name = root.name, .opts = &opts, .binds = binds,
                              .n_binds = n_binds, .cdi = opts.devices != NULL ? &cdi : NULL,
                              .uid = getuid (), .gid = getgid (), .term = &term,
                              .root = root.path, .overlay = root.overlay ? &root.meta : NULL,
                              .scratch = root.direct ? root.path : NULL };
  struct job_share share;
  share_choose (cli, mode == ENTER_MODE_USERNS && !userns_off, &view, &term, &root_st, &share);
  int status_read = -1;
  pid_t job = mode == ENTER_MODE_CHROOT
                ? start_chroot_job (root.name, &opts, rootfd)
                : start_userns_job (&view, &share, &status_read);

  /* 10. The supervisor (supervise.c), which is not inside the root (remove's in-use check
   * looks at working directories too). */
  if (chdir ("/") < 0)
    die_with_error ("cannot change directory to /");
  if (status_read >= 0)
    terminal_watch (&term, job, status_read);
  struct supervise_opts sopts = { .timeout = opts.timeout, .escalate = true,
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
  bool save_failed = root_leave (&root, &end) < 0;
  bind_free (binds, n_binds);
  cdi_view_clear (&cdi);
  if (save_failed && !end.timed_out && WIFEXITED (end.status) && WEXITSTATUS (end.status) == 0)
    exit (EXIT_TOOL_FAILURE);
  supervise_exit_like (&end);
}
