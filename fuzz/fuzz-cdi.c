/* libFuzzer target: CDI specs (src/cdi/spec.c, src/cdi/yaml.c) and the edits format
 * enter-devroot reads back from enter-devroot-cdi (src/common/cdi-edits.c). A spec comes from
 * a root-owned directory but is parsed as untrusted text. The first byte picks the reader: 0
 * a JSON spec, 1 a YAML spec, 2 the edits format. Invariants: a refusal has a one-line
 * message; an accepted spec has a vendor and class that are names, at least one device, each
 * named as the spec allows, every path absolute; accepted edits encode back to the same
 * bytes; nothing is leaked either way (LeakSanitizer). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cdi/spec.h"
#include "common/cdi-edits.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_edits (const struct cdi_spec_edits *e)
{
  assert (e->where != NULL && e->env != NULL);
  for (size_t i = 0; e->env[i] != NULL; i++)
    assert (strchr (e->env[i], '=') > e->env[i]);
  for (size_t i = 0; i < e->n_nodes; i++)
    assert (e->nodes[i].path[0] == '/' && e->nodes[i].type != NULL);
  for (size_t i = 0; i < e->n_mounts; i++)
    assert (e->mounts[i].host_path[0] == '/' && e->mounts[i].container_path[0] == '/'
            && e->mounts[i].options != NULL);
  for (size_t i = 0; i < e->n_hooks; i++)
    assert (e->hooks[i].path[0] == '/' && e->hooks[i].args != NULL && e->hooks[i].env != NULL);
}

static void
fuzz_spec (const char *text, size_t len, bool yaml)
{
  struct cdi_spec s;
  char *error = NULL;
  const char *why;
  if (cdi_spec_parse (text, len, yaml, &s, &error) < 0)
    {
      assert (error != NULL && strchr (error, '\n') == NULL);
      free (error);
      cdi_spec_clear (&s);
      return;
    }
  assert (cdi_vendor_check (s.vendor, strlen (s.vendor), &why) == 0);
  assert (cdi_class_check (s.class, strlen (s.class), &why) == 0);
  assert (s.n_devices > 0);
  for (size_t i = 0; i < s.n_devices; i++)
    {
      assert (cdi_name_check (s.devices[i].name, strlen (s.devices[i].name), &why) == 0);
      check_edits (&s.devices[i].edits);
    }
  check_edits (&s.edits);
  cdi_spec_clear (&s);
}

static void
fuzz_edits (const char *blob, size_t len)
{
  struct cdi_edits e;
  const char *why;
  if (cdi_edits_decode (blob, len, &e, &why) == 0)
    {
      size_t again_len;
      char *again = cdi_edits_encode (&e, &again_len);
      assert (again_len == len && memcmp (again, blob, len) == 0);
      free (again);
    }
  else
    assert (why != NULL);
  cdi_edits_clear (&e);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  /* A buffer of exactly the input's size: a read past it is a finding. */
  size_t len = size - 1;
  char *text = xmalloc (len > 0 ? len : 1);
  memcpy (text, data + 1, len);
  if (data[0] == 0 || data[0] == 1)
    fuzz_spec (text, len, data[0] == 1);
  else if (data[0] == 2)
    fuzz_edits (text, len);
  free (text);
  return 0;
}
