/* Each task of a step, in the task's own process, already the job's user (Slurm has dropped
 * to the job's ids and groups), just before Slurm would exec the command. The task becomes
 * `enter-devroot run --ephemeral --from IMAGE [--save FILE] -- COMMAND`, the command a user
 * runs by hand under srun: run --ephemeral itself names the step's root on this node
 * (slurm-job.h), has the first task create it while the others wait, and has the last to
 * leave save and remove it, before the task exits (so before srun returns). A job's named
 * root (--devroot-name) is the one path still the plugin's own: the first task on the node
 * has enter-devroot create it (or finds it), the others wait for it on the step's shared
 * lock, then every task becomes `enter-devroot run ROOT -- COMMAND`; the job's epilog
 * removes it. Output goes to the task's stderr, which srun prints on the user's terminal. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <slurm/slurm.h>

#include "common/cdi-name.h"
#include "common/save-target.h"
#include "common/util.h"
#include "spank/plugin.h"

/* The job's SLURM_*, SLURMD_*, PMI_*, PMIX_* and OMPI_* variables need no --env: enter-devroot
 * run keeps them itself (env.c), from the job's environment it is executed with. */

/* enter-devroot's argv never holds more than this beside the job's own; the --env ones are
 * counted apart. */
#define RUN_FIXED_ARGS 24
/* A batch script's "#!" line we read the interpreter from. */
#define SHEBANG_MAX 256

/* `path` answers "cannot find NAME" on stderr for a root not made yet: the answer asked
 * for, not an error for the job's output, so its stderr goes nowhere meanwhile (this task
 * process runs nothing else at the same time). */
