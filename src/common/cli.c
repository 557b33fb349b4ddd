/* Command-line parsing, one subcommand at a time (the help texts are in cli-help.c).
 *
 * Every subcommand takes long options only, in "--opt VALUE" or "--opt=VALUE" form, before
 * or after NAME. For run, option parsing stops at "--" or at the first word after NAME that
 * is not an option: that word and everything after it is the command, untouched. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cdi-name.h"
#include "common/cli-commands.h"
#include "common/cli.h"
#include "common/save-target.h"
#include "common/util.h"
#include "common/verbose.h"

__attribute__((noreturn, format (printf, 2, 3))) static void
usage_error (const char *subcommand, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  cleanup_free char *msg = xvasprintf (format, args);
  va_end (args);
  if (subcommand != NULL)
    die ("%s: %s (see '%s help %s')", subcommand, msg, PROGRAM_NAME, subcommand);
  die ("%s (see '%s --help')", msg, PROGRAM_NAME);
}

enum option_id
{
  OPT_HELP,
  OPT_FROM,
  OPT_TEMPLATE,
  OPT_SHA256,
  OPT_JSON,
  OPT_WORKDIR,
  OPT_ENV,
  OPT_ENV_FD,
  OPT_CLEAR_ENV,
  OPT_MODE,
  OPT_INDEX,
  OPT_CACERT,
  OPT_QUIET,
  OPT_NO_VERIFY,
  OPT_MAX_SIZE,
  OPT_NO_LANDLOCK,
  OPT_NO_HOST_DNS,
  OPT_ROOT,
  OPT_PLATFORM,
  OPT_INSECURE_HTTP,
  OPT_ENTRYPOINT,
  OPT_COMPRESS,
  OPT_DESCRIPTION,
  OPT_FORCE,
  OPT_BIND,
  OPT_DEVICE,
  OPT_TIMEOUT,
  OPT_EPHEMERAL,
  OPT_JOB_ROOT,
  OPT_SAVE,
  OPT_FLAT,
  OPT_OVERLAY,
  OPT_KEEP_LAYERS,
};

struct option_info
{
  const char *name;
  enum option_id id;
  bool has_arg;
  unsigned commands; /* bit mask of (1 << enum command) where it is accepted */
};

