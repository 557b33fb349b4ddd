/* --device VENDOR/CLASS=NAME: CDI devices (the Container Device Interface) given to a
 * userns-mode job. enter-devroot-cdi reads the specs (JSON, YAML) and says what the devices
 * do to the root (common/cdi-edits.h); this file does it, in the job's mount namespace:
 *
 *   - each device node: the host's node bound on its path (the root's /dev is the job's own
 *     tmpfs, mount_dev), shallow, nosuid and noexec; never a node made (mknod): what the
 *     job gets is what the host has, with the host's permissions;
 *   - each mount: a bind of the host path, walked and created as --bind's destination is
 *     (bind.h: never through a symlink of the root), read-only, nosuid and nodev unless the
 *     spec's options say otherwise;
 *   - the variables: into the command's environment, over the image's, under --env;
 *   - the hooks, last (hooks as an OCI runtime runs them: src/cdi/hooks.h): the root made a
 *     mount point of its own (a flat root is a directory: bound on itself, as runc does, so
 *     that a hook may pivot_root into it, as nvidia-cdi-hook update-ldcache does), an empty
 *     tmpfs on the store's cdi-bundle/ directory for the bundle, and enter-devroot-cdi hooks
 *     run there with the capabilities of the job's user namespace passed on (ambient): a
 *     hook makes namespaces and mounts as it would under a rootless runtime. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/cdi-edits.h"
#include "enter/bind.h"

struct cdi_view
{
  struct cdi_edits edits;
  char *blob;          /* the edits as enter-devroot-cdi wrote them, for its hooks */
  size_t blob_len;
  struct bind *binds;  /* the device nodes, then the mounts */
  size_t n_binds;
  size_t n_nodes;      /* of BINDS */
  char *helper;        /* enter-devroot-cdi's path */
  char *bundle;        /* where the bundle's tmpfs goes, when there are hooks */
};

/* Before anything is made: DEVICES (NULL-terminated) resolved by enter-devroot-cdi into
 * *OUT. Exits 125 when it fails (it said why, in one line). */
void cdi_resolve (char *const *devices, struct cdi_view *out);
void cdi_view_clear (struct cdi_view *c);

/* In the job's mount namespace, working directory the root, before anything is mounted in
 * it: the mounts' destinations checked as bind_check_all checks --bind's; for a flat root
 * (FLAT) with hooks, the root bound on itself and the working directory moved onto that
 * mount (ROOT is its path). */
void cdi_prepare (const char *name, const struct cdi_view *c, bool flat, const char *root);
/* After /dev, /proc and --bind: the device nodes and mounts, then the hooks. */
void cdi_apply (const char *name, const struct cdi_view *c);
