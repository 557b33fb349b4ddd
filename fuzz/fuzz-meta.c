/* libFuzzer target: the metadata reader (src/common/meta.c). `list` reads every devroot's metadata
 * file, which a user (or a crashed tool) may have damaged. Invariants: what parses, written
 * back with meta_append_json, parses again, and from the second round on the text is a fixed
 * point (the first round turns invalid UTF-8 into "\ufffd", the second writes that as
 * UTF-8); and json_append_string always writes a
 * string the reader takes back. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/meta.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char *
to_json (const struct meta *m)
{
  struct strbuf sb = { 0 };
  meta_append_json (&sb, m, NULL);
  return strbuf_steal (&sb);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *text = xmalloc (size + 1);
  memcpy (text, data, size);
  text[size] = '\0';

  struct meta m = { 0 };
  const char *error = NULL;
  if (meta_parse_json (text, &m, &error) == 0)
    {
      char *json[3] = { to_json (&m), NULL, NULL };
      for (int round = 1; round < 3; round++)
        {
          struct meta again = { 0 };
          assert (meta_parse_json (json[round - 1], &again, &error) == 0);
          assert (again.size_bytes == m.size_bytes);
          json[round] = to_json (&again);
          meta_clear (&again);
        }
      assert (strcmp (json[1], json[2]) == 0);
      for (int round = 0; round < 3; round++)
        free (json[round]);
    }
  else
    assert (error != NULL);
  meta_clear (&m);

  /* The input as one JSON string value (bytes that are not UTF-8 become U+FFFD). */
  struct strbuf sb = { 0 };
  strbuf_append (&sb, "{\"name\": ");
  json_append_string (&sb, text);
  strbuf_append (&sb, "}");
  char *json = strbuf_steal (&sb);
  struct meta one = { 0 };
  assert (meta_parse_json (json, &one, &error) == 0);
  assert (one.name != NULL);
  meta_clear (&one);
  free (json);
  free (text);
  return 0;
}