#define ON(c) (1u << (c))
#define ENTERING (ON (CMD_ENTER) | ON (CMD_RUN))
#define FETCHING (ON (CMD_CREATE) | ON (CMD_TEMPLATES) | ON (CMD_FETCH) | ON (CMD_RUN))
/* create's options, which run accepts with --ephemeral (check_run). */
#define CREATING (ON (CMD_CREATE) | ON (CMD_RUN))
/* What fetch --from takes of them. */
#define PULLING (CREATING | ON (CMD_FETCH))
static const struct option_info options[] = {
  { "help", OPT_HELP, false, ~0u },
  { "from", OPT_FROM, true, PULLING },
  { "template", OPT_TEMPLATE, true, CREATING },
  { "sha256", OPT_SHA256, true, CREATING },
  { "json", OPT_JSON, false, ON (CMD_LIST) | ON (CMD_TEMPLATES) | ON (CMD_CACHE) | ON (CMD_IMAGES) },
  { "workdir", OPT_WORKDIR, true, ENTERING },
  { "env", OPT_ENV, true, ENTERING },
  { "env-fd", OPT_ENV_FD, true, ENTERING },
  { "clear-env", OPT_CLEAR_ENV, false, ENTERING },
  { "mode", OPT_MODE, true, ENTERING },
  { "index", OPT_INDEX, true, FETCHING },
  { "cacert", OPT_CACERT, true, FETCHING | ON (CMD_PUSH) },
  { "quiet", OPT_QUIET, false,
    CREATING | ON (CMD_FETCH) | ON (CMD_CACHE) | ON (CMD_EXPORT) | ON (CMD_PUBLISH) | ON (CMD_PUSH) },
  { "no-verify", OPT_NO_VERIFY, false, CREATING },
  { "max-size", OPT_MAX_SIZE, true, CREATING },
  { "no-landlock", OPT_NO_LANDLOCK, false, ENTERING },
  { "no-host-dns", OPT_NO_HOST_DNS, false, ENTERING },
  { "root", OPT_ROOT, false, ENTERING },
  { "platform", OPT_PLATFORM, true, PULLING },
  { "insecure-http", OPT_INSECURE_HTTP, false, PULLING | ON (CMD_PUSH) },
  { "entrypoint", OPT_ENTRYPOINT, false, ON (CMD_RUN) },
  { "compress", OPT_COMPRESS, true, ON (CMD_EXPORT) },
  { "description", OPT_DESCRIPTION, true, ON (CMD_PUBLISH) },
  { "force", OPT_FORCE, false, ON (CMD_REMOVE) },
  { "bind", OPT_BIND, true, ENTERING },
  { "device", OPT_DEVICE, true, ENTERING },
  { "timeout", OPT_TIMEOUT, true, ENTERING },
  { "ephemeral", OPT_EPHEMERAL, false, ON (CMD_RUN) },
  { "name", OPT_JOB_ROOT, true, ON (CMD_RUN) },
  { "save", OPT_SAVE, true, ON (CMD_RUN) },
  { "flat", OPT_FLAT, false, ON (CMD_CREATE) },
  { "overlay", OPT_OVERLAY, false, ON (CMD_CREATE) },
  { "keep-layers", OPT_KEEP_LAYERS, false, ON (CMD_CREATE) },
};

/* Append S to the NULL-terminated vector *V. */
static void
append_word (char ***v, char *s)
{
  size_t n = strv_length (*v);
  *v = xrealloc (*v, (n + 2) * sizeof (char *));
  (*v)[n] = s;
  (*v)[n + 1] = NULL;
}

/* --env K=V, or --env K for your own K as docker's -e K takes it: its value now, or
 * nothing at all when you have no K (the command then gets the root's or image's). */
static void
add_env_assignment (struct cli *cli, const char *kv)
{
  const char *why;
  if (kv[0] != '\0' && strchr (kv, '=') == NULL)
    {
      const char *value = getenv (kv);
      if (value != NULL)
        append_word (&cli->enter.env.assignments, xasprintf ("%s=%s", kv, value));
      return;
    }
  if (env_check_assignment (kv, &why) < 0)
    usage_error (NULL, "invalid --env '%s': %s", kv, why);
  append_word (&cli->enter.env.assignments, xstrdup (kv));
}

/* --env-fd FD: K=V assignments, each ended by a NUL byte (what `env -0` prints and
 * /proc/PID/environ holds), read from FD to its end, applied as --env K=V would be at this
 * place, FD closed. For a caller whose values must not be on a command line, which every
 * local user reads in /proc/PID/cmdline, nor in the environment of enter-devroot itself,
 * whose loader and libraries read some names (LD_PRELOAD). No message shows a value. */
#define ENV_FD_MAX (16u * 1024 * 1024)

static void
add_env_from_fd (struct cli *cli, const struct command_info *c, const char *arg)
{
  char *end;
  errno = 0;
  long fd = strtol (arg, &end, 10);
  if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 || fd > INT_MAX)
    usage_error (c->name, "invalid --env-fd '%s': expected a file descriptor number", arg);
  size_t len;
  char *text = read_fd_all ((int) fd, ENV_FD_MAX, &len);
  if (text == NULL)
    die_with_error ("--env-fd %ld: cannot read the assignments", fd);
  close ((int) fd);
  if (len > 0 && text[len - 1] != '\0')
    usage_error (c->name, "--env-fd %ld: the last assignment is not ended by a NUL byte", fd);
  size_t n = 0;
  for (size_t at = 0; at < len; at += strlen (text + at) + 1, n++)
    {
      const char *why;
      if (env_check_assignment (text + at, &why) < 0)
        usage_error (c->name, "--env-fd %ld: assignment %zu: %s", fd, n + 1, why);
      append_word (&cli->enter.env.assignments, xstrdup (text + at));
    }
  explicit_bzero (text, len);
  free (text);
}

