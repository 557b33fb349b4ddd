/* `enter-devroot doctor`: what this kernel allows, and which mode `auto` will use.
 * Every capability is probed for real in a forked child (a probe chroots and unshares,
 * which the parent must not), never inferred from version numbers. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/helper.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"
#include "enter/confine.h"
#include "enter/doctor.h"
#include "common/overlay.h"
#include "common/userns.h"

enum probe
{
  PROBE_CHROOT,
  PROBE_USERNS,
};

/* In the child: 0 on success, else the errno that stopped it. The chroot probe enters as
 * enter does in chroot mode (job.c: fchroot(2) on the directory's descriptor, else
 * chroot(".")). */
static int
probe_in_child (enum probe what, const char *dir)
{
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || unshare (CLONE_FS) < 0)
    return errno;
  int fd = open (dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fchdir (fd) < 0)
    return errno;
  if (what == PROBE_USERNS && userns_enter_identity () < 0)
    return errno;
  const char *how;
  if ((what == PROBE_USERNS ? chroot (".") : chroot_to_fd (fd, &how)) < 0)
    return errno;
  return 0;
}

/* 0 when the probe worked, else the errno it failed with. */
static int
probe (enum probe what, const char *dir)
{
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    die_with_error ("doctor: fork");
  if (pid == 0)
    _exit (probe_in_child (what, dir));
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      die_with_error ("doctor: waitpid");
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return EINTR;
}

static void
line (const char *key, const char *value)
{
  printf ("%-46s %s\n", key, value);
}

static void
sysctl_line (const char *key, const char *path, const char *absent)
{
  cleanup_free char *v = read_first_line (path);
  line (key, v != NULL ? v : absent);
}

/* A private, empty directory to chroot into: in the store when it can be made, else /tmp.
 * Its name starts with '_' so the stale-staging cleaner never takes it for a devroot. */
