/* The help texts: every subcommand's usage and help (commands[]), the exit statuses, the
 * environment; `help` and --help print them. cli.c parses against the same table. */
#include <stdio.h>
#include <string.h>

#include "common/cli-commands.h"
#include "common/cli.h"
#include "common/util.h"

#define ENTER_OPTIONS_HELP \
  "  --workdir DIR     start in DIR inside the root (default: your home there, else /)\n" \
  "  --env K=V         set a variable (repeatable; applied last); --env K passes your\n" \
  "                    own K (as docker's -e K; nothing when you have none)\n" \
  "  --env-fd FD       --env K=V for each assignment read from the open file FD to its\n" \
  "                    end, each ended by a NUL byte (as env -0 prints): values off the\n" \
  "                    command line\n" \
  "  --clear-env       start from an empty environment: only PATH, --device's\n" \
  "                    variables and --env\n" \
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
  "  --device VENDOR/CLASS=NAME  give the CDI device NAME (nvidia.com/gpu=0; =all for\n" \
  "                    every device of the kind): its spec, from /etc/cdi and /var/run/cdi\n" \
  "                    ('cdi-spec-dirs = DIR:...' in the config file replaces them), binds\n" \
  "                    the host's device nodes and libraries (read-only), sets variables\n" \
  "                    and runs its hooks (userns mode; auto mode picks it; repeatable;\n" \
  "                    enter-devroot(1), section CDI DEVICES)\n" \
  "  --timeout SECONDS stop the command after SECONDS: SIGTERM, then SIGKILL to every\n" \
  "                    process it started 5 seconds later; exit status 124\n" \
  "\n" \
  "The environment keeps TERM, COLORTERM, LANG, LANGUAGE, LC_* and TZ from yours (and a\n" \
  "Slurm job's SLURM_*, SLURMD_*, PMI_*, PMIX_*, OMPI_*), and sets PATH (Debian's user\n" \
  "PATH with the sbin directories: /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:\n" \
  "/sbin:/bin:/usr/local/games:/usr/games), HOME, USER, LOGNAME\n" \
  "and SHELL from the root's /etc/passwd, ENTER_DEVROOT_NAME and debian_chroot to the\n" \
  "devroot's name, then --device's variables (with --clear-env too). Nothing else of\n" \
  "yours passes through.\n"

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
    "                       [--platform OS/ARCH] [--insecure-http] [--flat|--overlay]\n"
    "                       [--keep-layers]",
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
    "  --flat            the root is a directory holding its tree (the default): 'path'\n"
    "                    shows it, chroot mode and user-namespace mode both enter it; made\n"
    "                    from the layer store (reflinked where the filesystem can)\n"
    "  --overlay         the root is an overlay of the image's stored layers and an upper\n"
    "                    directory of its own: made in milliseconds, shares the layers with\n"
    "                    every root of the image; entered in user-namespace mode only, and\n"
    "                    its tree exists only there ('run', 'export'; 'path' refuses it).\n"
    "                    Default: ENTER_DEVROOT_LAYOUT, else 'layout = flat|overlay' in the\n"
    "                    config file, else flat\n"
    "  --keep-layers     keep the image's layers in the layer store even where a flat root\n"
    "                    is unpacked straight (a filesystem without reflinks: one write of\n"
    "                    each file): the next root of the image copies them, nothing is\n"
    "                    decompressed again (throwaway and CI roots ask for it)\n"
    "\n"
    "Without --from or --template, the embedded default template (busybox) is used.\n"
    "Unpacking never writes outside the new root: '..' components are refused, leading '/'\n"
    "is stripped, symlinks are never followed, hardlinks must name an earlier regular file,\n"
    "device nodes, FIFOs and sockets are skipped, setuid/setgid bits are dropped, ownership\n"
    "is not restored. Your user is added to the root's /etc/passwd and /etc/group (home\n"
    "/home/USER) when the root has those files and no entry for your uid.\n" },
  { "enter", CMD_ENTER, true, "enter NAME [--workdir DIR] [--env K=V]... [--clear-env] [--mode MODE]\n"
    "                       [--no-landlock] [--no-host-dns] [--root]\n"
    "                       [--bind SRC:DST[:ro]]... [--device VENDOR/CLASS=NAME]...\n"
    "                       [--timeout SECONDS]",
    "Start an interactive shell inside devroot NAME: the shell the root's /etc/passwd gives\n"
    "you (when not create's /bin/sh), else your own $SHELL where the root has it, else bash,\n"
    "else /bin/sh, with a prompt naming NAME; run with -i (not as a login shell) when\n"
    "standard input is a terminal; with commands piped in, it just reads them (no prompts).\n"
    "A devroot made from an OCI image gets a shell too: 'run NAME' without CMD runs the\n"
    "image's Entrypoint+Cmd (often a REPL). On a terminal, in userns mode, the shell owns\n"
    "it (job control, ^Z), tty names it /dev/console, and the root has a /dev/pts of its own.\n"
    "\n" ENTER_OPTIONS_HELP IMAGE_HELP },
  { "run", CMD_RUN, true,
    "run NAME [--workdir DIR] [--env K=V]... [--env-fd FD] [--clear-env]\n"
    "                       [--mode MODE] [--no-landlock] [--no-host-dns] [--root]\n"
    "                       [--entrypoint] [--bind SRC:DST[:ro]]...\n"
    "                       [--device VENDOR/CLASS=NAME]... [--timeout SECONDS]\n"
    "                       [-- CMD [ARG...]]\n"
    "       enter-devroot run --ephemeral [--name NAME] [--save FILE]\n"
    "                       [--template T|--from FILE|URL|IMAGE]\n"
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
    "                    on a node share one; from a cached image (overlay roots, no\n"
    "                    --save), no root: the job mounts its layers over a tmpfs upper\n"
    "  --name NAME       (with --ephemeral, in a Slurm job step) the job's root NAME on this\n"
    "                    node instead: made by the first step that needs it, kept for the\n"
    "                    job's later steps, removed by the next create or doctor once the\n"
    "                    job has ended\n"
    "  --save FILE       (with --ephemeral) export the root to FILE after CMD, before it is\n"
    "                    removed, as 'export' would (compressed by FILE's suffix: .tar.gz\n"
    "                    or .tgz gzip, .tar.xz xz, .tar none, else zstd); in a Slurm job\n"
    "                    step, the last task on the node does. A directory, or an existing\n"
    "                    file that is not an archive, is refused before anything is created;\n"
    "                    a failed save makes run exit 125 when CMD succeeded. Not done when\n"
    "                    run is cancelled (SIGINT, SIGTERM, SIGHUP) or --timeout stopped CMD\n"
    "Without CMD, a devroot made from an OCI image runs its Entrypoint+Cmd.\n"
    "\n" ENTER_OPTIONS_HELP IMAGE_HELP },
  { "list", CMD_LIST, false, "list [--json]",
    "List the devroots: name, size of what create unpacked (SIZE-AT-CREATION: not counting\n"
    "what was installed since), its own size (OWN: an overlay root's upper, measured now; a\n"
    "flat root's copy, its size at creation), the size of the layers it shares in the layer\n"
    "store (SHARED), creation time, source.\n"
    "\n"
    "  --json            one JSON array of objects with name, path, source, sha256,\n"
    "                    created (RFC 3339, UTC), size_bytes, own_bytes and shared_bytes\n" },
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
    "files named by their SHA-256, partial downloads, and the layer store (layers/: image\n"
    "layers unpacked once, which overlay roots and later creates of the image share; 'list'\n"
    "shows each with the roots using it). 'clean' removes what no root uses and leaves\n"
    "downloads that another enter-devroot is running alone.\n" },
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
    "whiteouts: an overlay root's upper directory, or a flat root compared with the layer\n"
    "store; the base is never unpacked again), its config updated; a root made from a\n"
    "tarball as a one-layer image. What create added is left out, as export leaves it out.\n"
    "Reproducible: owners 0:0, times clamped to $SOURCE_DATE_EPOCH when set (else the\n"
    "base's), so an unchanged root pushes the same digest. Blobs the registry has are not\n"
    "sent again; the manifest goes last, so nothing is tagged on a failure. Credentials as\n"
    "for pulling: $REGISTRY_AUTH_FILE, else ~/.docker/config.json. Prints the image pinned\n"
    "to its digest (an archive's: its ID).\n"
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
    "In the runner's config.toml, under [runners.custom], by its absolute path:\n"
    "  config_exec = \"/usr/local/bin/enter-devroot\"\n"
    "  config_args = [\"gitlab\", \"config\"]\n"
    "  prepare_exec, run_exec, cleanup_exec the same, with prepare, run and cleanup\n"
    "  (examples/ci/gitlab-runner-config.toml holds a whole one). Run the runner\n"
    "  as an unprivileged user: its programs run as that user, and refuse to run\n"
    "  jobs as root.\n"
    "\n"
    "  config --builds-dir DIR --cache-dir DIR   where jobs' builds and caches are\n"
    "                    (default: under $XDG_DATA_HOME/enter-devroot/gitlab)\n"
    "  config --allow-root   run jobs as root all the same (for every later action)\n"
    "  prepare --default-image IMAGE   for jobs that name none\n"
    "  prepare --mode auto|userns|chroot   auto: userns where the directories can be bound\n"
    "  prepare --cacert FILE, --insecure-http   as for create\n"
    "  prepare --allow-local-images   let jobs name files and directories of this host\n"
    "                    (oci:, docker-archive:, /path): the runner's user's files\n"
    "  run --device VENDOR/CLASS=NAME   a CDI device every stage gets (run --device;\n"
    "                    repeatable): a GPU runner's, in run_args\n"
    "\n"
    "IMAGE is a Docker reference (Docker Hub by default), template:NAME, or anything\n"
    "create --from takes with its prefix (docker://, oci:, docker-archive:, https://, /path).\n"
    "See enter-devroot(1), section CI ENGINES, \"GitLab Runner (custom executor)\".\n" },
  { "github-hook", CMD_GITHUB_HOOK, false,
    "github-hook [--mode auto|userns|chroot] [--cacert FILE]\n"
    "                       [--insecure-http] [--allow-volume DIR[:ro]]...\n"
    "                       [--step-user image|root|runner] [--allow-local-images]\n"
    "                       [--allow-root] [--device VENDOR/CLASS=NAME]... < JSON",
    "The GitHub Actions runner's container hooks: prepare_job, run_script_step,\n"
    "run_container_step and cleanup_job, read as JSON on standard input. Point\n"
    "ACTIONS_RUNNER_CONTAINER_HOOKS at a .sh file that execs enter-devroot github-hook by\n"
    "its absolute path (examples/ci/github-runner-hook.sh).\n"
    "The runner's directories are bound into the devroot in user-namespace mode, copied\n"
    "in before each step and back after it in chroot mode (--mode auto: userns where\n"
    "they can be bound, else chroot).\n"
    "\n"
    "  --cacert FILE, --insecure-http   as for create, for the jobs' registries\n"
    "  --allow-volume DIR[:ro]   a directory of this host workflows' volumes: may bind\n"
    "                    (repeatable); by default only in the runner's own directories\n"
    "  --step-user image|root|runner   image (default): steps look like root (run --root)\n"
    "                    where docker would run them as root; root: always; runner: never\n"
    "  --allow-local-images   let jobs name files and directories of this host as images\n"
    "  --allow-root      run jobs even as root (euid 0): refused by default, as jobs would\n"
    "                    be root on this host\n"
    "  --device VENDOR/CLASS=NAME   a CDI device every step gets (run --device;\n"
    "                    repeatable): a GPU runner's\n"
    "\n"
    "See enter-devroot(1), section CI ENGINES, \"GitHub Actions runner (container hooks)\".\n" },
  { "help", CMD_HELP, false, "help [SUBCOMMAND]", "Show help for SUBCOMMAND.\n" },
};

static const char exit_status_help[] =
  "Exit status:\n"
  "  run         the command's own exit status\n"
  "  126         the command was found but could not be executed\n"
  "  127         the command was not found\n"
  "  124         run --timeout: the command was stopped after SECONDS\n"
  "  125         enter-devroot itself failed (usage errors included)\n"
  "  128+N       create, fetch, templates, cache, export, push, publish interrupted by\n"
  "              signal N (HUP, INT, TERM): nothing created or written\n"
  "  0           success (every subcommand but run and enter)\n";

const struct command_info *
cli_find_command (const char *name)
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
      const struct command_info *c = cli_find_command (topic);
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
          "  ENTER_DEVROOT_DEBUG  set (not 0): as -v\n"
          "  ENTER_DEVROOT_LAYOUT  flat or overlay: the roots create makes without --flat or\n"
          "                  --overlay (default: the config file's layout, else flat)\n"
          "  ENTER_DEVROOT_KEEP_IDLE  seconds a warm run's namespaces are kept after the last\n"
          "                  run (default: the config file's keep-idle, else 10; 0: none)\n\n"
          "See '%s help SUBCOMMAND' and enter-devroot(1).\n", PROGRAM_NAME);
  return 0;
}