/* A --timeout: whole seconds, 1 to a year (a bound that keeps deadlines far from
 * overflowing; no CI job wants more). */
#define TIMEOUT_MAX_SECONDS (366u * 24 * 3600)

static void
set_timeout (struct cli *cli, const struct command_info *c, const char *arg)
{
  char *end;
  errno = 0;
  unsigned long v = strtoul (arg, &end, 10);
  if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 || v == 0
      || v > TIMEOUT_MAX_SECONDS)
    usage_error (c->name, "invalid --timeout '%s': expected whole seconds, 1 to %u", arg,
                 TIMEOUT_MAX_SECONDS);
  cli->enter.timeout = (unsigned) v;
}

static void
apply_option (struct cli *cli, const struct command_info *c, enum option_id id, const char *arg)
{
  switch (id)
    {
    case OPT_HELP:
      cli_print_help (c->name);
      exit (0);
    case OPT_FROM: cli->from = arg; break;
    case OPT_TEMPLATE: cli->template_name = arg; break;
    case OPT_SHA256: cli->sha256 = arg; break;
    case OPT_JSON: cli->json = true; break;
    case OPT_WORKDIR:
      if (arg[0] == '\0')
        usage_error (c->name, "--workdir needs a directory");
      cli->enter.workdir = arg;
      break;
    case OPT_ENV: add_env_assignment (cli, arg); break;
    case OPT_ENV_FD: add_env_from_fd (cli, c, arg); break;
    case OPT_CLEAR_ENV: cli->enter.env.clear_env = true; break;
    case OPT_MODE:
      if (enter_mode_parse (arg, &cli->enter.mode) < 0)
        usage_error (c->name, "unknown --mode '%s': expected auto, chroot or userns", arg);
      break;
    case OPT_INDEX: cli->index = arg; break;
    case OPT_CACERT: cli->cacert = arg; break;
    case OPT_QUIET: cli->quiet = true; break;
    case OPT_NO_VERIFY: cli->no_verify = true; break;
    case OPT_MAX_SIZE:
      if (parse_byte_size (arg, &cli->max_size) < 0 || cli->max_size == 0)
        usage_error (c->name, "invalid --max-size '%s': expected a byte count such as 512M or 8G",
                     arg);
      break;
    case OPT_NO_LANDLOCK: cli->enter.no_landlock = true; break;
    case OPT_NO_HOST_DNS: cli->enter.no_host_dns = true; break;
    case OPT_ROOT: cli->enter.root = true; break;
    case OPT_PLATFORM: cli->platform = arg; break;
    case OPT_INSECURE_HTTP: cli->insecure_http = true; break;
    case OPT_ENTRYPOINT: cli->enter.entrypoint = true; break;
    case OPT_COMPRESS:
      if (strcmp (arg, "zstd") != 0 && strcmp (arg, "gzip") != 0 && strcmp (arg, "xz") != 0
          && strcmp (arg, "none") != 0)
        usage_error (c->name, "unknown --compress '%s': expected zstd, gzip, xz or none", arg);
      cli->compress = arg;
      break;
    case OPT_DESCRIPTION:
      if (strpbrk (arg, "\n\r") != NULL)
        usage_error (c->name, "--description must be one line");
      cli->description = arg;
      break;
    case OPT_FORCE: cli->force = true; break;
    case OPT_BIND: append_word (&cli->enter.binds, xstrdup (arg)); break;
    case OPT_DEVICE:
      {
        const char *why;
        if (cdi_device_name_check (arg, &why) < 0)
          usage_error (c->name, "invalid --device '%s': %s", arg, why);
        append_word (&cli->enter.devices, xstrdup (arg));
        break;
      }
    case OPT_TIMEOUT: set_timeout (cli, c, arg); break;
    case OPT_EPHEMERAL: cli->ephemeral = true; break;
    case OPT_JOB_ROOT: cli->job_root = arg; break;
    case OPT_SAVE: cli->save = arg; break;
    case OPT_KEEP_LAYERS: cli->keep_layers = true; break;
    case OPT_FLAT:
    case OPT_OVERLAY:
      {
        enum root_layout l = id == OPT_FLAT ? ROOT_LAYOUT_FLAT : ROOT_LAYOUT_OVERLAY;
        if (cli->layout != ROOT_LAYOUT_DEFAULT && cli->layout != l)
          usage_error (c->name, "--flat and --overlay are mutually exclusive");
        cli->layout = l;
        break;
      }
    default:
      break;
    }
}

