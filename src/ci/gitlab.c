/* enter-devroot gitlab: a GitLab Runner custom executor driver.
 *
 * The runner calls four programs in order (docs/executors/custom.md), here one command
 * with an action each:
 *   config    print the JSON the runner reads: builds_dir, cache_dir, builds_dir_is_shared,
 *             hostname, driver{name,version}, and job_env for the later actions;
 *   prepare   make the job's devroot from $CUSTOM_ENV_CI_JOB_IMAGE (or --default-image);
 *   run SCRIPT STAGE   feed the runner's generated script to a shell inside that devroot
 *             (with run_args' --device VENDOR/CLASS=NAME: the CDI devices every stage gets);
 *   cleanup   remove the devroot and whatever still runs in it (never fails the job).
 * Job variables arrive prefixed with CUSTOM_ENV_. A failing script exits with
 * $BUILD_FAILURE_EXIT_CODE (the script's own status in $BUILD_EXIT_CODE_FILE when set);
 * anything that is not the script's doing exits with $SYSTEM_FAILURE_EXIT_CODE and one
 * line naming the cause. Cancellation: the runner signals our process group (SIGTERM,
 * then SIGKILL); `run` passes SIGTERM to the job and its supervisor takes the job's
 * processes down with it, and cleanup's `remove --force` stops anything left.
 *
 * Where the job's files are: in user-namespace mode the builds and cache directories are
 * host directories bound into the devroot at the same paths, so they outlive the job as
 * the runner expects; in chroot mode nothing can be mounted, so they are directories of
 * the same paths inside the devroot, gone with it (no cache between jobs). prepare decides
 * which, once, and records it for the stages. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ci/ci.h"
#include "ci/driver.h"
#include "common/atomic-file.h"
#include "common/cdi-name.h"
#include "common/name.h"
#include "common/paths.h"
#include "common/util.h"

#define DRIVER "gitlab"
/* The most --device options one driver command takes. */
#define GITLAB_DEVICES_MAX 64

/* Exit statuses when the runner gives none (it always does; a hand run may not). */
#define DEFAULT_BUILD_FAILURE 1
#define DEFAULT_SYSTEM_FAILURE 2

struct gitlab
{
  const char *builds_dir;
  const char *cache_dir;
  const char *default_image;
  const char *mode;        /* auto (decided by prepare), userns or chroot */
  const char *cacert;
  bool insecure_http;
  bool local_images;       /* prepare --allow-local-images: the administrator's choice */
  const char *script;      /* run: the script's path on this host */
  const char *stage;       /* run: the stage's name */
  const char *devices[GITLAB_DEVICES_MAX + 1]; /* run --device: given to every stage */
  size_t n_devices;
};

static int system_failure;

__attribute__((noreturn, format (printf, 1, 2))) static void
fail_system (const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  ci_vfail (system_failure, DRIVER, format, ap);
}

static const char *
job_var (const char *name)
{
  cleanup_free char *full = xasprintf ("CUSTOM_ENV_%s", name);
  const char *v = getenv (full);
  return v != NULL && v[0] != '\0' ? v : NULL;
}

/* ---- Names and places. */

/* The job's devroot: its runner, job id and concurrency slot, so that concurrent jobs
 * never share one and a retried prepare finds its own. */
static char *
job_root_name (void)
{
  const char *id = job_var ("CI_JOB_ID");
  const char *slot = job_var ("CI_CONCURRENT_ID");
  const char *runner = job_var ("CI_RUNNER_SHORT_TOKEN");
  if (id == NULL || strspn (id, "0123456789") != strlen (id) || strlen (id) > 20)
    fail_system ("CUSTOM_ENV_CI_JOB_ID is %s: not a job id (is this run by gitlab-runner?)",
                 id == NULL ? "unset" : "not a number");
  if (slot == NULL || strspn (slot, "0123456789") != strlen (slot) || strlen (slot) > 8)
    slot = "0";
  cleanup_free char *name = NULL;
  if (runner != NULL && strlen (runner) <= 16 && name_is_valid (runner))
    name = xasprintf ("gitlab-%s-%s-%s", runner, id, slot);
  else
    name = xasprintf ("gitlab-%s-%s", id, slot);
  if (!name_is_valid (name))
    fail_system ("cannot name the job's devroot ('%s')", name);
  return steal_pointer (&name);
}

