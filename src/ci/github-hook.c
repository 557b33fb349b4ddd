/* enter-devroot github-hook: the GitHub Actions runner's container hooks.
 *
 * With ACTIONS_RUNNER_CONTAINER_HOOKS naming a .sh file that execs this command, the
 * runner hands each container operation to it as JSON on standard input,
 * {"command", "responseFile", "args", "state"} (actions/runner docs/adrs/1891):
 *   prepare_job         make the job's devroot from args.container.image and answer in
 *                       responseFile with our state, the container's context and isAlpine;
 *   run_script_step     run entryPoint + entryPointArgs inside it, with the step's
 *                       environment, prependPath and workingDirectory; exit with its status;
 *   run_container_step  the same in a throwaway devroot of the step's own image;
 *   cleanup_job         remove the job's devroot and whatever still runs in it.
 * The runner's work directories (systemMountVolumes: _work as /__w, externals as /__e, the
 * temp, tool and home directories) and the job's userMountVolumes are where the runner
 * says inside the devroot, so the runner's generated scripts and the actions' files are
 * there and what a step writes ($GITHUB_ENV, $GITHUB_OUTPUT, the workspace) reaches the
 * runner. In user-namespace mode they are bound. In chroot mode (the patched kernel, no
 * user namespaces) nothing can be mounted: they are copied into the devroot before each
 * step and the writable ones copied back after it (volumes.h), which costs a walk of the
 * volumes and the data that changed, per step. prepare_job chooses the mode (--mode, by
 * default user-namespace mode when the devroot can be entered that way with the volumes
 * bound, else chroot mode) and keeps it in the runner's state.
 *
 * What the workflow chooses is checked before anything is made: a volume's host directory
 * must lie in one the runner itself mounts (systemMountVolumes: its work, externals and
 * temp directories) or one the administrator allows (--allow-volume), an anonymous volume
 * (`volumes: [/cache]`) is a directory of the job's own under our data directory, named
 * volumes, `options:` and `ports:` are refused; a prepare_job that fails leaves nothing
 * behind. Each step checks again that every volume's directory is still the one checked
 * (the job may have put a symlink where one was, in the work directory it writes). Step
 * variables (secrets, ACTIONS_RUNTIME_TOKEN) reach `run` through --env-fd, never on a
 * command line. Steps look like root (run --root) where docker's would be root. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "ci/ci.h"
#include "ci/driver.h"
#include "ci/shlex.h"
#include "ci/volumes.h"
#include "common/cdi-name.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"

#define DRIVER "github-hook"
/* The hook's whole input: the runner's JSON is a few kilobytes. */
#define INPUT_MAX (4 * 1024 * 1024)
/* The status of a hook that failed on its own (the runner fails the step on any nonzero). */
#define HOOK_FAILURE 1

#define fail(...) ci_fail (HOOK_FAILURE, DRIVER, __VA_ARGS__)

/* ---- The administrator's options (the hook's command line, in the runner's hook file). */

/* --allow-local-images: the runner's administrator lets workflows name images on this
 * host (driver.h says why not by default). */
static bool local_images;
/* --mode: auto, userns or chroot. */
static const char *hook_mode = "auto";
/* --device VENDOR/CLASS=NAME: the CDI devices every step gets (run --device), the
 * administrator's choice for the runner's machine (a GPU runner), never the workflow's. */
#define HOOK_DEVICES_MAX 64
static const char *devices[HOOK_DEVICES_MAX + 1];
static size_t n_devices;

static void
push_devices (char ***args)
{
  for (size_t i = 0; i < n_devices; i++)
    ci_pushf (args, "--device=%s", devices[i]);
}

/* --cacert FILE, --insecure-http: for the registries the images come from, as create's. */
static const char *cacert;
static bool insecure_http;
/* --step-user: who steps run as. image (default): root emulation (run --root) where docker
 * would run them as root: a job container whose image names no User, or root; container
 * actions, which GitHub documents must run as root. root: always. runner: never. */
enum step_user
{
  STEP_USER_IMAGE,
  STEP_USER_ROOT,
  STEP_USER_RUNNER,
};
static enum step_user step_user = STEP_USER_IMAGE;

/* A host directory volumes may lie in: the runner's own mounts, the administrator's
 * --allow-volume DIR[:ro], the job's directory of anonymous volumes. PATH is resolved
 * (realpath): a volume's resolved source must be it or beneath it. */
struct allowed
{
  char *path;
  bool read_only; /* only volumes that are readOnly */
};

struct allowed_list
{
  struct allowed *a;
  size_t n;
};

static struct allowed_list admin_dirs;

static void
allowed_add (struct allowed_list *l, const char *path, bool read_only)
{
  l->a = xrealloc (l->a, (l->n + 1) * sizeof *l->a);
  l->a[l->n++] = (struct allowed) { .path = xstrdup (path), .read_only = read_only };
}

static void
allowed_clear (struct allowed_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    free (l->a[i].path);
  free (l->a);
  *l = (struct allowed_list) { 0 };
}

