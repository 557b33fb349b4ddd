/* Templates and URLs as sources: the catalogue, the cache and the download put together.
 * Everything here ends in a struct source whose fd is a verified file, so `create` unpacks
 * exactly the bytes whose digest was checked. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "store/source.h"

struct fetch_opts
{
  const char *index;   /* --index URL, or NULL: see config.h for the fallbacks */
  const char *cacert;  /* --cacert FILE, or NULL */
  bool quiet;          /* --quiet: errors only */
  bool insecure_http;  /* an https URL may be redirected to plain http (docker:// only) */
  const char *const *headers; /* extra request headers (a registry's Authorization), or NULL */
};

/* The verified file with digest EXPECTED (or, when NULL, whatever URL serves), from the
 * cache or downloaded into it (resuming a partial download); an fd at offset 0. HEX
 * receives its digest. SIZE is the expected size, 0 when unknown; a larger body is refused.
 * LABEL names it on the progress bar. *DOWNLOADED says whether it was fetched. */
int fetch_to_cache (const char *url, const char *expected, uint64_t size, const char *label,
                    const struct fetch_opts *o, char hex[SHA256_HEX_LEN + 1], bool *downloaded);

/* `templates`: the catalogue as a table (name, size, cached, description) or JSON. */
void fetch_list_templates (const struct fetch_opts *o, bool json);
/* die() saying that template NAME is in no catalogue: none is configured, or it does not
 * list NAME. */
__attribute__((noreturn)) void fetch_template_missing (const char *name,
                                                       const struct fetch_opts *o);

/* `fetch TEMPLATE` of the configured catalogue: download and verify into the cache
 * (nothing when already cached); prints the cached file's path. False, having done
 * nothing, when no catalogue is configured or it does not list NAME. */
bool fetch_template (const char *name, const struct fetch_opts *o);

/* `create --template NAME`: the template's verified cache file, fetched when needed; false
 * (nothing fetched) when no catalogue is configured or it does not list NAME. */
bool source_open_template (struct source *src, const char *name, const struct fetch_opts *o);

/* `create --from URL`: SHA256 (any case) is required unless NO_VERIFY, which warns. */
void source_open_url (struct source *src, const char *url, const char *sha256, bool no_verify,
                      const struct fetch_opts *o);

/* True when ARG names a URL (scheme "://"), not a local file. */
bool fetch_is_url (const char *arg);

/* `cache list` / `cache clean`. */
void fetch_cache_command (const char *action, bool json, bool quiet);
