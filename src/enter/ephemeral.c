/* run --ephemeral (see ephemeral.h).
 *
 * Why enter-devroot runs the store helper as a child rather than creating the root itself:
 * creating means parsing an archive (libarchive, libcurl, libcrypto), which lives in
 * enter-devroot-store so that the entering program links the C library only. Why a child
 * and not an exec: the process that removes the root must outlive the command, and must
 * have been outside every namespace and outside the root all along (a remove from inside
 * the job's mount namespace would walk into --bind mounts and delete the host's files).
 * That process is the supervisor that already waits for the job (supervise.c), so it also
 * waits for the helper: one process owns the throwaway root from before its creation to
 * after its removal, holding its run lock the whole time. A run killed with SIGKILL
 * leaves the root behind with its run lock free; the next create or doctor removes it
 * (reap_abandoned_ephemeral), and list never shows it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/helper.h"
#include "common/overlay.h"
#include "common/resolved.h"
#include "common/roots.h"
#include "common/save-target.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/ephemeral.h"
#include "enter/supervise.h"

#define EPHEMERAL_RANDOM_BYTES 8

static char *
random_name (void)
{
  unsigned char bytes[EPHEMERAL_RANDOM_BYTES];
  if (getrandom (bytes, sizeof bytes, 0) != (ssize_t) sizeof bytes)
    die_with_error ("run --ephemeral: cannot get random bytes for a name");
  struct strbuf sb = { 0 };
  strbuf_append (&sb, EPHEMERAL_PREFIX);
  for (size_t i = 0; i < sizeof bytes; i++)
    strbuf_appendf (&sb, "%02x", bytes[i]);
  return strbuf_steal (&sb);
}

/* `create NAME` and the create options given to run, as the helper parses them; the
 * layout is throwaway roots' own (OVERLAY: ephemeral_overlay), not create's default. */
static char **
create_argv (const struct cli *cli, const char *name, bool overlay)
{
  const char *pairs[][2] = {
    { "--from", cli->from }, { "--template", cli->template_name },
    { "--sha256", cli->sha256 }, { "--index", cli->index }, { "--cacert", cli->cacert },
    { "--platform", cli->platform },
  };
  char **argv = xcalloc (4 + 2 * N_ELEMENTS (pairs) + 7, sizeof (char *));
  size_t n = 0;
  argv[n++] = xstrdup (PROGRAM_NAME);
  argv[n++] = xstrdup ("create");
  argv[n++] = xstrdup (name);
  for (size_t i = 0; i < N_ELEMENTS (pairs); i++)
    if (pairs[i][1] != NULL)
      {
        argv[n++] = xstrdup (pairs[i][0]);
        argv[n++] = xstrdup (pairs[i][1]);
      }
  if (cli->max_size != 0)
    argv[n++] = xasprintf ("--max-size=%" PRIu64, cli->max_size);
  if (cli->no_verify)
    argv[n++] = xstrdup ("--no-verify");
  if (cli->insecure_http)
    argv[n++] = xstrdup ("--insecure-http");
  if (cli->quiet)
    argv[n++] = xstrdup ("--quiet");
  argv[n++] = xstrdup (overlay ? "--overlay" : "--flat");
  /* Made again and again from one source: its layers are worth keeping. */
  argv[n++] = xstrdup ("--keep-layers");
  return argv;
}

/* --save FILE before anything is made (save-target.h); export checks again as it writes. */
static void
save_target_check (const char *file)
{
  const char *why = save_target_refusal (file);
  if (why != NULL && strcmp (why, SAVE_TARGET_NO_DIR) == 0)
    die ("run --save %s: %s; nothing was run", file, why);
  if (why != NULL)
    die ("run --save %s: refused, %s (it is left as it is); nothing was run", file, why);
}

/* The store helper with ARGV, a child the supervisor waits for, passing cancellation on;
 * true when it exited 0. How it ended into END (when fork fails: one line, and an exit of
 * 125, as the helper's own failure would be). */
