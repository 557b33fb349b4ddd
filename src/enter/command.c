/* Step 9 of entering (enter.c): the command, in the job's child once it is inside the root.
 * Nothing here trusts what it was handed: the working directory is checked to be the new
 * root (the runc lesson), the account is read from the root's own /etc/passwd, and the
 * command is found on the root's PATH, so that it is the root's program that runs. The
 * confinement (confine.c, rootemu.c) is applied last, just before the exec, so that it
 * holds whatever the command does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/account.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/command.h"
#include "enter/confine.h"
#include "enter/env.h"
#include "enter/mpi.h"
#include "enter/rootemu.h"
#include "enter/shell.h"

#define DEFAULT_SHELL "/bin/sh"
#define PASSWD_MAX_SIZE (16 * 1024 * 1024)

extern char **environ;

/* After chroot the working directory must be the new root, and nothing else. */
static void
verify_inside (const char *name)
{
  char cwd[2];
  struct stat dot, slash;
  if (getcwd (cwd, sizeof cwd) == NULL || strcmp (cwd, "/") != 0)
    die ("cannot enter root '%s': the working directory is not the new root", name);
  if (stat (".", &dot) < 0 || stat ("/", &slash) < 0)
    die_with_error ("cannot enter root '%s': stat", name);
  if (dot.st_dev != slash.st_dev || dot.st_ino != slash.st_ino)
    die ("cannot enter root '%s': the working directory is not the new root", name);
}

static bool
is_directory (const char *path)
{
  struct stat st;
  return path != NULL && path[0] == '/' && stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

/* A vector of the image's Entrypoint followed by TAIL (its Cmd, or run --entrypoint's
 * arguments); NULL when that is empty. The strings are borrowed. */
static char **
image_command (const struct meta_image *image, char *const *tail)
{
  size_t ne = image != NULL ? strv_length (image->entrypoint) : 0;
  size_t nt = strv_length (tail);
  if (ne + nt == 0)
    return NULL;
  char **argv = xcalloc (ne + nt + 1, sizeof (char *));
  for (size_t i = 0; i < ne; i++)
    argv[i] = image->entrypoint[i];
  for (size_t i = 0; i < nt; i++)
    argv[ne + i] = tail[i];
  return argv;
}

__attribute__((noreturn)) static void
exec_command (char **argv, char **envp)
{
  /* execvp searches the PATH of environ: point it at the new environment so the search
   * happens inside the root with the root's PATH. */
  if (verbose_on ())
    {
      struct strbuf b = { 0 };
      for (char **a = argv; *a != NULL; a++)
        {
          strbuf_append (&b, a == argv ? "" : " ");
          strbuf_append (&b, *a);
        }
      cleanup_free char *line = strbuf_steal (&b);
      verbose ("exec %s", line);
    }
  environ = envp;
  execvp (argv[0], argv);
  int errsv = errno;
  if (errsv == ENOENT)
    die_status (EXIT_NOT_FOUND, "%s: command not found", argv[0]);
  die_status (EXIT_CANNOT_EXEC, "cannot execute %s: %s", argv[0], strerror (errsv));
}

/* Step 9 of the sequence (enter.c), in the chrooted child that becomes the command. */
void
run_command (const char *name, const struct enter_opts *opts)
{
  verify_inside (name);

  struct account acct = { 0 };
  /* Freed here, not by a cleanup attribute: this function never returns, and a failed exec
   * exits from below with the buffer unreachable (a leak to valgrind). acct holds copies. */
  /* The root's own file (chrooted: its symlinks resolve inside), read only when it is a
   * regular file: a FIFO would block the open or the read forever. */
  char *passwd = load_regular_file ("/etc/passwd", PASSWD_MAX_SIZE, NULL);
  if (passwd != NULL)
    account_parse_passwd (passwd, opts->root ? 0 : getuid (), &acct); /* --root: root's */
  else if (errno == EINVAL)
    warn ("root '%s': /etc/passwd is not a regular file: not read (home /, shell %s)", name,
          DEFAULT_SHELL);
  free (passwd);
  const char *home = is_directory (acct.home) ? acct.home : "/";

  const struct meta_image *image = opts->image;
  const char *workdir = opts->workdir != NULL ? opts->workdir
                        : image != NULL && image->workdir != NULL && image->workdir[0] != '\0'
                        ? image->workdir : home;
  if (chdir (workdir) < 0)
    die_with_error ("cannot change to working directory '%s' in root '%s'", workdir, name);
  verbose ("working directory %s", workdir);

  char **argv = opts->argv;
  if (argv != NULL && opts->entrypoint)
    argv = image_command (image, opts->argv);
  else if (argv == NULL && opts->image_cmd)
    argv = image_command (image, image != NULL ? image->cmd : NULL);
  /* No command: enter's shell (shell.h), with a prompt that names the root. */
  const char *shell = argv == NULL ? shell_choose (acct.shell, getenv ("SHELL"))
                      : acct.shell != NULL && acct.shell[0] == '/' ? acct.shell : DEFAULT_SHELL;
  cleanup_free char *prompt = argv == NULL ? shell_prompt (shell, name, opts->root) : NULL;
  struct env_user user = { .home = home, .user = acct.name, .shell = shell, .devroot = name,
                           .prompt = prompt };
  char **envp = env_build (environ, &opts->env, image != NULL ? image->env : NULL, &user);
  envp = mpi_env_defaults (envp, !opts->no_landlock && confine_landlock_abi () >= 1);

  /* enter runs the shell interactively, not as a login shell, like chroot(1): the
   * environment is exactly the one built above, not what profile scripts make of it.
   * With commands piped in rather than a terminal, it is a plain script reader, so its
   * output is theirs alone (no banner, no prompts), as `ssh host < script` behaves. */
  char *shell_argv[] = { xstrdup (shell), isatty (STDIN_FILENO) ? xstrdup ("-i") : NULL, NULL };
  if (argv == NULL)
    argv = shell_argv;
  confine_root (name, opts->no_landlock);
  if (opts->root)
    rootemu_install (name);
  else if (opts->argv != NULL)
    rootemu_hint (name, opts->argv);
  exec_command (argv, envp);
}

void
command_choose (const struct cli *cli, const char *name, struct enter_opts *opts)
{
  /* `enter` is the interactive shell inside, whatever the root was made from (an image's
   * Cmd is often a REPL: python, node); `run NAME` with no command is `docker run IMAGE`. */
  opts->image_cmd = cli->command == CMD_RUN;
  if (cli->command == CMD_RUN && opts->argv == NULL
      && (opts->image == NULL
          || strv_length (opts->image->entrypoint) + strv_length (opts->image->cmd) == 0))
    die ("run: missing command (run NAME -- CMD [ARG...]): '%s' has no image "
         "Entrypoint or Cmd (see '%s help run')", name, PROGRAM_NAME);
}
