/* spank_enter_devroot.so: devroots for Slurm jobs (srun/sbatch/salloc --devroot-image=...).
 *
 * The plugin only orchestrates: every root is created, entered and removed by the installed
 * enter-devroot binary, the one a user runs by hand, so there is one implementation of
 * entering. Each file holds the code of one Slurm context and says in its name who runs it:
 *
 *   dispatch.c          every context: the callbacks Slurm looks up, switching on the context
 *   options.c           every context: the option table, DEVROOT_* fallbacks
 *   config.c            every context: the plugstack.conf arguments
 *   root-name.c         every context: the names of a job's roots, root's records of them
 *   srun-as-user.c      srun, the user's own process: one pull per job, before tasks launch
 *   stepd-as-root.c     slurmstepd, root: a named root's record and the step's shared lock
 *   task-as-user.c      each task, already the job's user: exec run --ephemeral (or, for a
 *                       named root, prepare it once per node, then exec run ROOT)
 *   epilog-as-root.c    the job's epilog, root: remove the job's named roots
 *   as-user.c           the one way root code acts for the user: a child fully dropped to
 *                       the job's uid, gid and groups execs enter-devroot
 *
 * A step's tasks on one node share one root, run --ephemeral's (slurm-job.h names it for
 * the job, the step and the node), which the first task to start creates and the last to
 * leave removes: cleanup is keyed on the job, never on the user. A named root
 * (--devroot-name, root_name) is the job's on this host: the steps of the job share it,
 * the first task of a step on the node makes it, and the job's epilog removes it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <slurm/spank.h>

#include "common/slurm-job.h"

#define PLUGIN_NAME "spank_enter_devroot"
#define ROOT_NAME_MAX SLURM_ROOT_NAME_MAX

/* --devroot-batch: where the batch step of sbatch runs. */
enum batch_mode
{
  BATCH_DEFAULT = 0, /* not given: host, or root with pyxis_compat=1 (batch_mode_of) */
  BATCH_HOST,        /* the script on the host, its srun steps in roots */
  BATCH_ROOT,        /* the script itself inside the root (pyxis's way; no srun there) */
};

enum name_mode
{
  NAME_AUTO,   /* create it if it is not there, else use it */
  NAME_CREATE, /* :create: it must not be there yet */
  NAME_EXEC,   /* :exec: it must be there (another step made it) */
};

struct devroot_request
{
  char *image;   /* --devroot-image: a template name or anything `create --from` takes */
  char *name;    /* --devroot-name: NAME of a root kept for the job's later steps */
  enum name_mode name_mode;
  char *workdir; /* --devroot-workdir */
  char *env;     /* --devroot-env: NAME,NAME,... passed into the root */
  char *save;    /* --devroot-save: FILE the root is exported to when the step ends */
  char *mounts;  /* --devroot-mounts: SRC[:DST[:ro]],... as given (mounts_parse) */
  char *devices; /* --devroot-device: VENDOR/CLASS=NAME,... (enter-devroot run --device) */
  bool root;     /* --devroot-root: root emulation (run --root) */
  bool entrypoint; /* --devroot-entrypoint: the OCI image's Entrypoint runs the command */
  bool mount_home; /* --devroot-mount-home: the job's HOME bound at the same path, HOME there */
  enum batch_mode batch; /* --devroot-batch */
  char *refused; /* slurmstepd: why the step must not run (a variable it could not read
                  * whole), one line each task prints on srun's stderr before failing */
};

struct devroot_config
{
  const char *enter_devroot; /* enter_devroot=PATH: the binary; default the installed one */
  bool pyxis_compat;   /* pyxis_compat=1: pyxis's option names instead of ours */
  const char *runtime_path; /* runtime_path=DIR: root's own records of the jobs' named roots */
  bool workdir_submit; /* default_workdir=submit (the default): start where the job was
                        * submitted, bound at the same path; =root: where run starts */
  unsigned child_timeout; /* child_timeout=SECONDS: the longest root waits for a child it
                           * runs as the user (as_user_run) before killing it */
  const char *gpu_kind; /* gpu_devices=VENDOR/CLASS: the CDI kind the job's GPUs (GRES) are
                         * given as, KIND=INDEX each; NULL (gpu_devices=none): not given */
};
/* The CDI kind of the GPUs nvidia-ctk cdi generate writes. */
#define GPU_KIND_DEFAULT "nvidia.com/gpu"
#define CHILD_TIMEOUT_DEFAULT 300
#define CHILD_TIMEOUT_MAX 86400

extern struct devroot_request request;
extern struct devroot_config config;

/* config.c */
int config_parse (int ac, char **av);
/* options.c */
int options_register (spank_t sp);
/* Fill what no option set from the DEVROOT_* (or, with pyxis_compat, PYXIS_CONTAINER_*)
 * variables of the job's environment. */
