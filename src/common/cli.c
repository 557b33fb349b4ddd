/* Command-line parsing and help texts, one subcommand at a time.
 *
 * Every subcommand takes long options only, in "--opt VALUE" or "--opt=VALUE" form, before
 * or after NAME. For run, option parsing stops at "--" or at the first word after NAME that
 * is not an option: that word and everything after it is the command, untouched. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/util.h"
#include "common/verbose.h"

struct command_info
{
  const char *name;
  enum command command;
  bool takes_name;
  const char *usage;
  const char *help;
};

#define ENTER_OPTIONS_HELP \
  "  --workdir DIR     start in DIR inside the root (default: your home there, else /)\n" \
  "  --env K=V         set a variable (repeatable; applied last); --env K passes your\n" \
  "                    own K (as docker's -e K; nothing when you have none)\n" \
  "  --clear-env       start from an empty environment: only PATH and --env\n" \
  "  --mode MODE       auto (default): chroot, falling back to a user namespace when the\n" \
  "                    kernel refuses; chroot: never fall back; userns: always use one\n" \
  "  --no-landlock     no Landlock domain: processes inside may then open files outside\n" \
  "                    through a passed fd, and signal or connect to your other processes\n" \
  "                    (default: confined to the root where the kernel has Landlock)\n" \
  "  --no-host-dns     leave the root's /etc/resolv.conf and /etc/hosts as they are\n" \
  "                    (default: the host's, bound read-only in userns mode, copied in\n" \
  "                    chroot mode where the root's is missing, empty or our last copy)\n" \
  "  --root            look like root inside, for package managers: getuid() and friends\n" \
  "                    report 0, chown, set*id and mknod of devices succeed without\n" \
  "                    effect; no privilege is gained (files stay yours; see the man page)\n" \
  "  --bind SRC:DST[:ro]  mount the host directory, file or socket SRC on DST inside the\n" \
  "                    root (userns mode only; repeatable; DST is created in the root if\n" \
  "                    missing: a directory, or an empty file for a file or a socket)\n" \
  "  --timeout SECONDS stop the command after SECONDS: SIGTERM, then SIGKILL to every\n" \
  "                    process it started 5 seconds later; exit status 124\n" \
  "\n" \
  "The environment keeps TERM, COLORTERM, LANG, LANGUAGE, LC_* and TZ from yours (and a\n" \
  "Slurm job's SLURM_*, SLURMD_*, PMI_*, PMIX_*, OMPI_*), and sets PATH (Debian's user\n" \
  "PATH with the sbin directories: /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:\n" \
  "/sbin:/bin:/usr/local/games:/usr/games), HOME, USER, LOGNAME\n" \
  "and SHELL from the root's /etc/passwd, ENTER_DEVROOT_NAME and debian_chroot to the\n" \
  "devroot's name. Nothing else of yours passes through.\n"

#define IMAGE_HELP \
  "\n" \
  "A devroot made from an OCI image (create --from docker://..., oci:..., docker-archive:...)\n" \
  "starts in the image's WorkingDir unless --workdir is given, and its command gets the\n" \
  "image's Env under the variables above (none of it with --clear-env). The image's User,\n" \
  "Volumes and ExposedPorts are ignored: you stay yourself and nothing is mounted.\n"

static const struct command_info commands[] = {
  { "create", CMD_CREATE, true,
    "create NAME [--from FILE|URL|IMAGE] [--template T] [--sha256 HEX] [--no-verify]\n"
    "                       [--max-size SIZE] [--index URL] [--cacert FILE] [--quiet]\n"
    "                       [--platform OS/ARCH] [--insecure-http]",
    "Unpack a root filesystem into a new devroot NAME.\n"
    "\n"
    "  --from FILE       a tar archive (uncompressed, gzip, bzip2, xz, lzma, zstd, lz4);\n"
    "                    - for standard input\n"
    "  --from DIR        a directory tree, copied under the same rules as an archive\n"
    "  --from URL        an https://, http:// or file:// tarball, downloaded into the cache;\n"
    "                    needs --sha256, or --no-verify to skip the check (loudly)\n"
    "  --from IMAGE      an OCI image: docker://[REGISTRY[:PORT]/]REPO[:TAG|@sha256:HEX]\n"
    "                    (no REGISTRY: Docker Hub), oci:DIR[:TAG] (an OCI image layout) or\n"
    "                    docker-archive:FILE[:REPO:TAG] (what docker save writes); its\n"
    "                    layers are applied in order with their whiteouts, and its Env,\n"
    "                    WorkingDir, Entrypoint and Cmd are kept (Env and WorkingDir\n"
    "                    for enter and run, Entrypoint and Cmd for run)\n"
    "  --platform P      the image of a multi-platform index to use, OS/ARCH[/VARIANT]\n"
    "                    (default: linux and this machine's architecture)\n"
    "  --insecure-http   let docker:// talk plain http to the registry (never by default)\n"
    "  --template T      template T from the catalogue, fetched and verified unless cached\n"
    "                    (minimal, with no catalogue: the embedded default)\n"
    "  --sha256 HEX      refuse the archive unless its SHA-256 is HEX\n"
    "  --no-verify       accept a --from URL download without --sha256\n"
    "  --max-size SIZE   stop (and remove everything) once the unpacked files add up to more\n"
    "                    than SIZE bytes (K, M, G, T suffixes; default\n"
    "                    $ENTER_DEVROOT_MAX_ROOT_SIZE, else 64G)\n"
    "  --index URL       the catalogue, a URL or a path (see 'help templates')\n"
    "  --cacert FILE     trust the CA certificates in FILE (default: $CURL_CA_BUNDLE, else\n"
    "                    the system's)\n"
    "  --quiet           no progress output, errors only\n"
    "\n"
    "Without --from or --template, the embedded default template (busybox) is used.\n"
    "Unpacking never writes outside the new root: '..' components are refused, leading '/'\n"
    "is stripped, symlinks are never followed, hardlinks must name an earlier regular file,\n"
    "device nodes, FIFOs and sockets are skipped, setuid/setgid bits are dropped, ownership\n"
    "is not restored. Your user is added to the root's /etc/passwd and /etc/group (home\n"
    "/home/USER) when the root has those files and no entry for your uid.\n" },
  { "enter", CMD_ENTER, true, "enter NAME [--workdir DIR] [--env K=V]... [--clear-env] [--mode MODE]\n"
    "                       [--no-landlock] [--no-host-dns] [--root]\n"
    "                       [--bind SRC:DST[:ro]]... [--timeout SECONDS]",
    "Start an interactive shell inside devroot NAME: your login shell from the root's\n"
    "/etc/passwd, else /bin/sh, run with -i (not as a login shell) when standard input\n"
    "is a terminal; with commands piped in, the shell just reads them (no prompts).\n"
    "A devroot made from an OCI image gets a shell too: 'run NAME' without CMD runs the\n"
    "image's Entrypoint+Cmd (often a REPL). On a terminal, in userns mode, the shell owns\n"
    "it (job control, ^Z), tty names it /dev/console, and the root has a /dev/pts of its own.\n"
    "\n" ENTER_OPTIONS_HELP IMAGE_HELP },
  { "run", CMD_RUN, true,
    "run NAME [--workdir DIR] [--env K=V]... [--clear-env] [--mode MODE]\n"
    "                       [--no-landlock] [--no-host-dns] [--root] [--entrypoint]\n"
    "                       [--bind SRC:DST[:ro]]... [--timeout SECONDS] [-- CMD [ARG...]]\n"
    "       enter-devroot run --ephemeral [--name NAME] [--template T|--from FILE|URL|IMAGE]\n"
    "                       [create options] [run options] [-- CMD [ARG...]]",
    "Run CMD inside devroot NAME, searching PATH inside the root. The exit status is the\n"
    "command's; a command killed by a signal is seen by the caller as killed by that signal.\n"
    "SIGINT, SIGTERM and SIGHUP sent to run are passed on to the command; whatever the\n"
    "command started and left running is killed when it exits, and 5 seconds after such a\n"
    "signal if the command is still running (then run dies of the signal it received).\n"
    "\n"
    "  --entrypoint      (a devroot made from an OCI image) run the image's Entrypoint with\n"
    "                    CMD ARG... as its arguments, or with the image's Cmd when no CMD is\n"
    "                    given, as 'docker run IMAGE [ARG...]' would\n"
    "  --ephemeral       create a throwaway devroot with a unique name (create's --from,\n"
    "                    --template, --sha256, --no-verify, --max-size, --index, --cacert,\n"
    "                    --platform, --insecure-http, --quiet apply), run CMD in it, and\n"
    "                    remove it however run ends; in a Slurm job step, the step's tasks\n"
    "                    on a node share one\n"
    "  --name NAME       (with --ephemeral, in a Slurm job step) the job's root NAME on this\n"
    "                    node instead: made by the first step that needs it, kept for the\n"
    "                    job's later steps, removed by the next create or doctor once the\n"
    "                    job has ended\n"
    "Without CMD, a devroot made from an OCI image runs its Entrypoint+Cmd.\n"
    "\n" ENTER_OPTIONS_HELP IMAGE_HELP },
  { "list", CMD_LIST, false, "list [--json]",
    "List the devroots: name, size of what create unpacked (SIZE-AT-CREATION: not counting\n"
    "what was installed since), creation time, source.\n"
    "\n"
    "  --json            one JSON array of objects with name, path, source, sha256,\n"
    "                    created (RFC 3339, UTC) and size_bytes\n" },
  { "path", CMD_PATH, true, "path NAME", "Print the directory of devroot NAME.\n" },
  { "remove", CMD_REMOVE, true, "remove NAME... [--force]",
    "Delete each devroot NAME and its metadata (read-only directories included). A devroot\n"
    "in which one of your processes runs (its root or working directory is inside) is not\n"
    "removed: the error names one such process. Nothing is removed unless every NAME can be.\n"
    "\n"
    "  --force           stop the processes inside first: SIGTERM, then SIGKILL to those\n"
    "                    still running 5 seconds later\n" },
  { "doctor", CMD_DOCTOR, false, "doctor",
    "Report what this kernel allows (no_new_privs chroot, user namespaces, Landlock) and\n"
    "which mode 'auto' uses. Exits 0 when some mode works, 125 otherwise.\n" },
  { "templates", CMD_TEMPLATES, false, "templates [--index URL] [--json] [--cacert FILE]",
    "List the template catalogue: name, size, whether it is cached, description; then the\n"
    "built-in templates (minimal, the embedded default, and Docker Hub images: Debian 12,\n"
    "its build tools, gcc, python, rust, golang, node), which need no catalogue.\n"
    "\n"
    "  --index URL       the catalogue to read (a plain path is a local file)\n"
    "  --json            one JSON array of objects with name, url, sha256, size_bytes,\n"
    "                    description and cached\n"
    "  --cacert FILE     trust the CA certificates in FILE\n"
    "\n"
    "The catalogue is, from the weakest setting to the strongest: the one enter-devroot was\n"
    "built with (configure --with-default-index), 'index = URL' in\n"
    "${XDG_CONFIG_HOME:-~/.config}/enter-devroot/config, $ENTER_DEVROOT_INDEX, --index.\n" },
  { "fetch", CMD_FETCH, true, "fetch TEMPLATE [--index URL] [--cacert FILE] [--quiet]\n"
    "       enter-devroot fetch --from docker://IMAGE [--platform P] [--cacert FILE]\n"
    "                       [--insecure-http] [--quiet]",
    "Download TEMPLATE from the catalogue and verify its SHA-256 into the cache, without\n"
    "creating a devroot; print the cached file's path. An interrupted download resumes where\n"
    "it stopped when the server's ETag or Last-Modified still match. A built-in template the\n"
    "catalogue does not list (see 'templates') resolves as create resolves it: its image is\n"
    "fetched as with --from, and the embedded 'minimal' needs no download (its path printed).\n"
    "With --from, download what a create of the image needs (its index and manifest, config\n"
    "and layers) into the cache, verified, and print the reference pinned to the digest its\n"
    "tag names now (docker://REGISTRY/REPO@sha256:HEX): a create --from that reference then\n"
    "asks the registry nothing (a Slurm job's tasks, on any node sharing the cache).\n" },
  { "cache", CMD_CACHE, false, "cache list [--json] | cache clean [--quiet]",
    "Show or empty the download cache, ${XDG_CACHE_HOME:-~/.cache}/enter-devroot: verified\n"
    "files named by their SHA-256, and partial downloads. 'clean' leaves downloads that\n"
    "another enter-devroot is running alone.\n" },
  { "images", CMD_IMAGES, false, "images [--json]",
    "List the devroots made from OCI images: name, manifest digest, image reference.\n"
    "\n"
    "  --json            one JSON array of objects with name, image and digest\n" },
  { "export", CMD_EXPORT, true, "export NAME FILE [--compress zstd|gzip|xz|none] [--quiet]",
    "Write devroot NAME as a tarball FILE that 'create --from' (and any tar) reads: entries\n"
    "sorted by name, owners 0:0, hard links kept, modification times clamped to\n"
    "$SOURCE_DATE_EPOCH when it is set, so two exports of an unchanged root are identical.\n"
    "What create added is left out (your /etc/passwd and /etc/group lines and your home\n"
    "/home/USER), and so are the apt and dpkg settings --root wrote; regular files in /dev\n"
    "and the host's resolv.conf and hosts copied in by entering are written empty. FILE is\n"
    "written under a temporary name and renamed.\n"
    "A root made from an OCI image carries the image's config (Env, WorkingDir, Entrypoint,\n"
    "Cmd) as .enter-devroot/image-config.json, which create applies to a root made from FILE.\n"
    "\n"
    "  --compress C      zstd (default, every core), gzip, xz or none\n"
    "  --quiet           no progress output, errors only\n" },
  { "push", CMD_PUSH, true, "push NAME docker://REGISTRY/REPO:TAG|oci:DIR:TAG|docker-archive:FILE[:REPO:TAG]\n"
    "                       [--cacert FILE] [--insecure-http] [--quiet]",
    "Upload devroot NAME to a registry (or write it into an OCI layout DIR, or a docker save\n"
    "archive FILE) as an image. A root made from an image (docker://, oci:, docker-archive:)\n"
    "goes up as that image's layers plus one new layer holding what changed (deletions as\n"
    "whiteouts), its config updated; a root made from a tarball as a one-layer image. What\n"
    "create added is left out, as export leaves it out. Reproducible: owners 0:0, times\n"
    "clamped to $SOURCE_DATE_EPOCH when set (else the base's), so an unchanged root pushes\n"
    "the same digest. Blobs the registry has are not sent again; the manifest goes last, so\n"
    "nothing is tagged on a failure. Credentials as for pulling: $REGISTRY_AUTH_FILE, else\n"
    "~/.docker/config.json. Prints the image pinned to its digest (an archive's: its ID).\n"
    "\n"
    "  --cacert FILE     trust the CA certificates in FILE\n"
    "  --insecure-http   plain http to the registry\n"
    "  --quiet           no progress output, errors only\n" },
  { "publish", CMD_PUBLISH, false, "publish DIR ARCHIVE... [--description TEXT] [--quiet]",
    "Copy (or hard-link) each exported ARCHIVE into DIR and add it to DIR's catalogue,\n"
    "DIR/index, with its SHA-256 and size, as template NAME for ARCHIVE NAME.tar.zst (.gz,\n"
    ".xz, .tar). An entry of the same name is replaced, the others are kept; the catalogue\n"
    "is written under a temporary name and renamed. Serve DIR with any web server, then:\n"
    "create NEW --template NAME --index URL/index.\n"
    "\n"
    "  --description TEXT  the templates' description in the catalogue (one line)\n"
    "  --quiet           no output, errors only\n" },
  { "gitlab", CMD_GITLAB, false, "gitlab config|prepare|run SCRIPT STAGE|cleanup [OPTIONS]",
    "A GitLab Runner custom executor: each job runs in a devroot made from its image:.\n"
    "In the runner's config.toml, under [runners.custom]:\n"
    "  config_exec = \"enter-devroot\"  and  config_args = [\"gitlab\", \"config\"]\n"
    "  prepare_exec, run_exec, cleanup_exec the same, with prepare, run and cleanup\n"
    "  (examples/ci/gitlab-runner-config.toml holds a whole one)\n"
    "\n"
    "  config --builds-dir DIR --cache-dir DIR   where jobs' builds and caches are\n"
    "                    (default: under $XDG_DATA_HOME/enter-devroot/gitlab)\n"
    "  prepare --default-image IMAGE   for jobs that name none\n"
    "  prepare --mode auto|userns|chroot   auto: userns where the directories can be bound\n"
    "  prepare --cacert FILE, --insecure-http   as for create\n"
    "  prepare --allow-local-images   let jobs name files and directories of this host\n"
    "                    (oci:, docker-archive:, /path): the runner's user's files\n"
    "\n"
    "IMAGE is a Docker reference (Docker Hub by default), template:NAME, or anything\n"
    "create --from takes with its prefix (docker://, oci:, docker-archive:, https://, /path).\n"
    "See the man page, GITLAB RUNNER.\n" },
  { "github-hook", CMD_GITHUB_HOOK, false, "github-hook [--allow-local-images] [--mode auto|userns|chroot] < JSON",
    "The GitHub Actions runner's container hooks: prepare_job, run_script_step,\n"
    "run_container_step and cleanup_job, read as JSON on standard input. Point\n"
    "ACTIONS_RUNNER_CONTAINER_HOOKS at a .sh file that runs 'exec enter-devroot github-hook'.\n"
    "The runner's directories are bound into the devroot in user-namespace mode, copied\n"
    "in before each step and back after it in chroot mode (--mode auto: userns where\n"
    "they can be bound, else chroot).\n"
    "See the man page, GITHUB ACTIONS RUNNER.\n" },
  { "help", CMD_HELP, false, "help [SUBCOMMAND]", "Show help for SUBCOMMAND.\n" },
};

static const char exit_status_help[] =
  "Exit status:\n"
  "  run         the command's own exit status\n"
  "  126         the command was found but could not be executed\n"
  "  127         the command was not found\n"
  "  124         run --timeout: the command was stopped after SECONDS\n"
  "  125         enter-devroot itself failed (usage errors included)\n"
  "  128+N       create, fetch, templates interrupted by signal N (HUP, INT, TERM):\n"
  "              nothing created\n"
  "  0           success (create, list, path, remove, doctor, export, publish, push)\n";

static const struct command_info *
find_command (const char *name)
{
  for (size_t i = 0; i < N_ELEMENTS (commands); i++)
    if (strcmp (commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

int
cli_print_help (const char *topic)
{
  if (topic != NULL)
    {
      const struct command_info *c = find_command (topic);
      if (c == NULL)
        return -1;
      printf ("Usage: %s %s\n\n%s", PROGRAM_NAME, c->usage, c->help);
      if (c->command == CMD_RUN || c->command == CMD_ENTER)
        printf ("\n%s", exit_status_help);
      return 0;
    }
  printf ("Usage: %s [-v] SUBCOMMAND [OPTION...]\n"
          "Unpack root filesystems under your home and enter them without privileges.\n\n"
          "Subcommands:\n", PROGRAM_NAME);
  for (size_t i = 0; i < N_ELEMENTS (commands); i++)
    printf ("  %s %s\n", PROGRAM_NAME, commands[i].usage);
  printf ("  %s --help | --version\n\n", PROGRAM_NAME);
  printf ("  -v, --verbose   (before SUBCOMMAND) print each step on stderr: the mode and why,\n"
          "                  namespaces, mounts, host files, seccomp filters, the command;\n"
          "                  sources, downloads, cache hits, layers, staging\n\n");
  printf ("%s\n", exit_status_help);
  printf ("Environment:\n"
          "  XDG_DATA_HOME   devroots live in $XDG_DATA_HOME/enter-devroot (default\n"
          "                  ~/.local/share/enter-devroot; a relative value is ignored)\n"
          "  ENTER_DEVROOT_DEFAULT_TEMPLATE  archive used by 'create' without --from\n"
          "  ENTER_DEVROOT_INDEX  the template catalogue URL (see 'help templates')\n"
          "  ENTER_DEVROOT_REGISTRY_MIRROR  a Docker Hub mirror, https://HOST[:PORT]\n"
          "  XDG_CACHE_HOME  downloads are cached in $XDG_CACHE_HOME/enter-devroot\n"
          "  CURL_CA_BUNDLE  CA certificates to trust for https (when no --cacert)\n"
          "  ENTER_DEVROOT_CONNECT_TIMEOUT, ENTER_DEVROOT_LOW_SPEED_TIME  seconds before a\n"
          "                  download gives up connecting (30) or crawling below 1 KiB/s (30)\n"
          "  ENTER_DEVROOT_MAX_DOWNLOAD  bytes a download of unannounced size may reach (64 GiB)\n"
          "  ENTER_DEVROOT_MAX_ROOT_SIZE  bytes a new root may unpack to (64G; see create)\n"
          "  ENTER_DEVROOT_DEBUG  set (not 0): as -v\n\n"
          "See '%s help SUBCOMMAND' and enter-devroot(1).\n", PROGRAM_NAME);
  return 0;
}

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
  OPT_TIMEOUT,
  OPT_EPHEMERAL,
  OPT_JOB_ROOT,
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
  { "timeout", OPT_TIMEOUT, true, ENTERING },
  { "ephemeral", OPT_EPHEMERAL, false, ON (CMD_RUN) },
  { "name", OPT_JOB_ROOT, true, ON (CMD_RUN) },
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
    case OPT_TIMEOUT: set_timeout (cli, c, arg); break;
    case OPT_EPHEMERAL: cli->ephemeral = true; break;
    case OPT_JOB_ROOT: cli->job_root = arg; break;
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
  const struct command_info *c = find_command (first);
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
        break; /* the command starts here (at once with --ephemeral: no NAME) */
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
}