static bool
path_under (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  if (n == 1 && dir[0] == '/')
    return path[0] == '/';
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Whether the resolved PATH may be a volume (READ_ONLY or not) by L or the administrator's
 * directories; *RO_ONLY says when it may only be a read-only one. */
static bool
allowed_for (const struct allowed_list *l, const char *path, bool read_only, bool *ro_only)
{
  *ro_only = false;
  const struct allowed_list *lists[] = { l, &admin_dirs };
  for (size_t k = 0; k < N_ELEMENTS (lists); k++)
    for (size_t i = 0; lists[k] != NULL && i < lists[k]->n; i++)
      if (path_under (path, lists[k]->a[i].path))
        {
          if (!lists[k]->a[i].read_only || read_only)
            return true;
          *ro_only = true;
        }
  return false;
}

static void
image_source (const char *image, char ***args, char **registry)
{
  if (!ci_image_source (image, local_images, args, registry))
    fail ("image '%s' names a file or directory on the runner's host; workflows may not "
          "read those unless the hook allows it (exec enter-devroot github-hook "
          "--allow-local-images)", image);
  size_t n = strv_length (*args);
  bool from = n >= 2 && strcmp ((*args)[n - 2], "--from") == 0;
  if (cacert != NULL)
    ci_pushf (args, "--cacert=%s", cacert);
  if (insecure_http && from)
    ci_push (args, "--insecure-http");
}

static const char *
str (json_t *object, const char *key)
{
  json_t *v = json_object_get (object, key);
  return json_is_string (v) && json_string_length (v) > 0 ? json_string_value (v) : NULL;
}

/* ---- What a failed prepare_job leaves: nothing. */

/* The devroot and the job's directory being made; removed at exit unless the hook got as
 * far as handing them to the runner (fail() exits from anywhere). */
static char *pending_root;
static char *pending_dir;

/* The job's own directory, for its anonymous volumes: DATA/enter-devroot/github-hook/NAME. */
static char *
job_dir (const char *name)
{
  struct store_paths p;
  store_paths_from_env (&p);
  char *dir = xasprintf ("%s/github-hook/%s", p.base, name);
  store_paths_clear (&p);
  return dir;
}

static void
remove_job_dir (const char *dir)
{
  cleanup_free char *parent = xstrdup (dir);
  char *slash = strrchr (parent, '/');
  *slash = '\0';
  cleanup_fd int fd = open (parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  if (rm_rf_at (fd, slash + 1) < 0 && errno != ENOENT)
    fprintf (stderr, "%s: %s: cannot remove %s: %s\n", PROGRAM_NAME, DRIVER, dir,
             strerror (errno));
}

static void
abandon_pending (void)
{
  if (pending_root != NULL)
    {
      cleanup_free char *root = ci_root_path (pending_root);
      if (root != NULL)
        ci_remove_root (pending_root);
    }
  if (pending_dir != NULL)
    remove_job_dir (pending_dir);
  free (pending_root);
  free (pending_dir);
  pending_root = pending_dir = NULL;
}

/* ---- Building enter-devroot's arguments from the runner's JSON. */

/* The runner's volumes: {sourceVolumePath, targetVolumePath, readOnly}. */
struct volumes
{
  struct ci_volume *v;
  size_t n;
};

static void
volumes_clear (struct volumes *vs)
{
  for (size_t i = 0; i < vs->n; i++)
    {
      free (vs->v[i].source);
      free (vs->v[i].target);
    }
  free (vs->v);
  *vs = (struct volumes) { 0 };
}

static void
volume_add (struct volumes *vs, const char *src, const char *dst, bool read_only)
{
  char *target;
  if (src[0] != '/' || !ci_volume_target_valid (dst, &target))
    fail ("mount %s:%s: both must be absolute paths, the target not / and without . or .. "
          "components", src, dst);
  if (strchr (src, ':') != NULL || strchr (target, ':') != NULL)
    fail ("mount %s:%s: a path with ':' cannot be bound", src, dst);
  for (size_t i = 0; i < vs->n; i++)
    if (strcmp (vs->v[i].target, target) == 0)
      fail ("mount %s:%s: a second volume at %s", src, dst, target);
  vs->v = xrealloc (vs->v, (vs->n + 1) * sizeof *vs->v);
  vs->v[vs->n++] = (struct ci_volume) { .source = xstrdup (src), .target = target,
                                        .read_only = read_only };
}

/* SRC resolved, when it is a directory here; NULL otherwise (errno, ENOTDIR for another
 * kind of file). */
static char *
resolved_dir (const char *src)
{
  char *real = realpath (src, NULL);
  struct stat st;
  if (real != NULL && (stat (real, &st) < 0 || !S_ISDIR (st.st_mode)))
    {
      free (real);
      errno = ENOTDIR;
      return NULL;
    }
  return real;
}

/* The runner's own mounts (systemMountVolumes): each a volume at its resolved path and a
 * directory the job's volumes may lie in. A source that is no directory here (the docker
 * socket the runner always lists) is skipped, since nothing here speaks to a docker
 * daemon: one line each, by say_skipped once nothing is refused. */
static char **skipped;

static void
say_skipped (void)
{
  for (size_t i = 0; skipped != NULL && skipped[i] != NULL; i++)
    fprintf (stderr, "%s: %s: not binding %s (not a directory here)\n", PROGRAM_NAME, DRIVER,
             skipped[i]);
  strv_free (skipped);
  skipped = NULL;
}

/* PATH without repeated or trailing slashes ("//a/b/" is "/a/b"), or a copy of it. */
static char *
normal_path (const char *path)
{
  char *normal;
  return ci_volume_target_valid (path, &normal) ? normal : xstrdup (path);
}

/* The runner's work directory (mounted at /__w) in VOLUMES: its path as the runner gives
 * it, normalised, and resolved (NULL when it lists none). */
static void
work_dir (json_t *volumes, char **given, char **real)
{
  size_t i;
  json_t *v;
  *given = *real = NULL;
  json_array_foreach (volumes, i, v)
  {
    const char *src = str (v, "sourceVolumePath");
    const char *dst = str (v, "targetVolumePath");
    cleanup_free char *target = dst != NULL ? normal_path (dst) : NULL;
    if (src != NULL && target != NULL && strcmp (target, "/__w") == 0)
      {
        *real = resolved_dir (src);
        if (*real != NULL)
          *given = normal_path (src);
        return;
      }
  }
}

/* The source and target paths of the volume V, the runner's or our state's; MISSING is the
 * failure where V lacks either. */
static void
volume_paths (json_t *v, const char **src, const char **dst, const char *missing)
{
  *src = str (v, "sourceVolumePath");
  *dst = str (v, "targetVolumePath");
  if (*src == NULL || *dst == NULL)
    fail ("%s", missing);
}

static void
collect_system (struct volumes *vs, struct allowed_list *roots, json_t *volumes)
{
  /* The runner's directories in its work directory (_temp, _actions, _tool, _temp's
   * _github_home) must still be there: jobs write in it, and one may have left a symlink
   * to the runner's user's files where a directory of the runner's was. */
  cleanup_free char *work_given = NULL, *work_real = NULL;
  work_dir (volumes, &work_given, &work_real);
  size_t i;
  json_t *v;
  json_array_foreach (volumes, i, v)
  {
    const char *src, *dst;
    volume_paths (v, &src, &dst,
                  "a system mount volume lacks sourceVolumePath or targetVolumePath");
    bool ro = json_is_true (json_object_get (v, "readOnly"));
    cleanup_free char *real = src[0] == '/' ? resolved_dir (src) : NULL;
    if (real == NULL)
      {
        ci_push (&skipped, src);
        continue;
      }
    cleanup_free char *given = normal_path (src);
    if (work_given != NULL && path_under (given, work_given) && !path_under (real, work_real))
      fail ("the runner's directory %s is %s, outside its work directory %s (a symlink a job "
            "left there?): not mounting it", src, real, work_real);
    volume_add (vs, real, dst, ro);
    if (roots != NULL)
      allowed_add (roots, real, ro);
  }
}

/* The workflow's `volumes:` (userMountVolumes): SRC:DST[:ro] with SRC a directory in ROOTS
 * or the administrator's; DST alone (an anonymous volume: no source) a directory of the
 * job's own in JOBDIR, made by the caller (JOBDIR NULL: refused). Anything else is refused
 * in one line. */
static void
collect_user (struct volumes *vs, const struct allowed_list *roots, json_t *volumes,
              const char *jobdir)
{
  size_t i;
  json_t *v;
  unsigned anonymous = 0;
  json_array_foreach (volumes, i, v)
  {
    const char *src = str (v, "sourceVolumePath");
    const char *dst = str (v, "targetVolumePath");
    bool ro = json_is_true (json_object_get (v, "readOnly"));
    if (dst == NULL)
      fail ("a volume lacks its targetVolumePath");
    if (src == NULL)
      {
        if (jobdir == NULL)
          fail ("volume %s: an anonymous volume is supported only in a job container's "
                "volumes", dst);
        cleanup_free char *dir = xasprintf ("%s/volume-%u", jobdir, anonymous++);
        volume_add (vs, dir, dst, ro);
        continue;
      }
    if (src[0] != '/')
      fail ("volume %s:%s: named volumes are not supported by the enter-devroot hook (no "
            "docker daemon): use an anonymous volume (%s) or a directory in the runner's "
            "work directory", src, dst, dst);
    cleanup_free char *real = resolved_dir (src);
    if (real == NULL)
      fail ("volume %s:%s: %s", src, dst,
            errno == ENOTDIR ? "not a directory" : strerror (errno));
    bool ro_only;
    if (!allowed_for (roots, real, ro, &ro_only))
      fail (ro_only ? "volume %s:%s: the runner mounts %s read-only: add :ro"
                    : "volume %s:%s: %s is not in a directory the runner mounts (its work, "
                      "externals and temp directories) nor one the hook allows "
                      "(--allow-volume DIR): the job may not bind it", src, dst, real);
    volume_add (vs, real, dst, ro);
  }
}

/* The volumes prepare_job kept in the runner's state, each checked to still be the
 * directory it checked: the job writes in the runner's work directory, and may have put a
 * symlink to anywhere where a directory was. Nothing of the job runs between its steps
 * (run kills what a step leaves), so nothing changes them between this and the mounts. */
static void
state_volumes (struct volumes *vs, json_t *volumes)
{
  size_t i;
  json_t *v;
  json_array_foreach (volumes, i, v)
  {
    const char *src, *dst;
    volume_paths (v, &src, &dst, "the runner's state names a volume without its paths");
    cleanup_free char *real = resolved_dir (src);
    if (real == NULL || strcmp (real, src) != 0)
      fail ("volume %s: its directory %s %s since prepare_job: not mounting it", dst, src,
            real != NULL ? "is a symlink now, or under one," : "is gone or changed");
    volume_add (vs, src, dst, json_is_true (json_object_get (v, "readOnly")));
  }
}

/* user-namespace mode: --bind for each. */
static void
push_binds (char ***args, const struct volumes *vs)
{
  for (size_t i = 0; i < vs->n; i++)
    ci_pushf (args, "--bind=%s:%s%s", vs->v[i].source, vs->v[i].target,
              vs->v[i].read_only ? ":ro" : "");
}

static json_t *
volumes_json (const struct volumes *vs)
{
  json_t *a = json_array ();
  for (size_t i = 0; i < vs->n; i++)
    json_array_append_new (a, json_pack ("{s:s, s:s, s:b}", "sourceVolumePath",
                                         vs->v[i].source, "targetVolumePath",
                                         vs->v[i].target, "readOnly", vs->v[i].read_only));
  return a;
}

static json_t *
allowed_json (const struct allowed_list *l)
{
  json_t *a = json_array ();
  for (size_t i = 0; i < l->n; i++)
    json_array_append_new (a, json_pack ("{s:s, s:b}", "path", l->a[i].path, "readOnly",
                                         l->a[i].read_only));
  return a;
}

static void
allowed_from_json (struct allowed_list *l, json_t *a)
{
  size_t i;
  json_t *v;
  json_array_foreach (a, i, v)
  {
    const char *path = str (v, "path");
    if (path == NULL || path[0] != '/')
      fail ("the runner's state names a directory for volumes that is no absolute path");
    allowed_add (l, path, json_is_true (json_object_get (v, "readOnly")));
  }
}

/* chroot mode: run ARGS (a `run NAME --mode=chroot ...`) between copying the volumes into
 * the devroot NAME and back. A volume the step removed is a failure of the step. */
static int
run_copying (const char *name, const struct volumes *vs, char **args, char *const env[])
{
  cleanup_free char *root = ci_root_path (name);
  if (root == NULL)
    fail ("the job's devroot %s is gone", name);
  ci_volumes_copy_in (root, vs->v, vs->n);
  int status = ci_tool (args, -1, env);
  if (!ci_volumes_copy_back (root, vs->v, vs->n) && status == 0)
    status = HOOK_FAILURE;
  return status;
}

/* ---- The step's environment: values through --env-fd, names nowhere else. */

/* Each member of the object FROM ({"K": "V"}) set in TO; a null value unsets K. */
static void
env_merge (json_t *to, json_t *from, const char *what)
{
  const char *key;
  json_t *v;
  json_object_foreach (from, key, v)
  {
    if (key[0] == '\0' || strchr (key, '=') != NULL)
      fail ("%s: '%s' is no environment variable name", what, key);
    if (json_is_null (v))
      json_object_del (to, key);
    else if (!json_is_string (v))
      fail ("%s: environment variable %s: not a string", what, key);
    else
      json_object_set (to, key, v);
  }
}

/* What docker gives every job container and container action (DockerCommandManager.cs,
 * the docker hook's container.ts): GITHUB_ACTIONS=true, and CI=true unless BEFORE (the
 * container's own environment) sets CI. */
static void
env_actions (json_t *env, json_t *before)
{
  json_object_set_new (env, "GITHUB_ACTIONS", json_string ("true"));
  if (json_object_get (before, "CI") == NULL)
    json_object_set_new (env, "CI", json_string ("true"));
}

/* ENV as NUL-ended K=V in a memory file `run --env-fd` reads; "--env-fd=FD" pushed on
 * ARGS. The file is not close-on-exec (run inherits it, reads it and closes it); the
 * caller closes its copy. */
static int
push_env_fd (char ***args, json_t *env)
{
  int fd = memfd_create ("github-hook-env", 0);
  if (fd < 0)
    fail ("cannot create a memory file for the step's environment: %s", strerror (errno));
  struct strbuf sb = { 0 };
  const char *key;
  json_t *v;
  json_object_foreach (env, key, v)
  {
    strbuf_append (&sb, key);
    strbuf_append_c (&sb, '=');
    strbuf_append (&sb, json_string_value (v));
    strbuf_append_c (&sb, '\0');
  }
  size_t len = sb.len;
  cleanup_free char *text = strbuf_steal (&sb);
  if (write_all (fd, text, len) < 0 || lseek (fd, 0, SEEK_SET) < 0)
    fail ("cannot write the step's environment to a memory file: %s", strerror (errno));
  explicit_bzero (text, len);
  ci_pushf (args, "--env-fd=%d", fd);
  return fd;
}

/* The step's prependPath joined with ':', and set in ENV for push_command's shell when not
 * empty. */
static char *
prepend_path (json_t *a, json_t *env)
{
  json_t *prepend = json_object_get (a, "prependPath");
  size_t i;
  json_t *v;
  struct strbuf path = { 0 };
  json_array_foreach (prepend, i, v)
  {
    if (!json_is_string (v) || strchr (json_string_value (v), ':') != NULL)
      fail ("prependPath: entry %zu is not a directory name", i);
    if (path.len > 0)
      strbuf_append_c (&path, ':');
    strbuf_append (&path, json_string_value (v));
  }
  char *joined = strbuf_steal (&path);
  if (joined[0] != '\0')
    json_object_set_new (env, "ENTER_DEVROOT_PREPEND_PATH", json_string (joined));
  return joined;
}

/* "--" and the step's entryPoint, behind a shell that puts prependPath (PREPEND) in front
 * of the PATH the devroot's image and our defaults give (only when there is one: a
 * distroless image may have no shell). */
static void
push_command (char ***args, json_t *a, bool prepend)
{
  const char *entry = str (a, "entryPoint");
  if (entry == NULL)
    fail ("the step has no entryPoint");
  ci_push (args, "--");
  if (prepend)
    {
      ci_push (args, "/bin/sh");
      ci_push (args, "-c");
      ci_push (args, "PATH=\"$ENTER_DEVROOT_PREPEND_PATH:$PATH\"; "
                     "unset ENTER_DEVROOT_PREPEND_PATH; exec \"$@\"");
      ci_push (args, "sh");
    }
  ci_push (args, entry);
}

/* The step's arguments, entryPointArgs: the runner's string of them split on spaces
 * (shlex.h), put back together and split as the reference docker hook does. */
static void
push_args (char ***args, json_t *a)
{
  struct strbuf sb = { 0 };
  size_t i;
  json_t *v;
  json_array_foreach (json_object_get (a, "entryPointArgs"), i, v)
  {
    if (!json_is_string (v))
      fail ("entryPointArgs: entry %zu is not a string", i);
    if (i > 0)
      strbuf_append_c (&sb, ' ');
    strbuf_append (&sb, json_string_value (v));
  }
  cleanup_free char *joined = strbuf_steal (&sb);
  const char *why;
  cleanup_strv char **words = ci_shlex_split (joined, &why);
  if (words == NULL)
    fail ("entryPointArgs: %s, in the arguments as the runner quoted them: %s", why, joined);
  for (size_t k = 0; words[k] != NULL; k++)
    ci_push (args, words[k]);
}

/* What a step of either kind gives `run`: its working directory, ENV (released here) through
 * push_env_fd, whose fd the caller closes once the step ran, then its command and arguments.
 * IMAGE_ENTRYPOINT: a container action that names no entryPoint runs its image's own, given
 * the step's arguments; a script step always names one. */
static int
push_step (char ***args, json_t *a, json_t *env, bool image_entrypoint)
{
  const char *workdir = str (a, "workingDirectory");
  if (workdir != NULL)
    ci_pushf (args, "--workdir=%s", workdir);
  cleanup_free char *prepend = prepend_path (a, env);
  bool own_entrypoint = image_entrypoint && str (a, "entryPoint") == NULL;
  if (own_entrypoint)
    ci_push (args, "--entrypoint");
  int env_fd = push_env_fd (args, env);
  json_decref (env);
  if (own_entrypoint)
    ci_push (args, "--");
  else
    push_command (args, a, prepend[0] != '\0');
  push_args (args, a);
  return env_fd;
}

/* ---- Registry credentials: the job's own, for the registry they name. */

static char *
credentials_for (json_t *container, const char *registry)
{
  json_t *r = json_object_get (container, "registry");
  if (!json_is_object (r))
    return NULL;
  const char *server = str (r, "serverUrl");
  cleanup_free char *host = NULL;
  if (server != NULL)
    {
      const char *s = strstr (server, "://");
      s = s != NULL ? s + 3 : server;
      host = xasprintf ("%.*s", (int) strcspn (s, "/"), s);
    }
  else
    host = xstrdup (registry != NULL ? registry : "docker.io");
  return ci_credentials_write (host, str (r, "username"), str (r, "password"));
}

static int
create_root (const char *name, json_t *container)
{
  const char *image = str (container, "image");
  if (image == NULL)
    fail ("the job container names no image");
  cleanup_strv char **args = NULL;
  cleanup_free char *registry = NULL;
  ci_push (&args, "create");
  ci_push (&args, name);
  ci_push_layout (&args, hook_mode);
  image_source (image, &args, &registry);
  ci_push (&args, "--quiet");
  char *auth = credentials_for (container, registry);
  cleanup_free char *auth_env = auth != NULL ? xasprintf ("REGISTRY_AUTH_FILE=%s", auth) : NULL;
  char *env[] = { auth_env, NULL };
  fprintf (stderr, "%s: %s: creating devroot %s from %s\n", PROGRAM_NAME, DRIVER, name, image);
  int status = ci_tool (args, -1, env);
  ci_credentials_remove (auth);
  return status;
}

/* What the workflow may not ask of a container here, refused before anything is made:
 * `options:` (createOptions, docker's own flags) and `ports:` (portMappings: nothing
 * listens on the host's ports for the job; its processes share the host's network). */
static void
refuse_docker_only (json_t *container, const char *what)
{
  const char *options = str (container, "createOptions");
  if (options != NULL && options[strspn (options, " \t")] != '\0')
    fail ("%s: options '%s' are docker's, not supported by the enter-devroot hook: remove "
          "`options:`", what, options);
  json_t *ports = json_object_get (container, "portMappings");
  if (json_array_size (ports) > 0)
    fail ("%s: ports (%s%s) are not supported by the enter-devroot hook: the job's "
          "processes use the host's network, remove `ports:`", what,
          json_is_string (json_array_get (ports, 0))
            ? json_string_value (json_array_get (ports, 0)) : "?",
          json_array_size (ports) > 1 ? ", ..." : "");
}

/* ---- The hooks. */

static char *
new_root_name (void)
{
  unsigned char r[6];
  cleanup_fd int fd = open ("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read (fd, r, sizeof r) != (ssize_t) sizeof r)
    fail ("cannot read /dev/urandom: %s", strerror (errno));
  return xasprintf ("github-%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5]);
}

/* What the probe of prepare_job answers, a line over its standard input (ci_tool_talk),
 * when the root is Alpine's, which the runner's isAlpine asks (it then gives JavaScript
 * actions its musl build of node). Asked inside the root, whatever its layout: an overlay
 * root's tree is mounted only where it is entered. The job's image could answer anything,
 * and that chooses only which node its own actions get. */
#define ALPINE "alpine"

/* The command of prepare_job's probe: that a shell starts inside, and whether the root is
 * Alpine's (every Alpine image has /etc/alpine-release). */
static void
push_probe (char ***args)
{
  ci_push (args, "--");
  ci_push (args, "/bin/sh");
  ci_push (args, "-c");
  ci_push (args, "if [ -e /etc/alpine-release ]; then echo " ALPINE " >&0; fi");
}

static void
write_response (const char *path, json_t *response)
{
  if (path == NULL)
    fail ("prepare_job: no responseFile to answer in");
  if (json_dump_file (response, path, JSON_COMPACT) < 0)
    fail ("cannot write the response to %s", path);
}

/* Whether docker would run the devroot NAME's image as root: its config names no User, or
 * root (by name or uid 0, with any group). */
static bool
image_user_is_root (const char *name)
{
  struct meta m;
  if (!roots_read_meta (name, &m))
    fail ("cannot read the metadata of the job's devroot %s", name);
  const char *u = m.image.user;
  size_t len = u != NULL ? strcspn (u, ":") : 0;
  bool root = len == 0 || (len == 4 && strncmp (u, "root", 4) == 0)
              || strspn (u, "0") == len;
  meta_clear (&m);
  return root;
}

static void
prepare_job (json_t *input)
{
  json_t *a = json_object_get (input, "args");
  json_t *services = json_object_get (a, "services");
  if (json_array_size (services) > 0)
    fail ("services: are not supported by the enter-devroot hooks yet (the job names %zu); "
          "start what the job needs in its steps", json_array_size (services));
  json_t *container = json_object_get (a, "container");
  if (!json_is_object (container))
    {
      json_t *none = json_pack ("{s:{}, s:{s:[]}}", "state", "context", "services");
      write_response (str (input, "responseFile"), none);
      json_decref (none);
      return;
    }
  if (str (container, "image") == NULL)
    fail ("the job container names no image");
  refuse_docker_only (container, "the job container");

  /* What every step gets: the runner's directories, the workflow's volumes; all checked
   * before anything is made. */
  cleanup_free char *name = new_root_name ();
  cleanup_free char *jobdir = job_dir (name);
  struct volumes vs = { 0 };
  struct allowed_list roots = { 0 };
  collect_system (&vs, &roots, json_object_get (container, "systemMountVolumes"));
  size_t n_system = vs.n;
  collect_user (&vs, &roots, json_object_get (container, "userMountVolumes"), jobdir);
  json_t *env = json_object_get (container, "environmentVariables");
  json_t *state_env = json_object ();
  if (json_is_object (env))
    env_merge (state_env, env, "the job container");
  say_skipped ();

  pending_root = xstrdup (name);
  pending_dir = xstrdup (jobdir);
  bool anonymous = false;
  for (size_t i = n_system; i < vs.n; i++)
    if (path_under (vs.v[i].source, jobdir))
      {
        if (mkdir_p (vs.v[i].source, 0700) < 0)
          fail ("cannot create %s for the anonymous volume %s: %s", vs.v[i].source,
                vs.v[i].target, strerror (errno));
        anonymous = true;
      }
  if (anonymous)
    allowed_add (&roots, jobdir, false);

  if (create_root (name, container) != 0)
    fail ("cannot create the job's devroot from '%s'", str (container, "image"));
  bool root_emulation = step_user == STEP_USER_ROOT
                        || (step_user == STEP_USER_IMAGE && image_user_is_root (name));

  const char *mode = NULL;
  char answer[sizeof ALPINE "\n" + 1] = "";
  if (strcmp (hook_mode, "chroot") != 0)
    {
      cleanup_strv char **probe = NULL;
      ci_push_run (&probe, name, "userns");
      push_binds (&probe, &vs);
      push_probe (&probe);
      /* In auto mode a failure is an answer: chroot mode is tried next. */
      bool quiet = strcmp (hook_mode, "auto") == 0;
      if (ci_tool_talk (probe, NULL, 0, quiet, answer, sizeof answer) == 0)
        mode = "userns";
      else if (strcmp (hook_mode, "userns") == 0)
        fail ("cannot enter the job's devroot with the runner's directories bound: "
              "--mode userns needs user namespaces (see 'enter-devroot doctor')");
    }
  if (mode == NULL)
    {
      cleanup_strv char **probe = NULL;
      ci_push_run (&probe, name, "chroot");
      push_probe (&probe);
      if (ci_tool_talk (probe, NULL, 0, false, answer, sizeof answer) != 0)
        fail ("cannot enter the job's devroot, with the runner's directories bound in "
              "user-namespace mode nor in chroot mode (see 'enter-devroot doctor')");
      mode = "chroot";
    }
  fprintf (stderr, "%s: %s: devroot %s ready (mode %s)%s\n", PROGRAM_NAME, DRIVER, name, mode,
           root_emulation ? "; steps look like root (run --root)" : "");

  json_t *response = json_pack (
    "{s:{s:s, s:s, s:o, s:o, s:o, s:b}, s:{s:{s:s, s:s}, s:[]}, s:b}",
    "state", "root", name, "mode", mode, "volumes", volumes_json (&vs), "allowed",
    allowed_json (&roots), "env", state_env, "rootEmulation", root_emulation,
    "context", "container", "id", name, "network", "", "services",
    "isAlpine", strcmp (answer, ALPINE "\n") == 0);
  volumes_clear (&vs);
  allowed_clear (&roots);
  if (response == NULL)
    fail ("cannot build the response");
  write_response (str (input, "responseFile"), response);
  json_decref (response);
  /* Handed to the runner: cleanup_job removes them. */
  free (pending_root);
  free (pending_dir);
  pending_root = pending_dir = NULL;
}

/* The devroot prepare_job kept in the runner's state, and its mode. */
static const char *
state_root (json_t *input, const char **mode)
{
  json_t *state = json_object_get (input, "state");
  const char *name = str (state, "root");
  if (name == NULL || !name_is_valid (name))
    fail ("the runner's state names no devroot (was prepare_job run by this hook?)");
  *mode = str (state, "mode");
  if (*mode == NULL || (strcmp (*mode, "userns") != 0 && strcmp (*mode, "chroot") != 0))
    fail ("the runner's state names no mode this hook knows ('%s')", *mode ? *mode : "");
  if (json_object_get (state, "volumes") == NULL)
    fail ("the runner's state is an older hook's: run the job again");
  return name;
}

static int
run_script_step (json_t *input)
{
  const char *mode;
  const char *name = state_root (input, &mode);
  json_t *state = json_object_get (input, "state");
  json_t *a = json_object_get (input, "args");
  struct volumes vs = { 0 };
  state_volumes (&vs, json_object_get (state, "volumes"));
  cleanup_strv char **args = NULL;
  ci_push_run (&args, name, mode);
  if (json_is_true (json_object_get (state, "rootEmulation")))
    ci_push (&args, "--root");
  if (strcmp (mode, "userns") == 0)
    push_binds (&args, &vs);
  push_devices (&args);
  /* The container's environment, docker's additions, then the step's, which win. */
  json_t *container_env = json_object_get (state, "env");
  json_t *env = json_object ();
  env_merge (env, container_env, "the runner's state");
  env_actions (env, container_env);
  env_merge (env, json_object_get (a, "environmentVariables"), "the step");
  int env_fd = push_step (&args, a, env, false);
  int status = strcmp (mode, "userns") == 0 ? ci_tool (args, -1, NULL)
                                             : run_copying (name, &vs, args, NULL);
  close (env_fd);
  volumes_clear (&vs);
  return status;
}

static int
run_container_step (json_t *input)
{
  json_t *a = json_object_get (input, "args");
  json_t *state = json_object_get (input, "state");
  if (str (a, "image") == NULL)
    fail ("run_container_step: %s", str (a, "dockerfile") != NULL
                                       ? "Dockerfile actions need an image builder: build the "
                                         "image elsewhere and name it with docker://"
                                       : "the step names no image");
  refuse_docker_only (a, "run_container_step");
  /* The runner's directories for the step (the workspace, its temp and file-command
   * directories), each checked to lie in the job's, which a step of a job container may
   * have replaced with a symlink; a job without one has no state, and its steps run on
   * the runner's host anyway. */
  json_t *allowed = json_object_get (state, "allowed");
  struct allowed_list roots = { 0 };
  allowed_from_json (&roots, allowed);
  struct volumes vs = { 0 };
  collect_system (&vs, NULL, json_object_get (a, "systemMountVolumes"));
  for (size_t i = 0; allowed != NULL && i < vs.n; i++)
    {
      bool ro_only;
      if (!allowed_for (&roots, vs.v[i].source, vs.v[i].read_only, &ro_only))
        fail ("run_container_step: the runner's directory for %s, %s, is not in the job's "
              "directories (a symlink a step put there?): not mounting it", vs.v[i].target,
              vs.v[i].source);
    }
  collect_user (&vs, allowed != NULL ? &roots : NULL, json_object_get (a, "userMountVolumes"),
                NULL);
  say_skipped ();
  allowed_clear (&roots);
  /* chroot mode when the job's own devroot is in it, or the administrator said so (a job
   * without a container of its own has no state to tell). */
  const char *state_mode = str (state, "mode");
  bool chroot_mode = strcmp (hook_mode, "chroot") == 0
                     || (state_mode != NULL && strcmp (state_mode, "chroot") == 0);
  cleanup_free char *registry = NULL;
  cleanup_free char *name = NULL;
  cleanup_strv char **args = NULL;
  ci_push (&args, "run");
  if (chroot_mode)
    {
      /* run --ephemeral would enter the root before we could copy the volumes in: a
       * throwaway root of our own instead. */
      name = new_root_name ();
      pending_root = xstrdup (name);
      if (create_root (name, a) != 0)
        fail ("run_container_step: cannot create a devroot from '%s'", str (a, "image"));
      ci_push (&args, name);
      ci_push (&args, "--mode=chroot");
    }
  else
    {
      ci_push (&args, "--ephemeral");
      image_source (str (a, "image"), &args, &registry);
      ci_push (&args, "--quiet");
      ci_push (&args, "--mode=userns");
      push_binds (&args, &vs);
    }
  push_devices (&args);
  /* GitHub documents that Docker actions run as the image's default user, root. */
  if (step_user != STEP_USER_RUNNER)
    ci_push (&args, "--root");
  json_t *step_env = json_object_get (a, "environmentVariables");
  json_t *env = json_object ();
  env_merge (env, step_env, "the step");
  env_actions (env, step_env);
  int env_fd = push_step (&args, a, env, true);
  int status;
  if (chroot_mode)
    {
      status = run_copying (name, &vs, args, NULL);
      ci_remove_root (name);
      free (pending_root);
      pending_root = NULL;
    }
  else
    {
      char *auth = credentials_for (a, registry);
      cleanup_free char *auth_env = auth != NULL ? xasprintf ("REGISTRY_AUTH_FILE=%s", auth)
                                                 : NULL;
      char *extra[] = { auth_env, NULL };
      status = ci_tool (args, -1, extra);
      ci_credentials_remove (auth);
    }
  close (env_fd);
  volumes_clear (&vs);
  return status;
}

static void
cleanup_job (json_t *input)
{
  const char *name = str (json_object_get (input, "state"), "root");
  if (name == NULL || !name_is_valid (name))
    return;
  cleanup_free char *root = ci_root_path (name);
  if (root != NULL)
    ci_remove_root (name);
  cleanup_free char *dir = job_dir (name);
  remove_job_dir (dir);
}

/* OPTION's value at ARGV[*I]: "--option VALUE" or "--option=VALUE"; NULL when ARGV[*I] is
 * another option. */
static const char *
option_value (char **argv, size_t *i, const char *option)
{
  size_t len = strlen (option);
  if (strncmp (argv[*i], option, len) != 0)
    return NULL;
  if (argv[*i][len] == '=')
    return argv[*i] + len + 1;
  if (argv[*i][len] != '\0')
    return NULL;
  if (argv[*i + 1] == NULL)
    fail ("%s needs a value", option);
  return argv[++*i];
}

static void
allow_volume (const char *arg)
{
  cleanup_free char *dir = xstrdup (arg);
  size_t len = strlen (dir);
  bool ro = len > 3 && strcmp (dir + len - 3, ":ro") == 0;
  if (ro)
    dir[len - 3] = '\0';
  cleanup_free char *real = dir[0] == '/' ? resolved_dir (dir) : NULL;
  if (real == NULL)
    fail ("--allow-volume '%s': %s", arg,
          dir[0] != '/' ? "not an absolute path"
          : errno == ENOTDIR ? "not a directory" : strerror (errno));
  allowed_add (&admin_dirs, real, ro);
}

int
ci_github_hook (char **argv)
{
  atexit (abandon_pending);
  bool allow_root = false;
  for (size_t i = 0; argv[i] != NULL; i++)
    {
      const char *v;
      if (strcmp (argv[i], "--allow-local-images") == 0)
        local_images = true;
      else if (strcmp (argv[i], "--allow-root") == 0)
        allow_root = true;
      else if (strcmp (argv[i], "--insecure-http") == 0)
        insecure_http = true;
      else if ((v = option_value (argv, &i, "--mode")) != NULL)
        {
          if (strcmp (v, "auto") != 0 && strcmp (v, "userns") != 0 && strcmp (v, "chroot") != 0)
            fail ("--mode '%s': expected auto, userns or chroot", v);
          hook_mode = v;
        }
      else if ((v = option_value (argv, &i, "--cacert")) != NULL)
        cacert = v;
      else if ((v = option_value (argv, &i, "--step-user")) != NULL)
        {
          if (strcmp (v, "image") == 0)
            step_user = STEP_USER_IMAGE;
          else if (strcmp (v, "root") == 0)
            step_user = STEP_USER_ROOT;
          else if (strcmp (v, "runner") == 0)
            step_user = STEP_USER_RUNNER;
          else
            fail ("--step-user '%s': expected image, root or runner", v);
        }
      else if ((v = option_value (argv, &i, "--allow-volume")) != NULL)
        allow_volume (v);
      else if ((v = option_value (argv, &i, "--device")) != NULL)
        {
          const char *why;
          if (cdi_device_name_check (v, &why) < 0)
            fail ("--device '%s': %s", v, why);
          if (n_devices == HOOK_DEVICES_MAX)
            fail ("more than %d --device", HOOK_DEVICES_MAX);
          devices[n_devices++] = v;
        }
      else
        fail ("unexpected argument '%s': the runner's JSON comes on standard input", argv[i]);
    }
  /* A runner started with sudo (or as a root service) would give every job root here. */
  ci_refuse_root (HOOK_FAILURE, DRIVER, allow_root);
  size_t len;
  cleanup_free char *text = read_fd_all (STDIN_FILENO, INPUT_MAX, &len);
  if (text == NULL)
    fail ("cannot read the runner's JSON on standard input: %s", strerror (errno));
  json_error_t err;
  json_t *input = json_loadb (text, len, 0, &err);
  if (!json_is_object (input))
    fail ("standard input: not the runner's JSON: %s (line %d)", err.text, err.line);
  const char *command = str (input, "command");
  int status = 0;
  if (command == NULL)
    fail ("standard input: no \"command\"");
  else if (strcmp (command, "prepare_job") == 0)
    prepare_job (input);
  else if (strcmp (command, "run_script_step") == 0)
    status = run_script_step (input);
  else if (strcmp (command, "run_container_step") == 0)
    status = run_container_step (input);
  else if (strcmp (command, "cleanup_job") == 0)
    cleanup_job (input);
  else
    fail ("unknown command '%s' (expected prepare_job, run_script_step, run_container_step "
          "or cleanup_job)", command);
  json_decref (input);
  allowed_clear (&admin_dirs);
  return status;
}
