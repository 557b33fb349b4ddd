/* What the CI engine drivers share; see driver.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "ci/driver.h"
#include "common/helper.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"

extern char **environ;

void
ci_push (char ***v, const char *s)
{
  size_t n = strv_length (*v);
  *v = xrealloc (*v, (n + 2) * sizeof (char *));
  (*v)[n] = xstrdup (s);
  (*v)[n + 1] = NULL;
}

void
ci_pushf (char ***v, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  cleanup_free char *s = xvasprintf (format, ap);
  va_end (ap);
  ci_push (v, s);
}

void
ci_push_layout (char ***v, const char *mode)
{
  /* Made again from the same image job after job: a flat one keeps its layers. */
  ci_push (v, "--keep-layers");
  const char *env = getenv ("ENTER_DEVROOT_LAYOUT");
  cleanup_free char *config = paths_config_value ("layout", NULL);
  if ((env != NULL && env[0] != '\0') || config != NULL)
    return; /* the user's: create follows it */
  struct store_paths p;
  store_paths_from_env (&p);
  bool overlay = strcmp (mode, "chroot") != 0 && overlay_probe_cached (&p);
  store_paths_clear (&p);
  ci_push (v, overlay ? "--overlay" : "--flat");
}

void
ci_push_run (char ***v, const char *name, const char *mode)
{
  ci_push (v, "run");
  ci_push (v, name);
  ci_pushf (v, "--mode=%s", mode);
}

void
ci_vfail (int status, const char *driver, const char *format, va_list ap)
{
  /* Straight to stderr: nothing allocated is left behind by the exit. */
  fprintf (stderr, "%s: %s: ", PROGRAM_NAME, driver);
  vfprintf (stderr, format, ap);
  fputc ('\n', stderr);
  exit (status);
}

void
ci_fail (int status, const char *driver, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  ci_vfail (status, driver, format, ap);
}

void
ci_refuse_root (int status, const char *driver, bool allowed)
{
  if (geteuid () != 0 || allowed)
    return;
  ci_fail (status, driver, "refusing to run jobs as root (euid 0): they would be root on "
           "this host; run the runner as an unprivileged user, or pass --allow-root");
}

int
ci_status_from_env (const char *variable, int fallback)
{
  long v;
  return env_number (variable, &v) > 0 && v >= 0 && v <= 255 ? (int) v : fallback;
}

/* ---- Images. */

