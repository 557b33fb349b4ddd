/* CDI hooks run as an OCI runtime runs them (see hooks.h). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cdi/hooks.h"
#include "common/cdi-edits.h"
#include "common/util.h"
#include "common/verbose.h"

/* The runtime-spec version whose state and config we write. */
#define OCI_VERSION "1.0.2"

/* In the order an OCI runtime reaches them, up to the start of the container's process. */
static const char *const stages[] = { "prestart", "createRuntime", "createContainer",
                                      "startContainer" };

static json_t *
strv_json (char *const *v)
{
  json_t *a = json_array ();
  for (size_t i = 0; v != NULL && v[i] != NULL; i++)
    json_array_append_new (a, json_string (v[i]));
  return a;
}

static json_t *
hook_json (const struct cdi_hook *h)
{
  json_t *o = json_pack ("{s:s}", "path", h->path);
  if (h->args[0] != NULL)
    json_object_set_new (o, "args", strv_json (h->args));
  if (h->env[0] != NULL)
    json_object_set_new (o, "env", strv_json (h->env));
  if (h->timeout > 0)
    json_object_set_new (o, "timeout", json_integer (h->timeout));
  return o;
}

static json_t *
mounts_json (const struct cdi_edits *e)
{
  json_t *a = json_array ();
  for (size_t i = 0; i < e->n_mounts; i++)
    {
      json_t *options = json_array ();
      cleanup_free char *words = xstrdup (e->mounts[i].options);
      for (char *save, *w = strtok_r (words, ",", &save); w != NULL;
           w = strtok_r (NULL, ",", &save))
        json_array_append_new (options, json_string (w));
      json_array_append_new (a, json_pack ("{s:s, s:s, s:s, s:o}", "destination",
                                           e->mounts[i].path, "type", "bind", "source",
                                           e->mounts[i].host, "options", options));
    }
  for (size_t i = 0; i < e->n_nodes; i++)
    json_array_append_new (a, json_pack ("{s:s, s:s, s:s, s:[s,s]}", "destination",
                                         e->nodes[i].path, "type", "bind", "source",
                                         e->nodes[i].host, "options", "bind", "nosuid"));
  return a;
}

/* BUNDLE/config.json: what an OCI runtime's bundle would say of this container. */
static void
write_config (const char *bundle, const char *root, const struct cdi_edits *e)
{
  json_t *hooks = json_object ();
  for (size_t s = 0; s < N_ELEMENTS (stages); s++)
    {
      json_t *list = json_array ();
      for (size_t i = 0; i < e->n_hooks; i++)
        if (strcmp (e->hooks[i].stage, stages[s]) == 0)
          json_array_append_new (list, hook_json (&e->hooks[i]));
      if (json_array_size (list) > 0)
        json_object_set_new (hooks, stages[s], list);
      else
        json_decref (list);
    }
  json_t *config = json_pack ("{s:s, s:{s:s, s:b}, s:{s:o, s:s}, s:o, s:o}", "ociVersion",
                              OCI_VERSION, "root", "path", root, "readonly", 0, "process",
                              "env", strv_json (e->env), "cwd", "/", "mounts", mounts_json (e),
                              "hooks", hooks);
  if (config == NULL)
    die ("CDI hooks: cannot make the bundle's config.json (a path that is not UTF-8?)");
  cleanup_free char *path = xasprintf ("%s/config.json", bundle);
  if (json_dump_file (config, path, JSON_INDENT (2)) < 0)
    die_with_error ("CDI hooks: cannot write %s", path);
  json_decref (config);
}

static volatile sig_atomic_t timed_out;

static void
on_alarm (int sig)
{
  (void) sig;
  timed_out = 1;
}

/* The hook's process: the state on stdin, stdout to stderr, chrooted for startContainer;
 * ERROR_FD, moved to fd 3 and closed by the exec, receives the errno of a failure. */
#define ERROR_FD (STDERR_FILENO + 1)

__attribute__((noreturn)) static void
exec_hook (const struct cdi_hook *h, const char *root, int state_fd, int error_fd)
{
  bool inside = strcmp (h->stage, "startContainer") == 0;
  char *path_only[] = { h->path, NULL };
  if (dup2 (state_fd, STDIN_FILENO) < 0
      || (error_fd != ERROR_FD && (dup2 (error_fd, ERROR_FD) < 0
                                   || fcntl (ERROR_FD, F_SETFD, FD_CLOEXEC) < 0)))
    _exit (EXIT_CANNOT_EXEC);
  if (dup2 (STDERR_FILENO, STDOUT_FILENO) < 0 || signal (SIGPIPE, SIG_DFL) == SIG_ERR
      || (inside && (chroot (root) < 0 || chdir ("/") < 0)))
    goto fail;
  close_fds_from (ERROR_FD + 1);
  execve (h->path, h->args[0] != NULL ? h->args : path_only, h->env);
fail:;
  int errsv = errno;
  (void) !write (ERROR_FD, &errsv, sizeof errsv);
  _exit (EXIT_CANNOT_EXEC);
}

