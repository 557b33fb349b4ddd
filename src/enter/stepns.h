/* userns mode in a Slurm job step: the step's tasks on one node that enter the same root
 * share its user, mount and PID namespaces (one /proc in which they see each other, one
 * /dev/shm for MPI's shared memory), as pyxis's tasks share one container. No plugin and
 * no admin: the state lives in the user's store, keyed on the root, the job, the step and
 * the node. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct stepns
{
  char *state_path; /* locks/ROOT@STEP.ns: "KEEPER_PID KEEPER_START_TIME" */
  char *hold_path;  /* locks/ROOT@STEP.nshold: each task holds it shared while it runs */
  int state_fd;     /* flock()ed exclusively while the state is read or changed */
  int hold_fd;
  pid_t keeper;     /* PID 1 of the shared namespaces, as this process sees it */
  int keeper_fd;    /* a pidfd of it */
  unsigned idle;    /* warm runs: seconds the keeper stays once no run is in; 0: a step's */
  bool setup_failed; /* warm: the keeper died building the view (it said why) */
  bool bare;        /* a root holder's (stepns_root_init): ended by its holder as a warm
                     * keeper is, whatever its idle time; its failures are no task's */
  int base_fd;      /* a pidfd of a root holder's keeper whose user and mount namespaces the
                     * keeper is made in (an overlay root's one mount), else -1 */
  int base_hold_fd; /* that holder's hold fd, kept by this keeper's holder: the root
                     * holder outlives every keeper made in its namespaces */
};

/* Builds the namespaces' view of the root in the keeper, a child of a clone() into new
 * user, mount and PID namespaces whose working directory is the root: the identity maps,
 * private mounts, /dev, /proc, the host files and the binds, as a job of its own would.
 * It dies (with one line) on a failure. */
typedef void (*stepns_setup_fn) (void *arg);

/* Whether this process is a task of a Slurm job step (slurmstep.h) that may share: if so,
 * set NS up for ROOT_NAME. */
bool stepns_from_env (const char *root_name, struct stepns *ns);

/* How long a warm keeper stays once no run is in it, in seconds, 0 = no keeper:
 * $ENTER_DEVROOT_KEEP_IDLE, else "keep-idle = SECONDS" in the config file, else 10.
 * die()s naming the one that is not a number of seconds. */
unsigned stepns_warm_idle (void);

/* Warm runs of ROOT_NAME (stepns.c): set NS up for the keeper of the view KEY hashes,
 * kept IDLE (> 0) seconds once unused. False when the store has no locks directory of
 * the caller's (the run then makes namespaces of its own). */
bool stepns_warm_init (const char *root_name, uint64_t key, unsigned idle, struct stepns *ns);

/* An overlay root's holder (stepns.c): the one user and mount namespace where ROOT_NAME's
 * overlay is mounted, which every run, warm keeper and export of the root starts from, so
 * that one overlayfs ever has its upper. Kept IDLE seconds once unused (0: until the last
 * user leaves). False as stepns_warm_init. */
bool stepns_root_init (const char *root_name, unsigned idle, struct stepns *ns);

/* Join the step's namespaces on this node, starting their keeper if no task did yet (in
 * the user and mount namespaces of the root holder BASE, entered already, unless NULL).
 * The working directory must be the root; signals blocked (supervise_block_signals).
 * False, with one warning line, when they cannot be shared: the task then makes its own. */
bool stepns_enter (struct stepns *ns, const struct stepns *base, const char *name,
                   stepns_setup_fn setup, void *arg);

/* In the job's child, before anything else: enter the keeper's namespaces (the root and
 * working directory become the mount namespace's: the caller chroots again). */
void stepns_join (const struct stepns *ns, const char *name);

/* Enter the keeper's user and mount namespaces only (a warm run, whose job then makes a
 * mount and PID namespace of its own there; a root holder's users). */
void stepns_join_view (const struct stepns *ns, const char *name);

/* Leave, once the task's command is gone; the last task to leave kills the keeper, and with
 * it whatever the step's tasks left running in the PID namespace, and waits for that. */
void stepns_leave (struct stepns *ns);
