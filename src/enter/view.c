/* Step 8 of entering (enter.c), in userns mode: build the job's view of the root in its new
 * user and mount namespaces, before it chroots there. The maps make the caller's uid and
 * gid themselves; the mounts are made private first, so that nothing mounted here
 * propagates back to the host; then the root itself where it is a mount of the job's own
 * (an overlay root, a throwaway root of a cached image), and what the job sees in it: its
 * own /dev, /proc, the host's DNS files, every --bind and --device. Every mount is in the
 * new mount namespace: it goes with the namespace however the job ends, and the host
 * keeps nothing of it. The same view is what a Slurm step's tasks and warm runs share (share.c),
 * made once by their keeper (stepns.c). */
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/account.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/userns.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/hostfiles.h"
#include "enter/mounts.h"
#include "enter/pidns.h"
#include "enter/view.h"

void
die_userns_unavailable (const struct userns_view *v, int userns_errno)
{
  cleanup_free char *userns_why = userns_unavailable_reason (userns_errno);
  if (v->overlay != NULL)
    die ("cannot enter root '%s': it is an overlay root, which needs user namespaces "
         "(unavailable: %s): see 'enter-devroot doctor'", v->name, userns_why);
  if (v->opts->mode != ENTER_MODE_AUTO)
    die ("cannot enter root '%s': user namespaces unavailable (%s): see "
         "'enter-devroot doctor'", v->name, userns_why);
  cleanup_free char *chroot_why = chroot_refused_reason (EPERM);
  die ("cannot enter root '%s': chroot refused (%s) and user namespaces unavailable "
       "(%s): see 'enter-devroot doctor'", v->name, chroot_why, userns_why);
}

/* An overlay root: its overlay mounted on roots/NAME, the working directory moved from the
 * empty mount point underneath into it. */
static void
mount_overlay_root (const struct userns_view *v)
{
  struct store_paths p;
  store_paths_from_env (&p);
  /* A throwaway root's writes need no sync when the job ends (overlay.c). */
  overlay_mount_root (&p, v->name, v->overlay, str_has_prefix (v->name, EPHEMERAL_PREFIX));
  store_paths_clear (&p);
  int fd = open (v->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fchdir (fd) < 0)
    die_with_error ("cannot enter root '%s': cannot change directory to its overlay %s",
                    v->name, v->root);
  close (fd);
}

/* run --ephemeral of a cached image (ephemeral.h): a tmpfs on the store's staging directory,
 * in this mount namespace only, holds the overlay's upper, work directory and mount point;
 * the layers are mounted there directly, with create's additions (the account, the image's
 * WorkingDir) written through it. Nothing of it is on the host: it goes with the job's
 * namespaces, however the job ends. */
static void
mount_ephemeral_root (const struct userns_view *v)
{
  const char *dir = v->scratch;
  verbose ("mount a tmpfs on %s for the throwaway root's upper", dir);
  if (mount ("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0)
    die_with_error ("cannot enter root '%s': cannot mount a tmpfs on %s", v->name, dir);
  size_t n = strv_length (v->overlay->layers);
  cleanup_free char *top = overlay_layer_tree (v->overlay->layers[n - 1]);
  cleanup_free char *upper = xasprintf ("%s/upper", dir);
  cleanup_free char *work = xasprintf ("%s/work", dir);
  cleanup_free char *target = xasprintf ("%s/root", dir);
  struct stat st;
  /* The merged root directory shows the upper's mode: the top layer's, as create gives. */
  if (top == NULL || stat (top, &st) < 0 || mkdir (upper, 0700) < 0
      || chmod (upper, st.st_mode & 07777) < 0 || mkdir (work, 0700) < 0
      || mkdir (target, 0700) < 0)
    die_with_error ("cannot enter root '%s': cannot make its upper in the tmpfs on %s",
                    v->name, dir);
  overlay_mount (v->name, target, v->overlay->layers, dir, true);
  int fd = open (target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fchdir (fd) < 0)
    die_with_error ("cannot enter root '%s': cannot change directory to its overlay %s",
                    v->name, target);
  account_ensure_user (fd);
  const char *workdir = v->overlay->image.workdir;
  if (workdir != NULL && workdir[0] != '\0' && mkdir_p_beneath (fd, workdir) < 0)
    die_with_error ("cannot enter root '%s': cannot create the image's WorkingDir %s",
                    v->name, workdir);
  close (fd);
}

/* The identity maps and private mounts of new user and mount namespaces. */
static void
make_userns_private (const struct userns_view *v)
{
  if (userns_write_identity_maps (v->uid, v->gid) < 0)
    die_userns_unavailable (v, errno);
  verbose ("uid map %ld %ld 1, gid map %ld %ld 1", (long) v->uid, (long) v->uid,
           (long) v->gid, (long) v->gid);
  /* Our mounts must not propagate back to the caller's namespace. (The kernel ignores the
   * type of a propagation change or a bind; "none" rather than NULL keeps valgrind quiet.) */
  verbose ("mount / private, recursively (nothing propagates back to the host)");
  if (mount ("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
    die_with_error ("cannot enter root '%s': cannot make the mounts private", v->name);
}

void
chdir_root (const struct userns_view *v)
{
  int fd = open (v->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fchdir (fd) < 0)
    die_with_error ("cannot enter root '%s': cannot change directory to %s", v->name, v->root);
  close (fd);
}

void
build_userns_view (void *arg)
{
  const struct userns_view *v = arg;
  if (v->in_base)
    chdir_root (v);
  else
    make_userns_private (v);
  if (v->scratch != NULL)
    mount_ephemeral_root (v);
  else if (v->overlay != NULL && !v->in_base)
    mount_overlay_root (v);
  if (v->cdi != NULL)
    cdi_prepare (v->name, v->cdi, v->scratch == NULL && v->overlay == NULL, v->root);
  bind_check_all (v->name, v->binds, v->n_binds);
  mount_dev (v->name, v->term);
  pidns_mount_proc (v->name);
  if (!v->opts->no_host_dns)
    hostfiles_bind (v->name);
  bind_mount_all (v->name, v->binds, v->n_binds);
  if (v->cdi != NULL)
    cdi_apply (v->name, v->cdi);
}

void
build_overlay_holder (void *arg)
{
  const struct userns_view *v = arg;
  make_userns_private (v);
  mount_overlay_root (v);
}
