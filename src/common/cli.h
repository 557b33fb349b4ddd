/* Command-line parsing and help texts, one subcommand at a time. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/options.h"

enum command
{
  CMD_CREATE,
  CMD_ENTER,
  CMD_RUN,
  CMD_LIST,
  CMD_PATH,
  CMD_REMOVE,
  CMD_DOCTOR,
  CMD_TEMPLATES,
  CMD_FETCH,
  CMD_CACHE,
  CMD_IMAGES,
  CMD_EXPORT,
  CMD_PUBLISH,
  CMD_PUSH,
  CMD_GITLAB,
  CMD_GITHUB_HOOK,
  CMD_HELP,
  CMD_VERSION,
};

/* run --ephemeral --name NAME: at most this many letters, digits, '-' and '_' (the root's
 * name holds it with the job id and the node's name). */
#define JOB_ROOT_NAME_MAX 12

struct cli
{
  enum command command;
  const char *name;        /* NAME for create, enter, run, path, remove */
  const char *from;        /* create --from */
  const char *template_name; /* create --template */
  const char *sha256;      /* create --sha256 */
  bool json;               /* list, templates, cache list --json */
  const char *index;       /* templates, fetch, create --index URL */
  const char *cacert;      /* templates, fetch, create --cacert FILE */
  bool quiet;              /* fetch, create, cache --quiet */
  bool no_verify;          /* create --from URL --no-verify */
  const char *platform;    /* create --from IMAGE --platform OS/ARCH[/VARIANT] */
  bool insecure_http;      /* create --from docker://... --insecure-http: plain http allowed */
  uint64_t max_size;       /* create --max-size: unpacked bytes allowed; 0 when not given */
  enum root_layout layout; /* create --flat, --overlay */
  bool keep_layers;        /* create --keep-layers */
  const char *cache_action; /* cache list|clean */
  const char *help_topic;  /* help SUBCOMMAND */
  const char *output;      /* export NAME FILE */
  const char *compress;    /* export --compress: zstd, gzip, xz or none; NULL: zstd */
  const char *publish_dir; /* publish DIR */
  char **archives;         /* publish DIR ARCHIVE...: owned (the strings are argv's) */
  const char *description; /* publish --description */
  char **names;            /* remove NAME...: owned (the strings are argv's) */
  bool force;              /* remove --force: stop the processes inside first */
  bool ephemeral;          /* run --ephemeral: a throwaway root, created from the options above */
  const char *job_root;    /* run --ephemeral --name: the Slurm job's root of that name */
  const char *save;        /* run --ephemeral --save FILE: exported before its removal */
  char **driver_args;      /* gitlab, github-hook: the words after the subcommand (argv's) */
  struct enter_opts enter; /* enter and run; enter.env.assignments is owned */
};

/* Parse ARGV. Usage errors die() with status 125; --help prints and exits 0. */
void cli_parse (int argc, char **argv, struct cli *out);
void cli_clear (struct cli *cli);
/* Print help for TOPIC (a subcommand name, or NULL for the overview); -1 if unknown. */
int cli_print_help (const char *topic);