static bool
has_prefix (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

/* The registry host of a Docker reference, or NULL for Docker Hub: the first component
 * names a host when it has a '.' or a ':' or is "localhost", as docker decides. */
static char *
reference_registry (const char *ref)
{
  const char *slash = strchr (ref, '/');
  if (slash == NULL)
    return NULL;
  cleanup_free char *first = xasprintf ("%.*s", (int) (slash - ref), ref);
  if (strchr (first, '.') == NULL && strchr (first, ':') == NULL
      && strcmp (first, "localhost") != 0)
    return NULL;
  return steal_pointer (&first);
}

bool
ci_image_source (const char *image, bool local_ok, char ***argv, char **registry)
{
  static const char *const remote[] = { "docker://", "https://", "http://" };
  static const char *const local[] = { "oci:", "docker-archive:", "file://", "/", "./", "../" };
  *registry = NULL;
  if (has_prefix (image, "template:"))
    {
      ci_push (argv, "--template");
      ci_push (argv, image + strlen ("template:"));
      return true;
    }
  for (size_t i = 0; i < N_ELEMENTS (local); i++)
    if (has_prefix (image, local[i]))
      {
        if (!local_ok)
          return false;
        ci_push (argv, "--from");
        ci_push (argv, image);
        return true;
      }
  for (size_t i = 0; i < N_ELEMENTS (remote); i++)
    if (has_prefix (image, remote[i]))
      {
        ci_push (argv, "--from");
        ci_push (argv, image);
        if (i == 0)
          *registry = reference_registry (image + strlen ("docker://"));
        return true;
      }
  ci_push (argv, "--from");
  ci_pushf (argv, "docker://%s", image);
  *registry = reference_registry (image);
  return true;
}

/* ---- Credentials. */

char *
ci_credentials_write (const char *registry, const char *user, const char *password)
{
  if (user == NULL || user[0] == '\0' || password == NULL || password[0] == '\0')
    return NULL;
  /* A private directory of our own: the file is never where another user could swap it. */
  const char *tmp = getenv ("TMPDIR");
  cleanup_free char *dir = xasprintf ("%s/enter-devroot-ci.XXXXXX",
                                      tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
  if (mkdtemp (dir) == NULL)
    die_with_error ("cannot create a directory for registry credentials in %s", dir);
  cleanup_free char *plain = xasprintf ("%s:%s", user, password);
  size_t n = strlen (plain);
  cleanup_free unsigned char *b64 = xmalloc (4 * ((n + 2) / 3) + 1);
  EVP_EncodeBlock (b64, (const unsigned char *) plain, (int) n);
  explicit_bzero (plain, n);
  char *path = xasprintf ("%s/auth.json", dir);
  cleanup_fd int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    die_with_error ("cannot write %s", path);
  /* The registry name is the job's (CI_REGISTRY): it goes into a JSON string, so it must
   * not close it. */
  if (strpbrk (registry, "\"\\") != NULL || strlen (registry) > 255)
    die ("registry name '%s' is not a host[:port]", registry);
  cleanup_free char *json = xasprintf ("{\"auths\": {\"%s\": {\"auth\": \"%s\"}}}\n", registry,
                                       (char *) b64);
  if (write_all (fd, json, strlen (json)) < 0)
    die_with_error ("cannot write %s", path);
  explicit_bzero (json, strlen (json));
  return path;
}

void
ci_credentials_remove (char *path)
{
  if (path == NULL)
    return;
  unlink (path);
  char *slash = strrchr (path, '/');
  if (slash != NULL)
    {
      *slash = '\0';
      rmdir (path);
    }
  free (path);
}

/* ---- Running enter-devroot. */

static volatile sig_atomic_t child_pid;

static void
pass_on (int sig)
{
  if (child_pid > 0)
    kill (child_pid, sig);
}

int
ci_tool (char *const args[], int stdin_fd, char *const extra_env[])
{
  /* enter-devroot beside this helper (a build tree), else the installed one. */
  cleanup_free char *path = program_path (PROGRAM_NAME, BINDIR);
  cleanup_free char **argv = NULL;
  size_t n = strv_length (args);
  argv = xcalloc (n + 2, sizeof (char *));
  static char program[] = PROGRAM_NAME;
  argv[0] = program;
  memcpy (argv + 1, args, n * sizeof (char *));
  fflush (NULL);

  struct sigaction sa = { .sa_handler = pass_on }, old[3];
  const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
  sigemptyset (&sa.sa_mask);
  pid_t pid = fork ();
  if (pid < 0)
    die_with_error ("cannot fork");
  if (pid == 0)
    {
      int in = stdin_fd >= 0 ? stdin_fd : open ("/dev/null", O_RDONLY | O_CLOEXEC);
      if (in < 0 || dup2 (in, STDIN_FILENO) < 0)
        _exit (EXIT_TOOL_FAILURE);
      for (size_t i = 0; extra_env != NULL && extra_env[i] != NULL; i++)
        putenv (extra_env[i]);
      execve (path, argv, environ);
      fprintf (stderr, "%s: cannot run %s: %s\n", PROGRAM_NAME, path, strerror (errno));
      _exit (EXIT_TOOL_FAILURE);
    }
  child_pid = pid;
  for (size_t i = 0; i < N_ELEMENTS (sigs); i++)
    sigaction (sigs[i], &sa, &old[i]);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      die_with_error ("cannot wait for %s", path);
  child_pid = 0;
  for (size_t i = 0; i < N_ELEMENTS (sigs); i++)
    sigaction (sigs[i], &old[i], NULL);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}

/* ci_tool with stderr silenced. */
static int
tool_quiet (char *const args[], int stdin_fd)
{
  cleanup_fd int null = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  int saved = dup (STDERR_FILENO);
  if (null >= 0)
    dup2 (null, STDERR_FILENO);
  int status = ci_tool (args, stdin_fd, NULL);
  if (saved >= 0)
    {
      dup2 (saved, STDERR_FILENO);
      close (saved);
    }
  return status;
}

int
ci_tool_quiet (char *const args[])
{
  return tool_quiet (args, -1);
}

int
ci_tool_talk (char *const args[], const char *input, size_t len, bool quiet, char *reply,
              size_t size)
{
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
    die_with_error ("cannot create a socket pair");
  cleanup_fd int ours = pair[0];
  cleanup_fd int theirs = pair[1];
  pid_t feeder = 0;
  if (len > 0)
    {
      /* A child writes the input, since the command reads it only once it runs: the input
       * need not fit the socket's buffer. Killed below once the tool has exited. */
      fflush (NULL);
      feeder = fork ();
      if (feeder < 0)
        die_with_error ("cannot fork");
      if (feeder == 0)
        {
          close (theirs);
          for (size_t done = 0; done < len;)
            {
              ssize_t n = send (ours, input + done, len - done, MSG_NOSIGNAL);
              if (n < 0 && errno == EINTR)
                continue;
              /* The command is gone: nobody reads a part of the input. */
              if (n < 0)
                _exit (EXIT_FAILURE);
              done += (size_t) n;
            }
          _exit (shutdown (ours, SHUT_WR) == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
        }
    }
  else if (shutdown (ours, SHUT_WR) < 0)
    die_with_error ("cannot shut a socket for writing");
  int status = quiet ? tool_quiet (args, theirs) : ci_tool (args, theirs, NULL);
  if (feeder > 0)
    {
      kill (feeder, SIGKILL);
      while (waitpid (feeder, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  /* Whatever the command wrote is queued by now; something of the job's that still held
   * its end could only keep us waiting, so no waiting. */
  ssize_t n = recv (ours, reply, size - 1, MSG_DONTWAIT);
  reply[n > 0 ? n : 0] = '\0';
  return status;
}

char *
ci_root_path (const char *name)
{
  struct store_paths p;
  store_paths_from_env (&p);
  char *root = paths_root (&p, name);
  store_paths_clear (&p);
  struct stat st;
  if (lstat (root, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      free (root);
      return NULL;
    }
  return root;
}

void
ci_remove_root (const char *name)
{
  cleanup_strv char **args = NULL;
  ci_push (&args, "remove");
  ci_push (&args, "--force");
  ci_push (&args, name);
  ci_tool (args, -1, NULL);
}
