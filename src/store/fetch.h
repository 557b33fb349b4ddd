/* Templates and URLs as sources: the catalogue, the cache and the download put together.
 * Everything here ends in a struct source whose fd is a verified file, so `create` unpacks
 * exactly the bytes whose digest was checked. */
#pragma once

#include <stdbool.h>

#include "store/source.h"

struct fetch_opts
{
  const char *index;   /* --index URL, or NULL: see config.h for the fallbacks */
  const char *cacert;  /* --cacert FILE, or NULL */
  bool quiet;          /* --quiet: errors only */
};

/* `templates`: the catalogue as a table (name, size, cached, description) or JSON. */
void fetch_list_templates (const struct fetch_opts *o, bool json);

/* `fetch TEMPLATE`: download and verify into the cache (nothing when already cached);
 * prints the cached file's path. */
void fetch_template (const char *name, const struct fetch_opts *o);

/* `create --template NAME`: the template's verified cache file, fetched when needed. */
void source_open_template (struct source *src, const char *name, const struct fetch_opts *o);

/* `create --from URL`: SHA256 (any case) is required unless NO_VERIFY, which warns. */
void source_open_url (struct source *src, const char *url, const char *sha256, bool no_verify,
                      const struct fetch_opts *o);

/* True when ARG names a URL (scheme "://"), not a local file. */
bool fetch_is_url (const char *arg);

/* `cache list` / `cache clean`. */
void fetch_cache_command (const char *action, bool json, bool quiet);