static char *
driver_dir (const char *sub)
{
  cleanup_free char *data = paths_xdg_dir ("XDG_DATA_HOME", ".local/share");
  return xasprintf ("%s/enter-devroot/gitlab/%s", data, sub);
}

/* Where prepare records the mode it chose for NAME's stages. */
static char *
mode_file (const char *name)
{
  cleanup_free char *dir = driver_dir ("jobs");
  return xasprintf ("%s/%s.mode", dir, name);
}

static void
make_dir (const char *path)
{
  if (mkdir_p (path, 0700) < 0)
    fail_system ("cannot create %s: %s", path, strerror (errno));
}

/* ---- config */

static void
json_string (const char *key, const char *value, bool comma)
{
  printf ("  \"%s\": \"", key);
  for (const char *s = value; *s != '\0'; s++)
    if (*s == '"' || *s == '\\')
      printf ("\\%c", *s);
    else if ((unsigned char) *s < 0x20)
      printf ("\\u%04x", *s);
    else
      putchar (*s);
  printf ("\"%s\n", comma ? "," : "");
}

static void
gitlab_config (const struct gitlab *g)
{
  cleanup_free char *builds = g->builds_dir != NULL ? xstrdup (g->builds_dir) : driver_dir ("builds");
  cleanup_free char *cache = g->cache_dir != NULL ? xstrdup (g->cache_dir) : driver_dir ("cache");
  if (builds[0] != '/' || cache[0] != '/')
    fail_system ("--builds-dir and --cache-dir must be absolute paths");
  char host[256] = "";
  if (gethostname (host, sizeof host - 1) < 0)
    host[0] = '\0';
  printf ("{\n");
  json_string ("builds_dir", builds, true);
  json_string ("cache_dir", cache, true);
  printf ("  \"builds_dir_is_shared\": false,\n");
  json_string ("hostname", host, true);
  printf ("  \"driver\": {\"name\": \"%s\", \"version\": \"%s\"},\n", PROGRAM_NAME, PACKAGE_VERSION);
  /* For the later actions, not the job: where the directories are. */
  printf ("  \"job_env\": {\n  ");
  json_string ("ENTER_DEVROOT_GITLAB_BUILDS_DIR", builds, true);
  printf ("  ");
  json_string ("ENTER_DEVROOT_GITLAB_CACHE_DIR", cache, false);
  printf ("  }\n}\n");
}

/* The directories config announced (job_env), else the defaults it would have. */
static char *
announced_dir (const char *variable, const char *sub)
{
  const char *v = getenv (variable);
  if (v != NULL && v[0] == '/')
    return xstrdup (v);
  return driver_dir (sub);
}

/* ---- prepare */

static void
refuse_services (void)
{
  const char *services = job_var ("CI_JOB_SERVICES");
  if (services == NULL || strcmp (services, "[]") == 0 || strcmp (services, "null") == 0)
    return;
  /* The job asked for something this driver cannot give: its configuration's fault, and
   * retrying would not help, so a build failure. */
  ci_fail (ci_status_from_env ("BUILD_FAILURE_EXIT_CODE", DEFAULT_BUILD_FAILURE), DRIVER,
           "services: are not supported by the enter-devroot driver yet (the job names %s); "
           "start what the job needs in its script", services);
}

/* userns when the devroot can be entered with the builds directory bound there, else
 * chroot: what `auto` would pick, tried for real with a bind. */
static const char *
choose_mode (const struct gitlab *g, const char *name, const char *builds)
{
  if (strcmp (g->mode, "auto") != 0)
    return g->mode;
  cleanup_strv char **args = NULL;
  ci_push_run (&args, name, "userns");
  ci_pushf (&args, "--bind=%s:%s", builds, builds);
  ci_push (&args, "--");
  ci_push (&args, "true");
  /* `true` may be missing from a distroless image; sh then, and failing that chroot. */
  if (ci_tool_quiet (args) == 0)
    return "userns";
  free (args[strv_length (args) - 1]);
  args[strv_length (args) - 1] = xstrdup ("/bin/sh");
  ci_push (&args, "-c");
  ci_push (&args, ":");
  return ci_tool_quiet (args) == 0 ? "userns" : "chroot";
}

