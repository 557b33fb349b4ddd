/* Chroot mode's stand-in for the Actions runner's bind mounts: the runner's volumes
 * (systemMountVolumes, userMountVolumes) are copied into the devroot before each step and
 * the writable ones copied back after it, so the runner sees what the step wrote.
 *
 * Copying in: the host directory SOURCE is mirrored onto TARGET inside the root (new and
 * changed files written, files gone from SOURCE removed). Copying back: TARGET inside the
 * root is mirrored onto SOURCE the same way, for volumes not readOnly.
 * A volume nested in another (/__w/_temp in /__w; on the host, _temp/_github_home in
 * _temp) is left to its own copy by the outer one: its mount would shadow that part of the
 * outer one, and two copies of one directory would undo each other's removals.
 *
 * The root's side is the step's: code inside may plant symlinks, FIFOs, hard links, deep
 * trees, or swap names while we read. It is read only through walk_tree (common/walk.h:
 * fd-relative, never through a symlink, every opened file checked to be what was listed;
 * a name that changes while being read stops the copy with one line). Every write, on
 * either side, is fd-relative beneath the volume's directory, one component at a time,
 * never through a symlink: a file or symlink is made under a temporary name and renamed
 * over the old one (which is replaced, never written through); symlinks are copied as
 * symlinks; devices, FIFOs and sockets are not copied (one warning line per volume).
 * Unchanged files (same type, size, mode and modification time) are not copied again, so
 * a step costs a walk of the volumes plus the data that changed. Hard links are copied as
 * separate files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct ci_volume
{
  char *source;   /* the host directory */
  char *target;   /* its absolute path inside the root, normalised: "/__w/_temp" */
  bool read_only; /* never copied back */
};

/* Whether TARGET is a path a volume may have inside the root: absolute, not "/", no "."
 * or ".." component. Sets *NORMAL (owned) to it without repeated or trailing slashes. */
bool ci_volume_target_valid (const char *target, char **normal);

/* Copy the N volumes V into the root directory ROOT. Dies with one line on failure. */
void ci_volumes_copy_in (const char *root, const struct ci_volume *v, size_t n);

/* Copy back the writable ones. A volume whose target the step removed or replaced is not
 * copied back (one line; nothing of its host directory is removed); returns false then. */
bool ci_volumes_copy_back (const char *root, const struct ci_volume *v, size_t n);
