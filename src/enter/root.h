/* Steps 6 and 7 of entering (enter.c): the root a job enters, and going into it (root.c). */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "common/meta.h"
#include "common/options.h"
#include "enter/ephemeral.h"

struct job_end;

struct enter_root
{
  const char *name; /* CLI's NAME, or the throwaway root's (EPH's) */
  char *path;       /* its directory; a direct throwaway root's: the staging directory where
                     * the job mounts its tmpfs (view.c) */
  struct meta meta; /* its metadata, where HAVE_META; a direct throwaway root's: the run's */
  bool have_meta;
  const struct meta_image *image; /* the image it was made from (in META), else NULL */
  bool overlay;     /* an overlay root (overlay.h): it exists only as a mount in the job's
                     * namespaces */
  bool ephemeral;   /* run --ephemeral: a throwaway root, EPH */
  bool direct;      /* a throwaway root of a cached image's layers, mounted by the job itself
                     * (ephemeral.h): nothing of it on the host */
  struct ephemeral eph;
};

/* Step 6, signals blocked (supervise_block_signals): which root CLI enters, filled into *R:
 * its NAME, or with run --ephemeral a throwaway root created now (ephemeral_create: a
 * direct one only in user-namespace mode, USERNS); where it is, and what its metadata
 * says. die()s "cannot enter 'NAME': no such devroot". */
void root_resolve (const struct cli *cli, bool userns, struct enter_root *r);

/* Step 7: in chroot mode (MODE), unless OPTS->no_host_dns, copy the host's resolv.conf and
 * hosts in (hostfiles.c); then open R's directory with O_PATH|O_NOFOLLOW and make it the
 * working directory, its identity into *ST. Returns the descriptor in chroot mode, which
 * enters through it (start_chroot_job), else -1 (userns mode mounts on the path). */
int root_open (const struct enter_root *r, enum enter_mode mode, const struct enter_opts *opts,
               struct stat *st);

/* Once the job has ended as END says: remove a throwaway root (ephemeral_remove: with
 * --save, exported first), and free R's path. -1 when the save failed, else 0. */
int root_leave (struct enter_root *r, const struct job_end *end);