static void
write_mode (const char *name, const char *mode)
{
  cleanup_free char *dir = driver_dir ("jobs");
  make_dir (dir);
  cleanup_free char *path = mode_file (name);
  if (atomic_file_write (AT_FDCWD, path, mode, strlen (mode), 0600, 0) < 0)
    fail_system ("cannot record the job's mode in %s: %s", path, strerror (errno));
}

static char *
read_mode (const char *name)
{
  cleanup_free char *path = mode_file (name);
  size_t len;
  cleanup_free char *text = load_file_at (AT_FDCWD, path, 16, &len);
  if (text == NULL || (strcmp (text, "userns") != 0 && strcmp (text, "chroot") != 0))
    fail_system ("the job's devroot was not prepared (%s: %s)", path,
                 text == NULL ? strerror (errno) : "not a mode");
  return steal_pointer (&text);
}

static void
gitlab_prepare (const struct gitlab *g)
{
  refuse_services ();
  cleanup_free char *name = job_root_name ();
  const char *image = job_var ("CI_JOB_IMAGE");
  /* The administrator's default may be local; the job's own image only when allowed. */
  bool local_ok = g->local_images || image == NULL;
  if (image == NULL)
    image = g->default_image;
  if (image == NULL)
    ci_fail (ci_status_from_env ("BUILD_FAILURE_EXIT_CODE", DEFAULT_BUILD_FAILURE), DRIVER,
             "the job names no image: and the runner gives no default (prepare_args: "
             "--default-image IMAGE)");
  cleanup_free char *builds = announced_dir ("ENTER_DEVROOT_GITLAB_BUILDS_DIR", "builds");
  cleanup_free char *cache = announced_dir ("ENTER_DEVROOT_GITLAB_CACHE_DIR", "cache");

  /* A retried prepare (the runner tries three times) starts from nothing. */
  cleanup_free char *existing = ci_root_path (name);
  if (existing != NULL)
    ci_remove_root (name);

  cleanup_strv char **args = NULL;
  cleanup_free char *registry = NULL;
  ci_push (&args, "create");
  ci_push (&args, name);
  ci_push_layout (&args, g->mode);
  if (!ci_image_source (image, local_ok, &args, &registry))
    ci_fail (ci_status_from_env ("BUILD_FAILURE_EXIT_CODE", DEFAULT_BUILD_FAILURE), DRIVER,
             "image: '%s' names a file or directory on the runner's host; jobs may not read "
             "those unless the runner allows it (prepare_args: --allow-local-images)", image);
  if (g->cacert != NULL)
    ci_pushf (&args, "--cacert=%s", g->cacert);
  if (g->insecure_http)
    ci_push (&args, "--insecure-http");
  ci_push (&args, "--quiet");
  /* The job's own registry credentials, for its own registry only. */
  char *auth = NULL;
  const char *ci_registry = job_var ("CI_REGISTRY");
  if (registry != NULL && ci_registry != NULL && strcmp (registry, ci_registry) == 0)
    {
      const char *user = job_var ("CI_REGISTRY_USER");
      const char *password = job_var ("CI_REGISTRY_PASSWORD");
      if (user == NULL && job_var ("CI_JOB_TOKEN") != NULL)
        user = "gitlab-ci-token", password = job_var ("CI_JOB_TOKEN");
      auth = ci_credentials_write (registry, user, password);
    }
  cleanup_free char *auth_env = auth != NULL ? xasprintf ("REGISTRY_AUTH_FILE=%s", auth) : NULL;
  char *env[] = { auth_env, NULL };
  fprintf (stderr, "enter-devroot: preparing devroot %s from %s\n", name, image);
  int status = ci_tool (args, -1, env);
  ci_credentials_remove (auth);
  if (status != 0)
    fail_system ("cannot create the job's devroot from '%s' (enter-devroot create exited %d)",
                 image, status);

  make_dir (builds);
  make_dir (cache);
  const char *mode = choose_mode (g, name, builds);
  if (strcmp (mode, "chroot") == 0)
    {
      /* Nothing can be bound: the same paths, inside the devroot. */
      cleanup_strv char **mk = NULL;
      ci_push_run (&mk, name, "chroot");
      ci_push (&mk, "--");
      ci_push (&mk, "mkdir");
      ci_push (&mk, "-p");
      ci_push (&mk, builds);
      ci_push (&mk, cache);
      if (ci_tool (mk, -1, NULL) != 0)
        fail_system ("cannot create %s and %s inside the job's devroot", builds, cache);
    }
  write_mode (name, mode);
  fprintf (stderr, "enter-devroot: devroot %s ready (mode %s)\n", name, mode);
}

