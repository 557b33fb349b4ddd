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
 * Job variables arrive prefixed with CUSTOM_ENV_, after the runner's predefined ones, so a
 * job can set any of them (CUSTOM_ENV_CI_JOB_ID included): who the job is comes from the
 * runner's job response instead ($JOB_RESPONSE_FILE, the job as GitLab sent it), and
 * nothing the driver names, removes or binds follows a variable the job could have set.
 * A failing script exits with $BUILD_FAILURE_EXIT_CODE (the script's own status in
 * $BUILD_EXIT_CODE_FILE when set); anything that is not the script's doing exits with
 * $SYSTEM_FAILURE_EXIT_CODE and one line naming the cause. Cancellation: the runner
 * signals our process group (SIGTERM, then SIGKILL); `run` passes SIGTERM to the job and
 * its supervisor takes the job's processes down with it, and cleanup's `remove --force`
 * stops anything left.
 *
 * Where the job's files are: in user-namespace mode the job's own project directory and
 * its own cache directory (the runner's paths for its project, from the job response) are
 * host directories bound into the devroot, so they outlive the job as the runner expects,
 * and no other project's are there; in chroot mode nothing can be mounted, so they are
 * directories of the same paths inside the devroot, gone with it (no cache between jobs).
 * prepare decides which, once, and records it for the stages. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ci/ci.h"
#include "ci/driver.h"
#include "common/atomic-file.h"
#include "common/cdi-name.h"
#include "common/meta.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"

#define DRIVER "gitlab"
/* The most --device options one driver command takes. */
#define GITLAB_DEVICES_MAX 64

/* Exit statuses when the runner gives none (it always does; a hand run may not). */
#define DEFAULT_BUILD_FAILURE 1
#define DEFAULT_SYSTEM_FAILURE 2

/* What config tells the later actions through job_env. The runner puts job_env in their
 * environment as it is, and a job's own variables only under CUSTOM_ENV_: no job can set
 * these. */
#define ENV_BUILDS_DIR "ENTER_DEVROOT_GITLAB_BUILDS_DIR"
#define ENV_CACHE_DIR "ENTER_DEVROOT_GITLAB_CACHE_DIR"
#define ENV_ALLOW_ROOT "ENTER_DEVROOT_GITLAB_ALLOW_ROOT"

/* The runner's own binary, which its cache and artifact stages run inside the job
 * (main.go: the custom executor's RunnerCommand), and where the job finds it: a directory
 * of every image's PATH. */
#define RUNNER_BINARY "gitlab-runner"
#define RUNNER_INSIDE "/usr/local/bin/" RUNNER_BINARY

/* chroot mode's stand-in for /dev/null: an empty regular file anyone may write, as the
 * Debian templates carry (rootfs-templates/debian/build.sh). */
#define DEV_NULL_MODE 0666

/* The cap on the runner's job response (the job's steps and variables: kilobytes) and on
 * a stage's script, each held whole (a truncated script must never run). */
#define INPUT_MAX (64 * 1024 * 1024)
#define INPUT_MAX_TEXT "64 MiB"

struct gitlab
{
  const char *builds_dir;
  const char *cache_dir;
  const char *default_image;
  const char *mode;        /* auto (decided by prepare), userns or chroot */
  const char *cacert;
  bool insecure_http;
  bool local_images;       /* prepare --allow-local-images: the administrator's choice */
  bool allow_root;         /* --allow-root, or config's in job_env */
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

static char *
driver_dir (const char *sub)
{
  cleanup_free char *data = paths_xdg_dir ("XDG_DATA_HOME", ".local/share");
  return xasprintf ("%s/enter-devroot/gitlab/%s", data, sub);
}

static void
make_dir (const char *path)
{
  if (mkdir_p (path, 0700) < 0)
    fail_system ("cannot create %s: %s", path, strerror (errno));
}

/* PATH cleaned as Go's path.Clean cleans a rooted path (the runner joins its directories
 * with path.Join): no empty or "." component, a ".." taking the one before it (nothing
 * above the root), no trailing '/'. "/" for the root itself. */
static char *
clean_rooted (const char *path)
{
  cleanup_free char *copy = xstrdup (path);
  cleanup_free char **parts = xcalloc (strlen (path) / 2 + 2, sizeof (char *));
  size_t n = 0;
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c != NULL; c = strtok_r (NULL, "/", &save))
    if (strcmp (c, "..") == 0)
      n -= n > 0;
    else if (strcmp (c, ".") != 0)
      parts[n++] = c;
  struct strbuf b = { 0 };
  for (size_t i = 0; i < n; i++)
    {
      strbuf_append_c (&b, '/');
      strbuf_append (&b, parts[i]);
    }
  if (n == 0)
    strbuf_append_c (&b, '/');
  return strbuf_steal (&b);
}

/* ---- The job, from the runner's job response. */

/* What the job is, from $JOB_RESPONSE_FILE: the JSON the runner got from GitLab and
 * wrote for its driver (executors/custom: "when the trusted job context is required").
 * No job variable reaches it. */
struct job
{
  char *root;             /* its devroot: gitlab-ID, ID the job's id */
  char *project;          /* its project's path as the runner makes its directories, or NULL */
  enum { ENTRY_IMAGE, ENTRY_NONE, ENTRY_JOB } entry;   /* its image: entrypoint: */
  char **entrypoint;      /* ENTRY_JOB's */
};

static void
job_clear (struct job *job)
{
  free (job->root);
  free (job->project);
  strv_free (job->entrypoint);
}

/* The runner's ProjectSlug (common/build.go), from git_info.repo_url: the URL's path,
 * percent-decoded, less a ".git" suffix, cleaned. -1 where the runner finds none (not a
 * URL with a host, a bad escape, ".." in what is left), which makes it fall back to
 * "project-ID"; else 0 and *OUT, without its leading '/' ("" for the root). */
static int
repo_url_slug (const char *url, char **out)
{
  static const char scheme_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789+-.";
  static const char hex[] = "0123456789abcdef";
  for (const char *c = url; *c != '\0'; c++)
    if ((unsigned char) *c < 0x20 || *c == 0x7f)
      return -1;
  size_t scheme = strspn (url, scheme_chars);
  if (scheme == 0 || strchr ("0123456789+-.", url[0]) != NULL
      || strncmp (url + scheme, "://", 3) != 0)
    return -1;
  const char *authority = url + scheme + 3;
  size_t alen = strcspn (authority, "/?#");
  const char *host = authority;
  for (size_t i = 0; i < alen; i++)
    if (authority[i] == '@')
      host = authority + i + 1;
  if (host == authority + alen)
    return -1;
  const char *raw = authority + alen;
  size_t rlen = strcspn (raw, "?#");
  struct strbuf b = { 0 };
  for (size_t i = 0; i < rlen; i++)
    {
      if (raw[i] != '%')
        {
          strbuf_append_c (&b, raw[i]);
          continue;
        }
      const char *h1 = i + 2 < rlen ? strchr (hex, tolower ((unsigned char) raw[i + 1])) : NULL;
      const char *h2 = h1 != NULL ? strchr (hex, tolower ((unsigned char) raw[i + 2])) : NULL;
      /* Go: "invalid URL escape"; and a NUL, which no path holds. */
      if (h1 == NULL || h2 == NULL || (h1 == hex && h2 == hex))
        {
          free (strbuf_steal (&b));
          return -1;
        }
      strbuf_append_c (&b, (char) ((h1 - hex) << 4 | (h2 - hex)));
      i += 2;
    }
  cleanup_free char *path = strbuf_steal (&b);
  if (path[0] == '\0')
    return -1; /* path.Clean("") is ".": "invalid path" */
  if (str_has_suffix (path, ".git"))
    path[strlen (path) - strlen (".git")] = '\0';
  cleanup_free char *clean = clean_rooted (path);
  if (strstr (clean, "..") != NULL)
    return -1;
  *out = xstrdup (clean + 1);
  return 0;
}

/* The job's project path as the runner makes its directories: its ProjectSlug, else
 * "project-ID" from job_info.project_id; NULL when that is the builds directory's own
 * level (a URL with no path) or there is no project id to fall back on. */
static char *
response_project (json_t *response)
{
  char *slug = NULL;
  json_t *url = json_object_get (json_object_get (response, "git_info"), "repo_url");
  if (json_is_string (url) && repo_url_slug (json_string_value (url), &slug) == 0)
    {
      if (slug[0] != '\0')
        return slug;
      free (slug);
      return NULL;
    }
  json_t *id = json_object_get (json_object_get (response, "job_info"), "project_id");
  if (!json_is_integer (id) || json_integer_value (id) <= 0)
    return NULL;
  return xasprintf ("project-%" JSON_INTEGER_FORMAT, json_integer_value (id));
}

/* image.entrypoint: absent or [] leaves the image's Entrypoint, [""] disables it (as the
 * docker executor gives Docker), anything else replaces it. */
static void
response_entrypoint (json_t *response, const char *path, struct job *job)
{
  json_t *e = json_object_get (json_object_get (response, "image"), "entrypoint");
  size_t n = json_array_size (e);
  job->entry = ENTRY_IMAGE;
  if (n == 0)
    return;
  if (n == 1 && json_is_string (json_array_get (e, 0))
      && json_string_length (json_array_get (e, 0)) == 0)
    {
      job->entry = ENTRY_NONE;
      return;
    }
  job->entry = ENTRY_JOB;
  job->entrypoint = xcalloc (n + 1, sizeof (char *));
  for (size_t i = 0; i < n; i++)
    {
      json_t *v = json_array_get (e, i);
      if (!json_is_string (v))
        fail_system ("%s: image.entrypoint: entry %zu is not a string", path, i);
      job->entrypoint[i] = xstrdup (json_string_value (v));
    }
}

/* Load the job. CHECK_ID: refuse a CUSTOM_ENV_CI_JOB_ID that is not the response's id,
 * which only a job's own variables can make (they come after the runner's); it would be
 * a job naming itself after another. */
static void
job_load (struct job *job, bool check_id)
{
  const char *path = getenv ("JOB_RESPONSE_FILE");
  if (path == NULL || path[0] == '\0')
    fail_system ("JOB_RESPONSE_FILE is unset: the job is known from the runner's job "
                 "response (is this run by gitlab-runner?)");
  size_t len;
  cleanup_free char *text = load_file_at (AT_FDCWD, path, INPUT_MAX, &len);
  if (text == NULL)
    fail_system ("cannot read the runner's job response %s: %s", path,
                 errno == EFBIG ? "larger than " INPUT_MAX_TEXT : strerror (errno));
  json_error_t error;
  json_t *response = json_loadb (text, len, 0, &error);
  json_t *id = json_object_get (response, "id");
  if (!json_is_integer (id) || json_integer_value (id) <= 0)
    {
      json_decref (response);
      fail_system ("%s: not the runner's job response (%s)", path,
                   response == NULL ? error.text : "no job id");
    }
  *job = (struct job) { 0 };
  job->root = xasprintf ("gitlab-%" JSON_INTEGER_FORMAT, json_integer_value (id));
  const char *said = job_var ("CI_JOB_ID");
  if (check_id && (said == NULL || strcmp (said, job->root + strlen ("gitlab-")) != 0))
    {
      cleanup_free char *shown = str_one_line (xstrdup (said != NULL ? said : ""));
      fail_system ("CUSTOM_ENV_CI_JOB_ID is '%.64s' but the runner's job response is job "
                   "%s: refused (a job's variables may not name another job)", shown,
                   job->root + strlen ("gitlab-"));
    }
  job->project = response_project (response);
  response_entrypoint (response, path, job);
  json_decref (response);
}

/* ---- The job's directories. */

/* Which of this host's directories the job's stages see (user-namespace mode), and where:
 * its project's own, nothing of another project's. */
struct job_dirs
{
  char *project_host;     /* the project's directory for this runner and slot, or NULL */
  char *project_inside;   /* bound at the parent of CI_PROJECT_DIR */
  char *project_rel;      /* project_host below the builds directory */
  char *cache_host;       /* the project's cache directory, or NULL */
  char *cache_inside;     /* bound at the runner's cache directory for it */
  char *cache_rel;        /* cache_host below the cache directory */
};

static void
job_dirs_clear (struct job_dirs *d)
{
  free (d->project_host);
  free (d->project_inside);
  free (d->project_rel);
  free (d->cache_host);
  free (d->cache_inside);
  free (d->cache_rel);
}

/* PROJECT as one file name, '%' and '/' percent-encoded: no project's directory here is
 * another's, or inside another's, whatever their paths (a group a/x.d beside a project
 * a/x). NULL when that is no file name. */
static char *
one_name (const char *project)
{
  struct strbuf b = { 0 };
  for (const char *c = project; *c != '\0'; c++)
    if (*c == '%')
      strbuf_append (&b, "%25");
    else if (*c == '/')
      strbuf_append (&b, "%2F");
    else
      strbuf_append_c (&b, *c);
  char *name = strbuf_steal (&b);
  if (strlen (name) > NAME_MAX || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    {
      free (name);
      return NULL;
    }
  return name;
}

/* With a shared builds directory (what config answers) the runner's project directory is
 * BUILDS/RUNNER/SLOT/PROJECT (build.go ProjectUniqueDir): its short token and the
 * project's concurrency slot, which the job response does not give, then the project's
 * path, which it does. So $CUSTOM_ENV_CI_PROJECT_DIR is taken for RUNNER and SLOT only,
 * two plain names, and must end in the job's own PROJECT. Returns "RUNNER/SLOT", NULL for
 * anything else (GIT_CLONE_PATH, GIT_STRATEGY=empty's "-empty", a job's variable). */
static char *
project_slot (const char *builds, const char *project)
{
  const char *dir = job_var ("CI_PROJECT_DIR");
  size_t n = strlen (builds);
  if (dir == NULL || strncmp (dir, builds, n) != 0 || dir[n] != '/')
    return NULL;
  const char *start = dir + n + 1, *p = start;
  for (int i = 0; i < 2; i++)
    {
      size_t len = strcspn (p, "/");
      if (len == 0 || p[len] != '/' || (len == 1 && p[0] == '.')
          || (len == 2 && p[0] == '.' && p[1] == '.'))
        return NULL;
      p += len + 1;
    }
  if (strcmp (p, project) != 0)
    return NULL;
  return xasprintf ("%.*s", (int) (p - 1 - start), start);
}

/* The job's directories, from the job response (its project) and config's BUILDS and
 * CACHE (clean paths). On this host each project has one directory per runner and slot,
 * BUILDS/RUNNER/SLOT/NAME (NAME: one_name), bound at the parent of its project directory
 * inside: the runner removes the project directory itself before a clone (`rm -r -f`),
 * which a mount point would refuse. Its cache directory CACHE/NAME is bound at the
 * runner's CACHE/PROJECT. */
static void
job_dirs (struct job_dirs *d, const struct job *job, const char *builds, const char *cache)
{
  *d = (struct job_dirs) { 0 };
  cleanup_free char *name = job->project != NULL ? one_name (job->project) : NULL;
  if (name == NULL)
    return;
  d->cache_rel = xstrdup (name);
  d->cache_host = xasprintf ("%s/%s", cache, name);
  d->cache_inside = xasprintf ("%s/%s", strcmp (cache, "/") == 0 ? "" : cache, job->project);
  cleanup_free char *slot = project_slot (builds, job->project);
  if (slot == NULL)
    return;
  const char *dir = job_var ("CI_PROJECT_DIR");
  d->project_rel = xasprintf ("%s/%s", slot, name);
  d->project_host = xasprintf ("%s/%s", builds, d->project_rel);
  d->project_inside = xasprintf ("%.*s", (int) (strrchr (dir, '/') - dir), dir);
}

/* REL's directories below BASE, made (0700) where missing, through no symlink: the levels
 * below the builds and cache directories are the driver's, and what a job makes inside
 * its own directory must never lead another job's bind elsewhere. */
static void
make_dirs_below (const char *base, const char *rel)
{
  make_dir (base);
  cleanup_fd int fd = open (base, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    fail_system ("cannot open %s: %s", base, strerror (errno));
  cleanup_free char *copy = xstrdup (rel);
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c != NULL; c = strtok_r (NULL, "/", &save))
    {
      if (mkdirat (fd, c, 0700) < 0 && errno != EEXIST)
        fail_system ("cannot create %s/%s: %s", base, rel, strerror (errno));
      int next = openat (fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0)
        fail_system ("%s/%s: %s", base, rel,
                     errno == ENOTDIR || errno == ELOOP ? "not a directory (a symlink is never "
                     "followed)" : strerror (errno));
      close (fd);
      fd = next;
    }
}

static void
make_job_dirs (const struct job_dirs *d, const char *builds, const char *cache)
{
  if (d->project_rel != NULL)
    make_dirs_below (builds, d->project_rel);
  if (d->cache_rel != NULL)
    make_dirs_below (cache, d->cache_rel);
}

/* The runner's own binary as this process's PATH, the runner's, finds it, resolved; NULL
 * when there is none. A relative PATH entry would be relative to the runner's temporary
 * directory, nothing of the runner's: skipped. */
static char *
runner_binary (void)
{
  const char *path = getenv ("PATH");
  cleanup_free char *copy = xstrdup (path != NULL ? path : "");
  char *save = NULL;
  for (char *dir = strtok_r (copy, ":", &save); dir != NULL; dir = strtok_r (NULL, ":", &save))
    {
      if (dir[0] != '/')
        continue;
      cleanup_free char *candidate = xasprintf ("%s/%s", dir, RUNNER_BINARY);
      char *real = realpath (candidate, NULL);
      struct stat st;
      if (real != NULL && stat (real, &st) == 0 && S_ISREG (st.st_mode)
          && access (real, X_OK) == 0)
        return real;
      free (real);
    }
  return NULL;
}

/* The binds of a user-namespace stage: the job's own directories, and the runner's
 * binary, read-only, on the image's PATH (its mount point is the root's, nothing is made
 * on this host). */
static void
push_binds (char ***args, const struct job_dirs *d, const char *runner)
{
  if (d->project_host != NULL)
    ci_pushf (args, "--bind=%s:%s", d->project_host, d->project_inside);
  if (d->cache_host != NULL)
    ci_pushf (args, "--bind=%s:%s", d->cache_host, d->cache_inside);
  if (runner != NULL)
    ci_pushf (args, "--bind=%s:" RUNNER_INSIDE ":ro", runner);
}

/* ---- Names and places. */

/* Where prepare records the mode it chose for ROOT's stages. */
static char *
mode_file (const char *root)
{
  cleanup_free char *dir = driver_dir ("jobs");
  return xasprintf ("%s/%s.mode", dir, root);
}

/* The directories config announced (job_env), else the defaults it would have. */
static char *
announced_dir (const char *variable, const char *sub)
{
  const char *v = getenv (variable);
  if (v != NULL && v[0] == '/')
    return clean_rooted (v);
  cleanup_free char *dir = driver_dir (sub);
  return clean_rooted (dir);
}

/* ---- config */

static void
gitlab_config (const struct gitlab *g)
{
  cleanup_free char *given_builds = g->builds_dir != NULL ? xstrdup (g->builds_dir) : driver_dir ("builds");
  cleanup_free char *given_cache = g->cache_dir != NULL ? xstrdup (g->cache_dir) : driver_dir ("cache");
  if (given_builds[0] != '/' || given_cache[0] != '/')
    fail_system ("--builds-dir and --cache-dir must be absolute paths");
  /* As the runner will join them: the job's directories are found by those paths. */
  cleanup_free char *builds = clean_rooted (given_builds);
  cleanup_free char *cache = clean_rooted (given_cache);
  char host[256] = "";
  if (gethostname (host, sizeof host - 1) < 0)
    host[0] = '\0';
  /* builds_dir_is_shared: every job's project directory is in the one builds directory
   * here (one per project, runner and slot), as the shell executor's are, so the runner
   * must name it by its short token and the project's concurrency slot: two jobs of one
   * project at once never share a checkout. */
  json_t *answer = json_pack ("{s:s, s:s, s:b, s:s, s:{s:s, s:s}, s:{s:s, s:s}}",
                              "builds_dir", builds, "cache_dir", cache,
                              "builds_dir_is_shared", 1, "hostname", host,
                              "driver", "name", PROGRAM_NAME, "version", PACKAGE_VERSION,
                              "job_env", ENV_BUILDS_DIR, builds, ENV_CACHE_DIR, cache);
  if (answer == NULL)
    fail_system ("cannot answer the runner: a path or the host name is not UTF-8");
  if (g->allow_root)
    json_object_set_new (json_object_get (answer, "job_env"), ENV_ALLOW_ROOT, json_string ("1"));
  int status = json_dumpf (answer, stdout, JSON_INDENT (2));
  json_decref (answer);
  if (status < 0 || putchar ('\n') == EOF)
    fail_system ("cannot write to standard output");
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

/* userns when the devroot can be entered with the stages' binds, else chroot: what `auto`
 * would pick, tried for real. */
static const char *
choose_mode (const struct gitlab *g, const char *name, const struct job_dirs *d,
             const char *runner)
{
  if (strcmp (g->mode, "auto") != 0)
    return g->mode;
  cleanup_strv char **args = NULL;
  ci_push_run (&args, name, "userns");
  push_binds (&args, d, runner);
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

/* chroot mode mounts nothing and makes no device node: what the stages need goes into
 * the root's own tree from here, each path resolved inside the root (its symlinks lead
 * where they would in the chroot): the builds and cache directories; a stand-in for
 * /dev/null where the image has none (the runner's scripts end in `< /dev/null` since
 * 19.1, and git opens it at every start; registry images have an empty /dev); a copy of
 * the runner's binary. */
static void
prepare_chroot (const char *name, const char *builds, const char *cache, const char *runner)
{
  struct meta m = { 0 };
  bool overlay = roots_read_meta (name, &m) && overlay_is_root (&m);
  meta_clear (&m);
  if (overlay)
    fail_system ("the job's devroot %s is an overlay root, which chroot mode cannot enter "
                 "(the configuration's layout)", name);
  cleanup_free char *path = ci_root_path (name);
  cleanup_fd int rootfd = path != NULL ? open (path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (rootfd < 0)
    fail_system ("cannot open the job's devroot %s: %s", name, strerror (errno));
  if (mkdir_p_beneath (rootfd, builds) < 0 || mkdir_p_beneath (rootfd, cache) < 0)
    fail_system ("cannot create %s and %s inside the job's devroot: %s", builds, cache,
                 strerror (errno));

  cleanup_fd int dev = open_dir_in_root (rootfd, "/dev");
  struct stat st;
  int found = dev >= 0 ? fstatat (dev, "null", &st, AT_SYMLINK_NOFOLLOW) : -1;
  if (found < 0 && (dev < 0 || errno != ENOENT))
    fail_system ("cannot look for /dev/null inside the job's devroot: %s", strerror (errno));
  if (found < 0)
    {
      cleanup_fd int null = openat (dev, "null", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                    DEV_NULL_MODE);
      if (null < 0 || fchmod (null, DEV_NULL_MODE) < 0)
        fail_system ("cannot create a /dev/null stand-in inside the job's devroot: %s",
                     strerror (errno));
    }

  if (runner == NULL)
    return;
  cleanup_fd int in = open (runner, O_RDONLY | O_CLOEXEC);
  cleanup_fd int bin = open_dir_in_root (rootfd, "/usr/local/bin");
  if (in < 0 || bin < 0 || (unlinkat (bin, RUNNER_BINARY, 0) < 0 && errno != ENOENT))
    fail_system ("cannot copy %s to %s inside the job's devroot: %s", runner, RUNNER_INSIDE,
                 strerror (errno));
  cleanup_fd int out = openat (bin, RUNNER_BINARY, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               0555);
  if (out < 0 || copy_fd_data (in, out, NULL) < 0)
    fail_system ("cannot copy %s to %s inside the job's devroot: %s", runner, RUNNER_INSIDE,
                 strerror (errno));
}

static void
write_mode (const char *root, const char *mode)
{
  cleanup_free char *dir = driver_dir ("jobs");
  make_dir (dir);
  cleanup_free char *path = mode_file (root);
  if (atomic_file_write (AT_FDCWD, path, mode, strlen (mode), 0600, 0) < 0)
    fail_system ("cannot record the job's mode in %s: %s", path, strerror (errno));
}

static char *
read_mode (const char *root)
{
  cleanup_free char *path = mode_file (root);
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
  struct job job;
  job_load (&job, true);
  const char *name = job.root;
  const char *image = job_var ("CI_JOB_IMAGE");
  /* The administrator's default may be local; the job's own image only when allowed. */
  bool local_ok = g->local_images || image == NULL;
  if (image == NULL)
    image = g->default_image;
  if (image == NULL)
    ci_fail (ci_status_from_env ("BUILD_FAILURE_EXIT_CODE", DEFAULT_BUILD_FAILURE), DRIVER,
             "the job names no image: and the runner gives no default (prepare_args: "
             "--default-image IMAGE)");
  cleanup_free char *builds = announced_dir (ENV_BUILDS_DIR, "builds");
  cleanup_free char *cache = announced_dir (ENV_CACHE_DIR, "cache");

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

  struct job_dirs dirs;
  job_dirs (&dirs, &job, builds, cache);
  cleanup_free char *runner = runner_binary ();
  if (strcmp (g->mode, "chroot") != 0)
    make_job_dirs (&dirs, builds, cache);
  const char *mode = choose_mode (g, name, &dirs, runner);
  if (strcmp (mode, "chroot") == 0)
    prepare_chroot (name, builds, cache, runner);
  if (runner == NULL)
    fprintf (stderr, "enter-devroot: gitlab: no %s on the runner's PATH: the job's caches "
             "and artifacts are skipped (\"Missing %s\")\n", RUNNER_BINARY, RUNNER_BINARY);
  if (strcmp (mode, "chroot") != 0 && dirs.project_host == NULL)
    fprintf (stderr, "enter-devroot: gitlab: the job's project directory %s is not %s/RUNNER/"
             "SLOT/%s: it is the job's devroot's own, gone with it\n",
             job_var ("CI_PROJECT_DIR") != NULL ? job_var ("CI_PROJECT_DIR") : "(unset)",
             builds, job.project != NULL ? job.project : "PROJECT");
  write_mode (name, mode);
  fprintf (stderr, "enter-devroot: devroot %s ready (mode %s)\n", name, mode);
  job_dirs_clear (&dirs);
  job_clear (&job);
}

/* ---- run */

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
  struct job job;
  job_load (&job, true);
  const char *name = job.root;
  cleanup_free char *mode = read_mode (name);
  size_t len;
  cleanup_free char *script = load_file_at (AT_FDCWD, g->script, INPUT_MAX, &len);
  if (script == NULL)
    fail_system ("cannot read the stage's script %s: %s", g->script,
                 errno == EFBIG ? "larger than " INPUT_MAX_TEXT : strerror (errno));

  cleanup_free char *copy = xasprintf ("%s.%ld", g->stage, (long) getpid ());
  for (char *s = copy; *s != '\0'; s++)
    if (*s == '/')
      *s = '_';
  cleanup_strv char **args = NULL;
  ci_push_run (&args, name, mode);
  if (strcmp (mode, "userns") == 0)
    {
      cleanup_free char *builds = announced_dir (ENV_BUILDS_DIR, "builds");
      cleanup_free char *cache = announced_dir (ENV_CACHE_DIR, "cache");
      cleanup_free char *runner = runner_binary ();
      struct job_dirs dirs;
      job_dirs (&dirs, &job, builds, cache);
      make_job_dirs (&dirs, builds, cache);
      push_binds (&args, &dirs, runner);
      job_dirs_clear (&dirs);
    }
  for (size_t i = 0; i < g->n_devices; i++)
    ci_pushf (&args, "--device=%s", g->devices[i]);
  /* The shell starts through the entrypoint, as the docker executor starts its build
   * container: the image's Entrypoint (run --entrypoint; none for a root of no image), the
   * job's image: entrypoint: instead, or none for [""]. It is given the shell's command
   * as its arguments, and an entrypoint that sets things up ends in `exec "$@"`. */
  if (job.entry == ENTRY_IMAGE)
    ci_push (&args, "--entrypoint");
  ci_push (&args, "--");
  for (size_t i = 0; job.entry == ENTRY_JOB && job.entrypoint[i] != NULL; i++)
    ci_push (&args, job.entrypoint[i]);
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
  job_clear (&job);
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
  /* The job's own root, by the response's id alone: whatever its variables say. */
  struct job job;
  job_load (&job, false);
  cleanup_free char *root = ci_root_path (job.root);
  if (root != NULL)
    ci_remove_root (job.root);
  cleanup_free char *path = mode_file (job.root);
  unlink (path);
  job_clear (&job);
  /* The runner ignores cleanup's status; a nonzero one only adds noise to the log. */
  return 0;
}

/* ---- Command line. */

static const char usage[] =
  "usage: enter-devroot gitlab config [--builds-dir DIR] [--cache-dir DIR] [--allow-root]\n"
  "       enter-devroot gitlab prepare [--default-image IMAGE] [--mode auto|userns|chroot]\n"
  "                                    [--cacert FILE] [--insecure-http]\n"
  "                                    [--allow-local-images] [--allow-root]\n"
  "       enter-devroot gitlab run [--device VENDOR/CLASS=NAME]... SCRIPT STAGE [--allow-root]\n"
  "       enter-devroot gitlab cleanup [--allow-root]\n";

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
      else if (strcmp (argv[i], "--allow-root") == 0)
        g.allow_root = true;
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
  /* config's --allow-root reaches the later actions through job_env. */
  const char *allowed = getenv (ENV_ALLOW_ROOT);
  ci_refuse_root (system_failure, DRIVER,
                  g.allow_root || (allowed != NULL && strcmp (allowed, "1") == 0));
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
