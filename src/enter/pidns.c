/* userns mode: the job runs in its own PID namespace, so that `ps`, /proc/self and the
 * many programs reading /proc work (bwrap --unshare-pid --proc /proc), and so that
 * nothing it starts can outlive it: when PID 1 of a namespace exits, the kernel SIGKILLs
 * every other process in it, daemonised (setsid, double fork) or not.
 *
 * PID 1 is ours, not the command: a namespace's init gets no signal it has no handler
 * for, so a command run as PID 1 would shrug off the SIGTERM of a cancelled job, and
 * orphans would pile up as zombies. bubblewrap does the same (do_init() in bubblewrap.c);
 * its monitor outside becomes our supervisor (supervise.c), which passes cancellation to
 * PID 1, which passes it to the command. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "enter/mounts.h"
#include "enter/pidns.h"
#include "enter/supervise.h"

void
pidns_mount_proc (const char *name)
{
  cleanup_fd int at = open ("proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (at < 0)
    return; /* no proc/ directory (or a symlink in its place): nothing to mount on */
  if (mount_on_fd ("proc", at, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    warn ("root '%s': no /proc: cannot mount a procfs on it: %s", name, strerror (errno));
}

/* Without capabilities, PID 1 is no more than the command: a process inside that is not
 * confined by Landlock (--no-landlock) can ptrace it, but gains nothing it did not have. */
void
pidns_drop_capabilities (const char *name)
{
  struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
  if (syscall (SYS_capset, &header, data) < 0)
    die_with_error ("cannot enter root '%s': cannot drop capabilities", name);
}

void
pidns_init (pid_t command, int status_fd, bool report_stops)
{
  /* The supervisor outside times and escalates; it relays the command's stops to the
   * caller's shell (terminal.c). */
  struct supervise_opts opts = { .report_stops = report_stops, .stops_fd = status_fd };
  struct job_end end;
  supervise (command, &opts, &end);
  if (write_all (status_fd, &end.status, sizeof end.status) < 0)
    _exit (EXIT_TOOL_FAILURE);
  _exit (0);
}
