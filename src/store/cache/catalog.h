/* The template catalogue: an INI file (git-config style) served next to the templates.
 *
 *   # comment
 *   [debian-bookworm-build]
 *   url = debian-bookworm-build.tar.zst
 *   sha256 = <64 lowercase hex digits>
 *   size = <bytes of the file at url>
 *   description = Debian 12 with build-essential, git and pkg-config
 *
 * url and sha256 are required; size and description are optional; unknown keys are ignored
 * so older tools read newer catalogues. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/source.h"

/* A catalogue is downloaded into memory: refuse anything larger. */
#define CATALOG_MAX_BYTES (1024 * 1024)

struct catalog_entry
{
  char *name;          /* a valid template name (the devroot NAME rules) */
  char *url;           /* as written: absolute, or relative to the catalogue's URL */
  char sha256[SHA256_HEX_LEN + 1];
  uint64_t size;       /* meaningful only when has_size */
  bool has_size;
  char *description;   /* "" when absent */
  unsigned line;       /* of the [name] header, for messages */
};

struct catalog
{
  struct catalog_entry *entries;
  size_t n_entries;
};

/* Parse TEXT (LEN bytes, need not be NUL-terminated). 0 on success; -1 with *error set to
 * a malloc'd "line N: why" message (the caller prefixes the catalogue's URL). */
int catalog_parse (const char *text, size_t len, struct catalog *out, char **error);
void catalog_clear (struct catalog *cat);
const struct catalog_entry *catalog_find (const struct catalog *cat, const char *name);

/* A copy of S safe to print on a terminal: bytes outside printable ASCII become '?'
 * (a catalogue is untrusted input, and a description could carry escape sequences). */
char *printable_copy (const char *s);

/* Resolve REF (absolute, or relative to BASE) with libcurl's URL API. 0 and a malloc'd
 * *out; -1 and a malloc'd *error. */
int url_resolve (const char *base, const char *ref, char **out, char **error);