int options_from_env (spank_t sp);
/* For the batch step left on the host: pass the options it was given to the script's srun
 * steps as the DEVROOT_* (or PYXIS_CONTAINER_*) variables of its environment, and remove
 * Slurm's own copies of them there, so a step's own options override them; -1 with one
 * line. */
int options_to_job_env (spank_t sp);
/* --devroot-batch as it applies: BATCH_HOST or BATCH_ROOT. */
enum batch_mode batch_mode_of (void);
/* Whether the step runs in a devroot at all. */
bool devroot_requested (void);
/* For --devroot-name, the job's root on this host, slurm-JOB-NAME.HOST (slurm-job.h names
 * it; a step's own root is run --ephemeral's, named by it); -1 on failure. */
int root_name (spank_t sp, char name[ROOT_NAME_MAX + 1]);
/* Whether the step's root may be saved to request.save: -1 with one line on stderr when
 * it is a directory, or a file that is not an archive (never overwrite what is not ours). */
int save_target_check (void);
/* Split a --devroot-mounts value into enter-devroot --bind arguments "SRC:DST[:ro]": items
 * separated by ',' ("\," is a comma and "\\" a backslash within one); DST defaults to SRC;
 * the only flag is ro; a relative SRC is made absolute against CWD. Calls EACH (when not
 * NULL) with every item; -1 with *WHY (static text) on a malformed one. */
int mounts_parse (const char *value, const char *cwd, void (*each) (const char *bind, void *arg),
                  void *arg, const char **why);
/* Whether IMAGE names a template of the catalogue rather than a file or URL. */
bool image_is_template (const char *image);

/* as-user.c: run enter-devroot ARGV (argv[0] is replaced by the binary's path) in a child
 * fully dropped to the job's user, with ENV, its stdin, stdout and stderr on /dev/null and
 * no other fd; killed after config.child_timeout seconds. Returns its exit status, -1
 * when it could not be run or was killed, AS_USER_TIMED_OUT when it was killed at the
 * timeout (one line in the log says which). */
#define AS_USER_TIMED_OUT (-2)
int as_user_run (spank_t sp, const char *const *argv, char *const *env);
/* Exec enter-devroot with ARGV and ENV; returns only on failure. */
void exec_enter_devroot (const char *const *argv, char *const *env);
/* Where a child's stdout goes: output the job's must not hold goes to stderr, or nowhere. */
enum child_stdout
{
  STDOUT_TO_STDERR,
  STDOUT_DISCARDED,
};
/* For a process that is already the job's user (srun, a task): fork, exec, wait. */
int run_and_wait (const char *const *argv, char *const *env, enum child_stdout out);
/* The same in two steps: the child's pid (-1 when fork failed), then its exit status, or
 * -1 when it was killed or could not be run. */
pid_t spawn_enter_devroot (const char *const *argv, char *const *env, enum child_stdout out);
int wait_enter_devroot (pid_t pid);
/* The same as spawn_enter_devroot with the child's stdout on OUT_FD (-1: nowhere). Every
 * child's stdin is /dev/null, and it holds no fd but 0, 1 and 2. */
pid_t spawn_enter_devroot_to (const char *const *argv, char *const *env, int out_fd);

/* srun passes the tasks the docker:// image it pulled, pinned to its digest, as
 * PINNED_IMAGE_VAR="IMAGE PINNED" in their environment (srun-as-user.c). */
#define PINNED_IMAGE_VAR "ENTER_DEVROOT_PINNED_IMAGE"
#define PINNED_IMAGE_MAX 1024

/* Per context (dispatch.c calls them). */
int srun_local_user_init (spank_t sp);
int stepd_user_init (spank_t sp);
int stepd_init_post_opt (spank_t sp);
int stepd_exit (spank_t sp);
int epilog_remove_named_roots (spank_t sp);

/* The record of a job's named roots on this host: root-owned RUNTIME_PATH/JOB/, a
 * directory of at most NAMED_ROOTS_MAX files, each named for a root and holding one line
 * "HOME<TAB>XDG_DATA_HOME\n" (shorter than RECORD_LINE_MAX), written by slurmstepd when a
 * step first names the root, read by the job's epilog. */
#define RECORD_LINE_MAX 8192
#define NAMED_ROOTS_MAX 64
int record_path (spank_t sp, char *buf, size_t size);
int task_init (spank_t sp);

/* stepd-as-root.c: for a named root, the count of the step's tasks on this node
 * (slurm-job.h), in memory slurmstepd maps before forking them. Take the lock shared by the step's local tasks and
 * return the count; NULL when there is no shared state. */
struct step_count *step_shared_lock (void);
void step_shared_unlock (void);