static char *
make_probe_dir (void)
{
  struct store_paths p;
  store_paths_from_env (&p);
  char *dir = NULL;
  if (mkdir_p (p.staging, 0700) == 0)
    {
      dir = xasprintf ("%s/_doctor.XXXXXX", p.staging);
      if (mkdtemp (dir) == NULL)
        {
          free (dir);
          dir = NULL;
        }
    }
  if (dir == NULL)
    {
      const char *tmp = getenv ("TMPDIR");
      dir = xasprintf ("%s/enter-devroot-doctor.XXXXXX", tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
      if (mkdtemp (dir) == NULL)
        die_with_error ("doctor: cannot create a probe directory");
    }
  store_paths_clear (&p);
  return dir;
}

static char *
landlock_abi (int abi)
{
  if (abi >= 1)
    return xasprintf ("%d", abi);
  if (abi == -EOPNOTSUPP)
    return xstrdup ("unavailable (disabled at boot: add landlock to lsm=)");
  if (abi == -ENOSYS)
    return xstrdup ("unavailable (kernel built without Landlock)");
  return xasprintf ("unavailable (%s)", strerror (-abi));
}

int
doctor_run (void)
{
  struct utsname u;
  if (uname (&u) < 0)
    die_with_error ("doctor: uname");
  cleanup_free char *dir = make_probe_dir ();
  int chroot_err = probe (PROBE_CHROOT, dir);
  int userns_err = probe (PROBE_USERNS, dir);
  if (rmdir (dir) < 0)
    warn ("cannot remove probe directory %s: %s", dir, strerror (errno));

  cleanup_free char *who = xasprintf ("uid %lu%s", (unsigned long) getuid (),
                                      getuid () == 0 ? " (root: plain chroot)" : "");
  line ("kernel release", u.release);
  line ("running as", who);

  cleanup_free char *chroot_result = chroot_err == 0 ? xstrdup ("works")
    : xasprintf ("refused: %s", strerror (chroot_err));
  line ("no_new_privs chroot (mode chroot)", chroot_result);
  line ("mode chroot enters with", fchroot_available ()
        ? "fchroot(2) on the root's descriptor (the path is not walked again)"
        : "chroot(\".\") (this kernel has no fchroot(2): Linux 7.3 added it)");
  sysctl_line ("fs.unprivileged_chroot", SYSCTL_UNPRIVILEGED_CHROOT,
               "absent (kernel without the unprivileged-chroot patch)");

  cleanup_free char *userns_result = NULL;
  if (userns_err == 0)
    userns_result = xstrdup ("work");
  else
    {
      cleanup_free char *why = userns_unavailable_reason (userns_err);
      userns_result = xasprintf ("unavailable: %s", why);
    }
  line ("user namespaces (mode userns)", userns_result);
  sysctl_line ("user.max_user_namespaces", SYSCTL_MAX_USER_NAMESPACES, "absent");
  sysctl_line ("kernel.unprivileged_userns_clone", SYSCTL_UNPRIVILEGED_USERNS_CLONE, "absent");
  sysctl_line ("kernel.apparmor_restrict_unprivileged_userns", SYSCTL_APPARMOR_RESTRICT_USERNS,
               "absent");

  int abi = confine_landlock_abi ();
  cleanup_free char *landlock = landlock_abi (abi);
  line ("Landlock ABI", landlock);
  line ("enter confines with Landlock", confine_landlock_summary (abi));
  line ("enter blocks terminal injection", "TIOCSTI, TIOCLINUX (seccomp)");

  cleanup_free char *helper = store_helper_path ();
  cleanup_free char *helper_state = access (helper, X_OK) == 0 ? xstrdup (helper)
    : xasprintf ("%s: %s (create, templates, fetch and cache will fail)", helper,
                 strerror (errno));
  line ("create and fetch run", helper_state);
  cleanup_free char *cdi = cdi_helper_path ();
  cleanup_free char *cdi_state = access (cdi, X_OK) == 0 ? xstrdup (cdi)
    : xasprintf ("%s: %s (--device will fail)", cdi, strerror (errno));
  line ("--device runs", cdi_state);

  const char *auto_mode = chroot_err == 0 ? "chroot" : userns_err == 0 ? "userns" : NULL;
  line ("mode auto uses", auto_mode != NULL ? auto_mode : "nothing: no mode works here");
  line ("/proc inside, mode chroot", "absent (no mounts without a user namespace)");
  line ("/proc inside, mode userns", "the job's own (a PID namespace per enter/run)");
  line ("terminal inside, mode chroot",
        "inherited only: no /dev/tty, /dev/pts nor /dev/ptmx (no device nodes without "
        "privilege): script, tmux, ssh -t fail, tty says 'not a tty'");
  line ("terminal inside, mode userns",
        "yours as /dev/tty and /dev/console, owned by the job (job control); the root's own "
        "/dev/pts and /dev/ptmx");
  line ("--bind", userns_err == 0 ? "works (mode userns)" : "unavailable: needs mode userns");
  line ("--device (CDI)", userns_err == 0 ? "works (mode userns; auto mode picks it)"
                                          : "unavailable: needs mode userns");

  struct store_paths p;
  store_paths_from_env (&p);
  /* create --overlay needs an unprivileged userxattr overlay mount (overlay.h); throwaway
   * roots use one wherever it mounts. */
  bool overlay = userns_err == 0 && overlay_probe (&p);
  line ("overlay roots (userxattr)",
        overlay ? "work: create --overlay shares the image's layers; run --ephemeral uses them"
                : "unavailable: create makes flat roots only (the default)");
  cleanup_free char *reaped = xasprintf ("%d", reap_abandoned_ephemeral (&p));
  store_paths_clear (&p);
  line ("abandoned throwaway roots removed", reaped);
  if (auto_mode == NULL)
    {
      fflush (stdout);
      fprintf (stderr, "%s: doctor: no way to enter a devroot on this system: enable "
               "fs.unprivileged_chroot (patched kernel) or unprivileged user namespaces\n",
               PROGRAM_NAME);
      return EXIT_TOOL_FAILURE;
    }
  return 0;
}
