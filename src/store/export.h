/* export NAME FILE: a devroot as a reproducible tarball (see export.c). */
#pragma once

#include <stdbool.h>

/* Write devroot NAME to FILE (through a temporary file and a rename), compressed with
 * COMPRESS: "zstd" (NULL), "gzip", "xz" or "none". A progress line on a terminal unless
 * QUIET. Dies (exit 125) naming what failed, leaving no partial FILE. */
void export_root (const char *name, const char *file, const char *compress, bool quiet);
