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
 * bound, else chroot mode) and keeps it in the runner's state. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "ci/ci.h"
#include "ci/driver.h"
#include "ci/volumes.h"
#include "common/name.h"
#include "common/util.h"

#define DRIVER "github-hook"
/* The hook's whole input: the runner's JSON is a few kilobytes. */
#define INPUT_MAX (4 * 1024 * 1024)
/* The status of a hook that failed on its own (the runner fails the step on any nonzero). */
#define HOOK_FAILURE 1

#define fail(...) ci_fail (HOOK_FAILURE, DRIVER, __VA_ARGS__)

/* --allow-local-images: the runner's administrator lets workflows name images on this
 * host (driver.h says why not by default). */
static bool local_images;
/* --mode: auto, userns or chroot. */
static const char *hook_mode = "auto";

static void
image_source (const char *image, char ***args, char **registry)
{
  if (!ci_image_source (image, local_images, args, registry))
    fail ("image '%s' names a file or directory on the runner's host; workflows may not "
          "read those unless the hook allows it (exec enter-devroot github-hook "
          "--allow-local-images)", image);
}

static const char *
str (json_t *object, const char *key)
{
  json_t *v = json_object_get (object, key);
  return json_is_string (v) && json_string_length (v) > 0 ? json_string_value (v) : NULL;
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

/* Each of the VOLUMES of the runner's JSON (FROM_RUNNER) or of the runner's state, which
 * volumes_json wrote. From the runner, a source that is no directory here (the docker
 * socket the runner always lists) is skipped with one line, since nothing here speaks to a
 * docker daemon. */
static void
collect_volumes (struct volumes *vs, json_t *volumes, bool from_runner)
{
  size_t i;
  json_t *v;
  json_array_foreach (volumes, i, v)
  {
    const char *src = str (v, "sourceVolumePath");
    const char *dst = str (v, "targetVolumePath");
    if (src == NULL || dst == NULL)
      fail (from_runner ? "a mount volume lacks sourceVolumePath or targetVolumePath"
                        : "the runner's state names a volume without its paths");
    struct stat st;
    if (from_runner && (stat (src, &st) < 0 || !S_ISDIR (st.st_mode)))
      {
        fprintf (stderr, "%s: %s: not binding %s (not a directory here)\n", PROGRAM_NAME,
                 DRIVER, src);
        continue;
      }
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

/* chroot mode keeps them in the runner's state for the steps, and reads them back. */
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

/* chroot mode: run ARGS (a `run NAME --mode=chroot ...`) between copying the volumes into
 * the devroot NAME and back. A volume the step removed is a failure of the step. */
static int
run_copying (const char *name, const struct volumes *vs, char **args)
{
  cleanup_free char *root = ci_root_path (name);
  if (root == NULL)
    fail ("the job's devroot %s is gone", name);
  ci_volumes_copy_in (root, vs->v, vs->n);
  int status = ci_tool (args, -1, NULL);
  if (!ci_volumes_copy_back (root, vs->v, vs->n) && status == 0)
    status = HOOK_FAILURE;
  return status;
}

/* --env for each member of the object ENV ({"K": "V"}). */
static void
push_env (char ***args, json_t *env)
{
  const char *key;
  json_t *v;
  json_object_foreach (env, key, v)
  {
    if (!json_is_string (v))
      fail ("environment variable %s: not a string", key);
    ci_pushf (args, "--env=%s=%s", key, json_string_value (v));
  }
}

/* The step's command: entryPoint + entryPointArgs, behind a shell that puts prependPath in
 * front of the PATH the devroot's image and our defaults give (only when there is one:
 * a distroless image may have no shell). */
static void
push_command (char ***args, json_t *a)
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
  cleanup_free char *joined = strbuf_steal (&path);
  if (joined[0] != '\0')
    ci_pushf (args, "--env=ENTER_DEVROOT_PREPEND_PATH=%s", joined);
  ci_push (args, "--");
  if (joined[0] != '\0')
    {
      ci_push (args, "/bin/sh");
      ci_push (args, "-c");
      ci_push (args, "PATH=\"$ENTER_DEVROOT_PREPEND_PATH:$PATH\"; "
                     "unset ENTER_DEVROOT_PREPEND_PATH; exec \"$@\"");
      ci_push (args, "sh");
    }
  const char *entry = str (a, "entryPoint");
  if (entry == NULL)
    fail ("the step has no entryPoint");
  ci_push (args, entry);
  json_array_foreach (json_object_get (a, "entryPointArgs"), i, v)
  {
    if (!json_is_string (v))
      fail ("entryPointArgs: entry %zu is not a string", i);
    ci_push (args, json_string_value (v));
  }
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
  cleanup_free char *name = new_root_name ();
  if (create_root (name, container) != 0)
    fail ("cannot create the job's devroot from '%s'", str (container, "image"));

  /* What every step gets: the runner's directories, the container's environment. */
  struct volumes vs = { 0 };
  collect_volumes (&vs, json_object_get (container, "systemMountVolumes"), true);
  collect_volumes (&vs, json_object_get (container, "userMountVolumes"), true);
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
        {
          ci_remove_root (name);
          fail ("cannot enter the job's devroot with the runner's directories bound: "
                "--mode userns needs user namespaces (see 'enter-devroot doctor')");
        }
    }
  if (mode == NULL)
    {
      cleanup_strv char **probe = NULL;
      ci_push_run (&probe, name, "chroot");
      push_probe (&probe);
      if (ci_tool_talk (probe, NULL, 0, false, answer, sizeof answer) != 0)
        {
          ci_remove_root (name);
          fail ("cannot enter the job's devroot, with the runner's directories bound in "
                "user-namespace mode nor in chroot mode (see 'enter-devroot doctor')");
        }
      mode = "chroot";
    }
  fprintf (stderr, "%s: %s: devroot %s ready (mode %s)\n", PROGRAM_NAME, DRIVER, name, mode);

  json_t *state_binds = json_array ();
  if (strcmp (mode, "userns") == 0)
    {
      cleanup_strv char **binds = NULL;
      push_binds (&binds, &vs);
      for (size_t i = 0; binds != NULL && binds[i] != NULL; i++)
        json_array_append_new (state_binds, json_string (binds[i]));
    }
  json_t *state_volumes = strcmp (mode, "chroot") == 0 ? volumes_json (&vs) : json_array ();
  volumes_clear (&vs);
  json_t *env = json_object_get (container, "environmentVariables");
  json_t *response = json_pack (
    "{s:{s:s, s:s, s:o, s:o, s:o}, s:{s:{s:s, s:s}, s:[]}, s:b}",
    "state", "root", name, "mode", mode, "binds", state_binds, "volumes", state_volumes,
    "env", json_is_object (env) ? json_incref (env) : json_object (),
    "context", "container", "id", name, "network", "", "services",
    "isAlpine", strcmp (answer, ALPINE "\n") == 0);
  if (response == NULL)
    fail ("cannot build the response");
  write_response (str (input, "responseFile"), response);
  json_decref (response);
}

/* The devroot and mounts prepare_job kept in the runner's state. */
static const char *
state_root (json_t *input, json_t **binds, json_t **env, const char **mode)
{
  json_t *state = json_object_get (input, "state");
  const char *name = str (state, "root");
  if (name == NULL || !name_is_valid (name))
    fail ("the runner's state names no devroot (was prepare_job run by this hook?)");
  *binds = json_object_get (state, "binds");
  *env = json_object_get (state, "env");
  *mode = str (state, "mode");
  if (*mode == NULL)
    *mode = "userns"; /* a state of this hook before chroot mode */
  if (strcmp (*mode, "userns") != 0 && strcmp (*mode, "chroot") != 0)
    fail ("the runner's state names no mode this hook knows ('%s')", *mode);
  return name;
}

static int
run_script_step (json_t *input)
{
  json_t *binds, *env;
  const char *mode;
  const char *name = state_root (input, &binds, &env, &mode);
  json_t *a = json_object_get (input, "args");
  cleanup_strv char **args = NULL;
  ci_push_run (&args, name, mode);
  size_t i;
  json_t *v;
  json_array_foreach (binds, i, v) ci_push (&args, json_string_value (v));
  push_env (&args, env);
  push_env (&args, json_object_get (a, "environmentVariables"));
  const char *workdir = str (a, "workingDirectory");
  if (workdir != NULL)
    ci_pushf (&args, "--workdir=%s", workdir);
  push_command (&args, a);
  if (strcmp (mode, "userns") == 0)
    return ci_tool (args, -1, NULL);
  struct volumes vs = { 0 };
  collect_volumes (&vs, json_object_get (json_object_get (input, "state"), "volumes"), false);
  int status = run_copying (name, &vs, args);
  volumes_clear (&vs);
  return status;
}

static int
run_container_step (json_t *input)
{
  json_t *a = json_object_get (input, "args");
  if (str (a, "image") == NULL)
    fail ("run_container_step: %s", str (a, "dockerfile") != NULL
                                       ? "Dockerfile actions need an image builder: build the "
                                         "image elsewhere and name it with docker://"
                                       : "the step names no image");
  struct volumes vs = { 0 };
  collect_volumes (&vs, json_object_get (a, "systemMountVolumes"), true);
  collect_volumes (&vs, json_object_get (a, "userMountVolumes"), true);
  /* chroot mode when the job's own devroot is in it, or the administrator said so (a job
   * without a container of its own has no state to tell). */
  const char *state_mode = str (json_object_get (input, "state"), "mode");
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
  push_env (&args, json_object_get (a, "environmentVariables"));
  const char *workdir = str (a, "workingDirectory");
  if (workdir != NULL)
    ci_pushf (&args, "--workdir=%s", workdir);
  if (str (a, "entryPoint") != NULL)
    push_command (&args, a);
  else
    {
      /* The image's own Entrypoint, given the step's arguments. */
      ci_push (&args, "--entrypoint");
      ci_push (&args, "--");
      size_t i;
      json_t *v;
      json_array_foreach (json_object_get (a, "entryPointArgs"), i, v)
        ci_push (&args, json_string_value (v));
    }
  if (chroot_mode)
    {
      int status = run_copying (name, &vs, args);
      volumes_clear (&vs);
      ci_remove_root (name);
      return status;
    }
  volumes_clear (&vs);
  char *auth = credentials_for (a, registry);
  cleanup_free char *auth_env = auth != NULL ? xasprintf ("REGISTRY_AUTH_FILE=%s", auth) : NULL;
  char *extra[] = { auth_env, NULL };
  int status = ci_tool (args, -1, extra);
  ci_credentials_remove (auth);
  return status;
}

static void
cleanup_job (json_t *input)
{
  const char *name = str (json_object_get (input, "state"), "root");
  cleanup_free char *root = name != NULL && name_is_valid (name) ? ci_root_path (name) : NULL;
  if (root != NULL)
    ci_remove_root (name);
}

int
ci_github_hook (char **argv)
{
  for (; argv[0] != NULL; argv++)
    if (strcmp (argv[0], "--allow-local-images") == 0)
      local_images = true;
    else if (strcmp (argv[0], "--mode") == 0 || strncmp (argv[0], "--mode=", 7) == 0)
      {
        const char *m = argv[0][6] == '=' ? argv[0] + 7 : argv[1];
        if (m == NULL || (strcmp (m, "auto") != 0 && strcmp (m, "userns") != 0
                          && strcmp (m, "chroot") != 0))
          fail ("--mode '%s': expected auto, userns or chroot", m != NULL ? m : "");
        hook_mode = m;
        if (argv[0][6] != '=')
          argv++;
      }
    else
      fail ("unexpected argument '%s': the runner's JSON comes on standard input", argv[0]);
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
  return status;
}
