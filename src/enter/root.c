/* Steps 6 and 7 of entering (enter.c): resolve the root, then go into it. The root is
 * CLI's NAME, or for run --ephemeral a throwaway root made now (ephemeral.c), named for the
 * run or for its Slurm step: from here on both are a name, a directory and metadata, and no
 * later step asks which it was but to remove it at the end. Its metadata says what the
 * later steps need: the image it was made from (for run's default command, its
 * environment and working directory) and whether it is an overlay root, which exists only
 * as a mount in a job's namespaces. Going into it is one open with O_PATH|O_NOFOLLOW and
 * an fchdir: the working directory is inside the new root before it becomes the root, and
 * no descriptor of a directory outside it is open (the kernel checks neither); in chroot
 * mode the job enters through that descriptor, so that the path is not walked again. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/overlay.h"
#include "common/roots.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/hostfiles.h"
#include "enter/root.h"

void
root_resolve (const struct cli *cli, bool userns, struct enter_root *r)
{
  r->ephemeral = cli->ephemeral;
  r->name = cli->name;
  if (cli->ephemeral)
    {
      ephemeral_create (cli, &r->eph, userns);
      r->name = r->eph.name;
    }
  r->direct = cli->ephemeral && r->eph.direct;
  /* A direct throwaway root has no directory of its own on the host: the job's tmpfs is
   * mounted on the staging directory, where the supervisor waits until the clone. */
  r->path = r->direct ? xstrdup (r->eph.paths.staging) : roots_existing_path (r->name, "enter");
  verbose ("root '%s': %s", r->name, r->path);
  r->have_meta = r->direct || roots_read_meta (r->name, &r->meta);
  if (r->direct)
    {
      r->meta = r->eph.meta; /* R's now: the run's metadata */
      r->eph.meta = (struct meta) { 0 };
    }
  r->image = r->have_meta && r->meta.image.digest != NULL ? &r->meta.image : NULL;
  r->overlay = r->have_meta && overlay_is_root (&r->meta);
}

int
root_open (const struct enter_root *r, enum enter_mode mode, const struct enter_opts *opts,
           struct stat *st)
{
  if (!opts->no_host_dns && mode == ENTER_MODE_CHROOT)
    hostfiles_refresh_copies (r->name, r->path);
  int rootfd = open (r->path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rootfd < 0)
    die_with_error ("cannot enter root '%s': cannot open %s", r->name, r->path);
  if (fchdir (rootfd) < 0 || fstat (rootfd, st) < 0)
    die_with_error ("cannot enter root '%s': cannot change directory to %s", r->name, r->path);
  /* chroot mode enters through it (start_chroot_job); userns mode mounts on the path. */
  if (mode != ENTER_MODE_CHROOT)
    {
      close (rootfd);
      rootfd = -1;
    }
  return rootfd;
}

int
root_leave (struct enter_root *r, const struct job_end *end)
{
  int ret = r->ephemeral ? ephemeral_remove (&r->eph, end) : 0;
  free (r->path);
  r->path = NULL;
  return ret;
}
