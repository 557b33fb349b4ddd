/* SHA-256 with OpenSSL's EVP, streaming, as lowercase hex. */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "store/cache/digest.h"
#include "store/interrupt.h"

#define HASH_BLOCK_SIZE (128 * 1024)

void
sha256_init (struct sha256 *h)
{
  h->md = EVP_MD_CTX_new ();
  if (h->md == NULL || EVP_DigestInit_ex (h->md, EVP_sha256 (), NULL) != 1)
    die ("cannot initialise SHA-256 (OpenSSL)");
}

void
sha256_update (struct sha256 *h, const void *data, size_t len)
{
  if (EVP_DigestUpdate (h->md, data, len) != 1)
    die ("SHA-256 update failed (OpenSSL)");
}

void
sha256_final (struct sha256 *h, char hex[SHA256_HEX_LEN + 1])
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex (h->md, digest, &n) != 1 || n * 2 != SHA256_HEX_LEN)
    die ("SHA-256 finalisation failed (OpenSSL)");
  EVP_MD_CTX_free (h->md);
  h->md = NULL;
  for (unsigned int i = 0; i < n; i++)
    snprintf (hex + 2 * i, 3, "%02x", digest[i]);
}

void
sha256_free (struct sha256 *h)
{
  EVP_MD_CTX_free (h->md);
  h->md = NULL;
}

void
sha256_reset (struct sha256 *h)
{
  if (EVP_DigestInit_ex (h->md, EVP_sha256 (), NULL) != 1)
    die ("cannot initialise SHA-256 (OpenSSL)");
}

int
sha256_update_fd (struct sha256 *h, int fd, uint64_t len)
{
  cleanup_free char *buf = xmalloc (HASH_BLOCK_SIZE);
  uint64_t done = 0;
  while (done < len)
    {
      size_t want = len - done < HASH_BLOCK_SIZE ? (size_t) (len - done) : HASH_BLOCK_SIZE;
      interrupt_check ();
      ssize_t n = read (fd, buf, want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      if (n == 0 && len != UINT64_MAX)
        {
          errno = EIO;
          return -1;
        }
      if (n == 0)
        break;
      sha256_update (h, buf, (size_t) n);
      done += (uint64_t) n;
    }
  return 0;
}

int
sha256_fd (int fd, uint64_t len, char hex[SHA256_HEX_LEN + 1])
{
  if (lseek (fd, 0, SEEK_SET) < 0)
    return -1;
  struct sha256 h;
  sha256_init (&h);
  if (sha256_update_fd (&h, fd, len) < 0)
    {
      int errsv = errno;
      sha256_free (&h);
      errno = errsv;
      return -1;
    }
  sha256_final (&h, hex);
  return 0;
}

void
sha256_string (const char *s, char hex[SHA256_HEX_LEN + 1])
{
  struct sha256 h;
  sha256_init (&h);
  sha256_update (&h, s, strlen (s));
  sha256_final (&h, hex);
}
