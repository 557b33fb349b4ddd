/* run --ephemeral: a throwaway devroot around one command. */
#pragma once

#include "common/cli.h"
#include "common/meta.h"
#include "common/paths.h"
#include "enter/slurmstep.h"

struct ephemeral
{
  struct store_paths paths;
  char *name;   /* EPHEMERAL_PREFIX and 16 random hex digits, or the Slurm step's name */
  int run_lock; /* held from before the root exists until after it is gone (shared by the
                 * tasks of a Slurm step on a node, each holding it) */
  bool shared;  /* a task of a Slurm job step: the node's tasks share the root (slurmstep.h) */
  struct step_share share;
  const char *save; /* --save FILE (the CLI's), or NULL */
  /* A cached image's layers mounted directly in the job's namespaces (ephemeral.c): no
   * root in roots/, nothing made on the host. META holds the layers and image config;
   * HOLDS the layers' holds against `cache clean` (overlay_layer_hold) for the run. */
  bool direct;
  struct meta meta;
  int *holds;
  size_t n_holds;
};

/* Take the run lock of a new unique name, then have the store helper create the root from
 * CLI's create options (as `create NAME ...` would), passing cancellation on to it. When
 * the creation fails, exit as the helper did (its error line is printed), leaving nothing.
 * Or, in user-namespace mode (USERNS) outside a Slurm step and without --save, when a
 * record says what the options' source resolved to and its layers are in the store
 * (resolved.h): no root and no helper; E->direct is set and the job mounts the layers
 * itself, the upper on a tmpfs (view.c). Signals must be blocked (supervise_block_signals). */
void ephemeral_create (const struct cli *cli, struct ephemeral *e, bool userns);

/* With --save, when the caller is the last to leave (the only one outside Slurm) and END
 * says run was neither cancelled nor timed out, export the root to the FILE first: -1 when
 * that failed (the helper's line and one more say why), else 0. Then remove the root, its
 * metadata and lock files, and release the run lock; a failure to remove is a warning line
 * (the next create or doctor reaps what is left). END may be NULL: no save. */
struct job_end;
int ephemeral_remove (struct ephemeral *e, const struct job_end *end);

/* Let go of a direct run's layers and metadata. */
void ephemeral_release (struct ephemeral *e);