/* Parse "--name", "--name=value" or "--name value" at argv[*i]; advances *i. */
static void
parse_option (struct cli *cli, const struct command_info *c, int argc, char **argv, int *i)
{
  const char *word = argv[*i];
  if (strcmp (word, "-h") == 0)
    word = "--help";
  if (!str_has_prefix (word, "--"))
    usage_error (c->name, "unknown option '%s'", word);
  const char *name = word + 2;
  const char *eq = strchr (name, '=');
  size_t len = eq != NULL ? (size_t) (eq - name) : strlen (name);
  for (size_t k = 0; k < N_ELEMENTS (options); k++)
    {
      const struct option_info *o = &options[k];
      if (strlen (o->name) != len || strncmp (o->name, name, len) != 0)
        continue;
      if (!(o->commands & ON (c->command)))
        break;
      const char *arg = NULL;
      if (o->has_arg && eq != NULL)
        arg = eq + 1;
      else if (o->has_arg)
        {
          if (*i + 1 >= argc)
            usage_error (c->name, "option '--%s' needs a value", o->name);
          arg = argv[++*i];
        }
      else if (eq != NULL)
        usage_error (c->name, "option '--%s' takes no value", o->name);
      apply_option (cli, c, o->id, arg);
      (*i)++;
      return;
    }
  usage_error (c->name, "unknown option '%s'", word);
}

static void
check_create (const struct cli *cli, const char *subcommand)
{
  if (cli->from != NULL && cli->template_name != NULL)
    usage_error (subcommand, "--from and --template are mutually exclusive");
  if (cli->no_verify && cli->sha256 != NULL)
    usage_error (subcommand, "--no-verify and --sha256 contradict each other");
  if (cli->no_verify && cli->from == NULL)
    usage_error (subcommand, "--no-verify only applies to --from URL");
  if ((cli->platform != NULL || cli->insecure_http) && cli->from == NULL)
    usage_error (subcommand, "--platform and --insecure-http only apply to --from IMAGE");
}

