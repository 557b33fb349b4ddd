/* Step 8 of entering (enter.c), in userns mode: the view of the root that a job's new user
 * and mount namespaces give it (view.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/meta.h"
#include "common/options.h"
#include "enter/bind.h"
#include "enter/cdi.h"
#include "enter/terminal.h"

/* What a userns-mode job's namespaces are made of (step 8), for its own PID 1 or for the
 * keeper of the namespaces a Slurm step's tasks share (stepns.c). */
struct userns_view
{
  const char *name;
  const struct enter_opts *opts;
  const struct bind *binds;
  size_t n_binds;
  const struct cdi_view *cdi;  /* --device's edits (cdi.h), else NULL */
  uid_t uid; /* the caller's, read before the clone: inside they are unmapped until then */
  gid_t gid;
  const struct terminal *term; /* the caller's terminal, for the job's PID 1 to take */
  const char *root;            /* its path, for an overlay root's mount */
  const struct meta *overlay;  /* an overlay root's metadata (overlay.h), else NULL */
  const char *scratch;         /* run --ephemeral of a cached image: where the job mounts its
                                * tmpfs (mount_ephemeral_root), else NULL */
  bool in_base;                /* made in the overlay root's holder's namespaces (stepns.h):
                                * the maps are written and the overlay is mounted there */
};

/* A clone into new namespaces failed with USERNS_ERRNO, or writing their maps did: one line
 * saying why the root cannot be entered (where auto mode fell back to a user namespace,
 * why chroot was refused too), and exit 125. */
__attribute__((noreturn)) void die_userns_unavailable (const struct userns_view *v,
                                                       int userns_errno);

/* In the new namespaces, the working directory the root: the identity maps, private mounts,
 * an overlay root's overlay (in its holder's namespaces, already there), /dev, /proc, the
 * host files, every --bind, then --device's nodes, mounts and hooks (cdi.h). ARG is the
 * view; a setup of stepns.h's (a Slurm step's or a warm run's keeper builds it too). */
void build_userns_view (void *arg);

/* An overlay root's holder (stepns_root_init): new user and mount namespaces holding the
 * root's one overlay mount, which every run, warm keeper and export of it starts from. ARG
 * is the view; a setup of stepns.h's. */
void build_overlay_holder (void *arg);

/* The working directory the root's directory at V->root (joining namespaces made it the
 * mount namespace's root): there, an overlay root's mount. */
void chdir_root (const struct userns_view *v);