static bool
run_store_helper (char **argv, struct job_end *end)
{
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      warn ("run --ephemeral: cannot run %s: fork: %s", STORE_HELPER_NAME, strerror (errno));
      *end = (struct job_end) { .status = EXIT_TOOL_FAILURE << 8 };
      return false;
    }
  if (pid == 0)
    {
      supervise_restore_signals ();
      exec_store_helper (argv);
    }
  struct supervise_opts opts = { .escalate = true };
  supervise (pid, &opts, end);
  return WIFEXITED (end->status) && WEXITSTATUS (end->status) == 0;
}

/* The store helper's `export NAME FILE`, from the supervisor (outside every namespace, as
 * the removal is): 0, or -1 with a line saying so below the helper's own. */
static int
save_root (const struct ephemeral *e)
{
  cleanup_strv char **argv = xcalloc (8, sizeof (char *));
  const char *words[] = { PROGRAM_NAME, "export", e->name, e->save,
                          "--compress", save_compression (e->save), "--quiet" };
  for (size_t i = 0; i < N_ELEMENTS (words); i++)
    argv[i] = xstrdup (words[i]);
  verbose ("run --ephemeral: saving root '%s' to %s through %s", e->name, e->save,
           STORE_HELPER_NAME);
  struct job_end end;
  if (run_store_helper (argv, &end))
    return 0;
  warn ("run --save: devroot %s was not saved to %s (the line above says why)", e->name,
        e->save);
  return -1;
}

/* An overlay's upper on a tmpfs needs the tmpfs to keep user.* xattrs (userxattr's opaque
 * directories and whiteouts): Linux 6.6 and later. */
#define TMPFS_USER_XATTR_MAJOR 6
#define TMPFS_USER_XATTR_MINOR 6

static bool
tmpfs_has_user_xattrs (void)
{
  struct utsname u;
  unsigned major, minor;
  return uname (&u) == 0 && sscanf (u.release, "%u.%u", &major, &minor) == 2
         && (major > TMPFS_USER_XATTR_MAJOR
             || (major == TMPFS_USER_XATTR_MAJOR && minor >= TMPFS_USER_XATTR_MINOR));
}

/* Whether E's throwaway root is an overlay of the stored layers: nobody looks at it from
 * the host, so wherever an unprivileged overlay mounts (the probe's kept answer) and the
 * job is in a user namespace (USERNS), unless ENTER_DEVROOT_LAYOUT says otherwise. Not
 * create's default, which is flat (overlay_layout_wanted). */
static bool
ephemeral_overlay (const struct ephemeral *e, bool userns)
{
  if (!userns)
    return false;
  const char *v = getenv ("ENTER_DEVROOT_LAYOUT");
  if (v != NULL && v[0] != '\0')
    return strcmp (v, "overlay") == 0;
  return overlay_probe_cached (&e->paths);
}

/* The direct path of ephemeral_create (ephemeral.h): true with E->meta and E->holds set. */
static bool
ephemeral_direct (const struct cli *cli, struct ephemeral *e)
{
  cleanup_free char *key = resolved_key (cli);
  if (key == NULL || !tmpfs_has_user_xattrs () || !ephemeral_overlay (e, true))
    return false;
  if (!resolved_read (key, cli->from != NULL ? cli->from : "the default template", &e->meta))
    {
      verbose ("run --ephemeral: through %s", STORE_HELPER_NAME);
      return false;
    }
  size_t n = strv_length (e->meta.layers);
  e->holds = xcalloc (n + 1, sizeof (int));
  for (e->n_holds = 0; e->n_holds < n; e->n_holds++)
    if ((e->holds[e->n_holds] = overlay_layer_hold (e->meta.layers[e->n_holds])) < 0)
      {
        verbose ("run --ephemeral: layer %s is no longer in the layer store: through %s",
                 e->meta.layers[e->n_holds], STORE_HELPER_NAME);
        ephemeral_release (e);
        return false;
      }
  free (e->meta.layout);
  e->meta.layout = xstrdup ("overlay");
  e->direct = true;
  verbose ("run --ephemeral: the cached image's %zu layers, mounted in the job's namespaces "
           "over a tmpfs upper (no root in %s)", n, e->paths.roots);
  return true;
}

void
ephemeral_release (struct ephemeral *e)
{
  for (size_t i = 0; i < e->n_holds; i++)
    close (e->holds[i]);
  free (e->holds);
  e->holds = NULL;
  e->n_holds = 0;
  meta_clear (&e->meta);
  e->direct = false;
}

