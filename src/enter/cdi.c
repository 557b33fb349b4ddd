/* CDI devices in a userns-mode job (see cdi.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/helper.h"
#include "common/paths.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/cdi.h"
#include "enter/mounts.h"
#include "enter/supervise.h"

/* The store's directory a job's bundle tmpfs is mounted on (empty on the host). */
#define BUNDLE_DIR "cdi-bundle"

/* The helper's standard output, to its end; its exit status into *STATUS. */
static char *
run_resolve (char *const *devices, char *helper, size_t *len, int *status)
{
  size_t n = strv_length (devices);
  cleanup_free char **argv = xcalloc (n + 3, sizeof (char *));
  char word[] = "resolve";
  argv[0] = helper;
  argv[1] = word;
  for (size_t i = 0; i < n; i++)
    argv[2 + i] = devices[i];
  int out[2];
  if (pipe2 (out, O_CLOEXEC) < 0)
    die_with_error ("--device: pipe");
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    die_with_error ("--device: fork");
  if (pid == 0)
    {
      if (dup2 (out[1], STDOUT_FILENO) < 0)
        _exit (EXIT_TOOL_FAILURE);
      execv (helper, argv);
      die_with_error ("--device: cannot run %s (it reads the CDI specs; reinstall "
                      "enter-devroot)", helper);
    }
  close (out[1]);
  char *blob = read_fd_all (out[0], CDI_EDITS_MAX, len);
  int errsv = errno;
  close (out[0]);
  while (waitpid (pid, status, 0) < 0)
    if (errno != EINTR)
      die_with_error ("--device: waitpid");
  errno = errsv;
  return blob;
}

/* A bind of the host's HOST on PATH, as --bind's are walked and mounted. */
static struct bind
bind_of (const char *host, const char *path, bool dir)
{
  return (struct bind) { .src = xstrdup (host), .dst = xstrdup (path), .dir = dir };
}

static void
make_binds (struct cdi_view *c)
{
  const struct cdi_edits *e = &c->edits;
  c->binds = xcalloc (e->n_nodes + e->n_mounts + 1, sizeof *c->binds);
  for (size_t i = 0; i < e->n_nodes; i++)
    {
      struct bind *b = &c->binds[c->n_binds++];
      *b = bind_of (e->nodes[i].host, e->nodes[i].path, false);
      b->attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;
      b->shallow = true;
    }
  c->n_nodes = c->n_binds;
  for (size_t i = 0; i < e->n_mounts; i++)
    {
      const struct cdi_mount *m = &e->mounts[i];
      struct stat st;
      if (stat (m->host, &st) < 0)
        die_with_error ("--device: cannot mount %s on %s", m->host, m->path);
      struct bind *b = &c->binds[c->n_binds++];
      *b = bind_of (m->host, m->path, S_ISDIR (st.st_mode));
      b->ro = cdi_mount_has (m->options, "ro");
      b->attrs = (cdi_mount_has (m->options, "nosuid") ? MOUNT_ATTR_NOSUID : 0)
                 | (cdi_mount_has (m->options, "nodev") ? MOUNT_ATTR_NODEV : 0)
                 | (cdi_mount_has (m->options, "noexec") ? MOUNT_ATTR_NOEXEC : 0);
      b->shallow = !cdi_mount_has (m->options, "rbind");
    }
}

void
cdi_resolve (char *const *devices, struct cdi_view *out)
{
  *out = (struct cdi_view) { .helper = cdi_helper_path () };
  int status;
  out->blob = run_resolve (devices, out->helper, &out->blob_len, &status);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      if (WIFSIGNALED (status))
        die ("--device: %s was killed by signal %d", out->helper, WTERMSIG (status));
      exit (EXIT_TOOL_FAILURE); /* it said why */
    }
  if (out->blob == NULL)
    die_with_error ("--device: cannot read what %s resolved", out->helper);
  const char *why;
  if (cdi_edits_decode (out->blob, out->blob_len, &out->edits, &why) < 0)
    die ("--device: what %s resolved: %s", out->helper, why);
  make_binds (out);
  if (out->edits.n_hooks > 0)
    {
      struct store_paths p;
      store_paths_from_env (&p);
      out->bundle = xasprintf ("%s/%s", p.base, BUNDLE_DIR);
      store_paths_clear (&p);
      if (mkdir_p (out->bundle, 0700) < 0)
        die_with_error ("--device: cannot create %s", out->bundle);
    }
  verbose ("--device: %zu variables, %zu device nodes, %zu mounts, %zu hooks",
           strv_length (out->edits.env), out->edits.n_nodes, out->edits.n_mounts,
           out->edits.n_hooks);
}

