/* Where export's tar stream goes: compressed here with every core (zstd, xz), by libarchive
 * (gzip), or not at all. One choice for export, run --ephemeral --save and the plugin's
 * saves (they all run export). */
#pragma once

#include <archive.h>

struct compress_out;

/* Open A's output on FD with COMPRESS (zstd, gzip, xz or none). Dies naming WHAT
 * ("cannot export 'NAME'") when the compressor cannot be set up. The xz encoder gives its
 * threads a short timeout, so that a long block never keeps a caught signal waiting: the
 * caller's interrupt_check_note (NOTE) runs between its steps. The result is the same
 * bytes whatever the number of cores. */
struct compress_out *compress_out_open (struct archive *a, const char *compress, int fd,
                                        const char *what, const char *note);
/* After archive_write_close. */
void compress_out_free (struct compress_out *c);