void
ephemeral_create (const struct cli *cli, struct ephemeral *e, bool userns)
{
  if (cli->save != NULL)
    save_target_check (cli->save);
  e->save = NULL; /* until the root is there to save */
  e->direct = false;
  e->meta = (struct meta) { 0 };
  e->holds = NULL;
  e->n_holds = 0;
  e->run_lock = -1;
  store_paths_from_env (&e->paths);
  roots_prepare (&e->paths);
  /* In a Slurm job step the name is the step's on this node, and every task of it holds
   * the run lock shared: a reaper (which takes it exclusively) waits for the last. */
  e->shared = step_share_from_env (&e->share, cli->job_root);
  if (cli->job_root != NULL && !e->shared)
    die ("run --name %s: only a task of a Slurm job step (srun) has a job to keep it for",
         cli->job_root);
  e->name = e->shared ? xstrdup (e->share.name) : random_name ();
  /* A Slurm step's tasks share one root, which --save exports: those go through a root. */
  if (userns && !e->shared && cli->save == NULL && ephemeral_direct (cli, e))
    return;
  cleanup_free char *lock = paths_run_lock (&e->paths, e->name);
  e->run_lock = open (lock, O_RDWR | O_CREAT | (e->shared ? 0 : O_EXCL) | O_NOFOLLOW | O_CLOEXEC,
                      0600);
  if (e->run_lock < 0 || flock (e->run_lock, e->shared ? LOCK_SH : LOCK_EX) < 0)
    die_with_error ("run --ephemeral: cannot take the lock %s", lock);
  if (e->shared && !step_share_join (&e->paths, &e->share))
    {
      verbose ("run --ephemeral: root '%s' made by an earlier task of the step", e->name);
      e->save = cli->save;
      return; /* an earlier task of the step made it */
    }
  struct stat st;
  cleanup_free char *root = paths_root (&e->paths, e->name);
  /* The step's count was an earlier run's (slurmstep.h): so is a root of its name. */
  if (e->share.stale && !e->share.job_scoped)
    roots_remove_leftover (&e->paths, e->name);
  if (e->share.job_scoped && lstat (root, &st) == 0)
    {
      step_share_created (&e->share, true); /* an earlier step of the job made it */
      e->save = cli->save;
      return;
    }

  cleanup_strv char **argv = create_argv (cli, e->name, ephemeral_overlay (e, userns));
  verbose ("run --ephemeral: creating root '%s' through %s", e->name, STORE_HELPER_NAME);
  struct job_end end;
  bool ok = run_store_helper (argv, &end);
  if (e->shared)
    step_share_created (&e->share, ok);
  if (ok)
    {
      e->save = cli->save;
      return;
    }
  /* Killed after its rename into place, the helper leaves a root: ours to remove (a job's
   * root included: no step of the job has entered it). */
  if (e->share.job_scoped)
    roots_remove_ephemeral (&e->paths, e->name);
  ephemeral_remove (e, NULL);
  supervise_exit_like (&end);
}

int
ephemeral_remove (struct ephemeral *e, const struct job_end *end)
{
  if (e->direct)
    {
      /* Nothing on the host: the tmpfs went with the job's namespaces. */
      ephemeral_release (e);
      free (e->name);
      e->name = NULL;
      store_paths_clear (&e->paths);
      return 0;
    }
  int r = 0;
  bool last = !e->shared || step_share_leave (&e->share);
  /* A cancelled run is being stopped: an export now would only hold up the end it was
   * asked for (and Slurm's SIGKILL would cut it short). */
  if (last && e->save != NULL && end != NULL && end->cancel_signal == 0 && !end->timed_out)
    r = save_root (e);
  /* The job's root (--name) stays for the job's next steps: reap_abandoned_ephemeral
   * removes it once the job is over. */
  if (last && !e->share.job_scoped)
    roots_remove_ephemeral (&e->paths, e->name);
  if (e->shared)
    step_share_clear (&e->share);
  close (e->run_lock);
  e->run_lock = -1;
  free (e->name);
  e->name = NULL;
  store_paths_clear (&e->paths);
  return r;
}
