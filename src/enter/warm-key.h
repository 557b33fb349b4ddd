/* A warm run (stepns.c) joins the namespaces a keeper holds only for the very view they
 * were made for: the key says which. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/meta.h"
#include "common/options.h"
#include "enter/bind.h"
#include "enter/cdi.h"

struct warm_view
{
  const char *name;            /* the root's */
  const char *root;            /* its directory's path, the working directory */
  const struct stat *root_st;  /* and identity */
  const struct enter_opts *opts;
  const struct bind *binds;
  size_t n_binds;
  const struct cdi_view *cdi;  /* --device's edits, or NULL */
  const struct meta *overlay;  /* an overlay root's metadata, else NULL */
};

/* What a warm run's keeper is keyed on: everything its view is made of. The root's
 * directory by path and identity (a root made again under the same name is another), the
 * binds, --device's edits (every node, mount, variable and hook, as resolved now: a spec
 * changed since gives another key), --root and --no-host-dns, and the identity of every file or directory the view
 * mounts on (a mount point deleted or replaced on the host since, e.g. an edited
 * etc/resolv.conf, is gone from the keeper's view: a new keeper makes it again). The
 * working directory is the root. False when a file the view creates to mount on (a DNS
 * file, a bind's destination) is missing: a view made now would not be the one keyed, so
 * this run makes its own (and creates it), and the next is keyed on what it made. */
bool warm_key (const struct warm_view *view, uint64_t *key);
