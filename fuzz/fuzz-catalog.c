/* libFuzzer target: the template catalogue parser (src/store/cache/catalog.c), which reads whatever a
 * server sends. Invariants of a successful parse: every entry has a valid name, a URL and
 * 64 lowercase hex digits, catalog_find finds each name, and printable_copy of any field
 * leaves only printable ASCII. A failed parse names a line. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/name.h"
#include "store/cache/catalog.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
assert_printable (const char *s)
{
  char *copy = printable_copy (s);
  assert (strlen (copy) == strlen (s));
  for (const char *p = copy; *p != '\0'; p++)
    assert (*p >= 0x20 && *p < 0x7f);
  free (copy);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > CATALOG_MAX_BYTES)
    return -1;
  struct catalog cat = { 0 };
  char *error = NULL;
  if (catalog_parse ((const char *) data, size, &cat, &error) < 0)
    {
      assert (error != NULL && strncmp (error, "line ", 5) == 0);
      assert_printable (error);
      free (error);
      return 0;
    }
  assert (error == NULL);
  for (size_t i = 0; i < cat.n_entries; i++)
    {
      const struct catalog_entry *e = &cat.entries[i];
      assert (name_is_valid (e->name));
      assert (e->url != NULL && e->url[0] != '\0');
      assert (strlen (e->sha256) == SHA256_HEX_LEN);
      assert (strspn (e->sha256, "0123456789abcdef") == SHA256_HEX_LEN);
      assert (e->description != NULL);
      const struct catalog_entry *found = catalog_find (&cat, e->name);
      assert (found != NULL && strcmp (found->name, e->name) == 0);
      assert_printable (e->url);
      assert_printable (e->description);
    }
  catalog_clear (&cat);
  return 0;
}
