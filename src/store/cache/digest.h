/* SHA-256 with OpenSSL's EVP, streaming, as lowercase hex. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "store/source.h"

typedef struct evp_md_ctx_st EVP_MD_CTX;

struct sha256
{
  EVP_MD_CTX *md;
};

/* die() on failure: OpenSSL only fails these when out of memory or misconfigured. */
void sha256_init (struct sha256 *h);
void sha256_update (struct sha256 *h, const void *data, size_t len);
/* Writes the hex digest and frees the context. */
void sha256_final (struct sha256 *h, char hex[SHA256_HEX_LEN + 1]);
/* Free the context without a result. */
void sha256_free (struct sha256 *h);
/* Drop the bytes hashed so far and start again. */
void sha256_reset (struct sha256 *h);

/* Feed LEN bytes of FD, from its current offset, into H. 0, or -1 with errno (EIO: the file
 * ended early). */
int sha256_update_fd (struct sha256 *h, int fd, uint64_t len);
/* Hash FD from offset 0: LEN bytes, or to its end when LEN is UINT64_MAX; the fd is left
 * after what was read. 0, or -1 with errno (EIO: the file is shorter than LEN). */
int sha256_fd (int fd, uint64_t len, char hex[SHA256_HEX_LEN + 1]);
void sha256_string (const char *s, char hex[SHA256_HEX_LEN + 1]);