void
cdi_view_clear (struct cdi_view *c)
{
  cdi_edits_clear (&c->edits);
  bind_free (c->binds, c->n_binds);
  char *owned[] = { c->blob, c->helper, c->bundle };
  free_strings (owned, N_ELEMENTS (owned));
  *c = (struct cdi_view) { 0 };
}

void
cdi_prepare (const char *name, const struct cdi_view *c, bool flat, const char *root)
{
  bind_check_all (name, c->binds + c->n_nodes, c->n_binds - c->n_nodes);
  if (!flat || c->edits.n_hooks == 0)
    return;
  cleanup_fd int here = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (here < 0 || mount_on_fd (root, here, "none", MS_BIND | MS_REC, NULL) < 0)
    die_with_error ("cannot enter root '%s': cannot bind it on itself for the CDI hooks", name);
  /* The working directory is still the directory under the new mount: move onto it. */
  cleanup_fd int top = open (root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top < 0 || fchdir (top) < 0)
    die_with_error ("cannot enter root '%s': cannot change directory to %s", name, root);
}

/* Every capability this process has in the job's user namespace, made ambient: kept across
 * the exec of enter-devroot-cdi and of the hooks, which run as the user (not uid 0 of the
 * namespace, whose capabilities an exec would keep). None is a capability on the host. */
static void
pass_capabilities_on (const char *name)
{
  struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
  if (syscall (SYS_capget, &header, data) < 0)
    die_with_error ("cannot enter root '%s': capget", name);
  for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
    data[i].inheritable = data[i].permitted;
  if (syscall (SYS_capset, &header, data) < 0)
    die_with_error ("cannot enter root '%s': capset", name);
  for (unsigned long cap = 0; cap < 32 * _LINUX_CAPABILITY_U32S_3; cap++)
    if ((data[cap / 32].permitted >> (cap % 32)) & 1
        && prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
      die_with_error ("cannot enter root '%s': cannot pass capability %lu on to the CDI hooks",
                      name, cap);
}

/* This process's id in the PID namespace of the host's /proc (still this mount namespace's
 * /proc: the root is not entered), as an OCI runtime's state gives it. */
static char *
host_pid (void)
{
  char link[32];
  ssize_t n = readlink ("/proc/self", link, sizeof link - 1);
  if (n <= 0)
    return xasprintf ("%ld", (long) getpid ());
  link[n] = '\0';
  return xstrdup (link);
}

static void
run_hooks (const char *name, const struct cdi_view *c)
{
  cleanup_fd int at = open (c->bundle, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (at < 0 || mount_on_fd ("tmpfs", at, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                             "mode=0700,size=1m") < 0)
    die_with_error ("cannot enter root '%s': cannot mount a tmpfs on %s for the CDI hooks' "
                    "bundle", name, c->bundle);
  char root[PATH_MAX];
  if (getcwd (root, sizeof root) == NULL)
    die_with_error ("cannot enter root '%s': getcwd", name);
  cleanup_free char *pid = host_pid ();
  cleanup_free char *id = xstrdup (name);
  char word[] = "hooks";
  char *argv[] = { c->helper, word, c->bundle, root, pid, id, NULL };
  int in[2];
  if (pipe2 (in, O_CLOEXEC) < 0)
    die_with_error ("cannot enter root '%s': pipe", name);
  fflush (NULL);
  pid_t child = fork ();
  if (child < 0)
    die_with_error ("cannot enter root '%s': fork", name);
  if (child == 0)
    {
      if (dup2 (in[0], STDIN_FILENO) < 0)
        die_with_error ("cannot enter root '%s': dup2", name);
      close_fds_from (STDERR_FILENO + 1);
      supervise_restore_signals ();
      pass_capabilities_on (name);
      execv (c->helper, argv);
      die_with_error ("--device: cannot run %s (it runs the CDI hooks; reinstall "
                      "enter-devroot)", c->helper);
    }
  close (in[0]);
  if (write_all (in[1], c->blob, c->blob_len) < 0)
    die_with_error ("cannot enter root '%s': cannot pass the CDI edits on", name);
  close (in[1]);
  int status;
  while (waitpid (child, &status, 0) < 0)
    if (errno != EINTR)
      die_with_error ("cannot enter root '%s': waitpid", name);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      if (WIFSIGNALED (status))
        die ("cannot enter root '%s': %s hooks was killed by signal %d", name, c->helper,
             WTERMSIG (status));
      exit (EXIT_TOOL_FAILURE); /* it said why */
    }
}

void
cdi_apply (const char *name, const struct cdi_view *c)
{
  bind_mount_all (name, c->binds, c->n_binds);
  if (c->edits.n_hooks > 0)
    run_hooks (name, c);
}