/* Run H with STATE on its stdin and wait for it, killing it at its timeout; die()s unless it
 * exits 0. */
static void
run_hook (const struct cdi_hook *h, const char *root, const char *state)
{
  int in[2], err[2];
  if (pipe2 (in, O_CLOEXEC) < 0 || pipe2 (err, O_CLOEXEC) < 0)
    die_with_error ("CDI hooks: pipe");
  verbose ("CDI %s hook %s (%s)", h->stage, h->path, h->spec);
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    die_with_error ("CDI hooks: fork");
  if (pid == 0)
    {
      close (in[1]);
      close (err[0]);
      exec_hook (h, root, in[0], err[1]);
    }
  close (in[0]);
  close (err[1]);
  /* The state is a few hundred bytes, less than a pipe holds: written whole at once, so a
   * hook that never reads it does not stop us. */
  if (write_all (in[1], state, strlen (state)) < 0 && errno != EPIPE)
    die_with_error ("CDI hooks: cannot write the state to the %s hook %s", h->stage, h->path);
  close (in[1]);
  int exec_errno = 0;
  ssize_t got = read (err[0], &exec_errno, sizeof exec_errno);
  close (err[0]);
  timed_out = 0;
  alarm (h->timeout);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    {
      if (errno != EINTR)
        die_with_error ("CDI hooks: waitpid");
      if (timed_out)
        kill (pid, SIGKILL);
    }
  alarm (0);
  if (got == (ssize_t) sizeof exec_errno)
    die ("CDI spec %s: the %s hook %s: cannot run it: %s", h->spec, h->stage, h->path,
         strerror (exec_errno));
  if (timed_out)
    die ("CDI spec %s: the %s hook %s: did not finish within its timeout of %u s: killed",
         h->spec, h->stage, h->path, h->timeout);
  if (WIFSIGNALED (status))
    die ("CDI spec %s: the %s hook %s: killed by signal %d", h->spec, h->stage, h->path,
         WTERMSIG (status));
  if (WEXITSTATUS (status) != 0)
    die ("CDI spec %s: the %s hook %s: exited with status %d", h->spec, h->stage, h->path,
         WEXITSTATUS (status));
}

static char *
state_json (const char *status, const char *bundle, const char *root, long pid, const char *id)
{
  json_t *state = json_pack ("{s:s, s:s, s:s, s:I, s:s, s:s, s:{}}", "ociVersion", OCI_VERSION,
                             "id", id, "status", status, "pid", (json_int_t) pid, "bundle",
                             bundle, "root", root, "annotations");
  if (state == NULL)
    die ("CDI hooks: cannot make the container's state (a path that is not UTF-8?)");
  char *text = json_dumps (state, JSON_COMPACT);
  json_decref (state);
  if (text == NULL)
    die ("out of memory");
  return text;
}

int
hooks_run (const char *bundle, const char *root, const char *pid_text, const char *id)
{
  char *end;
  errno = 0;
  long pid = strtol (pid_text, &end, 10);
  if (pid_text[0] < '1' || pid_text[0] > '9' || *end != '\0' || errno != 0)
    die ("hooks: '%s' is not a process id", pid_text);
  size_t len;
  cleanup_free char *blob = read_fd_all (STDIN_FILENO, CDI_EDITS_MAX, &len);
  if (blob == NULL)
    die_with_error ("hooks: cannot read the edits on standard input");
  struct cdi_edits e;
  const char *why;
  if (cdi_edits_decode (blob, len, &e, &why) < 0)
    die ("hooks: the edits on standard input: %s", why);
  struct sigaction sa = { .sa_handler = on_alarm };
  if (sigaction (SIGALRM, &sa, NULL) < 0 || signal (SIGPIPE, SIG_IGN) == SIG_ERR)
    die_with_error ("hooks: sigaction");
  write_config (bundle, root, &e);
  cleanup_free char *creating = state_json ("creating", bundle, root, pid, id);
  cleanup_free char *created = state_json ("created", bundle, root, pid, id);
  for (size_t s = 0; s < N_ELEMENTS (stages); s++)
    for (size_t i = 0; i < e.n_hooks; i++)
      if (strcmp (e.hooks[i].stage, stages[s]) == 0)
        run_hook (&e.hooks[i], root, strcmp (stages[s], "startContainer") == 0 ? created
                                                                                : creating);
  cdi_edits_clear (&e);
  return 0;
}
