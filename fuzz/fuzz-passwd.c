/* libFuzzer target: the passwd reader (src/common/account.c), which reads the devroot's own
 * /etc/passwd, written by whatever the devroot runs. The first four bytes are the uid
 * looked up, the rest is the file. Invariant: a found entry's fields are non-NULL, hold no
 * newline, and the name and home no ':' (the shell is the rest of the line, as for glibc). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/account.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
assert_field (const char *s, const char *refused)
{
  assert (s != NULL);
  assert (strpbrk (s, refused) == NULL);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uint32_t uid;
  if (size < sizeof uid)
    return -1;
  memcpy (&uid, data, sizeof uid);
  char *text = xmalloc (size - sizeof uid + 1);
  memcpy (text, data + sizeof uid, size - sizeof uid);
  text[size - sizeof uid] = '\0';

  struct account acct = { 0 };
  if (account_parse_passwd (text, (uid_t) uid, &acct) == 0)
    {
      assert_field (acct.name, ":\n");
      assert_field (acct.home, ":\n");
      assert_field (acct.shell, "\n");
    }
  account_clear (&acct);
  free (text);
  return 0;
}
