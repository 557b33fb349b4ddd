/* A Slurm job's roots, for both ways enter-devroot runs under Slurm: the plugin
 * (src/spank/, spank_enter_devroot(8)) and `run --ephemeral` in a task of srun
 * (src/enter/slurmstep.c). The one place that
 *   - names a job's roots: a step's root on a node, and a job's named root;
 *   - reads such a name back (the reaper's question: whose job, made where);
 *   - counts the tasks of a step on a node that share one root: the first creates it, the
 *     others wait for it and share it, a failure is every task's, the last removes it
 *     (each caller keeps the counts under its own lock: the plugin in memory slurmstepd
 *     shares with the tasks, run --ephemeral in a file of the user's store);
 *   - asks Slurm whether a job has ended (for reaping what a job left).
 * The C library only, and nothing here dies: the plugin, loaded into srun and slurmstepd,
 * links it too. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One scheme, OWNER JOB "." STEP "." WHERE for a step's root on a node, and OWNER JOB "-"
 * NAME "." WHERE for a job's named root, where OWNER says who made it and so who reaps it:
 *   "slurm-"            the plugin's: removed by the plugin (the last task's slurmstepd, the
 *                       job's epilog); left over, by the reaper once nothing runs in it and
 *                       Slurm no longer knows the job. WHERE is the step's node index for a
 *                       step's root, this host's name for a named root (the job's on this
 *                       host: root's record of it, which the epilog reads, is per host).
 *   "ephemeral-slurm-"  run --ephemeral's: a throwaway root (roots.h: reaped once its run
 *                       lock is free, a job's named root once Slurm no longer knows the
 *                       job too). WHERE is the node's name (SLURMD_NODENAME).
 * The two owners' WHERE differ because what they share differs; the rest is one. */
#define SLURM_PLUGIN_ROOT_PREFIX "slurm-"
#define SLURM_EPHEMERAL_ROOT_PREFIX "ephemeral-slurm-"
/* The longest root name (name.h's NAME_MAX_LEN), job id and WHERE. */
#define SLURM_ROOT_NAME_MAX 64
#define SLURM_JOB_ID_DIGITS_MAX 10
#define SLURM_WHERE_MAX 20

enum jobroot_owner
{
  SLURM_ROOT_PLUGIN,
  SLURM_ROOT_EPHEMERAL,
};

struct jobroot
{
  enum jobroot_owner owner;
  uint32_t job;
  const char *step;  /* a step's root: "0", "batch"...; NULL for a job's named root */
  const char *name;  /* a job's named root: its NAME; NULL for a step's root */
  const char *where; /* the node (index or name) or host, as given: jobroot_name keeps
                      * its [A-Za-z0-9_-] characters, up to SLURM_WHERE_MAX, the others '_' */
};

/* R's name into OUT; -1 when it would be longer than SLURM_ROOT_NAME_MAX. */
int jobroot_name (const struct jobroot *r, char out[SLURM_ROOT_NAME_MAX + 1]);

/* This host's name as a named root of the plugin's carries it: up to its first '.'. */
void jobroot_host (char out[SLURM_WHERE_MAX + 1]);

/* Whether NAME is a root of OWNER's, as jobroot_name makes them; its job's id (decimal)
 * into JOB, whether it is a job's named root into *NAMED, and a pointer to its WHERE into
 * *WHERE. */
bool jobroot_parse (const char *name, enum jobroot_owner owner,
                       char job[SLURM_JOB_ID_DIGITS_MAX + 1], bool *named, const char **where);

/* Parse SLURM_STEP_TASKS_PER_NODE ("2(x3),1": two tasks on each of three nodes, then one)
 * for the node at INDEX of the step. -1 when malformed or too short. */
int step_tasks_on_node (const char *list, unsigned index, unsigned *out);

/* The tasks of a step on a node sharing one root, counted under the caller's lock, which
 * the task creating the root holds until step_count_created. A lock whose holder died
 * (SIGKILL) while creating is free again with neither CREATED nor FAILED set: the next task
 * to join creates the root instead. */
struct step_count
{
  unsigned joined;  /* tasks that came */
  unsigned left;    /* tasks that have left (their command ended, or they never ran it) */
  unsigned created; /* 1 once the root was made */
  unsigned failed;  /* 1 once it could not be */
};

enum step_join
{
  STEP_JOIN_CREATE, /* create the root (keeping the lock), then step_count_created */
  STEP_JOIN_SHARE,  /* an earlier task created it */
  STEP_JOIN_FAILED, /* an earlier task could not create it (its own line said why): the
                      * task leaves at once (step_count_leave), so the last still cleans up */
};

enum step_join step_count_join (struct step_count *c);
void step_count_created (struct step_count *c, bool ok);
/* Whether the root was made and is there to enter, save or remove. */
bool step_count_ready (const struct step_count *c);
/* One more task has left; true when it is the last of LOCAL_TASKS, which removes (or
 * saves) the root. */
bool step_count_leave (struct step_count *c, unsigned local_tasks);

/* Whether Slurm says job JOB (decimal) is over. squeue prints the state of a job it knows
 * (pending, running, completing...), nothing for one that has ended, and "Invalid job id"
 * once it has forgotten it. Anything else (no squeue here, no controller answering) is no
 * answer: false, and what the job left is kept. */
bool squeue_job_ended (const char *job);
