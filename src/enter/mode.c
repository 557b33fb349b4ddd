/* Step 5 of entering (enter.c): choose the mode, before anything is made. chroot mode is
 * a chroot and nothing else: no namespace, no mount, what chroot(8) costs; it needs a
 * kernel that lets us chroot (root, or the patched kernel's fs.unprivileged_chroot=1).
 * userns mode makes the job user, mount and PID namespaces of its own, with a view of the
 * root built in them (view.c). auto takes chroot where the kernel allows it, else userns,
 * by asking the kernel rather than by trying: the supervisor must stay outside the root,
 * so the chroot happens in the child, too late to fall back. What only a mount gives
 * (--bind, --device, an overlay root) makes auto userns or is refused in chroot mode,
 * before the root is touched. */
#include <string.h>
#include <unistd.h>

#include "common/userns.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/mode.h"

/* Where the kernel lets us chroot without a user namespace: as root, or with the patched
 * kernel's fs.unprivileged_chroot=1. auto mode decides by this rather than by trying:
 * the supervisor must stay outside the root, so the chroot happens in the child.
 * *USERNS_OFF: user.max_user_namespaces is 0, so no namespaces can be shared or kept. */
static enum enter_mode
resolve_mode (enum enter_mode mode, bool *userns_off)
{
  cleanup_free char *v = read_first_line (SYSCTL_UNPRIVILEGED_CHROOT);
  cleanup_free char *userns = read_first_line (SYSCTL_MAX_USER_NAMESPACES);
  *userns_off = userns != NULL && strcmp (userns, "0") == 0;
  verbose ("sysctl fs.unprivileged_chroot=%s, user.max_user_namespaces=%s, euid %ld",
           v != NULL ? v : "(absent: an unpatched kernel)", userns != NULL ? userns : "(absent)",
           (long) geteuid ());
  if (mode != ENTER_MODE_AUTO)
    {
      verbose ("mode %s: --mode %s", mode == ENTER_MODE_CHROOT ? "chroot" : "userns",
               mode == ENTER_MODE_CHROOT ? "chroot" : "userns");
      return mode;
    }
  bool chroot_works = userns_chroot_allowed ();
  verbose ("mode %s: auto, %s", chroot_works ? "chroot" : "userns",
           geteuid () == 0 ? "running as root: chroot needs no namespace"
           : chroot_works ? "fs.unprivileged_chroot=1 lets us chroot"
                          : "chroot needs fs.unprivileged_chroot=1: a user namespace instead");
  return chroot_works ? ENTER_MODE_CHROOT : ENTER_MODE_USERNS;
}

enum enter_mode
mode_choose (const struct enter_opts *opts, bool *userns_off, struct bind **binds,
             size_t *n_binds)
{
  enum enter_mode mode = resolve_mode (opts->mode, userns_off);
  *binds = bind_parse_all (opts->binds, n_binds);
  /* A device is given by a bind in the job's own mount namespace: auto mode makes one. */
  if (opts->devices != NULL && mode == ENTER_MODE_CHROOT && opts->mode == ENTER_MODE_CHROOT)
    die ("--device: chroot mode makes no mounts, so it gives no device: use --mode userns or "
         "auto where user namespaces work");
  if (opts->devices != NULL && mode == ENTER_MODE_CHROOT)
    {
      verbose ("mode userns: --device needs a mount namespace of the job's own");
      mode = ENTER_MODE_USERNS;
    }
  if (*n_binds > 0 && mode == ENTER_MODE_CHROOT)
    die ("--bind: chroot mode makes no mounts (%s): use --mode userns where user namespaces "
         "work, or keep the files inside the root (see 'enter-devroot path')",
         opts->mode == ENTER_MODE_AUTO ? "auto mode chose it on this kernel" : "--mode chroot");
  return mode;
}

enum enter_mode
mode_for_root (enum enter_mode mode, const struct enter_opts *opts, const char *name,
               bool overlay)
{
  /* An overlay root exists only as a mount in the job's namespaces: never in chroot mode,
   * and auto mode enters it in a user namespace whatever chroot would allow. */
  if (overlay && mode == ENTER_MODE_CHROOT && opts->mode == ENTER_MODE_CHROOT)
    die ("cannot enter root '%s' in chroot mode: it is an overlay root, which needs user "
         "namespaces (chroot mode makes no mounts): use --mode userns or auto", name);
  if (overlay)
    mode = ENTER_MODE_USERNS;
  return mode;
}