static bool
job_root_name_is_valid (const char *s)
{
  size_t n = strspn (s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_");
  return n > 0 && n <= JOB_ROOT_NAME_MAX && s[n] == '\0';
}

/* run takes create's options for the root --ephemeral makes, and no NAME then. */
static void
check_run (const struct cli *cli)
{
  if (cli->job_root != NULL && !cli->ephemeral)
    usage_error ("run", "--name names the Slurm job's root that --ephemeral makes: add "
                 "--ephemeral");
  if (cli->job_root != NULL && !job_root_name_is_valid (cli->job_root))
    usage_error ("run", "invalid --name '%s': 1 to %d letters, digits, '-' or '_'",
                 cli->job_root, JOB_ROOT_NAME_MAX);
  if (cli->save != NULL && !cli->ephemeral)
    usage_error ("run", "--save exports the root --ephemeral creates: add --ephemeral (or "
                 "'export NAME FILE' a root of your own)");
  if (cli->save != NULL && cli->save[0] == '\0')
    usage_error ("run", "--save: empty FILE");
  if (!cli->ephemeral)
    {
      if (cli->from != NULL || cli->template_name != NULL || cli->sha256 != NULL
          || cli->no_verify || cli->max_size != 0 || cli->index != NULL || cli->cacert != NULL
          || cli->platform != NULL || cli->insecure_http || cli->quiet)
        usage_error ("run", "--from, --template, --sha256, --no-verify, --max-size, --index, "
                     "--cacert, --platform, --insecure-http and --quiet describe the root "
                     "--ephemeral creates: add --ephemeral, or create the root first");
      return;
    }
  if (cli->name != NULL)
    usage_error ("run", "--ephemeral makes its own root: no NAME ('%s')", cli->name);
  check_create (cli, "run");
}

void
cli_parse (int argc, char **argv, struct cli *cli)
{
  *cli = (struct cli) { .enter.mode = ENTER_MODE_AUTO };
  /* -v before the subcommand; the words after it are parsed as if it were not there. */
  while (argc >= 2 && (strcmp (argv[1], "-v") == 0 || strcmp (argv[1], "--verbose") == 0))
    {
      verbose_enable ();
      argc--;
      argv++;
    }
  (void) verbose_on (); /* read ENTER_DEVROOT_DEBUG now, before anything replaces environ */
  if (argc < 2)
    usage_error (NULL, "usage: missing subcommand");
  const char *first = argv[1];
  if (strcmp (first, "--help") == 0 || strcmp (first, "-h") == 0)
    {
      cli_print_help (NULL);
      exit (0);
    }
  if (strcmp (first, "--version") == 0)
    {
      cli->command = CMD_VERSION;
      return;
    }
  const struct command_info *c = cli_find_command (first);
  if (c == NULL)
    usage_error (NULL, "%s: unknown %s", first, first[0] == '-' ? "option" : "subcommand");
  cli->command = c->command;
  /* The CI drivers take the engines' words as they come (the runner appends its own). */
  if (c->command == CMD_GITLAB || c->command == CMD_GITHUB_HOOK)
    {
      if (argc > 2 && (strcmp (argv[2], "--help") == 0 || strcmp (argv[2], "-h") == 0))
        {
          cli_print_help (c->name);
          exit (0);
        }
      cli->driver_args = argv + 2;
      return;
    }

  int i = 2;
  while (i < argc)
    {
      const char *word = argv[i];
      if (strcmp (word, "--") == 0)
        {
          i++;
          break;
        }
      /* -v anywhere before the command's own words, as most tools take it. */
      if (strcmp (word, "-v") == 0 || strcmp (word, "--verbose") == 0)
        {
          verbose_enable ();
          i++;
          continue;
        }
      if (word[0] == '-' && word[1] != '\0')
        {
          parse_option (cli, c, argc, argv, &i);
          continue;
        }
      if (c->command == CMD_REMOVE)
        {
          append_word (&cli->names, argv[i]); /* remove takes several */
          if (cli->name == NULL)
            cli->name = word;
        }
      else if (c->takes_name && cli->name == NULL && !cli->ephemeral)
        cli->name = word;
      else if (c->command == CMD_HELP && cli->help_topic == NULL)
        cli->help_topic = word;
      else if (c->command == CMD_CACHE && cli->cache_action == NULL)
        cli->cache_action = word;
      else if ((c->command == CMD_EXPORT || c->command == CMD_PUSH) && cli->output == NULL)
        cli->output = word;
      else if (c->command == CMD_PUBLISH && cli->publish_dir == NULL)
        cli->publish_dir = word;
      else if (c->command == CMD_PUBLISH)
        append_word (&cli->archives, argv[i]);
      else if (c->command == CMD_RUN)
        {
          /* `run --ephemeral dev -- CMD`, as `podman run --rm IMAGE CMD` reads: DEV is no
           * command, and would fail inside as "command not found" after a whole create. */
          if (cli->ephemeral)
            for (int j = i + 1; j < argc; j++)
              if (strcmp (argv[j], "--") == 0)
                usage_error ("run", "--ephemeral makes its own root and takes no NAME: '%s' "
                             "before '--' (run --ephemeral [--from SRC|--template T] -- "
                             "CMD [ARG...])", word);
          break; /* the command starts here (at once with --ephemeral: no NAME) */
        }
      else
        usage_error (c->name, "unexpected argument '%s'", word);
      i++;
    }

  if (c->command == CMD_RUN)
    {
      if (cli->name == NULL && !cli->ephemeral && i < argc)
        cli->name = argv[i++];
      /* No command: the image's Entrypoint+Cmd, if the devroot has one (main.c checks). */
      if (i < argc)
        cli->enter.argv = argv + i;
    }
  else if (i < argc)
    usage_error (c->name, "unexpected argument '%s'", argv[i]);

  if (c->command == CMD_RUN)
    check_run (cli);
  if (c->command == CMD_FETCH && cli->from != NULL && cli->name != NULL)
    usage_error (c->name, "TEMPLATE or --from IMAGE, not both");
  if (c->command == CMD_FETCH && cli->from == NULL && (cli->platform != NULL || cli->insecure_http))
    usage_error (c->name, "--platform and --insecure-http only apply to --from IMAGE");
  if (c->command == CMD_FETCH && cli->from != NULL && cli->index != NULL)
    usage_error (c->name, "--index names a catalogue: it does not apply to --from IMAGE");
  if (c->takes_name && cli->name == NULL && !cli->ephemeral
      && !(c->command == CMD_FETCH && cli->from != NULL))
    usage_error (c->name, "missing %s", c->command == CMD_FETCH ? "TEMPLATE" : "NAME");
  if (c->command == CMD_CREATE)
    check_create (cli, "create");
  if (c->command == CMD_EXPORT && (cli->output == NULL || cli->output[0] == '\0'))
    usage_error (c->name, "missing FILE (export NAME FILE)");
  /* FILE's suffix says how it is compressed, as for tar -a; --compress may only agree. */
  const char *by_suffix = c->command == CMD_EXPORT ? save_suffix_compression (cli->output) : NULL;
  if (by_suffix != NULL && cli->compress != NULL && strcmp (by_suffix, cli->compress) != 0)
    usage_error (c->name, "%s: its suffix says %s, --compress says %s (rename the file or drop "
                 "--compress)", cli->output, strcmp (by_suffix, "none") == 0 ? "no compression"
                 : by_suffix, cli->compress);
  if (c->command == CMD_PUSH && (cli->output == NULL || cli->output[0] == '\0'))
    usage_error (c->name, "missing DESTINATION (push NAME docker://REGISTRY/REPO:TAG, "
                 "oci:DIR:TAG or docker-archive:FILE)");
  if (c->command == CMD_PUBLISH && (cli->publish_dir == NULL || cli->archives == NULL))
    usage_error (c->name, "missing %s (publish DIR ARCHIVE...)",
                 cli->publish_dir == NULL ? "DIR" : "ARCHIVE");
  if (c->command == CMD_CACHE && cli->cache_action == NULL)
    usage_error (c->name, "missing action: list or clean");
}

void
cli_clear (struct cli *cli)
{
  strv_free (cli->enter.env.assignments);
  cli->enter.env.assignments = NULL;
  free (cli->archives); /* the strings are argv's */
  cli->archives = NULL;
  free (cli->names);
  cli->names = NULL;
  strv_free (cli->enter.binds);
  cli->enter.binds = NULL;
  strv_free (cli->enter.devices);
  cli->enter.devices = NULL;
}
