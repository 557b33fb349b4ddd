/* Which template catalogue to use, from the weakest source to the strongest:
 *   1. the configure-time default (--with-default-index=URL, DEFAULT_INDEX_URL)
 *   2. "index = URL" in ${XDG_CONFIG_HOME:-~/.config}/enter-devroot/config
 *   3. $ENTER_DEVROOT_INDEX
 *   4. --index URL */
#pragma once

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
 * Returns the last "index" value (malloc'd) or NULL; unknown keys are ignored. -1 with a
 * malloc'd "line N: why" in *error for a malformed line. */
int config_parse_index (const char *text, char **index_out, char **error);

/* The catalogue URL for this invocation (OPTION is --index or NULL); die()s with what to
 * do when none is configured, or when the config file is unreadable or malformed. */
char *config_index_url (const char *option);

