/* Where a new devroot's bytes come from: an open fd, a description for messages and
 * metadata, and optionally the SHA-256 the bytes must have. The fetch work (issue 4) adds
 * openers for URLs and catalogue templates that return the same thing. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define SHA256_HEX_LEN 64

struct source
{
  int fd;
  char *description;     /* for messages: the path as given (later: URL, template name) */
  char *origin;          /* for the metadata: the absolute path (later: URL, template) */
  char *expected_sha256; /* 64 lowercase hex digits, or NULL */
  uint64_t length;       /* read only this many bytes from fd's offset (a member of a docker
                          * save archive); 0: to the end */
  bool verified;         /* fd's bytes were hashed to expected_sha256 just now, from fd itself
                          * (the cache does it before each use): not to be hashed again; or
                          * fd is -1, expected_sha256 a digest whose layer is stored */
};

/* Open a local file; die()s naming it when it cannot be read or is a directory. */
void source_open_file (struct source *src, const char *path);
/* The embedded default template: $ENTER_DEVROOT_DEFAULT_TEMPLATE, else the installed one. */
void source_open_default_template (struct source *src);
/* Its path (malloc'd); die()s when it is missing. */
char *source_default_template_path (void);
void source_clear (struct source *src);

/* Validate a --sha256 argument: 64 hex digits, any case. Writes it lowercased to OUT. */
int sha256_hex_normalize (const char *in, char out[SHA256_HEX_LEN + 1]);
