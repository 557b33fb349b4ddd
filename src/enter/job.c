/* Step 8 of entering (enter.c): start the job. The supervisor (supervise.c) stays outside
 * the root and every namespace of the job, so that it can always pass signals on, enforce
 * --timeout, kill what the job leaves and remove a throwaway root, whatever the command
 * does; only its child enters. In chroot mode the child is a plain fork that makes the
 * root's descriptor its root (fchroot(2), else chroot(".")) and becomes the command. In userns mode it is a clone into new
 * user, mount and PID namespaces (or into the ones a keeper shares: share.c), where it
 * builds the root's view (view.c), chroots, and as PID 1 forks the command and reaps
 * (pidns.c): nothing the command starts outlives the job. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "common/userns.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/command.h"
#include "enter/job.h"
#include "enter/mpi.h"
#include "enter/pidns.h"
#include "enter/supervise.h"
#include "enter/terminal.h"

/* PID 1's end of the pipe that carries the command's wait status to the supervisor. */
#define STATUS_FD (STDERR_FILENO + 1)

/* A child of the supervisor: killed if the supervisor dies (SIGKILL cannot be passed on),
 * no fd from LOWFD up (the run lock of a throwaway root). */
static void
become_job_child (int lowfd)
{
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    die_with_error ("cannot set the parent-death signal");
  close_fds_except (lowfd, mpi_pmi_fd ());
}

pid_t
start_chroot_job (const char *name, const struct enter_opts *opts, int rootfd)
{
  supervise_become_subreaper ();
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    die_with_error ("cannot enter root '%s': fork", name);
  if (pid > 0)
    {
      close (rootfd);
      return pid;
    }
  /* ROOTFD is above stderr: keep it open past the close of the others. */
  if (dup2 (rootfd, STDERR_FILENO + 1) < 0)
    die_with_error ("cannot enter root '%s': dup2", name);
  become_job_child (STDERR_FILENO + 2);
  supervise_restore_signals ();
  const char *how;
  int err = chroot_to_fd (STDERR_FILENO + 1, &how) < 0 ? errno : 0;
  close (STDERR_FILENO + 1);
  if (err != 0)
    {
      cleanup_free char *why = chroot_refused_reason (err);
      die ("cannot enter root '%s': chroot refused (%s): see 'enter-devroot doctor'", name,
           why);
    }
  verbose ("chroot mode: no namespaces; entered root '%s' with %s", name, how);
  run_command (name, opts);
}

/* In namespaces made or joined, the working directory the root: chroot, drop the
 * capabilities, fork the command and wait for it as PID 1 does (pidns.c). In joined
 * namespaces this process is outside the PID namespace, so the command is not killed
 * with it: the parent-death signal does that. */
__attribute__((noreturn)) static void
chroot_and_wait (const char *name, const struct enter_opts *opts, bool joined,
                 bool report_stops)
{
  verbose ("chroot into root '%s'", name);
  if (chroot (".") < 0)
    die_with_error ("cannot enter root '%s': chroot inside a user namespace", name);
  pidns_drop_capabilities (name);

  /* vfork: this process only waits, and copying its address space for a child that execs
   * at once was a tenth of a warm run (bench/warm-run). The child shares our memory until
   * its exec: what it allocates is left to us, and a failure _exit()s without cleanups or
   * atexit handlers (set_die_at_once, whose flag this process then shares: right for it
   * too, as the cleanups it inherited are the supervisor's). Its credentials, Landlock
   * domain, seccomp filter, working directory and file descriptors are its own. */
  pid_t command = vfork ();
  if (command < 0)
    die_with_error ("cannot enter root '%s': fork", name);
  if (command == 0)
    {
      set_die_at_once ();
      if (joined && prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        die_with_error ("cannot set the parent-death signal");
      close (STATUS_FD);
      supervise_restore_signals ();
      run_command (name, opts);
    }
  pidns_init (command, STATUS_FD, report_stops);
}

pid_t
start_userns_job (struct userns_view *view, const struct job_share *share, int *status_read)
{
  const char *name = view->name;
  const struct stepns *step = share->shared ? &share->step : NULL;
  const struct stepns *base = share->based ? &share->base : NULL;
  int status_pipe[2];
  if (pipe2 (status_pipe, O_CLOEXEC) < 0)
    die_with_error ("cannot enter root '%s': pipe", name);
  fflush (NULL);
  bool warm = step != NULL && step->idle > 0;
  const struct stepns *joined = warm ? step : step == NULL ? base : NULL;
  /* clone as fork does (no stack: the child runs on a copy of ours), as bubblewrap does. */
  int flags = joined != NULL ? CLONE_NEWNS | CLONE_NEWPID
              : step != NULL ? 0 : CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID;
  if (joined != NULL)
    {
#if defined(__SANITIZE_ADDRESS__)
      /* LeakSanitizer's check at exit stops the world with a tracer task, which in the
       * namespaces we are about to join could not trace us: the check would spin forever.
       * Check now; the exit check is then skipped. */
      __lsan_do_leak_check ();
#endif
      stepns_join_view (joined, name);
    }
  pid_t pid = (pid_t) syscall (SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid < 0)
    die_userns_unavailable (view, errno);
  if (pid > 0)
    {
      close (status_pipe[1]);
      *status_read = status_pipe[0];
      return pid;
    }

  if (step != NULL && !warm)
    stepns_join (step, name);
  verbose (warm ? "in the kept user and mount namespaces, new mount and PID namespaces (this "
                  "process is their PID 1)"
           : joined != NULL ? "in the overlay root's holder's user and mount namespaces, new "
                              "mount and PID namespaces (this process is their PID 1)"
           : step != NULL ? "joined the Slurm step's user, mount and PID namespaces"
                          : "new user, mount and PID namespaces (this process is their PID 1)");
  if (dup2 (status_pipe[1], STATUS_FD) < 0)
    die_with_error ("cannot enter root '%s': dup2", name);
  become_job_child (STATUS_FD + 1);
  if (warm)
    {
      chdir_root (view);
      pidns_mount_proc (name); /* this job's PID namespace, over the keeper's */
    }
  else if (step == NULL)
    {
      terminal_take (view->term);
      build_userns_view (view);
    }
  else
    chdir_root (view);
  chroot_and_wait (name, view->opts, step != NULL && !warm,
                   step == NULL && view->term->fd >= 0);
}
