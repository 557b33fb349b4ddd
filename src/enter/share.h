/* Step 8 of entering (enter.c), in userns mode: the namespaces a job is made in or joins
 * rather than making its own (share.c). */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "enter/stepns.h"
#include "enter/terminal.h"
#include "enter/view.h"

/* What start_userns_job (job.h) makes the job in. */
struct job_share
{
  struct stepns step; /* a Slurm step's keeper, or a warm run's (STEP.idle > 0) */
  bool shared;        /* the job joins STEP's namespaces */
  struct stepns base; /* an overlay root's holder (stepns_root_init) */
  bool based;         /* BASED: the job, or STEP's keeper when it starts one, is made in
                       * BASE's user and mount namespaces, where the root's overlay is */
};

/* Before the job starts, signals blocked (supervise_block_signals), the working directory
 * the root (ROOT_ST: its identity): fill *S for VIEW's job. Nothing is shared unless
 * MAY_SHARE (userns mode, where user namespaces can be made). An overlay root's job (not a
 * throwaway root's: it has one user) is made in its holder's namespaces (VIEW->in_base
 * set); a task of a
 * Slurm step joins the namespaces its step's tasks share on the node (TERM->fd then -1:
 * the keeper's view is no one task's); else CLI's run, with no terminal of ours and no
 * --ephemeral, joins the warm keeper of the same view. A keeper is started where none is;
 * where one cannot be, the job makes its own namespaces, as where nothing is shared. Exits
 * 125 where a keeper failed to build the view (it said why). */
void share_choose (const struct cli *cli, bool may_share, struct userns_view *view,
                   struct terminal *term, const struct stat *root_st, struct job_share *s);

/* Once the job has ended: leave what share_choose joined (stepns_leave). */
void share_leave (struct job_share *s);

/* export and push of an overlay root NAME, before the store helper is executed: join the
 * root's holder (its one overlay mount, started if need be), so that the helper reads that
 * mount rather than mounting a second overlay of the same upper. Nothing for any other root,
 * or where nothing can be shared (the helper then mounts its own). */
void enter_join_overlay_holder (const char *name);
