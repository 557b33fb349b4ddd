/* run --ephemeral inside a Slurm job step: the step's tasks on one node share one throwaway
 * root. The first of them to start creates it while the others wait on the step's lock;
 * the last of them to leave removes it. No plugin and no admin: everything comes from the
 * variables srun gives each task, and lives in the user's store. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/paths.h"

/* The slurmstepd running a step on a node, by its PID and start time (which a reused PID
 * cannot repeat): the identity of that one run of the step there. A job id alone is no
 * identity: a new cluster (a new StateSaveLocation) counts its jobs from 1 again, while
 * the user's store, and what killed tasks left in it, stays. {0, 0} where none is found:
 * a task that left slurmstepd's tree (a daemon), a /proc that hides root's processes
 * (hidepid), a test that sets the SLURM_* variables by hand. */
struct step_daemon
{
  pid_t pid;
  uint64_t started;
};

struct step_share
{
  char *name;           /* the step's root on this node, or the job's (slurm-job.h) */
  bool job_scoped;      /* run --ephemeral --name: the job's root, kept after the step */
  unsigned step_id;
  unsigned local_tasks; /* how many of the step's tasks run on this node */
  char *state_path;     /* locks/NAME.step (locks/NAME.STEP.step for a job's root):
                         * "joined left created failed" (slurm-job.h), then the step's
                         * daemon's "PID START" */
  int state_fd;         /* flock()ed while the state is read or changed */
  struct step_daemon daemon; /* this task's slurmstepd */
  bool stale;           /* the state found was an earlier run's of the step (another
                         * slurmstepd's, gone): not counted, and a root of that name is
                         * that run's leftover */
};

/* Whether this process is a task of a Slurm job step (SLURM_JOB_ID, SLURM_STEP_ID,
 * SLURM_NODEID, SLURMD_NODENAME and SLURM_STEP_TASKS_PER_NODE, all well-formed); if so,
 * fill S's name and task count: the step's root on this node, or with JOB_ROOT (run
 * --ephemeral --name) the job's root of that name on this node. */
bool step_share_from_env (struct step_share *s, const char *job_root);

/* Join the step's root under the step's lock. True: the root is not there yet and the
 * caller must create it, then call step_share_created() (the lock is held until then,
 * so the step's other tasks wait). False: it is there, made by an earlier task. Dies when
 * an earlier task failed to create it (its own error line says why), or when the state
 * is a live slurmstepd's other than this task's. A state an earlier run of the step left
 * (its slurmstepd gone: tasks killed with SIGKILL, then a job of the same id) is not
 * counted: S->stale, and the caller creates the root. */
bool step_share_join (const struct store_paths *p, struct step_share *s);
void step_share_created (struct step_share *s, bool ok);

/* The small state files of a step (the counters here, stepns.c's keeper): take flock()
 * OPERATION on FD, again when a signal interrupts the wait; read FD's text (at most
 * STEP_STATE_MAX bytes) into BUF, NUL-terminated, returning its length; write TEXT over
 * it. PATH names the file when they die. */
#define STEP_STATE_MAX 128
void step_file_lock (int fd, int operation, const char *path);
size_t step_file_read (int fd, const char *path, char buf[STEP_STATE_MAX + 1]);
void step_file_write (int fd, const char *path, const char *text);

/* Leave; true when the caller is the last of the node's tasks, which removes the root. */
bool step_share_leave (struct step_share *s);
void step_share_clear (struct step_share *s);
