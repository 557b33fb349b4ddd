/* The user's settings, from ${XDG_CONFIG_HOME:-~/.config}/enter-devroot/config and the
 * environment.
 *
 * Which template catalogue to use, from the weakest source to the strongest:
 *   1. the configure-time default (--with-default-index=URL, DEFAULT_INDEX_URL)
 *   2. "index = URL" in the config file
 *   3. $ENTER_DEVROOT_INDEX
 *   4. --index URL
 *
 * Where the download cache lives (cache.h), from the weakest to the strongest:
 *   1. ${XDG_CACHE_HOME:-~/.cache}/enter-devroot
 *   2. "cache = DIR" in the config file
 *   3. $ENTER_DEVROOT_CACHE
 * DIR may be on a shared filesystem (NFS): the cache's locks are fcntl locks. */
#pragma once

#include <stdbool.h>

struct index_sources
{
  const char *built_in;    /* DEFAULT_INDEX_URL; "" when none was configured */
  const char *config_file; /* from the config file, or NULL */
  const char *env;         /* ENTER_DEVROOT_INDEX, or NULL */
  const char *option;      /* --index, or NULL */
};

/* The strongest non-empty source, or NULL when there is none. Pure, for the unit tests. */
const char *config_pick_index (const struct index_sources *s);

/* Parse a config file's TEXT: "key = value" lines, '#' and ';' comments, blank lines.
 * Returns the last value of KEY (malloc'd) or NULL; other keys are ignored. -1 with a
 * malloc'd "line N: why" in *error for a malformed line. */
int config_parse_value (const char *text, const char *key, char **value_out, char **error);

/* The catalogue URL for this invocation (OPTION is --index or NULL); a plain path becomes
 * the file:// URL of the file it names. When none is configured: NULL, or with REQUIRED a
 * die() saying what to do; die()s too when the config file is unreadable or malformed. */
char *config_index_url (const char *option, bool required);

/* The Docker Hub mirror: $ENTER_DEVROOT_REGISTRY_MIRROR, else 'registry-mirror = URL' in the
 * config file; NULL when neither. die()s unless it is https://HOST[:PORT] (or http://, with
 * INSECURE_HTTP). */
char *config_registry_mirror (bool insecure_http);


/* The cache's directory (malloc'd); die()s when the configured one is not an absolute path,
 * or when the config file is unreadable or malformed. */
char *config_cache_dir (void);