/* ---- run */

/* The cap on a stage's script, which the driver holds whole before the stage starts (a
 * truncated script must never run); the runner's are kilobytes. */
#define SCRIPT_MAX (64 * 1024 * 1024)
#define SCRIPT_MAX_TEXT "64 MiB"

/* What the wrapper inside answers, a line, once the script is copied and the shell is
 * about to start: a status the script could have chosen is the script's only after it. */
#define STARTED "started"

/* The shell command that runs a stage inside. Its standard input is the driver's socket
 * (ci_tool_talk): it copies the script from it into the devroot, so that the script's own
 * commands do not read the rest of the script, answers STARTED on it, and lets go of it
 * before the script runs, which gets an empty file of its own instead (chroot mode may
 * have no /dev/null). It runs the copy with bash where the root has it (the runner
 * generates bash; its docker executor falls back to sh the same way). The answer comes
 * back over the socket, not through a file the driver would read from the host: an
 * overlay root's tree is mounted only in the job's namespaces. $1 names the copy. */
#define WRAPPER \
  "set -e; d=/.enter-devroot-ci; mkdir -p \"$d\"; f=\"$d/$1\"; cat > \"$f.sh\"; " \
  ": > \"$f.in\"; echo " STARTED " >&0; exec < \"$f.in\"; " \
  "set +e; if b=$(command -v bash); then \"$b\" \"$f.sh\"; else sh \"$f.sh\"; fi; " \
  "s=$?; rm -f \"$f.sh\" \"$f.in\"; exit $s"

static int
gitlab_run (const struct gitlab *g)
{
  cleanup_free char *name = job_root_name ();
  cleanup_free char *mode = read_mode (name);
  cleanup_free char *builds = announced_dir ("ENTER_DEVROOT_GITLAB_BUILDS_DIR", "builds");
  cleanup_free char *cache = announced_dir ("ENTER_DEVROOT_GITLAB_CACHE_DIR", "cache");
  size_t len;
  cleanup_free char *script = load_file_at (AT_FDCWD, g->script, SCRIPT_MAX, &len);
  if (script == NULL)
    fail_system ("cannot read the stage's script %s: %s", g->script,
                 errno == EFBIG ? "larger than " SCRIPT_MAX_TEXT : strerror (errno));

  cleanup_free char *copy = xasprintf ("%s.%ld", g->stage, (long) getpid ());
  for (char *s = copy; *s != '\0'; s++)
    if (*s == '/')
      *s = '_';
  cleanup_strv char **args = NULL;
  ci_push_run (&args, name, mode);
  if (strcmp (mode, "userns") == 0)
    {
      ci_pushf (&args, "--bind=%s:%s", builds, builds);
      ci_pushf (&args, "--bind=%s:%s", cache, cache);
    }
  for (size_t i = 0; i < g->n_devices; i++)
    ci_pushf (&args, "--device=%s", g->devices[i]);
  ci_push (&args, "--");
  ci_push (&args, "/bin/sh");
  ci_push (&args, "-c");
  ci_push (&args, WRAPPER);
  ci_push (&args, "enter-devroot-gitlab");
  ci_push (&args, copy);
  char reply[sizeof STARTED "\n" + 1];
  int status = ci_tool_talk (args, script, len, false, reply, sizeof reply);
  if (strcmp (reply, STARTED "\n") != 0)
    fail_system ("stage %s: cannot start a shell in the job's devroot %s (enter-devroot run "
                 "exited %d)", g->stage, name, status);
  if (status == 0)
    return 0;
  const char *file = getenv ("BUILD_EXIT_CODE_FILE");
  if (file != NULL && file[0] != '\0')
    {
      cleanup_free char *text = xasprintf ("%d\n", status);
      cleanup_fd int fd = open (file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0 || write_all (fd, text, strlen (text)) < 0)
        fail_system ("cannot write the exit code to %s: %s", file, strerror (errno));
    }
  return ci_status_from_env ("BUILD_FAILURE_EXIT_CODE", DEFAULT_BUILD_FAILURE);
}

/* ---- cleanup */

