/* Step 8 of entering (enter.c), in userns mode: which namespaces the job is made in or
 * joins, rather than making its own. Three kinds, each kept by a process of stepns.c's:
 *
 *   - an overlay root's holder: every job, keeper and export of an overlay root sees its
 *     holder's one mount of it, since two overlayfs mounts of one upper corrupt each other;
 *   - a Slurm step's keeper: the step's tasks on a node share one user, mount and PID
 *     namespace (one /proc in which they see each other, one /dev/shm for MPI's shared
 *     memory), as pyxis's tasks share one container;
 *   - a warm run's keeper: the view of the root built once and kept a while, so that the
 *     next run of the same view costs a clone, not the mounts.
 *
 * Where none can be shared, the job makes its own namespaces, as where none is wanted.
 * export and push of an overlay root join its holder too (enter_join_overlay_holder), so
 * that the store helper reads the one mount. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/name.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/userns.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/share.h"
#include "enter/supervise.h"
#include "enter/warm-key.h"

/* An overlay root's one mount: its holder (stepns_root_init) found or started, and VIEW made
 * in its namespaces from now on. False where none can be shared or recorded (no pidfds, a
 * full disk): the job then mounts the overlay itself, as the only one. */
static bool
hold_overlay_root (struct userns_view *view, struct stepns *base)
{
  bool ok = stepns_root_init (view->name, stepns_warm_idle (), base)
            && stepns_enter (base, NULL, view->name, build_overlay_holder, view);
  if (base->setup_failed)
    exit (EXIT_TOOL_FAILURE); /* its keeper said why, as the job's PID 1 would have */
  if (!ok)
    {
      stepns_leave (base);
      return false;
    }
  verbose ("overlay root: its one mount, held by process %ld (%s)", (long) base->keeper,
           base->state_path);
  view->in_base = true;
  return true;
}

void
share_choose (const struct cli *cli, bool may_share, struct userns_view *view,
              struct terminal *term, const struct stat *root_st, struct job_share *s)
{
  const char *name = view->name;
  /* A Slurm step's tasks on a node share the root's namespaces (stepns.c). Neither they
   * nor a warm run start a keeper where no user namespace can be made: the job's own
   * clone (job.c) then fails at once and says why in its one line. */
  s->shared = false;
  unsigned idle;
  uint64_t key;
  struct warm_view warm = { .name = name, .root = view->root, .root_st = root_st,
                            .opts = view->opts, .binds = view->binds, .n_binds = view->n_binds,
                            .cdi = view->cdi, .overlay = view->overlay };
  /* Every job, keeper and export of an overlay root sees one mount of it (two overlayfs
   * mounts of one upper corrupt each other): its holder's. A throwaway root has one user. */
  s->based = view->overlay != NULL && may_share && !cli->ephemeral
             && hold_overlay_root (view, &s->base);
  const struct stepns *base = s->based ? &s->base : NULL;
  if (may_share && stepns_from_env (name, &s->step))
    {
      term->fd = -1; /* a Slurm step's tasks: the keeper's view is not one task's terminal */
      s->shared = stepns_enter (&s->step, base, name, build_userns_view, view);
      if (!s->shared)
        stepns_leave (&s->step);
    }
  /* A warm run joins the namespaces a keeper holds for the same view, made by the first
   * run (stepns.c). Not with a terminal of ours: the view's /dev/console and the
   * terminal's foreground group are one job's. Not for a throwaway root, nor for a Slurm
   * task told to keep its namespaces private. */
  else if (may_share && cli->command == CMD_RUN && !cli->ephemeral
           && term->fd < 0 && getenv ("ENTER_DEVROOT_STEP_PRIVATE") == NULL
           && (idle = stepns_warm_idle ()) > 0 && warm_key (&warm, &key)
           && stepns_warm_init (name, key, idle, &s->step))
    {
      s->shared = stepns_enter (&s->step, base, name, build_userns_view, view);
      if (s->shared)
        verbose ("warm run: joining the namespaces kept by process %ld (%s)",
                 (long) s->step.keeper, s->step.state_path);
      bool setup_failed = s->step.setup_failed;
      if (!s->shared)
        stepns_leave (&s->step);
      if (setup_failed)
        exit (EXIT_TOOL_FAILURE); /* the keeper said why, as the job's PID 1 would have */
    }
}

void
share_leave (struct job_share *s)
{
  if (s->shared)
    stepns_leave (&s->step);
  if (s->based)
    stepns_leave (&s->base);
}

void
enter_join_overlay_holder (const char *name)
{
  static struct meta m; /* the view's overlay, until the exec: not a local, as for
                         * enter_devroot's root */
  if (name == NULL || !name_is_valid (name) || !roots_read_meta (name, &m) || !overlay_is_root (&m))
    return;
  cleanup_free char *v = read_first_line (SYSCTL_MAX_USER_NAMESPACES);
  if (v != NULL && strcmp (v, "0") == 0)
    return; /* the helper says why it cannot open the root */
  struct store_paths p;
  store_paths_from_env (&p);
  static char *root;
  root = paths_root (&p, name);
  store_paths_clear (&p);
  static struct enter_opts opts = { .mode = ENTER_MODE_USERNS };
  struct terminal term = { .fd = -1 };
  static struct userns_view view;
  view = (struct userns_view) { .name = name, .opts = &opts, .uid = getuid (), .gid = getgid (),
                                .term = &term, .root = root, .overlay = &m };
  supervise_block_signals ();
  struct stepns base;
  bool based = hold_overlay_root (&view, &base);
  supervise_restore_signals ();
  if (!based)
    return;
  /* Joining the mount namespace moves the working directory to its root: the helper's
   * relative paths (export's FILE) are the caller's. */
  cleanup_fd int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  stepns_join_view (&base, name);
  if (cwd < 0 || fchdir (cwd) < 0)
    die_with_error ("cannot open root '%s': cannot keep the working directory", name);
  /* The helper holds the root holder's hold lock until it exits (flock: one lock per open
   * file, whatever holds a copy of it), so that its mount outlives the export. */
  int flags = fcntl (base.hold_fd, F_GETFD);
  if (flags < 0 || fcntl (base.hold_fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
    die_with_error ("cannot open root '%s': cannot keep %s", name, base.hold_path);
  close (base.keeper_fd);
  close (base.state_fd);
}