static bool
root_exists (char *const *env, const char *name)
{
  const char *argv[] = { "enter-devroot", "path", name, NULL };
  int saved = fcntl (STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
  int null = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  bool quiet = saved >= 0 && null >= 0 && dup2 (null, STDERR_FILENO) >= 0;
  bool exists = run_and_wait (argv, env, STDOUT_DISCARDED) == 0;
  if (quiet)
    dup2 (saved, STDERR_FILENO);
  if (saved >= 0)
    close (saved);
  if (null >= 0)
    close (null);
  return exists;
}

/* The reference srun pinned REQUEST.image to, from the task's environment, or the image. */
static const char *
image_to_create (char *const *env)
{
  size_t prefix = strlen (PINNED_IMAGE_VAR "="), image = strlen (request.image);
  for (char *const *e = env; *e != NULL; e++)
    if (strncmp (*e, PINNED_IMAGE_VAR "=", prefix) == 0
        && strncmp (*e + prefix, request.image, image) == 0 && (*e)[prefix + image] == ' ')
      return *e + prefix + image + 1;
  return request.image;
}

/* A built-in template srun pinned is created from the image it pinned: create's option
 * for REQUEST.image, and its value into *SOURCE. */
static const char *
create_option (char *const *env, const char **source)
{
  *source = image_to_create (env);
  return *source == request.image && image_is_template (request.image) ? "--template" : "--from";
}

/* The job's named root NAME, from --devroot-image. */
static int
create_root (char *const *env, const char *name)
{
  if (request.image == NULL)
    {
      fprintf (stderr, "%s: devroot %s does not exist, and no --devroot-image says what to "
               "create it from; the command was not run\n", PLUGIN_NAME, request.name);
      return -1;
    }
  const char *source;
  const char *option = create_option (env, &source);
  /* The job's root is made again for the next job of the image: its layers are kept. */
  const char *argv[] = { "enter-devroot", "create", name, "--keep-layers", option, source, NULL };
  fprintf (stderr, "%s: creating devroot %s from %s\n", PLUGIN_NAME, name, request.image);
  if (run_and_wait (argv, env, STDOUT_TO_STDERR) == 0)
    return 0;
  /* Another step of the job may have made the same named root at the same time. */
  if (request.name != NULL && request.name_mode == NAME_AUTO && root_exists (env, name))
    return 0;
  fprintf (stderr, "%s: cannot create the devroot from %s (the line above says why); the "
           "command was not run\n", PLUGIN_NAME, request.image);
  return -1;
}

/* The job's named root as the flag allows: made now, or found. */
static int
make_or_find_root (char *const *env, const char *name)
{
  bool exists = root_exists (env, name);
  if (request.name_mode == NAME_EXEC && !exists)
    {
      fprintf (stderr, "%s: --devroot-name=%s:exec: no such devroot in this job on this host; "
               "the command was not run\n", PLUGIN_NAME, request.name);
      return -1;
    }
  if (request.name_mode == NAME_CREATE && exists)
    {
      fprintf (stderr, "%s: --devroot-name=%s:create: the job has it already; the command was "
               "not run\n", PLUGIN_NAME, request.name);
      return -1;
    }
  return exists ? 0 : create_root (env, name);
}

int
save_target_check (void)
{
  const char *why = save_target_refusal (request.save);
  if (why == NULL)
    return 0;
  if (strcmp (why, SAVE_TARGET_NO_DIR) == 0)
    fprintf (stderr, "%s: --devroot-save=%s: %s; the command was not run\n", PLUGIN_NAME,
             request.save, why);
  else
    fprintf (stderr, "%s: --devroot-save=%s: refused, %s (it is left as it is); the command "
             "was not run\n", PLUGIN_NAME, request.save, why);
  return -1;
}

/* The first task prepares the job's named root; the others wait for it, then find it
 * ready, or failed (the count of the step's tasks: slurm-job.h, as run --ephemeral counts
 * them). */
static int
prepare_root (char *const *env, const char *name)
{
  struct step_count *c = step_shared_lock ();
  if (c == NULL)
    {
      fprintf (stderr, "%s: the step's shared state is missing\n", PLUGIN_NAME);
      return -1;
    }
  int r = 0;
  switch (step_count_join (c))
    {
    case STEP_JOIN_CREATE:
      r = request.save != NULL && save_target_check () < 0 ? -1 : make_or_find_root (env, name);
      step_count_created (c, r == 0);
      break;
    case STEP_JOIN_SHARE:
      break;
    case STEP_JOIN_FAILED:
      fprintf (stderr, "%s: the devroot could not be prepared on this node (another task said "
               "why); the command was not run\n", PLUGIN_NAME);
      r = -1;
      break;
    }
  step_shared_unlock ();
  return r;
}

/* Whether KV's name is one of --devroot-env's NAME,NAME,... */
static bool
passed_by_request (const char *kv)
{
  size_t len = strcspn (kv, "=");
  for (const char *p = request.env; p != NULL && *p != '\0';)
    {
      size_t n = strcspn (p, ",");
      if (n == len && strncmp (p, kv, n) == 0)
        return true;
      p += n + (p[n] == ',');
    }
  return false;
}

/* A batch script lives in slurmd's spool, outside the root: it is fed to its interpreter
 * inside on standard input instead. *INTERP receives the "#!" interpreter (default /bin/sh). */
static int
script_on_stdin (const char *script, char interp[SHEBANG_MAX])
{
  int fd = open (script, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      fprintf (stderr, "%s: cannot open the batch script %s: %s\n", PLUGIN_NAME, script,
               strerror (errno));
      return -1;
    }
  char line[SHEBANG_MAX];
  ssize_t n = pread (fd, line, sizeof line - 1, 0);
  line[n > 0 ? n : 0] = '\0';
  snprintf (interp, SHEBANG_MAX, "/bin/sh");
  if (strncmp (line, "#!", 2) == 0)
    {
      char *p = line + 2 + strspn (line + 2, " \t");
      size_t len = strcspn (p, " \t\n");
      if (len > 0 && p[0] == '/')
        snprintf (interp, SHEBANG_MAX, "%.*s", (int) len, p);
    }
  if (dup2 (fd, STDIN_FILENO) < 0)
    {
      fprintf (stderr, "%s: dup2: %s\n", PLUGIN_NAME, strerror (errno));
      close (fd);
      return -1;
    }
  close (fd);
  return 0;
}

static const char *
env_value (char *const *env, const char *name)
{
  size_t len = strlen (name);
  for (char *const *e = env; *e != NULL; e++)
    if (strncmp (*e, name, len) == 0 && (*e)[len] == '=')
      return *e + len + 1;
  return NULL;
}

/* The job's GPUs on this node, as Slurm's gres/gpu plugin names them for the task: the
 * step's (SLURM_STEP_GPUS), else the job's (SLURM_JOB_GPUS: a batch step), else, where
 * Slurm says it gave the node GPUs (SLURM_GPUS_ON_NODE) but neither of those,
 * CUDA_VISIBLE_DEVICES (never a user's own, nor Slurm's NoDevFiles); NULL when the job has
 * none. SLURM_*_GPUS are the node's indices, never renumbered for a device cgroup as
 * CUDA_VISIBLE_DEVICES may be. */
static const char *
job_gpus (char *const *env)
{
  const char *v = env_value (env, "SLURM_STEP_GPUS");
  if (v == NULL)
    v = env_value (env, "SLURM_JOB_GPUS");
  if (v == NULL && env_value (env, "SLURM_GPUS_ON_NODE") != NULL)
    v = env_value (env, "CUDA_VISIBLE_DEVICES");
  return v != NULL && strcmp (v, "NoDevFiles") != 0 ? v : NULL;
}

/* The --device arguments of the task: --devroot-device's, then for each of the job's GPUs
 * (job_gpus) the device of that name (nvidia-ctk names a GPU by its index, and by its UUID)
 * of config.gpu_kind, into DEVICES (at most MAX, owned); -1 with one line. */
static int
collect_devices (char *const *env, char **devices, size_t max, size_t *n)
{
  *n = 0;
  const char *gpus = config.gpu_kind != NULL ? job_gpus (env) : NULL;
  const char *lists[] = { request.devices, gpus };
  for (size_t l = 0; l < 2; l++)
    for (const char *p = lists[l]; p != NULL && *p != '\0';)
      {
        size_t len = strcspn (p, ",");
        const char *why = "empty";
        if (l == 1 && (len == 0 || cdi_name_check (p, len, &why) < 0))
          {
            fprintf (stderr, "%s: the job's GPUs '%s': '%.*s' does not name a CDI device "
                     "(%s); the command was not run\n", PLUGIN_NAME, gpus, (int) len, p, why);
            return -1;
          }
        if (*n < max && len > 0)
          {
            char *d = NULL;
            if (l == 0)
              d = strndup (p, len);
            else if (asprintf (&d, "%s=%.*s", config.gpu_kind, (int) len, p) < 0)
              d = NULL;
            if (d == NULL)
              return -1;
            devices[(*n)++] = d;
          }
        p += len + (p[len] == ',');
      }
  return 0;
}

/* Items of a comma-separated LIST, at most. */
static size_t
list_items (const char *list)
{
  size_t n = list != NULL;
  for (const char *p = list; p != NULL && *p != '\0'; p++)
    n += *p == ',';
  return n;
}

/* The --bind arguments of the step, collected by mounts_parse. */
struct binds
{
  char **specs;
  size_t n, max;
};

static void
add_bind (const char *spec, void *arg)
{
  struct binds *b = arg;
  if (b->n < b->max)
    b->specs[b->n++] = strdup (spec);
}

/* For --devroot-mount-home: the job's HOME, when it is an absolute path to a directory
 * (looked at by the task, already the job's user; enter-devroot run checks it again as it
 * binds it); NULL with one line. */
static const char *
job_home (char *const *env)
{
  const char *home = NULL, *why = NULL;
  struct stat st;
  for (char *const *e = env; *e != NULL; e++)
    if (strncmp (*e, "HOME=", 5) == 0)
      home = *e + 5;
  if (home == NULL)
    why = "not set";
  else if (home[0] != '/')
    why = "not an absolute path";
  else if (home[strspn (home, "/")] == '\0')
    why = "the root directory";
  else if (strchr (home, ':') != NULL)
    why = "a ':' in it (enter-devroot run --bind SRC:DST)";
  else if (stat (home, &st) < 0)
    why = strerror (errno);
  else if (!S_ISDIR (st.st_mode))
    why = "not a directory";
  if (why == NULL)
    return home;
  fprintf (stderr, "%s: --devroot-mount-home: HOME '%s': %s; the command was not run\n",
           PLUGIN_NAME, home != NULL ? home : "", why);
  return NULL;
}

/* The job's HOME (when HOME is not NULL), --devroot-mounts, and the working directory,
 * each bound at the same path unless --devroot-workdir or default_workdir=root says
 * otherwise, in this order: a mount may go inside the home; -1 with one line. */
static int
collect_binds (const char *cwd, const char *home, struct binds *b)
{
  size_t items = 3; /* the home's, the working directory's, and the last item */
  for (const char *p = request.mounts; p != NULL && *p != '\0'; p++)
    items += *p == ',';
  b->specs = calloc (items, sizeof *b->specs);
  b->max = items;
  b->n = 0;
  const char *why;
  if (b->specs == NULL)
    return -1;
  if (home != NULL)
    {
      char spec[2 * PATH_MAX + 2];
      snprintf (spec, sizeof spec, "%s:%s", home, home);
      add_bind (spec, b);
    }
  if (request.mounts != NULL && mounts_parse (request.mounts, cwd, add_bind, b, &why) < 0)
    {
      fprintf (stderr, "%s: --devroot-mounts '%s': %s\n", PLUGIN_NAME, request.mounts, why);
      return -1;
    }
  if (request.workdir == NULL && config.workdir_submit && strcmp (cwd, "/") != 0)
    {
      char spec[2 * PATH_MAX + 2];
      snprintf (spec, sizeof spec, "%s:%s", cwd, cwd);
      add_bind (spec, b);
    }
  for (size_t i = 0; i < b->n; i++)
    if (b->specs[i] == NULL)
      return -1;
  return 0;
}

/* --devroot-save of a job's named root (a step's own root is saved by run --ephemeral
 * --save): instead of becoming `enter-devroot run`, the task runs it as a child and
 * waits; the last of the node's tasks to see its command end exports the root, so that a
 * failed save is the task's failure, on srun's stderr and in srun's status (an export in
 * slurmstepd after the tasks have exited could only be logged). Signals need no passing
 * on: Slurm signals every process of the step. Never returns. */
__attribute__((noreturn)) static void
run_then_save (spank_t sp, const char *const *argv, char *const *env, const char *name)
{
  uint32_t local_tasks = 0;
  spank_get_item (sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks);
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      fprintf (stderr, "%s: fork: %s\n", PLUGIN_NAME, strerror (errno));
      _exit (1);
    }
  if (pid == 0)
    {
      exec_enter_devroot (argv, env);
      int errsv = errno;
      fprintf (stderr, "%s: cannot run %s: %s\n", PLUGIN_NAME, config.enter_devroot,
               strerror (errsv));
      _exit (errsv == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
    }
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      _exit (1);
  struct step_count *c = step_shared_lock ();
  bool last = c != NULL && step_count_leave (c, local_tasks);
  if (c != NULL)
    step_shared_unlock ();
  int saved = 0;
  if (last)
    {
      const char *export[] = { "enter-devroot", "export", name, request.save, "--compress",
                               save_compression (request.save), "--quiet", NULL };
      saved = run_and_wait (export, env, STDOUT_TO_STDERR);
      if (saved != 0)
        fprintf (stderr, "%s: devroot %s was not saved to %s (the line above says why)\n",
                 PLUGIN_NAME, name, request.save);
    }
  if (WIFSIGNALED (status))
    {
      signal (WTERMSIG (status), SIG_DFL);
      raise (WTERMSIG (status));
    }
  int code = WIFEXITED (status) ? WEXITSTATUS (status) : 1;
  _exit (code != 0 ? code : saved != 0 ? 1 : 0);
}

int
task_init (spank_t sp)
{
  if (!devroot_requested ())
    return 0;
  if (request.refused != NULL)
    {
      fprintf (stderr, "%s\n", request.refused);
      return -1;
    }
  /* A step's own root is run --ephemeral's; a job's named root the plugin's. */
  bool throwaway = request.name == NULL;
  char name[ROOT_NAME_MAX + 1];
  int argc;
  char **job_argv, **env;
  uint32_t step;
  if ((!throwaway && root_name (sp, name) < 0)
      || spank_get_item (sp, S_JOB_ARGV, &argc, &job_argv) != ESPANK_SUCCESS
      || spank_get_item (sp, S_JOB_ENV, &env) != ESPANK_SUCCESS
      || spank_get_item (sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS || argc < 1)
    {
      fprintf (stderr, "%s: cannot read the task's command and environment\n", PLUGIN_NAME);
      return -1;
    }
  /* run --save checks the target too, in its own words: this keeps the option's name in
   * the line, and refuses before the node's first task creates anything. */
  if (throwaway ? request.save != NULL && save_target_check () < 0 : prepare_root (env, name) < 0)
    return -1;

  char cwd[PATH_MAX];
  struct binds binds;
  if (getcwd (cwd, sizeof cwd) == NULL)
    snprintf (cwd, sizeof cwd, "/");
  const char *home = NULL;
  if (request.mount_home && (home = job_home (env)) == NULL)
    return -1;
  if (collect_binds (cwd, home, &binds) < 0)
    return -1;
  size_t n_env = 0, n_devices;
  for (char **e = env; *e != NULL; e++)
    n_env++;
  size_t max_devices = list_items (request.devices) + list_items (job_gpus (env));
  char **devices = calloc (max_devices + 1, sizeof *devices);
  if (devices == NULL || collect_devices (env, devices, max_devices, &n_devices) < 0)
    return -1;
  const char **argv = calloc (RUN_FIXED_ARGS + 2 * (n_env + binds.n + n_devices)
                              + (size_t) argc + 1, sizeof *argv);
  if (argv == NULL)
    return -1;
  size_t i = 0;
  argv[i++] = "enter-devroot";
  argv[i++] = "run";
  const char *workdir = request.workdir;
  if (workdir == NULL && config.workdir_submit && strcmp (cwd, "/") != 0)
    workdir = cwd;
  if (workdir != NULL)
    {
      argv[i++] = "--workdir";
      argv[i++] = workdir;
    }
  for (size_t b = 0; b < binds.n; b++)
    {
      argv[i++] = "--bind";
      argv[i++] = binds.specs[b];
    }
  for (size_t d = 0; d < n_devices; d++)
    {
      argv[i++] = "--device";
      argv[i++] = devices[d];
    }
  if (request.root)
    argv[i++] = "--root";
  if (request.entrypoint)
    argv[i++] = "--entrypoint";
  char home_var[PATH_MAX + sizeof "HOME="];
  if (home != NULL)
    {
      /* As enroot does: the bound home is the command's HOME too. */
      snprintf (home_var, sizeof home_var, "HOME=%s", home);
      argv[i++] = "--env";
      argv[i++] = home_var;
    }
  for (char **e = env; *e != NULL; e++)
    if (strchr (*e, '=') != NULL && passed_by_request (*e))
      {
        argv[i++] = "--env";
        argv[i++] = *e;
      }
  if (throwaway)
    {
      /* The task's environment has the SLURM_* variables run --ephemeral names and counts
       * the step's root by (a batch script's step, numbered by no number, gets a root of
       * its own: it is one task). */
      argv[i++] = "--ephemeral";
      const char *source;
      argv[i++] = create_option (env, &source);
      argv[i++] = source;
      if (request.save != NULL)
        {
          argv[i++] = "--save";
          argv[i++] = request.save;
        }
    }
  else
    argv[i++] = name;
  argv[i++] = "--";
  char interp[SHEBANG_MAX];
  if (step == SLURM_BATCH_SCRIPT)
    {
      if (script_on_stdin (job_argv[0], interp) < 0)
        return -1;
      argv[i++] = interp;
      argv[i++] = "-s";
      argv[i++] = "--";
      for (int a = 1; a < argc; a++)
        argv[i++] = job_argv[a];
    }
  else
    for (int a = 0; a < argc; a++)
      argv[i++] = job_argv[a];
  argv[i] = NULL;
  if (!throwaway && request.save != NULL)
    run_then_save (sp, argv, env, name);
  exec_enter_devroot (argv, env);
  fprintf (stderr, "%s: cannot run %s: %s\n", PLUGIN_NAME, config.enter_devroot, strerror (errno));
  free (argv);
  return -1;
}
