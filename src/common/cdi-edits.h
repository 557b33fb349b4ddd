/* CDI devices (--device VENDOR/CLASS=NAME, the Container Device Interface): what the devices
 * asked for do to a root, as enter-devroot-cdi resolves them from the specs (src/cdi/) and
 * enter-devroot applies them (src/enter/cdi.c). This is the one format both read: the specs
 * are JSON or YAML, which only enter-devroot-cdi parses, so that the entering program stays
 * a C-library-only program that parses neither. It is a list of records, each a word naming
 * it and then its fields, every field ended by a NUL byte (as /proc/PID/environ is):
 *
 *   CDI_EDITS_MAGIC
 *   env   K=V                              one per variable, in the order they apply
 *   node  HOST PATH                        the host's device node HOST bound on PATH
 *   mount HOST PATH OPTIONS                a bind of HOST on PATH, OPTIONS as cdi_mount says
 *   hook  STAGE SPEC PATH TIMEOUT N ARG... M ENV...   run by enter-devroot-cdi hooks
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/cdi-name.h"

#define CDI_EDITS_MAGIC "cdi-edits-1"
/* The most bytes of edits either program reads from the other. */
#define CDI_EDITS_MAX (16u * 1024 * 1024)

/* A device node: the host's node HOST (a character or block device, or a FIFO) bound on
 * PATH inside the root. */
struct cdi_node
{
  char *host;
  char *path;
};

/* A bind mount of HOST on PATH inside the root. OPTIONS is what it gets, as comma-separated
 * words from exactly these pairs, one of each: ro|rw, nosuid|suid, nodev|dev, noexec|exec,
 * bind|rbind (recursive). */
struct cdi_mount
{
  char *host;
  char *path;
  char *options;
};

struct cdi_hook
{
  char *stage;   /* prestart, createRuntime, createContainer or startContainer */
  char *spec;    /* the spec file it came from, for messages */
  char *path;    /* absolute; resolved on the host, or inside the root for startContainer */
  char **args;   /* argv (NULL-terminated); empty: the path alone */
  char **env;    /* its whole environment (NULL-terminated) */
  unsigned timeout; /* seconds; 0: none */
};

struct cdi_edits
{
  char **env; /* NULL-terminated */
  struct cdi_node *nodes;
  size_t n_nodes;
  struct cdi_mount *mounts;
  size_t n_mounts;
  struct cdi_hook *hooks;
  size_t n_hooks;
};

/* E in the format above (malloc'd, *LEN bytes). */
char *cdi_edits_encode (const struct cdi_edits *e, size_t *len);
/* BUF's LEN bytes into *E (zeroed first; cdi_edits_clear it whatever this returns): 0, or
 * -1 with *WHY (static text) for anything that is not exactly the format. */
int cdi_edits_decode (const char *buf, size_t len, struct cdi_edits *e, const char **why);
void cdi_edits_clear (struct cdi_edits *e);

/* Whether OPTIONS (struct cdi_mount's) holds WORD. */
bool cdi_mount_has (const char *options, const char *word);