static int
gitlab_cleanup (void)
{
  cleanup_free char *name = job_root_name ();
  cleanup_free char *root = ci_root_path (name);
  if (root != NULL)
    ci_remove_root (name);
  cleanup_free char *path = mode_file (name);
  unlink (path);
  /* The runner ignores cleanup's status; a nonzero one only adds noise to the log. */
  return 0;
}

/* ---- Command line. */

static const char usage[] =
  "usage: enter-devroot gitlab config [--builds-dir DIR] [--cache-dir DIR]\n"
  "       enter-devroot gitlab prepare [--default-image IMAGE] [--mode auto|userns|chroot]\n"
  "                                    [--cacert FILE] [--insecure-http]\n"
  "                                    [--allow-local-images]\n"
  "       enter-devroot gitlab run [--device VENDOR/CLASS=NAME]... SCRIPT STAGE\n"
  "       enter-devroot gitlab cleanup\n";

static bool
take_option (char **argv, int *i, const char *opt, const char **value)
{
  size_t n = strlen (opt);
  if (strncmp (argv[*i], opt, n) != 0)
    return false;
  if (argv[*i][n] == '=')
    *value = argv[*i] + n + 1;
  else if (argv[*i][n] == '\0' && argv[*i + 1] != NULL)
    *value = argv[++*i];
  else
    return false;
  (*i)++;
  return true;
}

int
ci_gitlab (char **argv)
{
  system_failure = ci_status_from_env ("SYSTEM_FAILURE_EXIT_CODE", DEFAULT_SYSTEM_FAILURE);
  if (argv[0] == NULL)
    ci_fail (system_failure, DRIVER, "missing action: config, prepare, run or cleanup\n%s", usage);
  const char *action = argv[0];
  struct gitlab g = { .mode = "auto" };
  char *words[3] = { NULL };
  int n_words = 0;
  for (int i = 1; argv[i] != NULL;)
    {
      if (take_option (argv, &i, "--builds-dir", &g.builds_dir)
          || take_option (argv, &i, "--cache-dir", &g.cache_dir)
          || take_option (argv, &i, "--default-image", &g.default_image)
          || take_option (argv, &i, "--mode", &g.mode)
          || take_option (argv, &i, "--cacert", &g.cacert))
        continue;
      const char *device, *why;
      if (take_option (argv, &i, "--device", &device))
        {
          if (cdi_device_name_check (device, &why) < 0)
            ci_fail (system_failure, DRIVER, "--device '%s': %s", device, why);
          if (g.n_devices == GITLAB_DEVICES_MAX)
            ci_fail (system_failure, DRIVER, "more than %d --device", GITLAB_DEVICES_MAX);
          g.devices[g.n_devices++] = device;
          continue;
        }
      if (strcmp (argv[i], "--insecure-http") == 0)
        g.insecure_http = true;
      else if (strcmp (argv[i], "--allow-local-images") == 0)
        g.local_images = true;
      else if (argv[i][0] == '-' || n_words == 2)
        ci_fail (system_failure, DRIVER, "%s: unexpected argument '%s'\n%s", action, argv[i], usage);
      else
        words[n_words++] = argv[i];
      i++;
    }
  if (strcmp (g.mode, "auto") != 0 && strcmp (g.mode, "userns") != 0
      && strcmp (g.mode, "chroot") != 0)
    ci_fail (system_failure, DRIVER, "--mode '%s': expected auto, userns or chroot", g.mode);
  bool is_run = strcmp (action, "run") == 0;
  if (is_run ? n_words != 2 : n_words != 0)
    ci_fail (system_failure, DRIVER, "%s: %s\n%s", action,
             is_run ? "expects SCRIPT STAGE (the runner appends them)" : "takes no argument",
             usage);
  if (strcmp (action, "config") == 0)
    gitlab_config (&g);
  else if (strcmp (action, "prepare") == 0)
    gitlab_prepare (&g);
  else if (is_run)
    {
      g.script = words[0];
      g.stage = words[1];
      return gitlab_run (&g);
    }
  else if (strcmp (action, "cleanup") == 0)
    return gitlab_cleanup ();
  else
    ci_fail (system_failure, DRIVER, "unknown action '%s'\n%s", action, usage);
  if (fflush (stdout) != 0 || ferror (stdout))
    fail_system ("cannot write to standard output");
  return 0;
}
